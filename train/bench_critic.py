"""Benchmark what the rollout critic costs: the training VecEnv's lead choices per second with each rollout
continuation (``--rollout-policy most_copies``: scripted; ``self``: the learner's network) and each kind of
pool (scripted opponents; learned ones, whose networks the kernel plays; self-play), and one network
decision in compiled code. Prints a table and writes JSON.

    python -m train.bench_critic                       # about 2 minutes
    python -m train.bench_critic --players 3 6 --seconds 5 --json critic.json
"""

from __future__ import annotations

import time

import numpy as np

import agents

from .measure.speed import add_json_flags, check_json, save_json
from .runner.cli import add_flag, game_count, new_parser, refuse_repeats, require, rollout_count, seconds
from .runner.job import Job, Plan

#: (name, opponents, rollout policy): the pools and continuations measured
SETUPS = (
    ("scripted pool, most_copies continuation", ("random", "most_copies"), "most_copies"),
    ("scripted pool, own-network continuation", ("random", "most_copies"), "self"),
    ("learned pool, own-network continuation", ("ppo_distilled", "ppo_scratch"), "self"),
    ("self-play, own-network continuation", ("self",), "self"),
)


def vec_env_speed(players: int, opponents, rollout_policy: str, seconds: float, rollouts: int, games: int) -> float:
    """Learner decisions per second of a SnipSnapVecEnv with the rollout critic (most_copies-like leads)."""
    from snipsnap_env.vec_env import SELF, SnipSnapVecEnv

    pool = [SELF if name == "self" else agents.make(name, seed=i) for i, name in enumerate(opponents)]
    env = SnipSnapVecEnv(games, players, opponents=pool, seed=1, lead_values=rollouts, rollout_policy=rollout_policy)
    env.set_learner(agents.make("ppo_scratch").networks())  # a network of the learner's shape
    obs = env.reset()
    env.step(obs[:, :13].argmax(axis=1))  # compile / warm up
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        legal = env.action_masks()[:, :13]
        obs, *_ = env.step(np.where(legal, obs[:, :13], -1).argmax(axis=1))
        steps += games
    return steps / (time.perf_counter() - start)


def network_decision_us(players: int, rows: int = 4096) -> float:
    """Microseconds per compiled greedy decision of the shipped network (one core)."""
    from snipsnap_env.batch import BatchEnv
    from snipsnap_env.kernel_network import network_actions

    nets = agents.make("ppo").networks()
    obs, mask = BatchEnv(rows, players, seed=3).reset()
    which, draws = np.zeros(rows, np.int64), np.random.default_rng(3).random(rows)
    network_actions(obs[:2], mask[:2], which[:2], nets, draws[:2])  # compile
    start = time.perf_counter()
    network_actions(obs, mask, which, nets, draws)
    return (time.perf_counter() - start) / rows * 1e6


def parser():
    job = new_parser(__doc__, __name__)
    add_flag(job, "players", nargs="+", default=[3, 4, 6], help="table sizes")
    job.add_argument("--seconds", type=seconds, default=6.0, help="seconds per measurement")
    job.add_argument("--rollouts", type=rollout_count, default=32, help="rollouts per candidate lead")
    job.add_argument("--games", type=game_count, default=256, help="games played side by side")
    add_json_flags(job)
    return job


def work(args) -> dict:
    rows = []
    print(f"| setup | {' | '.join(f'{n} players' for n in args.players)} |")
    print(f"|---|{'---|' * len(args.players)}")
    for name, opponents, continuation in SETUPS:
        speeds = [
            vec_env_speed(n, opponents, continuation, args.seconds, args.rollouts, args.games) for n in args.players
        ]
        rows.append({"setup": name, "opponents": list(opponents), "rollout_policy": continuation, "per_s": speeds})
        print(f"| {name} | {' | '.join(f'{s:,.0f}' for s in speeds)} |")
    decision = {n: network_decision_us(n) for n in args.players}
    print("lead choices per second of the training VecEnv (learner decisions, rollouts included);")
    print("one compiled network decision: " + ", ".join(f"{us:.1f} µs at {n} players" for n, us in decision.items()))
    results = {"lead_choices_per_s": rows, "network_decision_us": decision}
    return save_json(results, args.json, "bench_critic", args.command)


def check(args) -> Plan:
    """The --json file new (or this benchmark's, with --overwrite); the table sizes distinct."""
    check_json(args.json, args.overwrite, "bench_critic")
    refuse_repeats("players", args.players)
    require("train", "torch", "stable_baselines3", "sb3_contrib")
    return Plan(lambda _: work(args))


JOB = Job(
    parser,
    check,
    example=("--players", "3", "--seconds", "0.05", "--rollouts", "2", "--games", "8"),
    writes=("json",),
)
main = JOB.main

if __name__ == "__main__":
    main()
