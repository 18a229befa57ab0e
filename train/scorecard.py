"""A score card for any agent: one command, a fixed suite, one page.

    python -m train.scorecard ppo
    python -m train.scorecard ppo:runs/my_run/final_model.zip --out results/scorecard_mine
    python -m train.scorecard pimc:32 --deals 2000 --variance-reduction   # a search: fewer deals, narrower CIs

The suite (:data:`SUITE_VERSION`), on held-out deals (seed :data:`SEED`, which no training run and no other
committed table uses):

- **Gain over most_copies** in the agent's seat, paired deals, at 3..8 players against four kinds of table:
  random-lead players, most_copies players, copies of the agent itself, and a mixed pool (each seat drawn from
  random, most_copies and the two learned models ``ppo_distilled`` and ``ppo_scratch``).
- **A score**: 0 for most_copies (the heuristic every gain is measured from), 100 for the search player
  ``pimc:128``, from its gains on the same cells (:data:`ANCHORS`, measured once by ``--make-anchors``, the
  command in the file). Only cells where the search's gain is clear of 0 by its 95% CI are scored: elsewhere the
  two anchors are not apart and any scale between them is noise. **Overall**: the agent's gains summed over the
  scored cells, as a percentage of the search's gains summed over the same cells — so a cell weighs what the
  search gains there (most at 3–4 players, little at 8), and an agent that gains nothing scores 0 — with a 95%
  CI from a bootstrap over the deals of every cell (and the anchors' own uncertainty). For scale, the card gives
  a random lead's score on the same cells (about −180). The own-copies cells have no anchors (the table is the
  agent itself).
- **Exploitability** at 3, 4 and 6 players (:func:`train.exploit.exploitability`): by default a 32-world search
  best response (a quick lower bound, below 0 where the search plays worse than the agent);
  ``--exploit-best-response learned``: a learned best response (:mod:`train.learn.best_response`) from the
  agent's own weights, ``--exploit-steps`` PPO steps a table size (30,000: a cheaper setting than
  ``train.exploit``'s, said so on the card; PPO took 1–2 minutes a size here), its runs kept in ``--exploit-runs``.
- **Its place in a small league** at 3..6 players (random, most_copies, ppo_distilled and the agent; the
  ratings of :mod:`train.measure.ratings`).

Every cell plays the ``scarne`` rules (:data:`RULES`); a model trained on another preset is scored with a
warning at the top of its card. Writes scorecard.md, .json and .png into ``--out``; deterministic for a seed.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .learn.best_response import STARTS, TEACHER_POSITIONS, check_learned, learned_response
from .measure import exploitability as exploit
from .measure import league_tables as league
from .measure.candidates import add_variance_flag, made, model_files
from .measure.evaluation import evaluate, prepare
from .measure.paired import PairedDeals, mean_ci, play_candidates
from .measure.scorecard_report import format_markdown, plot
from .runner.cli import (
    add_flag,
    add_job_flags,
    deal_count,
    new_parser,
    say,
    step_count,
    worlds,
)
from .runner.job import Job, Plan, Refusal
from .runner.manifest import sha256
from .runner.parts_bar import Part, PartsBar
from .runner.results_folder import read_json

SUITE_VERSION = 1  # the cells and their anchors (the anchors file is this suite's)
SCALE_VERSION = 2  # how the cells become a score: 1 scaled random lead..pimc:128 per cell and averaged (most_copies 85)
SEED = 2027
RULES = "scarne"
BOOTSTRAP_SAMPLES = 2000
PLAYERS = (3, 4, 5, 6, 7, 8)
MIXED = ("random", "most_copies", "ppo_distilled", "ppo_scratch")
POOLS = {"random": ("random",), "most_copies": ("most_copies",), "own copies": None, "mixed": MIXED}
EXPLOIT_PLAYERS = (3, 4, 6)
LEAGUE_PLAYERS = (3, 4, 5, 6)
LEAGUE_POOL = ("random", "most_copies", "ppo_distilled")
ANCHORS = Path(__file__).with_name("scorecard_anchors.json")
ANCHORED = ("random", "pimc:128")  # score 0 and score 100


@dataclass(frozen=True)
class LearnedExploit:
    """The card's learned best response: PPO from ``start`` for ``steps`` lead choices at each exploitability table
    size, its runs in ``runs`` (reused when finished: a second card of the same agent trains nothing)."""

    steps: int = 30_000
    start: str = "target"
    runs: str = "runs/scorecard"


def pool_of(kind: str, agent: str) -> list[str]:
    return [agent] if POOLS[kind] is None else list(POOLS[kind])


def paired_gains(agent: str, kind: str, players: int, deals: int, seed: int, variance_reduction: int,
                 trust: bool) -> np.ndarray:  # fmt: skip
    """The agent's gain over most_copies in its seat on each of the cell's paired deals (with variance reduction,
    the reduced ones): what train.evaluate measures, per deal, for the overall score's bootstrap."""
    pool = pool_of(kind, agent)
    policies, _ = prepare(
        ["most_copies", agent], pool, players, RULES, deals, seed, ("most_copies",), trust, variance_reduction
    )
    paired = PairedDeals.draw(deals, players, len(pool), seed, RULES)
    chips = play_candidates(policies, pool, paired, RULES, seed, variance_reduction=variance_reduction,
                            trust_model=trust)  # fmt: skip
    return np.atleast_2d(chips[agent])[-1] - np.atleast_2d(chips["most_copies"])[-1]


def gains(agent: str, kind: str, players: int, deals: int, seed: int, variance_reduction: int, trust: bool) -> dict:
    """The agent's paired gain over most_copies at one cell of the suite, with its 95% CI."""
    gain, ci95 = mean_ci(paired_gains(agent, kind, players, deals, seed, variance_reduction, trust))
    return {"gain": gain, "gain_ci95": ci95}


def read_anchors(path: Path = ANCHORS) -> dict:
    """The anchors' cells in ``path`` (a file --make-anchors wrote), checked: this suite's, every cell with
    both anchors' gains; a ValueError naming the file and what is wrong, before any work."""
    document = read_json(path)
    try:
        if document["suite_version"] != SUITE_VERSION:
            raise ValueError(f"{path} is for suite {document['suite_version']}, not {SUITE_VERSION}: --make-anchors")
        cells = document["cells"]
        if not isinstance(cells, dict) or not cells:
            raise ValueError(f"{path} has no cells: --make-anchors")
        for name_of_cell, cell in cells.items():
            for name in ANCHORED:
                gain, ci95 = float(cell[name]["gain"]), float(cell[name]["gain_ci95"])
                if not (math.isfinite(gain) and math.isfinite(ci95) and ci95 >= 0):
                    raise ValueError(f"{path}: cell {name_of_cell}'s {name} has gain {gain} ± {ci95}: --make-anchors")
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        if isinstance(error, ValueError) and str(error).startswith(str(path)):
            raise
        raise ValueError(f"{path} holds no score card anchors ({type(error).__name__}: {error})") from None
    return cells


def scored(anchor: dict) -> bool:
    """Whether a cell's anchors are apart: pimc:128's gain over most_copies clear of 0 by its 95% CI."""
    return anchor["pimc:128"]["gain"] - anchor["pimc:128"]["gain_ci95"] > 0


def score(gain: float, anchor: dict) -> float | None:
    """A cell's score: 0 at most_copies (a gain of 0), 100 at pimc:128's gain on the same cell; None where the
    two are not apart (:func:`scored`)."""
    return 100 * gain / anchor["pimc:128"]["gain"] if scored(anchor) else None


def overall_score(gains_by_cell: dict[str, np.ndarray], anchors: dict, seed: int,
                  samples: int = BOOTSTRAP_SAMPLES) -> dict:  # fmt: skip
    """The agent's gains summed over the scored cells as a percentage of pimc:128's over the same cells, and its
    95% CI: a percentile bootstrap that resamples each cell's deals (its per-deal gains, ``gains_by_cell``) and
    draws the anchors' gains from their own CIs (normal; the file keeps no per-deal anchors). None if no cell
    is scored."""
    cells = [cell for cell in gains_by_cell if cell in anchors and scored(anchors[cell])]
    if not cells:
        return {"score": None, "ci95": None, "cells": []}
    rng = np.random.default_rng([seed, SCALE_VERSION])
    total = np.zeros(samples)
    scale = np.zeros(samples)
    for cell in cells:
        per_deal = gains_by_cell[cell]
        for start in range(0, samples, 100):  # 100 resamples at a time: bounded memory at any deal count
            rows = min(100, samples - start)
            total[start : start + rows] += per_deal[rng.integers(0, len(per_deal), (rows, len(per_deal)))].mean(1)
        pimc = anchors[cell]["pimc:128"]
        scale += rng.normal(pimc["gain"], pimc["gain_ci95"] / 1.959964, samples)
    point = 100 * sum(gains_by_cell[c].mean() for c in cells) / sum(anchors[c]["pimc:128"]["gain"] for c in cells)
    low, high = np.percentile(100 * total / scale, [2.5, 97.5])
    return {"score": float(point), "ci95": [float(low), float(high)], "cells": cells}


def reference_scores(anchors: dict, cells: list[str]) -> dict:
    """Where the anchors themselves land on the same scored cells: most_copies 0, a random lead, pimc:128 100."""
    scale = sum(anchors[c]["pimc:128"]["gain"] for c in cells)
    random = 100 * sum(anchors[c]["random"]["gain"] for c in cells) / scale if cells else None
    return {"most_copies": 0.0, "random": random, "pimc:128": 100.0}


def trained_rules(agent: str, policy) -> str | None:
    """The rules preset a learned agent was trained on, if its file says and it is not the suite's."""
    rules = getattr(policy, "trained_on", {}).get("rules")
    return rules if isinstance(rules, str) and rules != RULES else None


def card_parts(deals: int, exploit_deals: int) -> list[Part]:
    """The card's parts: its cells, its exploitability searches and its league (one part, every size); the bar
    plays them kind by kind in turn, so the smallest tables of every kind come first."""
    cells = [Part(f"{kind} {players}p", kind, deals, players) for kind in POOLS for players in PLAYERS]
    searches = [Part(f"exploit {players}p", "exploit", exploit_deals, players) for players in EXPLOIT_PLAYERS]
    return [*cells, *searches, Part("league", "league", 1)]


def exploit_entry(agent: str, players: int, exploit_deals: int, exploit_samples: int, seed: int, trust: bool,
                  progress: bool, learned: LearnedExploit | None) -> dict:  # fmt: skip
    """The card's exploitability row at one table size."""
    responder = None if learned is None else learned_response(
        agent, players, RULES, learned.steps, learned.start, seed, learned.runs, progress, exploit_samples,
        TEACHER_POSITIONS, trust,
    )  # fmt: skip
    found = exploit.exploitability(
        agent, players, RULES, exploit_deals, exploit_samples, seed, trust_model=trust, responder=responder
    )
    entry = {"players": players, "gain": found["exploitability"], "gain_ci95": found["exploitability_ci95"]}
    entry |= exploit.response_record(responder) if responder else {}
    if found["exploitability_by_advantages"] is not None:  # the narrower estimate, on the same play
        entry |= {"by_advantages": found["exploitability_by_advantages"]}
        entry |= {"by_advantages_ci95": found["exploitability_by_advantages_ci95"]}
    return entry


def league_places(agent: str, league_deals: int, seed: int, trust: bool) -> dict:
    """The agent's place in the card's small league, by table size."""
    pool = tuple(dict.fromkeys((*LEAGUE_POOL, agent)))
    settings = league.Settings(pool, LEAGUE_PLAYERS, "scarne", league_deals, 2 * len(pool), seed, trust)
    tables = [league.play_table(settings, *unit) for unit in settings.units()]
    return {
        players: {"place": [r["agent"] for r in board].index(agent) + 1, "of": len(board), "board": board}
        for players, board in league.by_size(settings, tables).items()
    }


def scorecard(agent: str, deals: int, exploit_deals: int, exploit_samples: int, league_deals: int, seed: int,
              variance_reduction: int = 0, trust: bool = False, progress: bool = True,
              anchors_file: Path = ANCHORS, learned: LearnedExploit | None = None) -> dict:  # fmt: skip
    """Every part of the card, as one document (``learned``: the exploitability rows' best response learned, not
    searched)."""
    anchors = read_anchors(anchors_file)
    cells = [(kind, n) for kind in POOLS for n in PLAYERS]
    other_rules = trained_rules(agent, made([agent], trust)[agent])
    if other_rules:  # said before the work, and again at the top of the card
        print(f"warning: {agent} was trained on the {other_rules} rules; this suite plays {RULES}", flush=True)
    if progress:
        say(f"score card of {agent}: {len(cells)} cells of {deals:,} paired deals, exploitability at "
              f"{len(EXPLOIT_PLAYERS)} sizes, a league at {len(LEAGUE_PLAYERS)}", flush=True)  # fmt: skip
    found = {}  # each part's result, by kind and table size: the card lists them in its own order
    for part in PartsBar(card_parts(deals, exploit_deals), "score card", disable=not progress):
        kind, players = part.kind, part.what
        if kind == "league":
            found[kind] = league_places(agent, league_deals, seed, trust)
        elif kind == "exploit":
            found[kind, players] = exploit_entry(agent, players, exploit_deals, exploit_samples, seed, trust,
                                                 progress, learned)  # fmt: skip
        else:
            found[kind, players] = paired_gains(agent, kind, players, deals, seed + players, variance_reduction, trust)
    rows, per_deal = [], {}
    for kind, players in cells:
        row = {"opponents": kind, "players": players}
        gained = per_deal[f"{kind}_{players}p"] = found[kind, players]
        row |= dict(zip(("gain", "gain_ci95"), mean_ci(gained)))
        anchor = anchors.get(f"{kind}_{players}p")
        if anchor is not None and scored(anchor):
            scale = 100 / anchor["pimc:128"]["gain"]
            row |= {"score": score(row["gain"], anchor), "score_ci95": scale * row["gain_ci95"]}
        rows.append(row)
    exploits = [found["exploit", players] for players in EXPLOIT_PLAYERS]
    places = found["league"]
    overall = overall_score(per_deal, anchors, seed)
    anchored = [f"{kind}_{n}p" for kind, n in cells if POOLS[kind] is not None]
    unscored = [cell for cell in anchored if cell not in overall["cells"]]
    return {
        "agent": agent,
        "rules": RULES,
        "trained_on_rules": other_rules,
        "suite_version": SUITE_VERSION,
        "scale_version": SCALE_VERSION,
        "seed": seed,
        "deals_per_cell": deals,
        "variance_reduction": variance_reduction,
        "cells": rows,
        "overall_score": overall["score"],
        "overall_score_ci95": overall["ci95"],
        "scored_cells": overall["cells"],
        "unscored_cells": unscored,
        "reference_scores": reference_scores(anchors, overall["cells"]),
        "exploitability": exploits,
        "exploit_deals": exploit_deals,
        "exploit_samples": exploit_samples,
        **({"exploit_learned": asdict(learned)} if learned else {}),
        "league": places,
    }


def make_anchors(deals: int, seed: int, variance_reduction: int, folder, progress: bool = True) -> dict:
    """Measure random's and pimc:128's gains over most_copies on every anchored cell; write them as anchors.json
    into ``folder`` (the job's own: the shipped anchors change only by a person copying the file over them)."""
    cells = {}
    anchored = [(kind, n) for kind in POOLS if POOLS[kind] is not None for n in PLAYERS]
    parts = [Part(f"{kind} {players}p", kind, deals, (kind, players)) for kind, players in anchored]
    for part in PartsBar(parts, "anchors", disable=not progress):  # kind by kind in turn: smallest tables first
        kind, players = part.what
        rows = evaluate(
            ["most_copies", *ANCHORED], pool_of(kind, ""), players, "scarne", deals, seed + players,
            reference="most_copies", quiet=True, variance_reduction=variance_reduction,
        )  # fmt: skip
        cells[f"{kind}_{players}p"] = {
            r.name: {"gain": r.diff_vs_reference, "gain_ci95": r.diff_ci95} for r in rows[1:]
        }
    cells = {f"{kind}_{n}p": cells[f"{kind}_{n}p"] for kind, n in anchored}  # the file's order, kind by kind
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
    job.add_argument(
        "--exploit-best-response", choices=("search", "learned"), default="search",
        help="the exploitability rows' best response: a quick search, or PPO trained against the agent "
        "(train.learn.best_response; minutes a table size, the training extras)",
    )  # fmt: skip
    job.add_argument("--exploit-steps", type=step_count, default=LearnedExploit.steps,
                     help="--exploit-best-response learned: PPO steps a table size")  # fmt: skip
    job.add_argument(
        "--exploit-start",
        default=LearnedExploit.start,
        help=f"--exploit-best-response learned: first weights ({', '.join(STARTS)} or a learned agent)",
    )
    job.add_argument(
        "--exploit-runs",
        default=LearnedExploit.runs,
        help="--exploit-best-response learned: the folder of its training runs",
    )
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
    learned = None
    if args.exploit_best_response == "learned":
        learned = LearnedExploit(args.exploit_steps, args.exploit_start, args.exploit_runs)
        check_learned([args.agent], EXPLOIT_PLAYERS, RULES, learned.steps, learned.start, args.seed,
                              learned.runs, args.exploit_samples, TEACHER_POSITIONS, args.trust_model)  # fmt: skip
        settings["exploit_learned"] = asdict(learned) | {"runs": None}  # where the runs live changes no figure

    def work(folder) -> dict:
        card = scorecard(
            args.agent, args.deals, args.exploit_deals, args.exploit_samples, args.league_deals, args.seed,
            args.variance_reduction, args.trust_model, args.progress, args.anchors, learned,
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
    writes=("exploit_runs",), agents=("agent",),
)  # fmt: skip
main = JOB.main


if __name__ == "__main__":
    main()
