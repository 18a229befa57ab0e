"""How a policy leads: at each table size, the share of its real choices that lead a rank held once,
twice, three or four times, how often it leaves most_copies' choice, and its hand size when it does.
Positions come from deals of ``--opponents`` players (train.distill's sampler).

    python -m train.behaviour --agent ppo
    python -m train.behaviour --agent pimc:128 --positions 5000 --players 3 6
"""

from __future__ import annotations

import numpy as np

import agents
from agents.scripted import hand_counts
from snipsnap_env.cards import CARDS_PER_RANK, NUM_RANKS
from snipsnap_env.observation import MAX_HAND, SLICES
from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .learn.distill import collect_positions
from .measure.candidates import made, make_candidate
from .runner.cli import add_flag, new_parser, position_count, refuse_repeats
from .runner.job import Job, Plan


def behaviour(spec: str, players, rules: str, opponents, positions: int, seed: int) -> dict:
    """Per table size: lead shares by copies held, deviation from most_copies, hand sizes."""
    policy = make_candidate(spec, seed, tuple(opponents))
    pool = [agents.make(name, seed=seed + 1 + i) for i, name in enumerate(opponents)]
    table = {}
    for n in players:
        obs, mask, _ = collect_positions(n, rules, positions, pool, seed + n)
        own = hand_counts(obs).astype(int)
        copies = own[np.arange(len(obs)), policy.act_batch(obs, mask)]
        most = np.where(mask[:, :NUM_RANKS] > 0, own, -1).max(axis=1)
        hand = np.rint(obs[:, SLICES["hand_size"].start] * MAX_HAND)
        leaves = copies != most
        table[n] = {
            "leads_by_copies": (np.bincount(copies, minlength=CARDS_PER_RANK + 1)[1:] / len(obs)).tolist(),
            "leaves_most_copies": float(leaves.mean()),
            "hand_when_leaving": float(hand[leaves].mean()) if leaves.any() else float("nan"),
            "hand_when_agreeing": float(hand[~leaves].mean()) if (~leaves).any() else float("nan"),
        }
    return table


def parser():
    job = new_parser(__doc__, __name__)
    job.add_argument("--agent", default="ppo", help="an agent as train.evaluate names it")
    add_flag(job, "players", nargs="+", default=list(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
    add_flag(job, "rules")
    add_flag(job, "opponents")
    job.add_argument("--positions", type=position_count, default=20_000, help="real choices per table size")
    add_flag(job, "seed")
    add_flag(job, "trust-model")
    return job


def check(args) -> Plan:
    """The agent and the opponents made (names, model files), the table sizes distinct, before any work."""
    refuse_repeats("players", args.players)
    made([args.agent, *args.opponents], args.trust_model)

    def work(_) -> dict:
        table = behaviour(args.agent, args.players, args.rules, args.opponents, args.positions, args.seed)
        print(f"{args.agent}: real choices in deals of {'+'.join(args.opponents)} players, rules {args.rules}")
        print("| players | leads a rank held 1 / 2 / 3 / 4 times | leaves most_copies | own hand then / else |")
        print("|---|---|---|---|")
        for n, row in table.items():
            shares = " / ".join(f"{100 * x:.0f}%" for x in row["leads_by_copies"])
            print(
                f"| {n} | {shares} | {100 * row['leaves_most_copies']:.0f}% | "
                f"{row['hand_when_leaving']:.1f} / {row['hand_when_agreeing']:.1f} cards |"
            )
        return table

    return Plan(work)


JOB = Job(
    parser,
    check,
    example=("--agent", "most_copies", "--players", "3", "--positions", "50"),
    agents=("agent", "opponents"),
)
main = JOB.main


if __name__ == "__main__":
    main()
