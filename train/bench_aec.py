"""Benchmark: turns/s and deals/s of the AEC environment (raw and wrapped) for 3..8 players.

PettingZoo's ``connect_four_v3`` is measured in the same run as the reference; the target is the wrapped
6-player env at ≥ 2× its turns/s. Every env is driven by the same loop: ``last()``, a uniformly random
legal action drawn with ``rng.choice(np.flatnonzero(mask))``, ``step()``, a reset per game — in interleaved
rounds, reporting the median and range of each env's turns/s.

It then times one decision of each agent in ``--agents``: ``policy(obs)`` on single AEC observations (what
a seat costs in the AEC loop) and ``act_batch`` on a batch of 1,024, per decision, at 6-player leads.

    python -m train.bench_aec                         # 7 rounds of 13 envs × 1 s: about 100 s
    python -m train.bench_aec --rounds 3 --seconds 0.5 --agents most_copies ppo
"""

from __future__ import annotations

import argparse

from .measure.speed import (
    DECISION_AGENTS,
    add_json_flags,
    aec_envs,
    check_json,
    decision_times,
    frame_times,
    measure_table,
    numba_threads,
    save_json,
)
from .runner.cli import add_flag, between, new_parser, seconds
from .runner.job import Job, Plan


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__, __name__)
    job.add_argument("--seconds", type=seconds, default=1.0, help="time spent on each measurement")
    job.add_argument("--rounds", type=between(1, 1000), default=7, help="interleaved rounds; the median is reported")
    add_json_flags(job)
    add_flag(job, "trust-model")
    job.add_argument("--agents", nargs="*", default=DECISION_AGENTS, help="agents whose decisions are timed")
    return job


def check(args) -> Plan:
    """The timed agents made, the --json file new (or this benchmark's, with --overwrite)."""
    check_json(args.json, args.overwrite, "bench_aec")
    from .measure.candidates import made

    made(args.agents, args.trust_model)

    def work(_) -> dict:
        results = measure_table(aec_envs(range(3, 9)), args.rounds, args.seconds)
        ratio = results["snipsnap env() N=6"]["turns_per_s"] / results["connect_four_v3 env()"]["turns_per_s"]
        results["wrapped_6p_vs_connect_four"] = ratio
        print(f"\nwrapped 6-player env / connect_four_v3, median turns/s: {ratio:.2f}x (target >= 2x)")
        results["rgb_array_ms_per_frame"] = frame_times(range(3, 9))
        print(f"\none decision at 6-player leads ({numba_threads()} numba threads; the learned agents run in numpy):")
        results["decision_us"] = decision_times(args.agents, args.seconds, trust=args.trust_model)
        return save_json(results, args.json, "bench_aec", args.command)

    return Plan(work)


JOB = Job(
    parser,
    check,
    example=("--rounds", "1", "--seconds", "0.05", "--agents", "most_copies"),
    writes=("json",),
    agents=("agents",),
)
main = JOB.main


if __name__ == "__main__":
    main()
