"""The clairvoyant bound: how much a lead choice could gain over most_copies if it saw every hand.

At each of its real choices the clairvoyant player plays every candidate lead (one per copy count held)
out on the *true* deal — the opponents led by the policy really seated there, itself by most_copies
afterwards, each play-out repeated ``--repeats`` times with the same random draws for every candidate —
and leads the best. It cheats, so it is no agent; it bounds what one-step lookahead with most_copies
after it can gain. A player that sees only public information and its own hand, like the search player
(:mod:`agents.pimc`, the same lookahead on sampled worlds), should stay below it.

    python -m train.oracle --players 4 6 --opponents random most_copies --deals 100000
"""

from __future__ import annotations

import argparse

import numba
import numpy as np

import agents
from agents.pimc import candidates_by_copies
from agents.scripted import hand_counts
from snipsnap_env.batch import BatchEnv, play_seated
from snipsnap_env.cards import NUM_RANKS
from snipsnap_env.jit_cache import drop_if_sources_changed
from snipsnap_env.kernel import (
    MOST_COPIES,
    POLICIES,
    TO_ACT,
    play_out,
    play_until_choice,
    policy_codes,
    rule_codes,
    uniform,
)
from snipsnap_env.rules import check_count, check_num_players, check_rules_spec, make_rules

from .measure.paired import PairedDeals, Row, play_paired, summarise
from .runner.cli import add_flag, new_parser, refuse_repeats, rollout_count
from .runner.job import Job, Plan, Refusal

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)


@numba.njit(cache=True, nogil=True, parallel=True)
def clairvoyant_values(holding, hand_size, played, public, policies, candidates, seeds, repeats, rules, values):
    """``values[r, rank]``: the mean chips the seat to act in game state ``r`` (the kernel's state arrays,
    one row per game, at a lead) wins from there on when it leads ``rank`` (where ``candidates[r, rank]``),
    over ``repeats`` play-outs in which ``policies[r, seat]`` lead for every seat. Play-out ``k`` of a state
    draws the same random numbers for every candidate (common random numbers)."""
    rows, n = hand_size.shape
    for r in numba.prange(rows):
        seat = public[r, TO_ACT]
        streams = np.empty(1 + n, np.uint64)
        for rank in range(NUM_RANKS):
            if not candidates[r, rank]:
                continue
            total = 0.0
            for k in range(repeats):
                for i in range(1 + n):
                    streams[i] = seeds[r] ^ (np.uint64(k * (1 + n) + i) * np.uint64(0xD1B54A32D192ED03))
                    uniform(streams[i : i + 1])
                h, size, done, state = holding[r].copy(), hand_size[r].copy(), played[r].copy(), public[r].copy()
                score = np.zeros(n)
                play_until_choice(h, size, done, state, score, rank, rules)
                play_out(h, size, done, state, score, policies[r], streams, rules)
                total += score[seat]
            values[r, rank] = total / repeats


def play_clairvoyant(deals: PairedDeals, opponent: str, rules: str, repeats: int, seed: int) -> np.ndarray:
    """The clairvoyant player's chips in each deal, in seat ``deals.seats``, the others led by ``opponent``."""
    num_deals, num_players = deals.opponent_index.shape
    env = BatchEnv(num_deals, num_players, rules=rules)
    rollout = np.tile(policy_codes([opponent] * num_players), (num_deals, 1))
    rollout[np.arange(num_deals), deals.seats] = MOST_COPIES  # the clairvoyant player after its lead
    codes = rule_codes(make_rules(rules))
    rng = np.random.default_rng(seed)

    def lead(env, rows, obs, mask):  # the best candidate, played out on the true hands
        candidates = candidates_by_copies(hand_counts(obs).astype(np.int64), mask[:, :NUM_RANKS] > 0)
        values = np.zeros((len(rows), NUM_RANKS))
        games = env.games
        state = (games.holding[rows], games.hand_size[rows], games.played[rows], games.public[rows])
        seeds = rng.integers(0, 2**63, size=len(rows), dtype=np.uint64)
        clairvoyant_values(*state, rollout[rows], candidates, seeds, repeats, codes, values)
        return np.where(candidates, values, -np.inf).argmax(axis=1)

    start = env.reset(owners=deals.owners, dealers=deals.dealers)
    others = [agents.make(opponent, seed=seed + 1)]
    return play_seated(env, start, deals.seats, lead, others, deals.opponent_index)


def bound(num_players: int, opponent: str, rules: str = "scarne", deals: int = 20000, repeats: int = 8, seed: int = 0):
    """Rows for most_copies and the clairvoyant player on the same paired deals (differences vs most_copies)."""
    check_num_players(num_players)
    if opponent not in POLICIES:
        raise ValueError(f"opponent {opponent!r}: the play-outs need a policy the kernel plays: {', '.join(POLICIES)}")
    check_rules_spec(rules)
    check_count("repeats", repeats)
    paired = PairedDeals.draw(check_count("deals", deals), num_players, 1, seed, rules)
    results = {
        "most_copies": play_paired(
            agents.make("most_copies", seed=seed), [agents.make(opponent, seed=seed + 1)], paired, rules, seed=seed
        ),
        "clairvoyant": play_clairvoyant(paired, opponent, rules, repeats, seed),
    }
    return summarise(results, "most_copies")


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    add_flag(job, "players", nargs="+", default=[3, 4, 6, 8], help="table sizes, 3..8")
    job.add_argument("--opponents", nargs="+", default=["random", "most_copies"], help="one table per opponent")
    add_flag(job, "rules")
    add_flag(job, "deals")
    add_flag(job, "seed")
    job.add_argument("--repeats", type=rollout_count, default=8, help="play-outs per candidate lead")
    return job


def check(args) -> Plan:
    """The opponents are policies the kernel plays; the table sizes and opponents distinct."""
    refuse_repeats("players", args.players)
    refuse_repeats("opponents", args.opponents)
    for opponent in args.opponents:
        if opponent not in POLICIES:
            raise Refusal(f"--opponents got {opponent!r}; allowed: policies the kernel plays ({', '.join(POLICIES)})")

    def work(_) -> list[Row]:
        rows = []
        print("| players | opponents | clairvoyant − most_copies (95% CI) |\n|---|---|---|")
        for opponent in args.opponents:
            for n in args.players:
                row = bound(n, opponent, args.rules, args.deals, args.repeats, args.seed)[1]
                print(f"| {n} | {opponent} | {row.diff_vs_reference:+.2f} ± {row.diff_ci95:.2f} |", flush=True)
                rows.append(row)
        return rows

    return Plan(work)


JOB = Job(
    parser,
    check,
    example=("--players", "3", "--opponents", "random", "--deals", "40", "--repeats", "2"),
    agents=("opponents",),
)
main = JOB.main


if __name__ == "__main__":
    main()
