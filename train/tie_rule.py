"""What a learned player's tie rule costs: the lowest of the ranks its observation cannot tell apart, or one drawn.

Ranks a seat holds equally often, untouched, have the same features in its observation, so a rank-shared
network gives them equal logits and greedy play needs a rule among them. Until 2026-12-03 it was the lowest
rank; a table of such players then leads low ranks first, and whoever leads other ranks sheds the low ones by
following. This job seats a model at tables of its own copies with each rule (``agents.make("ppo")`` draws,
``agents.make("ppo", ties="lowest")`` plays the lowest) and measures, on the same paired deals, what each
player earns in one seat against a most_copies player there:

    python -m train.tie_rule --players 3 4 6 8 --deals 100000 --seed 43
"""

from __future__ import annotations

import argparse

import agents
from agents.ppo import TIE_RULES
from snipsnap_env.rules import check_num_players

from .measure.evaluation import format_table
from .measure.paired import PairedDeals, Row, play_paired, summarise
from .runner.cli import add_flag, new_parser, refuse_repeats
from .runner.job import Job, Plan


def player(rule: str, model: str | None, seed: int):
    return agents.make("ppo", path=model, seed=seed, ties=rule)


def at_tables_of(table_rule: str, num_players: int, deals: int, seed: int, model: str | None = None) -> list[Row]:
    """The chips of most_copies and of the model under each tie rule, in one seat at tables of the model's
    copies breaking ties by ``table_rule``: rows against most_copies, on the same paired deals."""
    check_num_players(num_players)
    if table_rule not in TIE_RULES:
        raise ValueError(f"tie rule {table_rule!r}; allowed: {', '.join(TIE_RULES)}")
    paired = PairedDeals.draw(deals, num_players, 1, seed)
    candidates = {"most_copies": agents.make("most_copies", seed=seed)}
    candidates |= {f"ppo ({rule} ties)": player(rule, model, seed) for rule in TIE_RULES}
    results = {}
    for name, candidate in candidates.items():
        candidate.reseed(seed)
        table = [player(table_rule, model, seed + 1)]  # made afresh, so every candidate meets the same draws
        results[name] = play_paired(candidate, table, paired, "scarne", seed=seed)
    return summarise(results, "most_copies")


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    add_flag(job, "players", nargs="+", default=[3, 4, 6, 8], help="table sizes, 3..8")
    add_flag(job, "deals")
    add_flag(job, "seed")
    job.add_argument("--model", default=None, help="a model file (default: the shipped ppo)")
    return job


def check(args) -> Plan:
    """The model loaded (with each tie rule) and the table sizes distinct, before any work."""
    refuse_repeats("players", args.players)
    for rule in TIE_RULES:
        player(rule, args.model, args.seed)

    def work(_) -> list[Row]:
        rows = []
        for n in args.players:
            for rule in TIE_RULES:
                table = at_tables_of(rule, n, args.deals, args.seed, args.model)
                print(f"\n{n} players, a table of the model's copies breaking ties {rule}, {args.deals:,} paired deals")
                print(format_table(table), flush=True)
                rows += table
        return rows

    return Plan(work)


JOB = Job(parser, check, example=("--players", "3", "--deals", "20"))
main = JOB.main


if __name__ == "__main__":
    main()
