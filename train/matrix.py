"""The strength matrix: chips per deal and paired gain over most_copies (95% CIs) for every table size ×
rules preset × opponent pool, for the agents in ``--agents`` — in this process, or as Ray tasks on this
machine's cores (``--ray``) or on a cluster (``--ray ADDRESS``, or ``--ray`` with ``RAY_ADDRESS`` set).

Work units are a cell's training run (``--train``: a policy distilled from the search player for that
cell, as ``python -m train.train_ppo`` does; it joins the table as ``trained``) and shards of a cell's
paired deals. A shard's deals, seats and random streams are seeded from ``--seed``, the cell and the shard's
index, and shards are merged in index order, so the numbers do not depend on Ray or on the number of
workers. Finished cells are kept in ``--out/cells/``: an interrupted matrix started again with the same
flags resumes where it stopped; with other settings it refuses (``--overwrite`` starts anew).
Writes matrix.md, .csv, .json and matrix.png (gain over most_copies by table size and preset, one panel
per agent and opponent pool) to ``--out``.

    python -m train.matrix --players 3 4 --rules scarne --agents random most_copies --deals 2000 --out A
    python -m train.matrix --rules scarne parlett bicycle wiswell --agents random pimc:128 ppo --ray
    python -m train.matrix --players 4 6 --opponents random --train --agents pimc:128 --ray auto
    python -m train.matrix --players 6 8 --opponents random --agents ppo --deals 2000 --variance-reduction 16

An opponent pool is one agent name or several joined by ``+`` (one drawn per seat per deal).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

import agents

from .measure.candidates import add_variance_flag, made, make_candidate, model_files
from .measure.paired import PairedDeals, play_candidates, summarise
from .runner.cli import (
    add_flag,
    add_job_flags,
    deal_count,
    new_parser,
    position_count,
    refuse_repeats,
    require,
)
from .runner.job import Job, Plan
from .runner.parts_bar import Part, PartsBar
from .runner.results_folder import csv_of, kept, pyplot, refuse_foreign
from .runner.units import add_ray_flags, require_ray, start_runner

REFERENCE = "most_copies"
TRAINED = "trained"  # the cell's own policy, with --train


@dataclass(frozen=True)
class Cell:
    players: int
    rules: str
    opponents: str  # a pool: agent names joined by "+"

    @property
    def key(self) -> str:
        return f"{self.rules}_{self.players}p_{self.opponents}"

    @property
    def pool(self) -> list[str]:
        return self.opponents.split("+")


@dataclass(frozen=True)
class Settings:
    """What the numbers depend on (and nothing else: not the workers, not Ray)."""

    players: tuple[int, ...]
    rules: tuple[str, ...]
    opponents: tuple[str, ...]
    agents: tuple[str, ...]
    deals: int
    shard_deals: int
    seed: int
    train: bool
    train_positions: int
    variance_reduction: int = 0  # rollouts per lead for the control variates of train.measure.variance (0: none)
    trust_model: bool = False  # load ppo:<file> SB3 zips (not a setting the numbers depend on: kept out of the key)

    def cells(self) -> list[Cell]:
        return [Cell(n, rules, pool) for pool in self.opponents for rules in self.rules for n in self.players]

    def shards(self, cell: Cell) -> list[tuple[int, int]]:
        """(index, deals) of each shard of a cell."""
        starts = range(0, self.deals, self.shard_deals)
        return [(i, min(self.shard_deals, self.deals - start)) for i, start in enumerate(starts)]

    def agent_names(self) -> list[str]:
        return [*self.agents, *([TRAINED] if self.train else [])]


def shard_seed(seed: int, cell: Cell, index: int) -> int:
    """A shard's seed from the job's seed, the cell and the shard index (stable across processes)."""
    sequence = np.random.SeedSequence([seed, zlib.crc32(cell.key.encode()), index])
    return int(sequence.generate_state(1)[0])


def run_shard(settings: Settings, cell: Cell, index: int, deals: int, model: bytes | None) -> dict[str, np.ndarray]:
    """Every agent's chips on one shard of a cell's paired deals (a work unit)."""
    seed = shard_seed(settings.seed, cell, index)
    with tempfile.TemporaryDirectory() as folder:
        trust = settings.trust_model
        policies = {spec: make_candidate(spec, seed, tuple(cell.pool), trust) for spec in settings.agents}
        if model is not None:
            path = Path(folder) / "trained.zip"
            path.write_bytes(model)
            policies[TRAINED] = agents.make("ppo", path=str(path), seed=seed)
        paired = PairedDeals.draw(deals, cell.players, len(cell.pool), seed, cell.rules)
        return play_candidates(
            policies,
            cell.pool,
            paired,
            cell.rules,
            seed,
            variance_reduction=settings.variance_reduction,
            trust_model=trust,
        )


def train_cell(settings: Settings, cell: Cell, runs: str) -> bytes:
    """Distil a policy for one cell (train.train_ppo's run folder ``<runs>/matrix_<cell>_s<seed>``, resumed or
    reused when there with the same settings) and return its model file (a work unit)."""
    from .learn.args import Args
    from .learn.run import train_or_reuse

    args = Args(
        num_players=cell.players,
        rules=cell.rules,
        opponents=tuple(cell.pool),
        teacher="pimc:128",  # distillation only: a cell's policy fitted to the search player at that table
        total_timesteps=0,
        teacher_opponents=tuple(cell.pool),
        seed=settings.seed,
        teacher_players=(cell.players,),
        teacher_positions=settings.train_positions,
        out_dir=runs,
        run_name=f"matrix_{cell.key}_s{settings.seed}",
        progress=False,
    )
    return (train_or_reuse(args) / "final_model.zip").read_bytes()


def run_matrix(settings: Settings, folder, runner, runs: str = "runs", progress: bool = True) -> list[dict]:
    """Every cell of ``settings`` (finished ones read back from ``<folder>/cells``); write into ``folder`` (a
    train.runner.results_folder) and return the rows."""
    out = folder.path
    cells_dir = out / "cells"
    refuse_foreign(folder, "cells")
    finished = {cell.key: read_cell(folder, cell, settings) for cell in settings.cells()}
    todo = [cell for cell in settings.cells() if finished[cell.key] is None]
    pending, shards, owner, unit_parts = [], {}, {}, {}
    for cell in todo:  # a part per unit, of a kind by what it does and the table's size and rules
        model = runner.submit(train_cell, settings, cell, runs) if settings.train else None
        if model is not None:
            pending.append(model)
            owner[model] = (cell, None)
            unit_parts[model] = Part(f"train {cell.key}", f"train {cell.rules} {cell.players}", 1)
        for index, deals in settings.shards(cell):
            handle = runner.submit(run_shard, settings, cell, index, deals, model)
            pending.append(handle)
            owner[handle] = (cell, index)
            unit_parts[handle] = Part(f"{cell.key} {index}", f"shard {cell.rules} {cell.players}", deals)
    with PartsBar(list(unit_parts.values()), "matrix", disable=not progress) as bar:
        for handle, result in runner.results(pending):
            bar.finished(unit_parts[handle])
            cell, index = owner[handle]
            if index is None:
                folder.write(out / "models" / f"{cell.key}.zip", lambda p, data=result: p.write_bytes(data))
                continue
            shards.setdefault(cell.key, {})[index] = result
            if len(shards[cell.key]) == len(settings.shards(cell)):  # the cell is complete: merge in shard order
                done = shards.pop(cell.key)
                pieces = [done[i] for i in range(len(done))]
                # deals are the last axis: (D,), or (2, D) as played and reduced with --variance-reduction
                names = settings.agent_names()
                merged = {name: np.concatenate([piece[name] for piece in pieces], axis=-1) for name in names}
                rows = cell_rows(cell, merged)
                folder.write(cells_dir / f"{cell.key}.json", lambda p, r=rows: p.write_text(json.dumps(r, indent=1)))
                finished[cell.key] = rows
    rows = [row for cell in settings.cells() for row in finished[cell.key]]
    save(settings, rows, folder, f"{settings.deals:,} paired deals per cell, seed {settings.seed}")
    return rows


def cell_rows(cell: Cell, chips: dict[str, np.ndarray]) -> list[dict]:
    """One row per agent: chips per deal and the paired gain over most_copies, with 95% CIs."""
    rows = []
    for row in summarise(chips, REFERENCE):
        rows.append(
            {
                "players": cell.players,
                "rules": cell.rules,
                "opponents": cell.opponents,
                "agent": row.name,
                "chips_per_deal": row.chips_per_deal,
                "ci95": row.ci95,
                "gain_over_most_copies": row.diff_vs_reference,
                "gain_ci95": row.diff_ci95,
                "deals": row.deals,
            }
        )
        if row.diff_ci95_plain is not None:  # with variance reduction: the gain as played beside the reduced one
            rows[-1] |= {
                "gain_over_most_copies_plain": row.diff_vs_reference_plain,
                "gain_ci95_plain": row.diff_ci95_plain,
            }
    return rows


ROW_KEYS = ("players", "rules", "opponents", "agent", "chips_per_deal", "ci95", "gain_over_most_copies", "gain_ci95")


def check_cell(rows, cell: Cell, settings: Settings) -> None:
    """Nothing, if ``rows`` are the finished rows of ``cell`` of this matrix; else a ValueError saying what is
    wrong with them (another cell's rows, other agents or deals, not rows at all)."""
    if not isinstance(rows, list) or not all(isinstance(row, dict) and set(ROW_KEYS) <= set(row) for row in rows):
        raise ValueError("not a list of matrix rows")
    if any(
        (row["players"], row["rules"], row["opponents"]) != (cell.players, cell.rules, cell.opponents) for row in rows
    ):
        raise ValueError("it holds another cell's rows")
    if [row["agent"] for row in rows] != settings.agent_names() or any(row["deals"] != settings.deals for row in rows):
        raise ValueError("its agents or deals are not this matrix's")


def read_cell(folder, cell: Cell, settings: Settings) -> list[dict] | None:
    """The finished rows of ``cell`` from ``cells/<key>.json``; None when it is not there yet, or is damaged
    (unreadable, changed since this matrix wrote it, another cell's rows, other agents or deals), which is
    said, naming the file, and the cell computed again."""
    path = folder.path / "cells" / f"{cell.key}.json"
    return kept(folder, path, lambda rows: check_cell(rows, cell, settings), f"computing cell {cell.key} again")


def save(settings: Settings, rows: list[dict], folder, title: str) -> None:
    """matrix.json (settings and rows only, so equal settings give equal bytes), .csv, .md and .png."""
    out = folder.path
    document = {"settings": asdict(settings), "rows": rows}
    folder.write(out / "matrix.json", lambda p: p.write_text(json.dumps(document, indent=1) + "\n"))
    folder.write(out / "matrix.csv", csv_of(rows))
    folder.write(out / "matrix.md", lambda p: p.write_text(format_markdown(settings, rows, title)))
    plot_heatmap(settings, rows, folder, title)


def format_markdown(settings: Settings, rows: list[dict], title: str) -> str:
    """Per opponent pool: gain over most_copies, then chips per deal — an agent and preset per row, a table
    size per column."""
    lookup = {(r["opponents"], r["rules"], r["agent"], r["players"]): r for r in rows}
    lines = [title, ""]
    header = "| rules | agent | " + " | ".join(f"{n} players" for n in settings.players) + " |"
    rule = "|---|---|" + "---|" * len(settings.players)
    for pool in settings.opponents:
        for label, value, ci in (
            ("gain over most_copies per deal", "gain_over_most_copies", "gain_ci95"),
            ("chips per deal", "chips_per_deal", "ci95"),
        ):
            lines += [f"Opponents: {pool} — {label} (95% CI)", "", header, rule]
            for rules in settings.rules:
                for agent in settings.agent_names():
                    if agent == REFERENCE and value == "gain_over_most_copies":
                        continue
                    cells = [lookup[pool, rules, agent, n] for n in settings.players]
                    lines.append(
                        f"| {rules} | {agent} | " + " | ".join(f"{c[value]:+.2f} ± {c[ci]:.2f}" for c in cells) + " |"
                    )
            lines.append("")
    return "\n".join(lines)


def plot_heatmap(settings: Settings, rows: list[dict], folder, title: str) -> None:
    """matrix.png: gain over most_copies by table size (x) and preset (y), a panel per agent (column) and
    pool (row)."""
    plt = pyplot()
    if plt is None:
        return

    shown = [agent for agent in settings.agent_names() if agent != REFERENCE] or [REFERENCE]
    lookup = {(r["opponents"], r["rules"], r["agent"], r["players"]): r for r in rows}
    pools = settings.opponents
    fig, axes = plt.subplots(
        len(pools),
        len(shown),
        figsize=(2.0 + 0.8 * len(settings.players) * len(shown), 1.2 + (0.9 + 0.55 * len(settings.rules)) * len(pools)),
        squeeze=False,
        layout="constrained",
    )
    gains = np.array([r["gain_over_most_copies"] for r in rows])
    limit = max(float(np.abs(gains).max()), 0.1)
    for row_axes, pool in zip(axes, pools):
        for ax, agent in zip(row_axes, shown):
            grid = np.array(
                [
                    [lookup[pool, rules, agent, n]["gain_over_most_copies"] for n in settings.players]
                    for rules in settings.rules
                ]
            )
            image = ax.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
            for (i, j), gain in np.ndenumerate(grid):
                ci = lookup[pool, settings.rules[i], agent, settings.players[j]]["gain_ci95"]
                colour = "white" if abs(gain) > 0.55 * limit else "black"  # readable on the dark cells too
                ax.text(j, i, f"{gain:+.2f}\n±{ci:.2f}", ha="center", va="center", fontsize=7, color=colour)
            ax.set_xticks(range(len(settings.players)), [str(n) for n in settings.players])
            ax.set_yticks(range(len(settings.rules)), settings.rules if agent == shown[0] else [])
            ax.set_title(f"{agent}, opponents: {pool}", fontsize=9)
            ax.set_xlabel("players")
    fig.colorbar(image, ax=axes, shrink=0.6, label="chips per deal over most_copies")
    fig.suptitle(title, fontsize=9)
    folder.write(folder.path / "matrix.png", lambda p: fig.savefig(p, dpi=110, format="png"))
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS

    job = new_parser(__doc__, __name__)
    add_flag(job, "players", nargs="+", default=list(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
    add_flag(job, "rules", nargs="+", default=["scarne"])
    add_flag(job, "opponents", default=["random", "most_copies"], help="opponent pools ('a+b' mixes a and b)")
    job.add_argument(
        "--agents",
        nargs="+",
        default=["random", "most_copies", "pimc:128"],
        help="agents: scripted names, pimc[:samples], ppo (the shipped model), ppo:<model.zip>",
    )
    add_flag(job, "deals", help="paired deals per cell")
    job.add_argument("--shard-deals", type=deal_count, default=5000, help="paired deals per work unit")
    add_flag(job, "seed")
    job.add_argument("--train", action="store_true", help="distil a policy per cell first; it plays as 'trained'")
    job.add_argument("--train-positions", type=position_count, default=200_000, help="positions labelled per cell")
    add_variance_flag(job)
    add_flag(job, "runs")
    add_ray_flags(job)
    add_job_flags(job, "matrix.md/.csv/.json/.png and the finished cells")
    return job


def check(args) -> Plan:
    """Every agent and opponent made (names, model files), no repeats, Ray there (and started or joined) with
    --ray; the settings keyed by every model file."""
    for flag in ("players", "rules", "opponents", "agents"):
        refuse_repeats(flag, getattr(args, flag))
    names = list(dict.fromkeys([REFERENCE, *args.agents]))
    settings = Settings(
        tuple(args.players),
        tuple(args.rules),
        tuple(args.opponents),
        tuple(names),
        args.deals,
        args.shard_deals,
        args.seed,
        args.train,
        args.train_positions,
        args.variance_reduction,
        args.trust_model,
    )
    if settings.train:
        require("train", "torch", "stable_baselines3", "sb3_contrib", "safetensors")
    pools = [name for cell in settings.cells() for name in cell.pool]
    tables = {(cell.rules, cell.players) for cell in settings.cells()}
    models = model_files(made([*settings.agents, *pools], args.trust_model, sorted(tables)))
    require_ray(args)
    record = json.loads(json.dumps(asdict(settings))) | {"models": models}
    del record["trust_model"]
    if not settings.variance_reduction:  # only then: the folders of plain matrices keep their settings
        del record["variance_reduction"]
    runner = start_runner(args)

    def work(folder) -> list[dict]:
        rows = run_matrix(settings, folder, runner, args.runs, progress=args.progress)
        print(f"results written to {folder.path}")
        return rows

    kept = "the finished cells are kept in {folder}/cells; the same command resumes from them"
    return Plan(work, record, args.out, args.overwrite, kept, close=runner.close)


JOB = Job(
    parser, check,
    example=("--players", "3", "--rules", "scarne", "--opponents", "random", "--agents", "random", "--deals", "20",
             "--shard-deals", "10"), writes=("runs",), agents=("agents", "opponents"))  # fmt: skip
main = JOB.main


if __name__ == "__main__":
    main()
