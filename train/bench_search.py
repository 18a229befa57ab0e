"""Benchmark the search whose worlds seat a learned model (``agents.model_search.ModelSearch``, the best
response of ``train.exploit``): seconds per searched lead with its rollouts in compiled code and on the
batched engine, at positions the shipped ``ppo`` reaches. Prints a table and writes JSON.

    python -m train.bench_search                           # about a minute
    python -m train.bench_search --players 3 6 --samples 128 --positions 64 --json search.json
"""

from __future__ import annotations

import time

import numpy as np

import agents

from .measure.speed import add_json_flags, check_json, save_json
from .runner.cli import add_flag, between, new_parser, refuse_repeats, worlds
from .runner.job import Job, Plan


def lead_positions(players: int, count: int, seed: int = 3):
    """``count`` leads with a choice from deals the shipped ``ppo`` plays a few turns into."""
    from snipsnap_env.batch import BatchEnv

    env = BatchEnv(4 * count, players, seed=seed)
    obs, mask = env.reset()
    policy, kept = agents.make("ppo", seed=seed), []
    for _ in range(12):
        obs, mask, *_ = env.step(policy.act_batch(obs, mask))
        choice = mask.sum(axis=1) > 1
        kept.append((obs[choice], mask[choice]))
    obs, mask = (np.concatenate(part)[:count] for part in zip(*kept))
    return obs, mask


def seconds_per_lead(players: int, samples: int, positions: int, in_kernel: bool) -> float:
    from agents.model_search import ModelSearch

    obs, mask = lead_positions(players, positions)
    search = ModelSearch(agents.make("ppo", seed=1), samples=samples, seed=2, in_kernel=in_kernel)
    search.scores(obs[:2], mask[:2])  # compile / warm up
    start = time.perf_counter()
    search.scores(obs, mask)
    return (time.perf_counter() - start) / len(obs)


def parser():
    job = new_parser(__doc__, __name__)
    add_flag(job, "players", nargs="+", default=[3, 4, 6], help="table sizes")
    job.add_argument("--samples", type=worlds, default=128, help="the search's sampled worlds per lead")
    job.add_argument("--positions", type=between(2, 1024), default=64, help="leads searched at once")
    add_json_flags(job)
    return job


def work(args) -> dict:
    rows = []
    print(f"ModelSearch over the shipped ppo, {args.samples} worlds, {args.positions} leads at once")
    print("| players | compiled rollouts (ms a lead) | batched engine (ms a lead) | speed-up |")
    print("|---|---|---|---|")
    for n in args.players:
        compiled, engine = (seconds_per_lead(n, args.samples, args.positions, k) for k in (True, False))
        rows.append({"players": n, "compiled_s": compiled, "engine_s": engine})
        print(f"| {n} | {compiled * 1e3:.1f} | {engine * 1e3:.1f} | {engine / compiled:.1f}× |")
    return save_json({"samples": args.samples, "positions": args.positions, "rows": rows}, args.json,
                     "bench_search", args.command)  # fmt: skip



def check(args) -> Plan:
    """The --json file new (or this benchmark's, with --overwrite); the table sizes distinct."""
    check_json(args.json, args.overwrite, "bench_search")
    refuse_repeats("players", args.players)
    return Plan(lambda _: work(args))


JOB = Job(parser, check, example=("--players", "3", "--samples", "4", "--positions", "2"), writes=("json",))
main = JOB.main

if __name__ == "__main__":
    main()
