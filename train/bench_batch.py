"""Benchmark the fast path: whole deals played in the kernel (``play_deals``), BatchEnv deals/s and
decisions/s over a batch-size sweep, the AEC env raw and wrapped, and PPO training fps with the
single-seat env vs the batched VecEnv, with PettingZoo's connect_four_v3 in the same run as the reference.
Prints a table and writes JSON.

    python -m train.bench_batch --json bench.json        # about 3 minutes
    python -m train.bench_batch --reference ../shared/bench/limit.py   # and a reference simulator in the same run
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numba
import numpy as np

import agents
from snipsnap_env.batch import play_deals

from .measure.speed import add_json_flags, aec_envs, batch_speed, check_json, measure_table, save_json
from .runner.cli import add_flag, between, new_parser, require, seconds
from .runner.job import Job, Plan, Refusal

MAX_BATCH = 1 << 20  # games side by side: a game's state is a few kB
MAX_PPO_STEPS = 10_000_000


def kernel_speed(num_players: int, seconds: float, deals: int = 1_000_000) -> dict:
    """Whole deals/s played in the kernel with uniformly random leads at every seat (best of the rounds)."""
    policies = ["random"] * num_players
    play_deals(1000, num_players, "scarne", policies)  # compile / warm up
    best, start = 0.0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        began = time.perf_counter()
        play_deals(deals, num_players, "scarne", policies, seed=len(str(best)))
        best = max(best, deals / (time.perf_counter() - began))
    return {"deals_per_s": best}


def reference_speed(path: str, seconds: float) -> float:
    """Deals/s of a reference simulator script that defines ``deals_per_second(seconds=...)`` (one core), run in a
    process of its own with a numba cache of its own: the script's folder is shared, and a cache another tool wrote
    there (under another module name) fails to load in this one ("No module named '<dynamic>'")."""
    import subprocess
    import sys
    import tempfile

    script = Path(path).resolve()
    if not script.is_file():
        raise SystemExit(f"--reference {path}: no such file")
    code = (
        "import importlib.util, sys; sys.path.insert(0, sys.argv[2]); "  # the script imports its neighbours
        "spec = importlib.util.spec_from_file_location('reference_simulator', sys.argv[1]); "
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
        "print(float(module.deals_per_second(seconds=float(sys.argv[3]))) if hasattr(module, 'deals_per_second') "
        "else 'none')"
    )
    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run([sys.executable, "-c", code, str(script), str(script.parent), str(seconds)],
                              capture_output=True, text=True, env={**os.environ, "NUMBA_CACHE_DIR": cache})  # fmt: skip
    answer = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode or answer == "none":
        failed = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        said = "defines no deals_per_second(seconds=...)" if answer == "none" else f"failed: {failed}"
        raise SystemExit(f"--reference {path}: the script {said}")
    return float(answer)


def vec_env_speed(num_envs: int, num_players: int, seconds: float, reward: str, seed: int = 0) -> float:
    """Learner decisions/s through SnipSnapVecEnv.step (most_copies opponents, random legal leads) paying
    ``reward``: what the training signal costs a step of the VecEnv."""
    from snipsnap_env.vec_env import SnipSnapVecEnv

    env = SnipSnapVecEnv(num_envs, num_players, opponents=[agents.make("most_copies", seed=seed)], seed=seed,
                         reward=reward)  # fmt: skip
    rng = np.random.default_rng(seed)
    env.reset()

    def step() -> None:
        masks = env.action_masks()
        env.step(np.where(masks, rng.random(masks.shape), -1.0).argmax(axis=1))

    step()  # compile / warm up
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        steps += 1
    return steps * num_envs / (time.perf_counter() - start)


def ppo_fps(vec: str, steps: int, num_envs: int, n_steps: int, batch_size: int, critic: str = "observation") -> float:
    """Timesteps/s of MaskablePPO learning ``steps`` steps at 6 players on the given VecEnv kind; ``critic``
    'rollouts' is the default training's (train_ppo's model and settings), 'observation' SB3's MLP and GAE."""
    import tempfile

    import torch

    from .learn.args import Args
    from .learn.run import new_model
    from .learn.vec_envs import make_vec_env

    torch.set_num_threads(2)
    policy = "rank_shared" if critic == "rollouts" else "mlp"
    args = Args(
        vec=vec, num_envs=num_envs, n_steps=n_steps, batch_size=batch_size, critic=critic, ppo_players=(6,),
        policy=policy, net_arch=(128, 128), n_epochs=4, out_dir=tempfile.mkdtemp(),
    )  # fmt: skip
    model = new_model(args, make_vec_env(args, seed=0))
    model.learn(num_envs * n_steps)  # warm up (compilation, first rollout)
    start = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - start)


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__, __name__)
    job.add_argument("--seconds", type=seconds, default=3.0, help="time per BatchEnv measurement")
    add_flag(job, "players")
    job.add_argument("--batch-sizes", type=between(1, MAX_BATCH), nargs="+", default=[1, 64, 256, 1024, 4096, 16384])
    job.add_argument(
        "--ppo-steps", type=between(1, MAX_PPO_STEPS), default=65536, help="timesteps per PPO fps measurement"
    )
    add_json_flags(job)
    job.add_argument("--reference", default=None, help="a reference simulator script to time in the same run")
    return job


def work(args) -> dict:
    results: dict = {"kernel": {}, "batch": {}, "vec_env": {}, "aec": {}, "ppo_fps": {}}

    threads = numba.get_num_threads()
    results["kernel"] = kernel_speed(args.players, args.seconds * 2)
    numba.set_num_threads(1)  # per core: comparable across machines (and with ../shared/bench/limit.py)
    try:
        results["kernel"]["deals_per_s_one_thread"] = kernel_speed(args.players, args.seconds * 2)["deals_per_s"]
    finally:
        numba.set_num_threads(threads)
    print(f"play_deals, {args.players} players, random leads, all in the kernel: ", end="")
    print(f"{results['kernel']['deals_per_s']:,.0f} deals/s on {threads} threads, ", end="")
    print(f"{results['kernel']['deals_per_s_one_thread']:,.0f} on one")
    if args.reference:
        reference = reference_speed(args.reference, args.seconds * 2)
        results["kernel"]["reference_deals_per_s"] = reference
        ratio = results["kernel"]["deals_per_s"] / reference
        print(f"reference simulator, one core: {reference:,.0f} deals/s; ", end="")
        print(f"play_deals on {threads} threads is {ratio:.2f}x it")

    print(f"\nBatchEnv, {args.players} players, random legal leads chosen in Python between steps")
    print(f"{'batch':>8}{'deals/s':>14}{'decisions/s':>14}")
    for size in args.batch_sizes:
        figures = batch_speed(size, args.players, args.seconds)
        results["batch"][str(size)] = figures
        print(f"{size:>8}{figures['deals_per_s']:>14,.0f}{figures['decisions_per_s']:>14,.0f}", flush=True)

    print(f"\nSnipSnapVecEnv, {args.players} players, 256 tables of most_copies opponents: the training signal's price")
    chips = vec_env_speed(256, args.players, args.seconds, "chips")
    signal = vec_env_speed(256, args.players, args.seconds, "lead_advantage")
    results["vec_env"] = {"chips_decisions_per_s": chips, "lead_advantage_decisions_per_s": signal}
    print(f"reward='chips': {chips:,.0f} decisions/s; reward='lead_advantage': {signal:,.0f} ", end="")
    print(f"(a step costs {chips / signal:.2f}x)")

    print("\nAEC env, random legal actions (turns include forced ones)")
    results["aec"] = measure_table(aec_envs([args.players]), rounds=3, seconds=1.5)

    print("\nMaskablePPO training fps (timesteps = learner decisions), 6 players, random opponents")
    single = ppo_fps("single", args.ppo_steps // 8, num_envs=1, n_steps=2048, batch_size=256)
    batched = ppo_fps("batch", args.ppo_steps, num_envs=256, n_steps=32, batch_size=2048)
    rollouts = ppo_fps("batch", args.ppo_steps, num_envs=256, n_steps=32, batch_size=2048, critic="rollouts")
    results["ppo_fps"] = {
        "single_env": single, "batch_vec_env": batched, "speedup": batched / single, "rollout_critic": rollouts
    }  # fmt: skip
    print(f"single-seat env (DummyVecEnv, 1 env): {single:,.0f} fps")
    print(f"SnipSnapVecEnv (256 games):           {batched:,.0f} fps  ({batched / single:.1f}x)")
    print(f"same, rollout critic (32 per lead):   {rollouts:,.0f} fps  (train_ppo's default training)")
    return save_json(results, args.json, "bench_batch", args.command)


def check(args) -> Plan:
    """The training extra there (the PPO measurements), the --json file new (or this benchmark's)."""
    check_json(args.json, args.overwrite, "bench_batch")
    require("train", "torch", "stable_baselines3", "sb3_contrib", "pygame")
    if args.reference and not Path(args.reference).is_file():
        raise Refusal(f"--reference {args.reference}: no such script")
    return Plan(lambda _: work(args))


JOB = Job(
    parser,
    check,
    example=("--seconds", "0.05", "--batch-sizes", "4", "--ppo-steps", "256", "--players", "3"),
    writes=("json",),
)
main = JOB.main

if __name__ == "__main__":
    main()
