"""Benchmark the envs where users run them: alone, as two processes at once, and beside busy processes.

Each measurement is a fresh process that steps one env with masked random actions for ``--seconds`` and
reports decisions/s (turns/s for the AEC env): alone; two such processes at once (two seeds of one experiment,
say); and one beside ``--busy`` processes that keep a core busy in plain Python (a test suite, another job).
On a quiet machine with C cores, two processes at once can keep at most min(1, C / (2 × the cores one uses))
of the speed alone: a kernel that uses both of 2 cores keeps half.

    python -m train.bench_busy                                   # about 2 minutes
    python -m train.bench_busy --envs vector --seconds 10 --json busy.json

The envs: ``vector``, gymnasium's ``make_vec("snipsnap/SingleSeat-v0", num_envs=64, vectorization_mode=
"vector_entry_point", num_players=4)``; ``sb3``, the SB3 ``SnipSnapVecEnv`` (256 games, 6 players, most_copies
opponents); ``training``, train_ppo's default VecEnv (128 games at each of 3..8 players, each lead's value from
32 rollouts of the true deal per candidate); ``aec``, ``snipsnap_env.env(num_players=6)``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

import numpy as np

from .measure.speed import add_json_flags, check_json, save_json
from .runner.cli import between, new_parser, require
from .runner.job import Job, Plan
from .runner.units import end_with_parent

ENVS = ("vector", "sb3", "training", "aec")
MAX_SECONDS = 3600.0


def _stepper(kind: str, seed: int):
    """A function that takes one step of env ``kind`` and returns the decisions (or turns) it made."""
    rng = np.random.default_rng(seed)

    def masked(mask):
        return np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=-1)

    if kind == "vector":
        import gymnasium

        import snipsnap_env  # noqa: F401 (registers the env)

        env = gymnasium.make_vec("snipsnap/SingleSeat-v0", num_envs=64, vectorization_mode="vector_entry_point",
                                 num_players=4)  # fmt: skip
        env.reset(seed=seed)
        return lambda: env.step(masked(env.unwrapped.action_masks())) and 64
    if kind in ("sb3", "training"):
        if kind == "sb3":
            import agents
            from snipsnap_env.vec_env import SnipSnapVecEnv

            env = SnipSnapVecEnv(256, 6, opponents=[agents.make("most_copies", seed=seed)], seed=seed)
        else:
            from .learn.args import Args
            from .learn.vec_envs import make_vec_env

            env = make_vec_env(Args(progress=False), seed).venv.venv
        env.reset()

        def step():
            env.step(masked(env.action_masks()))
            return env.num_envs

        return step
    import snipsnap_env

    env = snipsnap_env.env(num_players=6)
    env.reset(seed=seed)

    def turn():
        _, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.reset(seed=int(rng.integers(2**31)))
        else:
            env.step(int(masked(env.last()[0]["action_mask"].astype(bool))))
        return 1

    return turn


def _measure(kind: str, seed: int, seconds: float, start, results) -> None:
    """In a process of its own: warm up (compile), wait for the others, then count decisions for ``seconds``."""
    end_with_parent()
    step = _stepper(kind, seed)
    for _ in range(5):
        step()
    start.wait()
    count, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        count += step()
    results.put(count / (time.perf_counter() - began))


def _busy(stop) -> None:
    """A process that keeps one core busy in plain Python until ``stop`` is set (or this job's process dies)."""
    end_with_parent()
    total = 0
    while not stop.is_set():
        for i in range(100_000):
            total += i


def speeds(kind: str, processes: int, busy: int, seconds: float) -> list[float]:
    """Decisions/s of each of ``processes`` measuring processes started together, beside ``busy`` busy ones."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no thread pool inherited from this one
    start, stop, results = context.Barrier(processes), context.Event(), context.Queue()
    hogs = [context.Process(target=_busy, args=(stop,), daemon=True) for _ in range(busy)]
    workers = [context.Process(target=_measure, args=(kind, i, seconds, start, results)) for i in range(processes)]
    for process in hogs + workers:
        process.start()
    try:
        figures = [results.get(timeout=seconds + 600) for _ in workers]
    finally:
        stop.set()
        for process in hogs + workers:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
    return sorted(figures)


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    job.add_argument("--envs", nargs="+", choices=ENVS, default=list(ENVS), help="the envs to measure")
    job.add_argument("--seconds", type=between(1, MAX_SECONDS), default=6, help="seconds per measurement")
    job.add_argument("--busy", type=between(1, 64), default=2, help="busy processes beside one measuring process")
    add_json_flags(job)
    return job


def work(args) -> dict:
    results = {}
    print(f"{'env':<10}{'alone':>12}{'two at once, each':>24}{'% of alone':>12}"
          f"{f'beside {args.busy} busy':>18}{'% of alone':>12}")  # fmt: skip
    for kind in args.envs:
        alone = speeds(kind, 1, 0, args.seconds)[0]
        pair = speeds(kind, 2, 0, args.seconds)
        beside = speeds(kind, 1, args.busy, args.seconds)[0]
        results[kind] = {"alone": alone, "two_at_once": pair, "beside_busy": beside, "busy": args.busy}
        both = " / ".join(f"{x:,.0f}" for x in pair)
        print(f"{kind:<10}{alone:>12,.0f}{both:>24}{100 * min(pair) / alone:>11.0f}%"
              f"{beside:>18,.0f}{100 * beside / alone:>11.0f}%", flush=True)  # fmt: skip
    return save_json(results, args.json, "bench_busy", args.command)


def check(args) -> Plan:
    """The --json file new (or this benchmark's); the training extra for the SB3 and training envs."""
    check_json(args.json, args.overwrite, "bench_busy")
    if {"sb3", "training"} & set(args.envs):
        require("train", "stable_baselines3", "torch")
    return Plan(lambda _: work(args))


JOB = Job(parser, check, example=("--envs", "aec", "--seconds", "1", "--busy", "1"), writes=("json",))
main = JOB.main

if __name__ == "__main__":
    main()
