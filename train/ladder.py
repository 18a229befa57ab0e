"""The strength ladder: chips per deal and paired gain over most_copies (95% CIs) for every table size
3..8, against random-lead and most_copies opponents, for random, most_copies, the search player at several
sample counts and the learned policy. Writes ladder.md, .csv, .json and ladder.png (gain over most_copies
against table size, one panel per opponent pool) to ``--out``.

    python -m train.ladder                                  # the README's table (about 30 minutes here)
    python -m train.ladder --players 4 6 --deals 2000 --candidates random most_copies pimc:32
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from dataclasses import asdict
from pathlib import Path

from tqdm import tqdm

from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .cli import add_flag, new_parser
from .evaluate import evaluate

DEFAULT_CANDIDATES = ["random", "most_copies", "pimc:32", "pimc:128", "pimc:512", "ppo"]


def ladder(players, opponents, candidates, rules: str, deals: int, seed: int, out: Path) -> list[dict]:
    """Evaluate every candidate in every (table size, opponent pool) cell; write and return the rows."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    cells = [(n, pool) for pool in opponents for n in players]
    started = time.perf_counter()
    for n, pool in tqdm(cells, desc="ladder", unit="cell"):
        table = evaluate(candidates, [pool], n, rules, deals, seed, reference="most_copies", quiet=True)
        rows += [{"players": n, "opponents": pool, **asdict(row)} for row in table]
    title = f"rules {rules}, {deals:,} paired deals per cell, seed {seed} ({time.perf_counter() - started:.0f} s)"
    save(rows, title, out)
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


def save(rows: list[dict], title: str, out: Path) -> None:
    """ladder.md, .csv, .json and ladder.png."""
    (out / "ladder.md").write_text(format_markdown(rows, title))
    with open(out / "ladder.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (out / "ladder.json").write_text(json.dumps({"title": title, "rows": rows}, indent=2))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    fig.savefig(out / "ladder.png", dpi=110)
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__)
    add_flag(job, "players", nargs="+", default=list(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
    add_flag(job, "opponents", default=["random", "most_copies"], help="opponent pools: one panel each")
    job.add_argument("--candidates", nargs="+", default=DEFAULT_CANDIDATES)
    add_flag(job, "rules")
    add_flag(job, "deals", help="paired deals per cell")
    add_flag(job, "seed")
    add_flag(job, "out", default="results/ladder")
    return job


def main(argv=None) -> list[dict]:
    job = parser()
    args = job.parse_args(argv)
    if "most_copies" not in args.candidates:
        args.candidates = ["most_copies", *args.candidates]
    try:
        return ladder(args.players, args.opponents, args.candidates, args.rules, args.deals, args.seed, Path(args.out))
    except (ValueError, FileNotFoundError) as error:
        job.error(str(error))


if __name__ == "__main__":
    main()
