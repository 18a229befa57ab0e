"""A score card for any agent: one command, a fixed suite, one page.

    python -m train.scorecard ppo
    python -m train.scorecard ppo:runs/my_run/final_model.zip --out results/scorecard_mine
    python -m train.scorecard pimc:32 --deals 2000 --variance-reduction   # a search: fewer deals, narrower CIs

The suite (:data:`SUITE_VERSION`), on held-out deals (seed :data:`SEED`, which no training run and no other
committed table uses):

- **Gain over most_copies** in the agent's seat, paired deals, at 3..8 players against four kinds of table:
  random-lead players, most_copies players, copies of the agent itself, and a mixed pool (each seat drawn from
  random, most_copies and the two learned models ``ppo_distilled`` and ``ppo_scratch``).
- **A normalised score** per cell: 0 for a random lead, 100 for the search player ``pimc:128``, from their gains
  on the same cells (:data:`ANCHORS`, measured once by ``--make-anchors``, the command in the file); and overall,
  the mean over the anchored cells. The own-copies cells have no anchors (the table is the agent itself).
- **Exploitability** at 3, 4 and 6 players (:func:`train.exploit.exploitability`, a search best response; a
  quick lower bound at the card's budget — ``train.exploit`` measures it precisely).
- **Its place in a small league** at 3..6 players (random, most_copies, ppo_distilled and the agent; the
  ratings of :mod:`train.measure.ratings`).

Writes scorecard.md, .json and .png into ``--out``; deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from . import exploit, league
from .runner.cli import add_flag, at_least, command_line, new_parser, progress_bar
from .evaluate import evaluate
from .measure.candidates import add_variance_flag, made, model_files
from .runner.results_folder import pyplot, results_folder
from .runner.run_folder import Refused

SUITE_VERSION = 1
SEED = 2027
PLAYERS = (3, 4, 5, 6, 7, 8)
MIXED = ("random", "most_copies", "ppo_distilled", "ppo_scratch")
POOLS = {"random": ("random",), "most_copies": ("most_copies",), "own copies": None, "mixed": MIXED}
EXPLOIT_PLAYERS = (3, 4, 6)
LEAGUE_PLAYERS = (3, 4, 5, 6)
LEAGUE_POOL = ("random", "most_copies", "ppo_distilled")
ANCHORS = Path(__file__).with_name("scorecard_anchors.json")
ANCHORED = ("random", "pimc:128")  # score 0 and score 100


def pool_of(kind: str, agent: str) -> list[str]:
    return [agent] if POOLS[kind] is None else list(POOLS[kind])


def gains(agent: str, kind: str, players: int, deals: int, seed: int, variance_reduction: int, trust: bool) -> dict:
    """The agent's paired gain over most_copies at one cell of the suite."""
    rows = evaluate(
        ["most_copies", agent], pool_of(kind, agent), players, "scarne", deals, seed, reference="most_copies",
        quiet=True, trust_model=trust, variance_reduction=variance_reduction,
    )  # fmt: skip
    row = rows[1] if len(rows) > 1 else rows[0]
    return {"gain": row.diff_vs_reference, "gain_ci95": row.diff_ci95}


def read_anchors() -> dict:
    document = json.loads(ANCHORS.read_text())
    if document["suite_version"] != SUITE_VERSION:
        raise ValueError(f"{ANCHORS} is for suite {document['suite_version']}, not {SUITE_VERSION}: --make-anchors")
    return document["cells"]


def score(gain: float, anchor: dict) -> float:
    """0 at a random lead's gain, 100 at pimc:128's, on the same cell."""
    low, high = anchor["random"]["gain"], anchor["pimc:128"]["gain"]
    return 100 * (gain - low) / (high - low)


def scorecard(agent: str, deals: int, exploit_deals: int, exploit_samples: int, league_deals: int, seed: int,
              variance_reduction: int = 0, trust: bool = False, progress: bool = True) -> dict:  # fmt: skip
    """Every part of the card, as one document."""
    anchors = read_anchors()
    cells = [(kind, n) for kind in POOLS for n in PLAYERS]
    units = len(cells) + len(EXPLOIT_PLAYERS) + 1
    bar = progress_bar(total=units, desc=f"score card of {agent}", unit="part", disable=not progress)
    rows = []
    for kind, players in cells:
        bar.set_postfix_str(f"{kind} tables, {players} players")
        row = {"opponents": kind, "players": players}
        row |= gains(agent, kind, players, deals, seed + players, variance_reduction, trust)
        anchor = anchors.get(f"{kind}_{players}p")
        if anchor is not None:
            scale = 100 / (anchor["pimc:128"]["gain"] - anchor["random"]["gain"])
            row |= {"score": score(row["gain"], anchor), "score_ci95": abs(scale) * row["gain_ci95"]}
        rows.append(row)
        bar.update(1)
    exploits = []
    for players in EXPLOIT_PLAYERS:
        bar.set_postfix_str(f"exploitability, {players} players")
        found = exploit.exploitability(
            agent, players, "scarne", exploit_deals, exploit_samples, seed, trust_model=trust
        )
        entry = {"players": players, "gain": found["exploitability"], "gain_ci95": found["exploitability_ci95"]}
        if found["exploitability_by_advantages"] is not None:  # the narrower estimate, on the same play
            entry |= {"by_advantages": found["exploitability_by_advantages"]}
            entry |= {"by_advantages_ci95": found["exploitability_by_advantages_ci95"]}
        exploits.append(entry)
        bar.update(1)
    bar.set_postfix_str("league")
    pool = tuple(dict.fromkeys((*LEAGUE_POOL, agent)))
    settings = league.Settings(pool, LEAGUE_PLAYERS, "scarne", league_deals, 2 * len(pool), seed, trust)
    tables = [league.play_table(settings, *unit) for unit in settings.units()]
    places = {
        players: {"place": [r["agent"] for r in board].index(agent) + 1, "of": len(board), "board": board}
        for players, board in league.by_size(settings, tables).items()
    }
    bar.update(1)
    bar.close()
    scores = [row["score"] for row in rows if "score" in row]
    return {
        "agent": agent,
        "suite_version": SUITE_VERSION,
        "seed": seed,
        "deals_per_cell": deals,
        "variance_reduction": variance_reduction,
        "cells": rows,
        "overall_score": float(np.mean(scores)),
        "exploitability": exploits,
        "exploit_deals": exploit_deals,
        "exploit_samples": exploit_samples,
        "league": places,
    }


def format_markdown(card: dict) -> str:
    agent = card["agent"]
    reduced = card["variance_reduction"]
    lines = [
        f"# Score card: {agent}",
        "",
        f"Suite {card['suite_version']}, seed {card['seed']}, {card['deals_per_cell']:,} paired deals per cell"
        + (f", variance reduction ({reduced} rollouts per lead)" if reduced else "")
        + ".",
        "",
        f"**Overall score: {card['overall_score']:.0f}** (random lead = 0, pimc:128 = 100; the mean over the anchored"
        " cells)",
        "",
        "Gain over most_copies in its seat, chips per deal (95% CI), and the cell's score:",
        "",
        "| players | " + " | ".join(f"vs {kind}" for kind in POOLS) + " |",
        "|---|" + "---|" * len(POOLS),
    ]
    for players in PLAYERS:
        cells = []
        for kind in POOLS:
            (row,) = [r for r in card["cells"] if (r["opponents"], r["players"]) == (kind, players)]
            text = f"{row['gain']:+.2f} ± {row['gain_ci95']:.2f}"
            cells.append(text + (f" ({row['score']:.0f})" if "score" in row else ""))
        lines.append(f"| {players} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Exploitability (a {card['exploit_samples']}-world search best response at a table of its copies, "
        f"{card['exploit_deals']:,} deals; a lower bound):",
        "",
        "| players | best response's gain over it (95% CI) | the same, by its advantages along the response's play |",
        "|---|---|---|",
    ]
    for e in card["exploitability"]:
        advantages = f"{e['by_advantages']:+.2f} ± {e['by_advantages_ci95']:.2f}" if "by_advantages" in e else "—"
        lines.append(f"| {e['players']} | {e['gain']:+.2f} ± {e['gain_ci95']:.2f} | {advantages} |")
    lines += ["", "Place in a small league (ratings of train.measure.ratings):", "", "| players | place | rating (95% CI) |"]
    lines.append("|---|---|---|")
    for players, place in card["league"].items():
        (mine,) = [row for row in place["board"] if row["agent"] == agent]
        low, high = mine["rating_ci95"]
        lines.append(
            f"| {players} | {place['place']} of {place['of']} | {mine['rating']:+.2f} ({low:+.2f} to {high:+.2f}) |"
        )
    return "\n".join(lines) + "\n"


def plot(card: dict, folder) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for kind in POOLS:
        rows = [r for r in card["cells"] if r["opponents"] == kind]
        ax.errorbar([r["players"] for r in rows], [r["gain"] for r in rows], [r["gain_ci95"] for r in rows],
                    marker="o", capsize=3, label=f"vs {kind}")  # fmt: skip
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("players")
    ax.set_ylabel("gain over most_copies, chips per deal (95% CI)")
    ax.set_title(f"{card['agent']}: overall score {card['overall_score']:.0f}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    folder.write(folder.path / "scorecard.png", lambda p: fig.savefig(p, dpi=120, format="png"))
    plt.close(fig)


def make_anchors(deals: int, seed: int, variance_reduction: int) -> None:
    """Measure random's and pimc:128's gains over most_copies on every anchored cell; write :data:`ANCHORS`."""
    cells = {}
    anchored = [(kind, n) for kind in POOLS if POOLS[kind] is not None for n in PLAYERS]
    for kind, players in progress_bar(anchored, desc="anchors", unit="cell"):
        rows = evaluate(
            ["most_copies", *ANCHORED], pool_of(kind, ""), players, "scarne", deals, seed + players,
            reference="most_copies", quiet=True, variance_reduction=variance_reduction,
        )  # fmt: skip
        cells[f"{kind}_{players}p"] = {
            r.name: {"gain": r.diff_vs_reference, "gain_ci95": r.diff_ci95} for r in rows[1:]
        }
    command = f"python -m train.scorecard --make-anchors --deals {deals}"
    if variance_reduction:  # the flag refuses 0: the command must run as written
        command += f" --variance-reduction {variance_reduction}"
    document = {"suite_version": SUITE_VERSION, "seed": seed, "deals": deals, "command": command, "cells": cells}
    ANCHORS.write_text(json.dumps(document, indent=1) + "\n")


def parser():
    job = new_parser(__doc__, __name__)
    job.add_argument("agent", nargs="?", help="any name agents.make knows, ppo:<model.zip> or pimc:<worlds>")
    add_flag(job, "deals", default=20_000, help="paired deals per cell of the suite")
    job.add_argument("--exploit-deals", type=at_least(2), default=600, help="paired deals per exploitability cell")
    job.add_argument("--exploit-samples", type=at_least(1), default=32, help="the best response's worlds")
    job.add_argument("--league-deals", type=at_least(2), default=300, help="deals per league table")
    add_flag(job, "seed", default=SEED)
    add_variance_flag(job)
    job.add_argument("--make-anchors", action="store_true", help=f"measure the suite's anchors into {ANCHORS.name}")
    job.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="show a progress bar")
    add_flag(job, "out", help="folder for scorecard.md/.json/.png (default: results/scorecard/<settings hash>)")
    add_flag(job, "overwrite")
    add_flag(job, "trust-model")
    return job


def main(argv=None) -> dict | None:
    job = parser()
    args = job.parse_args(argv)
    if args.make_anchors:
        make_anchors(args.deals, args.seed, args.variance_reduction)
        print(f"anchors written to {ANCHORS}")
        return None
    if args.agent is None:
        job.error("name the agent to score, e.g. python -m train.scorecard ppo")
    settings = {key: getattr(args, key) for key in ("agent", "deals", "exploit_deals", "exploit_samples")}
    settings |= {"league_deals": args.league_deals, "seed": args.seed, "suite_version": SUITE_VERSION}
    settings |= {"variance_reduction": args.variance_reduction}
    try:  # a bad name or model file: refused before the folder or any work
        settings["models"] = model_files(made([args.agent], args.trust_model))
        with results_folder(args.out, "scorecard", settings, args.overwrite, command_line(argv)) as folder:
            card = scorecard(
                args.agent, args.deals, args.exploit_deals, args.exploit_samples, args.league_deals, args.seed,
                args.variance_reduction, args.trust_model, args.progress,
            )  # fmt: skip
            text = json.dumps(card, indent=1)
            folder.write(folder.path / "scorecard.json", lambda p: p.write_text(text))
            folder.write(folder.path / "scorecard.md", lambda p: p.write_text(format_markdown(card)))
            plot(card, folder)
    except (ValueError, FileNotFoundError, ImportError, Refused) as error:
        job.error(str(error))
    print(format_markdown(card))
    print(f"results written to {folder.path}")
    return card


if __name__ == "__main__":
    main()
