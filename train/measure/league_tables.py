"""A league's tables: its settings, who sits where at each table, each table played on paired deals, the
results by table size and the leaderboard (ratings, alpha-Rank)."""

from __future__ import annotations

import itertools
import math
import zlib
from dataclasses import dataclass

import numpy as np

from . import ratings
from .candidates import make_candidate
from .paired import PairedDeals, mean_ci
from .rotations import arrangements, play_rotations

DEFAULT_AGENTS = ("random", "most_copies", "fewest_copies", "control", "pimc:32", "pimc:128", "ppo", "ppo_scratch")
TABLES = "tables"  # the folder's subfolder of finished tables
MAX_TABLES = 10_000  # per table size
MAX_DEALS_PER_SIZE = 10_000_000  # tables × deals at one size: every seat's chips stay in memory for the ratings
ZERO_SUM = 1e-3  # a deal's chips, summed over the seats (rounded to 6 places each), are 0 within this


@dataclass(frozen=True)
class Settings:
    agents: tuple[str, ...]
    players: tuple[int, ...]
    rules: str
    deals: int  # per table, each played once per rotation of the seats
    tables: int  # per table size
    seed: int
    trust_model: bool = False

    def units(self) -> list[tuple[int, int]]:
        """(table size, index) of every table, in the order the ratings take them."""
        return [(players, index) for players in self.players for index in range(self.tables)]


#: how a table is played: 2, the agents' order round the table drawn for every deal (1, until 2026-12-03: one
#: order per table, kept by the rotations)
PLAY_VERSION = 2


def table_seed(settings: Settings, players: int, index: int, purpose: int = 0) -> int:
    """A seed from the job's seed, the pool, the table size, the index and the purpose (0: the table's own
    streams, 1: the order of the cycle ``index`` of agent sets), stable across processes."""
    pool = zlib.crc32(" ".join(settings.agents).encode())
    entropy = [settings.seed, pool, players, index, purpose]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def seat_agents(settings: Settings, players: int, index: int) -> list[str]:
    """The agents at a table, in seat-list order. While the pool has enough agents, the tables of one size
    go through every set of ``players`` distinct agents in a shuffled order, each set once per cycle: an
    agent's chips depend on whom it meets, so every agent meets every company equally often (after whole
    cycles; the leaderboard says how many). A table larger than the pool seats everyone, some twice."""
    rng = np.random.default_rng(table_seed(settings, players, index))
    pool = len(settings.agents)
    if pool >= players:
        sets = list(itertools.combinations(range(pool), players))
        cycle = np.random.default_rng(table_seed(settings, players, index // len(sets), 1)).permutation(len(sets))
        order = rng.permutation(sets[cycle[index % len(sets)]])
    else:
        order = np.concatenate([rng.permutation(pool) for _ in range(-(-players // pool))])[:players]
    return [settings.agents[i] for i in order]


def compositions(settings: Settings, players: int) -> int:
    """How many different sets of distinct agents a table of ``players`` can seat (0: the pool is smaller)."""
    return math.comb(len(settings.agents), players) if len(settings.agents) >= players else 0


def play_table(settings: Settings, players: int, index: int) -> dict:
    """One table (a work unit): its agents and their chips per deal, averaged over the seat rotations."""
    seed = table_seed(settings, players, index) % 2**31
    seated = seat_agents(settings, players, index)
    policies = [make_candidate(spec, seed + i, trust_model=settings.trust_model) for i, spec in enumerate(seated)]
    paired = PairedDeals.draw(settings.deals, players, 1, seed, settings.rules)
    order = arrangements(settings.deals, players, seed)
    chips = play_rotations(policies, paired, settings.rules, seed, False, order)
    return {"players": players, "index": index, "agents": seated, "chips": chips.round(6).tolist()}


def agent_chips(table: dict) -> dict[str, np.ndarray]:
    """Per agent at the table: its chips in each deal (the mean over its seats, if it has several)."""
    chips = np.asarray(table["chips"])
    names = table["agents"]
    return {name: chips[[i for i, n in enumerate(names) if n == name]].mean(axis=0) for name in dict.fromkeys(names)}


def by_size(settings: Settings, tables: list[dict]) -> dict[str, list[dict]]:
    """Per table size, one row per agent seated there, best first: its rating (train.measure.ratings, fitted on that
    size's tables alone) with a bootstrap 95% interval, its chips per deal with a 95% CI, and its α-Rank mass."""
    result = {}
    for players in settings.players:
        at_size = [
            {"index": table["index"], "chips": agent_chips(table)} for table in tables if table["players"] == players
        ]
        names = [name for name in settings.agents if any(name in table["chips"] for table in at_size)]
        rated = ratings.rate_size(names, at_size, table_seed(settings, players, 0, purpose=2))
        mass = ratings.alpharank(ratings.margins(names, at_size))
        rows = []
        for i, name in enumerate(names):
            chips, ci = mean_ci(np.concatenate([table["chips"][name] for table in at_size if name in table["chips"]]))
            rows.append({"agent": name, **rated[name], "chips": chips, "chips_ci95": ci, "alpharank": float(mass[i])})
        result[str(players)] = sorted(rows, key=lambda row: -row["rating"])
    return result


def leaderboard(settings: Settings, sizes: dict[str, list[dict]], tables: list[dict]) -> list[dict]:
    """One row per agent, best first by the mean of its per-size ratings (each size counted once): those
    ratings, and its chips per deal at each size with 95% CIs."""
    rows = []
    for name in settings.agents:
        row = {"agent": name}
        for players in settings.players:
            (mine,) = [r for r in sizes[str(players)] if r["agent"] == name] or [None]
            # None where it never sat at this size: JSON has no NaN, and no number is the honest entry
            row[f"rating_{players}p"] = mine["rating"] if mine else None
            row[f"chips_{players}p"] = mine["chips"] if mine else None
            row[f"ci95_{players}p"] = mine["chips_ci95"] if mine else None
            row[f"deals_{players}p"] = sum(
                len(table["chips"][0]) for table in tables if table["players"] == players and name in table["agents"]
            )
        rated = [row[f"rating_{n}p"] for n in settings.players if row[f"rating_{n}p"] is not None]
        row["rating"] = float(np.mean(rated)) if rated else None
        rows.append(row)
    return sorted(rows, key=lambda row: (row["rating"] is None, -(row["rating"] or 0.0)))  # unrated last
