"""The strength ladder: chips per deal and paired gain over most_copies (95% CIs) for every table size
3..8, against random-lead and most_copies opponents, for random, most_copies, the search player at several
sample counts and the learned policy. Writes ladder.md, .csv, .json and ladder.png (gain over most_copies
against table size, one panel per opponent pool) to ``--out``.

    python -m train.ladder                                  # the committed table (about 7 minutes here)
    python -m train.ladder --players 4 6 --deals 2000 --candidates random most_copies pimc:32
"""

from __future__ import annotations

import argparse
import json

from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .measure.candidates import add_variance_flag, made, model_files
from .measure.evaluation import evaluate
from .runner.cli import add_flag, add_job_flags, new_parser, refuse_repeats
from .runner.job import Job, Plan
from .runner.parts_bar import Part, PartsBar
from .runner.results_folder import csv_of, pyplot

DEFAULT_CANDIDATES = ["random", "most_copies", "pimc:32", "pimc:128", "pimc:512", "ppo"]


def ladder(
    players, opponents, candidates, rules: str, deals: int, seed: int, folder=None, variance_reduction: int = 0,
    trust_model: bool = False, progress: bool = True,
) -> list[dict]:
    """Evaluate every candidate in every (table size, opponent pool) cell; return the rows and write them to
    ``folder`` (a train.runner.results_folder), if given. ``variance_reduction``: as
    :func:`train.measure.evaluation.evaluate`'s."""
    found = {}
    cells = [Part(f"{pool} {n}p", pool, deals, (n, pool)) for pool in opponents for n in players]
    for part in PartsBar(cells, "ladder", disable=not progress):  # pool by pool in turn: smallest tables first
        n, pool = part.what
        table = evaluate(
            candidates, [pool], n, rules, deals, seed, reference="most_copies", quiet=True,
            variance_reduction=variance_reduction, trust_model=trust_model,
        )  # fmt: skip
        found[n, pool] = [{"players": n, "opponents": pool, **row.record()} for row in table]
    rows = [row for pool in opponents for n in players for row in found[n, pool]]  # the table's order, pool by pool
    title = f"rules {rules}, {deals:,} paired deals per cell, seed {seed}"
    if variance_reduction:
        title += f", variance reduction ({variance_reduction} rollouts per lead)"
    if folder is not None:
        save(rows, title, folder)
    return rows


def format_markdown(rows: list[dict], title: str) -> str:
    lines = [title, ""]
    for pool in dict.fromkeys(row["opponents"] for row in rows):
        lines += [
            f"Opponents: {pool}",
            "",
            "| players | policy | chips per deal (95% CI) | gain over most_copies (95% CI) |",
            "|---|---|---|---|",
        ]
        for row in rows:
            if row["opponents"] == pool:
                lines.append(
                    f"| {row['players']} | {row['name']} | {row['chips_per_deal']:+.2f} ± {row['ci95']:.2f} | "
                    f"{row['diff_vs_reference']:+.2f} ± {row['diff_ci95']:.2f} |"
                )
        lines.append("")
    return "\n".join(lines)


def save(rows: list[dict], title: str, folder) -> None:
    """ladder.md, .csv, .json and ladder.png in ``folder`` (a train.runner.results_folder)."""
    out = folder.path
    folder.write(out / "ladder.md", lambda p: p.write_text(format_markdown(rows, title)))
    folder.write(out / "ladder.csv", csv_of(rows))
    folder.write(out / "ladder.json", lambda p: p.write_text(json.dumps({"title": title, "rows": rows}, indent=2)))
    plt = pyplot()
    if plt is None:
        return

    pools = list(dict.fromkeys(row["opponents"] for row in rows))
    fig, axes = plt.subplots(1, len(pools), figsize=(6 * len(pools), 4.2), squeeze=False, sharey=True)
    for ax, pool in zip(axes[0], pools):
        for name in dict.fromkeys(row["name"] for row in rows):
            cell = [row for row in rows if row["opponents"] == pool and row["name"] == name]
            ax.errorbar(
                [row["players"] for row in cell],
                [row["diff_vs_reference"] for row in cell],
                yerr=[row["diff_ci95"] for row in cell],
                marker="o",
                capsize=3,
                label=name,
            )
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("players at the table")
        ax.set_title(f"opponents: {pool}")
    axes[0][0].set_ylabel("chips per deal over most_copies (paired, 95% CI)")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    folder.write(out / "ladder.png", lambda p: fig.savefig(p, dpi=110, format="png"))
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__, __name__)
    add_flag(job, "players", nargs="+", default=list(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
    add_flag(job, "opponents", default=["random", "most_copies"], help="opponent pools: one panel each")
    job.add_argument("--candidates", nargs="+", default=DEFAULT_CANDIDATES)
    add_flag(job, "rules")
    add_flag(job, "deals", help="paired deals per cell")
    add_flag(job, "seed")
    add_variance_flag(job)
    add_job_flags(job, "ladder.md/.csv/.json/.png")
    return job


def check(args) -> Plan:
    """Every candidate and opponent made (names, model files), the lists without repeats; the settings keyed
    by every model file played."""
    if "most_copies" not in args.candidates:
        args.candidates = ["most_copies", *args.candidates]
    for flag in ("players", "opponents", "candidates"):
        refuse_repeats(flag, getattr(args, flag))
    settings = {key: getattr(args, key) for key in ("players", "opponents", "candidates", "rules", "deals", "seed")}
    pools = [name for pool in args.opponents for name in pool.split("+")]
    tables = [(args.rules, n) for n in args.players]
    settings["models"] = model_files(made([*args.candidates, *pools], args.trust_model, tables))
    if args.variance_reduction:  # only then: plain ladders keep their settings
        settings["variance_reduction"] = args.variance_reduction

    def work(folder) -> list[dict]:
        rows = ladder(
            args.players, args.opponents, args.candidates, args.rules, args.deals, args.seed, folder,
            args.variance_reduction, args.trust_model, args.progress,
        )  # fmt: skip
        print(f"results written to {folder.path}")
        return rows

    return Plan(work, settings, args.out, args.overwrite)


JOB = Job(
    parser,
    check,
    example=("--players", "3", "--opponents", "random", "--candidates", "random", "--deals", "20"),
    agents=("candidates", "opponents"),
)
main = JOB.main


if __name__ == "__main__":
    main()
