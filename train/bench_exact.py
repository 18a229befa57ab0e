"""Benchmark the exact value of an agent (``python -m train.exact``'s work, train.measure.exact_tree): seconds to walk
a small deck's tree and value a learned model, a Python agent and the scripted ones on it, deck by deck. Prints a
table and writes JSON.

    python -m train.bench_exact                                 # 4 ranks x 3 players, then the largest decks
    python -m train.bench_exact --decks 4x3 5x3 --json exact.json

A deck ``KxN`` is K ranks at N players. The first deck's time includes nothing of numba's first compile: a warm-up
walk of the 3-rank deck comes first.
"""

from __future__ import annotations

import time

from .measure.exact_walk import deck
from .measure.speed import add_json_flags, check_json, save_json
from .runner.cli import add_flag, new_parser, refuse_repeats
from .runner.job import Job, Plan, Refusal

DECKS = ("4x3", "6x3", "5x4")


def fewest_lowest(observation) -> int:
    """A Python agent asked one observation at a time: the legal rank held least often, ties to the lowest."""
    import numpy as np

    hand = np.rint(observation["observation"][:13] * 4)
    legal = np.flatnonzero(observation["action_mask"][:13])
    return 13 if len(legal) == 0 else int(legal[np.argmin(hand[legal])])


def parser():
    job = new_parser(__doc__, __name__)
    job.add_argument("--decks", nargs="+", default=list(DECKS), help="decks as <ranks>x<players>")
    job.add_argument("--agents", nargs="+", default=["ppo", "python", "most_copies"],
                     help="what to value beside the optimum: agent names or specs, 'python' a Python agent asked one "
                     "observation at a time")  # fmt: skip
    add_flag(job, "trust-model")
    add_json_flags(job)
    return job


def policies(names, trust: bool = False) -> dict:
    from agents.spec import UserAgent

    from .measure.candidates import make_candidate

    return {name: UserAgent("python", fewest_lowest, None) if name == "python" else make_candidate(name, 0,
            trust_model=trust) for name in names}  # fmt: skip


def work(args) -> dict:
    from .measure.exact_tree import exact_agent_values

    exact_agent_values(policies(args.agents, args.trust_model), "random", 3, "scarne:ranks=3")  # compile, warm up
    rows = []
    print(f"exact values of {', '.join(args.agents)} and the optimum, at a table of random leads")
    print("| deck | seconds |")
    print("|---|---|")
    for text in args.decks:
        ranks, players = deck(text)
        start = time.perf_counter()
        exact_agent_values(policies(args.agents, args.trust_model), "random", players, f"scarne:ranks={ranks}")
        seconds = time.perf_counter() - start
        rows.append({"ranks": ranks, "players": players, "seconds": seconds})
        print(f"| {ranks} ranks × {players} players | {seconds:.1f} |")
    return save_json({"agents": args.agents, "rows": rows}, args.json, "bench_exact", args.command)


def check(args) -> Plan:
    """Every deck one the walk takes, the agents made, the --json file new (or this benchmark's, with --overwrite)."""
    from .measure.exact_walk import check_exact

    check_json(args.json, args.overwrite, "bench_exact")
    refuse_repeats("decks", args.decks)
    for text in args.decks:
        try:
            ranks, players = deck(text)
        except ValueError as error:
            raise Refusal(f"--decks: {error}") from None
        check_exact(["random"], players, f"scarne:ranks={ranks}")
    policies(args.agents, args.trust_model)
    return Plan(lambda _: work(args))


JOB = Job(parser, check, example=("--decks", "3x3", "--agents", "python"), writes=("json",), agents=("agents",))
main = JOB.main

if __name__ == "__main__":
    main()
