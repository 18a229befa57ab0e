"""A league: every agent of a pool rated from mixed tables, at each table size on its own.

Each table seats a random draw from the pool (distinct agents while the pool has enough, every agent at
least once when the table has more seats than the pool has agents), and plays ``--deals`` paired deals,
each replayed with the seats rotated, so every agent there meets every deal from every seat and the luck
of the cards cancels; the agents' order round the table is drawn afresh for every deal (who sits after whom
is worth chips: :func:`train.mixed.arrangements`). The ratings (:mod:`train.measure.ratings`) are fitted per table
size over all its tables at once — a paired comparison on chip margins, by maximum likelihood, with
bootstrap 95% intervals — so they depend neither on the order of the tables nor on the other sizes, and they
order the agents as their chips do wherever every agent meets every company equally often; α-Rank over the
same tables is a second view. The output: one leaderboard per size (rating, chips per deal with 95% CIs,
α-Rank mass) and an every-size summary, as league.md, .csv, .json (``by_size``) and league.png.

Tables are work units, run here or as Ray tasks (``--ray``, as in ``train.matrix``). A table's agents, deals
and random streams are seeded from ``--seed``, its size and its index, so league.json is byte for byte the
same in process and on Ray. Finished
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
import json
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .measure.candidates import made, model_files
from .measure.league_tables import (
    DEFAULT_AGENTS,
    MAX_DEALS_PER_SIZE,
    MAX_TABLES,
    PLAY_VERSION,
    TABLES,
    ZERO_SUM,
    Settings,
    by_size,
    compositions,
    leaderboard,
    play_table,
    seat_agents,
)
from .runner.cli import add_flag, add_job_flags, between, new_parser, refuse_repeats
from .runner.job import Job, Plan, Refusal
from .runner.parts_bar import Part, PartsBar, met_early
from .runner.results_folder import csv_of, kept, pyplot, refuse_foreign
from .runner.units import add_ray_flags, require_ray, start_runner


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
    # submitted size by size in turn (3, 4, 5, 6, 3, 4, ...), as the bar's parts run: every size is timed early
    todo = met_early([unit for unit in units if tables[unit] is None], lambda unit: unit[0])
    parts = {unit: Part(f"{unit[0]}p", str(unit[0]), 1) for unit in todo}
    owner = {runner.submit(play_table, settings, *unit): unit for unit in todo}
    with PartsBar(list(parts.values()), "league", disable=not progress) as bar:
        for handle, result in runner.results(list(owner)):  # as they finish: each kept at once
            unit = owner[handle]
            tables[unit] = result
            folder.write(table_path(folder, *unit), lambda p, r=result: p.write_text(table_text(r)))
            bar.finished(parts[unit])
    played = [tables[unit] for unit in units]
    sizes = by_size(settings, played)
    rows = leaderboard(settings, sizes, played)
    cover = "; ".join(
        f"{n} players: {settings.tables / compositions(settings, n):.2g} × each of the {compositions(settings, n)} sets"
        for n in settings.players
        if compositions(settings, n)
    )
    title = (
        f"League of {len(settings.agents)} agents, rules {settings.rules}: {settings.tables} tables of "
        f"{'/'.join(map(str, settings.players))} players × {settings.deals:,} deals (every seat rotation), "
        f"seed {settings.seed}" + (f". Tables seat {cover} of agents" if cover else "")
    )
    digests = [
        {"players": n, "index": i, "agents": tables[n, i]["agents"], "sha256": table_digest(tables[n, i])}
        for n, i in units
    ]
    save(settings, sizes, rows, folder, title, digests)
    return rows


def table_text(table: dict) -> str:
    """A table as its file holds it."""
    return json.dumps(table)


def table_digest(table: dict) -> str:
    """The SHA-256 of a table's file: league.json lists each table's, so that any one table can be played again
    and checked to be the one the leaderboard was made from, without shipping the tables."""
    return hashlib.sha256(table_text(table).encode()).hexdigest()


def format_markdown(settings: Settings, sizes: dict[str, list[dict]], rows: list[dict], title: str) -> str:
    lines = [title, ""]
    for players, board in sizes.items():
        lines += [
            f"**{players} players**",
            "",
            "| rank | agent | rating (95% CI) | chips per deal (95% CI) | α-Rank mass |",
            "|---|---|---|---|---|",
        ]
        for rank, row in enumerate(board, 1):
            low, high = row["rating_ci95"]
            lines.append(
                f"| {rank} | {row['agent']} | {row['rating']:+.2f} ({low:+.2f} to {high:+.2f}) | "
                f"{row['chips']:+.2f} ± {row['chips_ci95']:.2f} | {row['alpharank']:.3f} |"
            )
        lines.append("")
    sizes_named = "/".join(map(str, settings.players))
    lines += [
        f"**Every size** (sorted by the mean of the {sizes_named}-player ratings)",
        "",
        "| agent | mean rating | "
        + " | ".join(f"chips per deal, {n} players (95% CI)" for n in settings.players)
        + " |",
        "|---|---|" + "---|" * len(settings.players),
    ]
    for row in rows:
        chips = " | ".join(
            f"{row[f'chips_{n}p']:+.2f} ± {row[f'ci95_{n}p']:.2f}" if row[f"deals_{n}p"] else "—"
            for n in settings.players
        )
        rating = "—" if row["rating"] is None else f"{row['rating']:+.2f}"
        lines.append(f"| {row['agent']} | {rating} | {chips} |")
    return "\n".join(lines) + "\n"


def save(settings: Settings, sizes: dict, rows: list[dict], folder, title: str, digests: list[dict]) -> None:
    """league.md, .csv (the every-size rows), .json (the settings, the ratings by size, the every-size rows and
    each table's digest) and league.png (each size's ratings with their intervals)."""
    out = folder.path
    document = {"settings": asdict(settings), "by_size": sizes, "leaderboard": rows, "tables": digests}
    text = json.dumps(document, indent=1)
    folder.write(out / "league.json", lambda p: p.write_text(text))
    folder.write(out / "league.csv", csv_of(rows))
    folder.write(out / "league.md", lambda p: p.write_text(format_markdown(settings, sizes, rows, title)))
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(
        1, len(sizes), figsize=(4.2 * len(sizes), 0.45 * len(settings.agents) + 1.8), squeeze=False
    )
    for ax, (players, board) in zip(axes[0], sizes.items()):
        names = [row["agent"] for row in board][::-1]
        values = np.array([row["rating"] for row in board][::-1])
        bounds = np.array([row["rating_ci95"] for row in board][::-1])
        ax.barh(names, values, xerr=[values - bounds[:, 0], bounds[:, 1] - values], capsize=3)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_title(f"{players} players", fontsize=9)
        ax.set_xlabel("rating: chips per deal over the average agent (95% CI)", fontsize=8)
    fig.suptitle(title, fontsize=7)
    # the canvas grows to the agents' names (model paths can be long): tight_layout warned where they did not fit
    folder.write(out / "league.png", lambda p: fig.savefig(p, dpi=120, format="png", bbox_inches="tight"))
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
    add_ray_flags(job)
    add_job_flags(job, "league.md/.csv/.json/.png")
    return job


def check(args) -> Plan:
    """Two or more distinct agents, each made (names, model files), sizes distinct, a league that fits in
    memory, Ray there (and started or joined) with --ray; the settings keyed by every model file."""
    if len(set(args.agents)) != len(args.agents):
        raise Refusal(f"--agents names an agent twice: {' '.join(args.agents)}")
    if len(args.agents) < 2:
        raise Refusal("--agents needs at least two agents to rate")
    refuse_repeats("players", args.players)
    if args.tables * args.deals > MAX_DEALS_PER_SIZE:
        raise Refusal(
            f"--tables {args.tables} × --deals {args.deals:,} is more than {MAX_DEALS_PER_SIZE:,} deals at a table "
            "size (their chips stay in memory for the ratings): fewer tables or deals"
        )
    settings = Settings(
        tuple(args.agents), tuple(args.players), args.rules, args.deals, args.tables, args.seed, args.trust_model
    )
    require_ray(args)
    models = model_files(made(args.agents, args.trust_model, [(args.rules, n) for n in args.players]))
    key = {name: value for name, value in asdict(settings).items() if name != "trust_model"} | {"models": models}
    key["play_version"] = PLAY_VERSION  # a folder of tables played another way is another league, never resumed
    runner = start_runner(args)
    kept = f"the finished tables are kept in {{folder}}/{TABLES}; the same command resumes from them"

    def work(folder) -> list[dict]:
        rows = run_league(settings, folder, runner, args.progress)
        print((folder.path / "league.md").read_text())
        print(f"results written to {folder.path}")
        return rows

    return Plan(work, key, args.out, args.overwrite, kept, close=runner.close)


JOB = Job(
    parser,
    check,
    example=("--agents", "random", "most_copies", "--players", "3", "--tables", "2", "--deals", "10"),
    agents=("agents",),
)
main = JOB.main


if __name__ == "__main__":
    main()
