"""What variance reduction (train.measure.variance) buys and costs: per table size, the paired difference of a
candidate over most_copies at random-lead tables on the same deals, plain and with the control variates —
the CI of each, the shrink, and the seconds each took (the plain one as ``train.evaluate`` plays it).

    python -m train.bench_variance --players 3 4 6 8 --deals 4000 --rollouts 8 32
    python -m train.bench_variance --players 6 --candidate pimc:32 --deals 500 --rollouts 32
"""

from __future__ import annotations

import time

from .measure.candidates import make_candidate
from .measure.paired import PairedDeals, mean_ci, play_candidates
from .runner.cli import add_flag, new_parser, refuse_repeats, rollout_count
from .runner.job import Job, Plan


def measure(
    candidate: str, players: int, deals: int, rollouts: int, seed: int, rules: str, trust_model: bool = False
) -> dict:
    """Plain and reduced paired differences of ``candidate`` over most_copies on the same deals, with times."""
    opponents = ["random"]
    paired = PairedDeals.draw(deals, players, 1, seed)
    names = ("most_copies", candidate)
    policies = lambda: {name: make_candidate(name, seed, tuple(opponents), trust_model) for name in names}  # noqa: E731
    warm = PairedDeals.draw(8, players, 1, seed + 1)  # compile every kernel both runs use before timing either
    play_candidates(policies(), opponents, warm, rules, seed)
    play_candidates(policies(), opponents, warm, rules, seed, variance_reduction=rollouts)
    started = time.perf_counter()
    plain = play_candidates(policies(), opponents, paired, rules, seed)
    plain_seconds = time.perf_counter() - started
    started = time.perf_counter()
    both = play_candidates(policies(), opponents, paired, rules, seed, variance_reduction=rollouts)
    reduced_seconds = time.perf_counter() - started
    as_played = mean_ci(plain[candidate] - plain["most_copies"])
    same_play = mean_ci(both[candidate][0] - both["most_copies"][0])
    reduced = mean_ci(both[candidate][1] - both["most_copies"][1])
    return {
        "players": players, "rollouts": rollouts, "plain": as_played, "plain_same_play": same_play,
        "reduced": reduced, "shrink": same_play[1] / reduced[1], "plain_seconds": plain_seconds,
        "reduced_seconds": reduced_seconds,
        # plain deals that give the reduced CI, per second of the reduced run: above 1 ×, reduction pays
        "worth": (same_play[1] / reduced[1]) ** 2 * deals / reduced_seconds / (deals / plain_seconds),
    }  # fmt: skip


def parser():
    job = new_parser(__doc__, __name__)
    add_flag(job, "players", nargs="+", default=[3, 4, 6, 8])
    job.add_argument("--candidate", default="ppo", help="the agent whose gain over most_copies is measured")
    add_flag(job, "deals", default=4000, help="paired deals per cell")
    job.add_argument("--rollouts", nargs="+", type=rollout_count, default=[32], help="rollouts per legal lead")
    add_flag(job, "rules")
    add_flag(job, "seed")
    add_flag(job, "trust-model")
    return job


def work(args) -> list[dict]:
    print(f"{args.candidate} − most_copies at random-lead tables, {args.deals:,} paired deals, rules {args.rules}")
    print("| players | rollouts | plain (as evaluate plays) | plain, same play | reduced | CI shrink | "
          "plain s | reduced s | worth |\n|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    rows = []
    for players in args.players:
        for rollouts in args.rollouts:
            row = measure(args.candidate, players, args.deals, rollouts, args.seed, args.rules, args.trust_model)
            rows.append(row)
            cells = [f"{mean:+.2f} ± {ci:.2f}" for mean, ci in (row["plain"], row["plain_same_play"], row["reduced"])]
            times = f"{row['plain_seconds']:.1f} | {row['reduced_seconds']:.1f} | {row['worth']:.2f}×"
            print(f"| {players} | {rollouts} | {' | '.join(cells)} | {row['shrink']:.2f}× | {times} |", flush=True)
    return rows


def check(args) -> Plan:
    """The candidate made (name, model file), the sizes and rollouts distinct."""
    refuse_repeats("players", args.players)
    refuse_repeats("rollouts", args.rollouts)
    make_candidate(args.candidate, args.seed, trust_model=args.trust_model)
    return Plan(lambda _: work(args))


JOB = Job(
    parser,
    check,
    example=("--players", "3", "--candidate", "most_copies", "--deals", "20", "--rollouts", "2"),
    agents=("candidate",),
)
main = JOB.main

if __name__ == "__main__":
    main()
