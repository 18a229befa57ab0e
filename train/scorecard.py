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

import json
from pathlib import Path

import numpy as np

from . import exploit, league
from .evaluate import evaluate
from .measure.candidates import add_variance_flag, made, model_files
from .runner.cli import add_flag, add_job_flags, deal_count, new_parser, progress_bar, worlds
from .runner.job import Job, Plan, Refusal
from .runner.manifest import sha256
from .runner.results_folder import pyplot, read_json

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


def read_anchors(path: Path = ANCHORS) -> dict:
    """The anchors' cells in ``path`` (a file --make-anchors wrote), checked: this suite's, every cell with
    both anchors' gains; a ValueError naming the file and what is wrong, before any work."""
    document = read_json(path)
    try:
        if document["suite_version"] != SUITE_VERSION:
            raise ValueError(f"{path} is for suite {document['suite_version']}, not {SUITE_VERSION}: --make-anchors")
        cells = document["cells"]
        for cell in cells.values():
            for name in ANCHORED:
                float(cell[name]["gain"]), float(cell[name]["gain_ci95"])
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        if isinstance(error, ValueError) and str(error).startswith(str(path)):
            raise
        raise ValueError(f"{path} holds no score card anchors ({type(error).__name__}: {error})") from None
    return cells


def score(gain: float, anchor: dict) -> float | None:
    """0 at a random lead's gain, 100 at pimc:128's, on the same cell; None where pimc:128's gain is not above
    random's (no scale to score on)."""
    low, high = anchor["random"]["gain"], anchor["pimc:128"]["gain"]
    return 100 * (gain - low) / (high - low) if high > low else None


def scorecard(agent: str, deals: int, exploit_deals: int, exploit_samples: int, league_deals: int, seed: int,
              variance_reduction: int = 0, trust: bool = False, progress: bool = True,
              anchors_file: Path = ANCHORS) -> dict:  # fmt: skip
    """Every part of the card, as one document."""
    anchors = read_anchors(anchors_file)
    cells = [(kind, n) for kind in POOLS for n in PLAYERS]
    units = len(cells) + len(EXPLOIT_PLAYERS) + 1
    bar = progress_bar(total=units, desc=f"score card of {agent}", unit="part", disable=not progress)
    rows = []
    for kind, players in cells:
        bar.set_postfix_str(f"{kind} tables, {players} players")
        row = {"opponents": kind, "players": players}
        row |= gains(agent, kind, players, deals, seed + players, variance_reduction, trust)
        anchor = anchors.get(f"{kind}_{players}p")
        if anchor is not None and score(row["gain"], anchor) is not None:
            scale = 100 / (anchor["pimc:128"]["gain"] - anchor["random"]["gain"])
            row |= {"score": score(row["gain"], anchor), "score_ci95": scale * row["gain_ci95"]}
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
        "overall_score": float(np.mean(scores)) if scores else None,
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
        (
            f"**Overall score: {card['overall_score']:.0f}** (random lead = 0, pimc:128 = 100; the mean over the "
            "anchored cells)"
            if card["overall_score"] is not None
            else "**No overall score**: no cell's anchors are apart (pimc:128's gain above random's)"
        ),
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
    lines += ["", "Place in a small league (ratings of train.measure.ratings):", ""]
    lines.append("| players | place | rating (95% CI) |")
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
    overall = card["overall_score"]
    ax.set_title(f"{card['agent']}: overall score {'—' if overall is None else f'{overall:.0f}'}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    folder.write(folder.path / "scorecard.png", lambda p: fig.savefig(p, dpi=120, format="png"))
    plt.close(fig)


def make_anchors(deals: int, seed: int, variance_reduction: int, folder, progress: bool = True) -> dict:
    """Measure random's and pimc:128's gains over most_copies on every anchored cell; write them as anchors.json
    into ``folder`` (the job's own: the shipped anchors change only by a person copying the file over them)."""
    cells = {}
    anchored = [(kind, n) for kind in POOLS if POOLS[kind] is not None for n in PLAYERS]
    for kind, players in progress_bar(anchored, desc="anchors", unit="cell", disable=not progress):
        rows = evaluate(
            ["most_copies", *ANCHORED], pool_of(kind, ""), players, "scarne", deals, seed + players,
            reference="most_copies", quiet=True, variance_reduction=variance_reduction,
        )  # fmt: skip
        cells[f"{kind}_{players}p"] = {
            r.name: {"gain": r.diff_vs_reference, "gain_ci95": r.diff_ci95} for r in rows[1:]
        }
    command = f"python -m train.scorecard --make-anchors --deals {deals} --seed {seed}"
    if variance_reduction:  # the flag refuses 0: the command must run as written
        command += f" --variance-reduction {variance_reduction}"
    document = {"suite_version": SUITE_VERSION, "seed": seed, "deals": deals, "command": command, "cells": cells}
    path = folder.write(folder.path / "anchors.json", lambda p: p.write_text(json.dumps(document, indent=1) + "\n"))
    print(f"anchors written to {path}; score with them: --anchors {path}")
    return document


def parser():
    job = new_parser(__doc__, __name__)
    job.add_argument("agent", nargs="?", help="any name agents.make knows, ppo:<model.zip> or pimc:<worlds>")
    add_flag(job, "deals", default=20_000, help="paired deals per cell of the suite")
    job.add_argument("--exploit-deals", type=deal_count, default=600, help="paired deals per exploitability cell")
    job.add_argument("--exploit-samples", type=worlds, default=32, help="the best response's worlds")
    job.add_argument("--league-deals", type=deal_count, default=300, help="deals per league table")
    add_flag(job, "seed", default=SEED)
    add_variance_flag(job)
    job.add_argument(
        "--anchors", type=Path, default=ANCHORS, metavar="FILE",
        help="the anchors that scale each cell (default: the shipped ones; --make-anchors writes new ones)",
    )  # fmt: skip
    job.add_argument(
        "--make-anchors", action="store_true",
        help="measure the suite's anchors (random's and pimc:128's gains) into anchors.json in --out, not a card",
    )  # fmt: skip
    add_job_flags(job, "scorecard.md/.json/.png (anchors.json with --make-anchors)")
    return job


def check(args) -> Plan:
    """The agent (or --make-anchors, alone) made with every agent of the suite's tables (names, model files),
    the anchors read; the settings keyed by every model file and by the anchors' bytes."""
    if args.make_anchors:
        if args.agent is not None:
            raise Refusal(f"--make-anchors measures the suite's anchors and scores no agent: leave out {args.agent!r}")
        settings = {"make_anchors": True, "deals": args.deals, "seed": args.seed, "suite_version": SUITE_VERSION}
        settings |= {"variance_reduction": args.variance_reduction}

        def anchors(folder) -> dict:
            return make_anchors(args.deals, args.seed, args.variance_reduction, folder, args.progress)

        return Plan(anchors, settings, args.out, args.overwrite)
    if args.agent is None:
        raise Refusal("name the agent to score, e.g. python -m train.scorecard ppo")
    read_anchors(args.anchors)
    settings = {key: getattr(args, key) for key in ("agent", "deals", "exploit_deals", "exploit_samples")}
    settings |= {"league_deals": args.league_deals, "seed": args.seed, "suite_version": SUITE_VERSION}
    settings |= {"variance_reduction": args.variance_reduction, "anchors": sha256(args.anchors)}
    settings["models"] = model_files(made([args.agent, *MIXED, *LEAGUE_POOL], args.trust_model))

    def work(folder) -> dict:
        card = scorecard(
            args.agent, args.deals, args.exploit_deals, args.exploit_samples, args.league_deals, args.seed,
            args.variance_reduction, args.trust_model, args.progress, args.anchors,
        )  # fmt: skip
        text = json.dumps(card, indent=1)
        folder.write(folder.path / "scorecard.json", lambda p: p.write_text(text))
        folder.write(folder.path / "scorecard.md", lambda p: p.write_text(format_markdown(card)))
        plot(card, folder)
        print(format_markdown(card))
        print(f"results written to {folder.path}")
        return card

    return Plan(work, settings, args.out, args.overwrite)


JOB = Job(
    parser, check,
    example=("most_copies", "--deals", "4", "--exploit-deals", "4", "--exploit-samples", "2", "--league-deals", "4"),
)  # fmt: skip
main = JOB.main


if __name__ == "__main__":
    main()
