"""A league: every agent of a pool rated from mixed tables, with OpenSkill.

Each table seats a random draw from the pool (distinct agents while the pool has enough, every agent at
least once when the table has more seats than the pool has agents), and plays ``--deals`` paired deals,
each replayed with the seats rotated, so every agent there meets every deal from every seat and the luck
of the cards cancels. A table's deals are cut into matches of ``--match-deals`` deals; each match ranks the
table's agents by their chips and updates their OpenSkill (Plackett-Luce) ratings. The output is a
leaderboard: rating (mean ``mu``, uncertainty ``sigma``, the conservative ``mu - 3 sigma`` it is sorted
by) and chips per deal at each table size with 95% CIs, as league.md, .csv, .json and league.png.

Tables are work units, run here or as Ray tasks (``--ray``, as in ``train.matrix``). A table's agents, deals
and random streams are seeded from ``--seed``, its size and its index, and the ratings are updated in table
order after all tables are in, so league.json is byte for byte the same in process and on Ray. Finished
tables are kept in ``--out/tables/``: a league started again with the same flags resumes, reading back only the
tables it wrote there, unchanged (their SHA-256 in the folder's manifest) and whole; any other is played again,
saying so. Learned agents are keyed by their model file's SHA-256, so a file replaced under the same name is a
new league, never the old tables. Add your own model with ``--agents ... ppo:path/to/model.zip`` (and
``--trust-model`` for a Stable-Baselines3 zip).

    python -m train.league --agents random most_copies fewest_copies control pimc:32 pimc:128 ppo --players 4 6
    python -m train.league --agents random most_copies ppo ppo_scratch --players 3 4 5 6 --tables 40 --ray
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .cli import (
    add_flag,
    at_least,
    between,
    command_line,
    new_parser,
    progress_bar,
    refuse_repeats,
    stops_cleanly,
)
from .evaluate import made, make_candidate, model_files
from .mixed import play_rotations
from .paired import PairedDeals, mean_ci
from .results_folder import csv_of, kept, pyplot, refuse_foreign, results_folder
from .run_folder import Refused
from .runners import add_ray_flags, require_ray, start_runner

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
    match_deals: int  # deals per rated match
    seed: int
    trust_model: bool = False

    def units(self) -> list[tuple[int, int]]:
        """(table size, index) of every table, in the order the ratings take them."""
        return [(players, index) for players in self.players for index in range(self.tables)]


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
    chips = play_rotations(policies, PairedDeals.draw(settings.deals, players, 1, seed), settings.rules, seed, False)
    return {"players": players, "index": index, "agents": seated, "chips": chips.round(6).tolist()}


def agent_chips(table: dict) -> dict[str, np.ndarray]:
    """Per agent at the table: its chips in each deal (the mean over its seats, if it has several)."""
    chips = np.asarray(table["chips"])
    names = table["agents"]
    return {name: chips[[i for i, n in enumerate(names) if n == name]].mean(axis=0) for name in dict.fromkeys(names)}


def rate(settings: Settings, chips_by_table: list[dict]) -> dict:
    """OpenSkill Plackett-Luce ratings after every match of every table (its :func:`agent_chips`), in order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {name: model.rating() for name in settings.agents}
    matches = {name: 0 for name in settings.agents}
    for chips in chips_by_table:
        names = list(chips)
        for start in range(0, settings.deals, settings.match_deals):
            scores = [float(chips[name][start : start + settings.match_deals].sum()) for name in names]
            rated = model.rate([[ratings[name]] for name in names], scores=scores)
            for name, team in zip(names, rated):
                ratings[name] = team[0]
                matches[name] += 1
    return {
        name: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.mu - 3 * r.sigma, "matches": matches[name]}
        for name, r in ratings.items()
    }


def leaderboard(settings: Settings, tables: list[dict]) -> list[dict]:
    """One row per agent, best first by ``mu - 3 sigma``: its rating and chips per deal per table size."""
    chips_by_table = [agent_chips(table) for table in tables]
    ratings = rate(settings, chips_by_table)
    rows = []
    for name in settings.agents:
        row = {"agent": name, **ratings[name]}
        for players in settings.players:
            deals = [
                chips[name]
                for table, chips in zip(tables, chips_by_table)
                if table["players"] == players and name in chips
            ]
            mean, ci = mean_ci(np.concatenate(deals)) if deals else (float("nan"), float("nan"))
            row[f"chips_{players}p"], row[f"ci95_{players}p"], row[f"deals_{players}p"] = mean, ci, sum(map(len, deals))
        rows.append(row)
    return sorted(rows, key=lambda row: -row["ordinal"])


def table_path(folder, players: int, index: int) -> Path:
    return folder.path / TABLES / f"{players}p_{index}.json"


def check_table(table, settings: Settings, players: int, index: int) -> None:
    """Nothing, if ``table`` is table ``index`` of ``players`` of this league, whole; else a ValueError saying
    what is wrong with it."""
    if not isinstance(table, dict) or set(table) != {"players", "index", "agents", "chips"}:
        raise ValueError("it is not a table of a league")
    if (table["players"], table["index"]) != (players, index):
        raise ValueError(f"it holds table {table['players']!r}p_{table['index']!r}")
    if table["agents"] != seat_agents(settings, players, index):
        raise ValueError("its agents are not the ones this league seats there")
    chips = table["chips"]
    if not (
        isinstance(chips, list)
        and len(chips) == players
        and all(isinstance(seat, list) and len(seat) == settings.deals for seat in chips)
        and all(type(value) in (int, float) and math.isfinite(value) for seat in chips for value in seat)
    ):
        raise ValueError(f"its chips are not {players} seats × {settings.deals:,} deals of finite numbers")
    if np.abs(np.asarray(chips).sum(axis=0)).max() > ZERO_SUM:
        raise ValueError("its chips do not add up to 0 in every deal (every deal is zero-sum)")


def kept_table(folder, settings: Settings, players: int, index: int) -> dict | None:
    """A finished table kept in ``tables/``, if this league wrote it, it is unchanged since (the manifest's
    SHA-256) and it is whole; None if absent. Any other is named, with why, and played again."""
    return kept(
        folder,
        table_path(folder, players, index),
        lambda table: check_table(table, settings, players, index),
        f"playing table {players}p_{index} again",
    )


def run_league(settings: Settings, folder, runner, progress: bool = True) -> list[dict]:
    """Every table (finished ones read back), then the leaderboard, written into ``folder``."""
    refuse_foreign(folder, TABLES)
    units = settings.units()
    tables = {unit: kept_table(folder, settings, *unit) for unit in units}
    todo = [unit for unit in units if tables[unit] is None]
    bar = progress_bar(total=len(todo), desc="league", unit="table", disable=not progress)
    owner = {runner.submit(play_table, settings, *unit): unit for unit in todo}
    for handle, result in runner.results(list(owner)):
        unit = owner[handle]
        tables[unit] = result
        folder.write(table_path(folder, *unit), lambda p, r=result: p.write_text(table_text(r)))
        bar.update(1)
    bar.close()
    rows = leaderboard(settings, [tables[unit] for unit in units])
    cover = "; ".join(
        f"{n} players: {settings.tables / compositions(settings, n):.2g} × each of the {compositions(settings, n)} sets"
        for n in settings.players
        if compositions(settings, n)
    )
    title = (
        f"League of {len(settings.agents)} agents, rules {settings.rules}: {settings.tables} tables of "
        f"{'/'.join(map(str, settings.players))} players × {settings.deals:,} deals (every seat rotation), "
        f"matches of {settings.match_deals} deals, seed {settings.seed}"
        + (f". Tables seat {cover} of agents" if cover else "")
    )
    digests = [
        {"players": n, "index": i, "agents": tables[n, i]["agents"], "sha256": table_digest(tables[n, i])}
        for n, i in units
    ]
    save(settings, rows, folder, title, digests)
    return rows


def table_text(table: dict) -> str:
    """A table as its file holds it."""
    return json.dumps(table)


def table_digest(table: dict) -> str:
    """The SHA-256 of a table's file: league.json lists each table's, so that any one table can be played again
    and checked to be the one the leaderboard was made from, without shipping the tables."""
    return hashlib.sha256(table_text(table).encode()).hexdigest()


def format_markdown(settings: Settings, rows: list[dict], title: str) -> str:
    sizes = settings.players
    lines = [
        title,
        "",
        "| rank | agent | mu − 3σ | mu | σ | "
        + " | ".join(f"chips per deal, {n} players (95% CI)" for n in sizes)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(sizes),
    ]
    for rank, row in enumerate(rows, 1):
        chips = " | ".join(
            f"{row[f'chips_{n}p']:+.2f} ± {row[f'ci95_{n}p']:.2f}" if row[f"deals_{n}p"] else "—" for n in sizes
        )
        lines.append(
            f"| {rank} | {row['agent']} | {row['ordinal']:.2f} | {row['mu']:.2f} | {row['sigma']:.2f} | {chips} |"
        )
    return "\n".join(lines) + "\n"


def save(settings: Settings, rows: list[dict], folder, title: str, digests: list[dict]) -> None:
    """league.md, .csv, .json (the settings, the leaderboard and each table's digest) and league.png."""
    out = folder.path
    document = json.dumps({"settings": asdict(settings), "leaderboard": rows, "tables": digests}, indent=1)
    folder.write(out / "league.json", lambda p: p.write_text(document))
    folder.write(out / "league.csv", csv_of(rows))
    folder.write(out / "league.md", lambda p: p.write_text(format_markdown(settings, rows, title)))
    plt = pyplot()
    if plt is None:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = [row["agent"] for row in rows][::-1]
    left.barh(names, [row["mu"] for row in rows][::-1], xerr=[3 * row["sigma"] for row in rows][::-1], capsize=4)
    left.set_xlabel("OpenSkill rating mu (bars: ± 3 sigma)")
    width = 0.8 / len(settings.players)
    for k, n in enumerate(settings.players):
        y = np.arange(len(names)) + (k - (len(settings.players) - 1) / 2) * width
        values = [row[f"chips_{n}p"] for row in rows][::-1]
        errors = [row[f"ci95_{n}p"] for row in rows][::-1]
        right.barh(y, values, width, xerr=errors, capsize=3, label=f"{n} players")
    right.set_yticks(np.arange(len(names)), names)
    right.axvline(0, color="black", linewidth=0.8)
    right.set_xlabel("chips per deal at mixed tables (95% CI)")
    right.legend()
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    folder.write(out / "league.png", lambda p: fig.savefig(p, dpi=120, format="png"))
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    job.add_argument(
        "--agents",
        nargs="+",
        default=list(DEFAULT_AGENTS),
        help="the pool (as train.evaluate names them; ppo:path/to/model.zip adds a model file)",
    )
    add_flag(job, "players", nargs="+", default=[4, 6], help="table sizes, 3..8")
    add_flag(job, "rules")
    add_flag(job, "seed")
    add_flag(job, "deals", default=1000, help="paired deals per table, each played once per seat rotation")
    job.add_argument("--tables", type=between(1, MAX_TABLES), default=12, help="tables per table size")
    job.add_argument("--match-deals", type=at_least(1), default=100, help="deals per rated match")
    add_ray_flags(job)
    job.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="show a progress bar")
    add_flag(job, "out", help="folder for league.md/.csv/.json/.png (default: results/league/<settings hash>)")
    add_flag(job, "overwrite")
    add_flag(job, "trust-model")
    return job


def main(argv=None) -> list[dict]:
    job = parser()
    args = job.parse_args(argv)
    if len(set(args.agents)) != len(args.agents):
        job.error(f"--agents names an agent twice: {' '.join(args.agents)}")
    if len(args.agents) < 2:
        job.error("--agents needs at least two agents to rate")
    refuse_repeats(job, "players", args.players)
    if args.tables * args.deals > MAX_DEALS_PER_SIZE:
        job.error(
            f"--tables {args.tables} × --deals {args.deals:,} is more than {MAX_DEALS_PER_SIZE:,} deals at a table "
            "size (their chips stay in memory for the ratings): fewer tables or deals"
        )
    settings = Settings(
        tuple(args.agents),
        tuple(args.players),
        args.rules,
        args.deals,
        args.tables,
        args.match_deals,
        args.seed,
        args.trust_model,
    )
    require_ray(job, args)
    try:
        import openskill  # noqa: F401
    except ImportError:
        job.error('the league needs openskill: pip install -e ".[train]"')
    try:  # a bad name or model file: refused before the folder or any work
        models = model_files(made(args.agents, args.trust_model))
    except (ValueError, FileNotFoundError, ImportError) as error:
        job.error(str(error))
    key = {name: value for name, value in asdict(settings).items() if name != "trust_model"} | {"models": models}
    runner = start_runner(job, args)
    try:
        with results_folder(args.out, "league", key, args.overwrite, command_line(argv)) as folder:
            kept_where = f"the finished tables are kept in {folder.path / TABLES}; the same command resumes from them"
            with stops_cleanly(kept_where):
                rows = run_league(settings, folder, runner, args.progress)
    except (ValueError, FileNotFoundError, ImportError, Refused) as error:
        job.error(str(error))
    finally:
        runner.close()
    print((folder.path / "league.md").read_text())
    print(f"results written to {folder.path}")
    return rows


if __name__ == "__main__":
    main()
