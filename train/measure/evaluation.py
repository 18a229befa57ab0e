"""Paired-deal evaluations (``python -m train.evaluate``'s work, and what the main job, the ladder and the score
card measure with): candidates made and keyed by their model files, played on the same deals, tables in
Markdown, CSV, JSON and a chart."""

from __future__ import annotations

import json
import time
from pathlib import Path

from agents.spec import as_policy
from snipsnap_env.rules import check_num_players, check_rules_spec

from ..runner.cli import deal_count, short_name
from ..runner.parts_bar import Part, PartsBar
from ..runner.results_folder import csv_of, pyplot, results_folder
from .candidates import check_tables, made, make_candidate, model_files
from .paired import PairedDeals, Row, play_candidates, summarise


def format_table(rows: list[Row]) -> str:
    """A markdown table of rows that share one reference."""
    reduced = rows[0].diff_ci95_plain is not None
    plain = " plain difference, as played (95% CI) |" if reduced else ""
    lines = [
        f"| policy | chips per deal (95% CI) | paired difference vs {rows[0].reference} (95% CI) |{plain} deals |",
        "|---|---|---|---|" + "---|" * reduced,
    ]
    for row in rows:
        as_played = f" {row.diff_vs_reference_plain:+.3f} ± {row.diff_ci95_plain:.3f} |" if reduced else ""
        lines.append(
            f"| {row.name} | {row.chips_per_deal:+.3f} ± {row.ci95:.3f} | "
            f"{row.diff_vs_reference:+.3f} ± {row.diff_ci95:.3f} |{as_played} {row.deals:,} |"
        )
    return "\n".join(lines)


def plot_label(name: str) -> str:
    """A candidate's name as a chart's tick label: a model file ``ppo:<path>`` as its run folder and file name
    on two lines (a whole path, rotated, took half the picture)."""
    if not name.startswith("ppo:"):
        return name
    path = Path(name[4:])
    return f"ppo:{path.parent.name}\n{path.name}" if path.parent.name else name


def save_results(tables: list[list[Row]], folder, title: str) -> None:
    """Write results.md, .csv, .json and results.png (the first table as a bar chart with 95% CIs) into
    ``folder`` (a train.runner.results_folder)."""
    out_dir = folder.path
    rows = [row for table in tables for row in table]
    markdown = title + "\n\n" + "\n\n".join(format_table(t) for t in tables) + "\n"
    folder.write(out_dir / "results.md", lambda p: p.write_text(markdown))
    records = [row.record() for row in rows]
    folder.write(out_dir / "results.csv", csv_of(records))
    folder.write(out_dir / "results.json", lambda p: p.write_text(json.dumps(records, indent=2)))
    plt = pyplot()
    if plt is None:
        return
    rows, reference = tables[0], tables[0][0].reference
    fig, ax = plt.subplots(figsize=(1.3 * len(rows) + 2.5, 4.5))
    ax.bar(
        range(len(rows)),
        [row.diff_vs_reference for row in rows],
        yerr=[row.diff_ci95 for row in rows],
        capsize=6,
        color=["tab:gray" if row.name == reference else "tab:blue" for row in rows],
    )
    ax.set_xticks(range(len(rows)), [plot_label(row.name) for row in rows], fontsize=8)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel(f"chips per deal vs {reference}\n(paired, 95% CI)")
    ax.set_title(title, fontsize=9, wrap=True)
    fig.tight_layout()
    folder.write(out_dir / "results.png", lambda p: fig.savefig(p, dpi=120, format="png"))
    plt.close(fig)


def evaluate_policy(
    policy,
    num_players: int = 4,
    opponents: str | tuple[str, ...] = "most_copies",
    deals: int = 20_000,
    seed: int = 2028,
    rules: str = "scarne",
    reference: str = "most_copies",
    quiet: bool = False,
) -> Row:
    """``policy`` (any :class:`agents.base.Policy`, e.g. a :class:`agents.base.FunctionPolicy` around another
    library's network; a callable ``obs -> action``; or a name or spec, as the jobs take them) and ``reference``
    on the same paired deals against ``opponents`` (a pool, as ``--opponents`` names it: one drawn per seat per
    deal): the policy's row, whose ``diff_vs_reference`` is its gain over ``reference`` in its seat, the number
    ``python -m train.evaluate`` gives. The seed is one no committed table uses."""
    check_num_players(num_players)
    deal_count.check("deals", deals)
    opponents = (opponents,) if isinstance(opponents, str) else tuple(opponents)  # a pool, as --opponents names it
    if isinstance(policy, str):  # a name or a spec, as the jobs take it
        policy = make_candidate(policy, seed, opponents)
    name = getattr(policy, "name", "policy")
    policy = as_policy(policy, name)
    policies = {name: policy, reference: make_candidate(reference, seed, opponents)}
    tables, _ = _measure(policies, list(opponents), num_players, rules, deals, seed, (reference,), 8192, quiet, 0)
    return next(row for row in tables[0] if row.name == name)


def prepare(
    candidates, opponents, num_players, rules, deals, seed, references, trust_model=False, variance_reduction=0
):
    """Check an evaluation before any work: the candidates (the references first where missing) made, and the
    settings that key its results folder, with the SHA-256 of every model file it plays (candidates' and
    opponents')."""
    check_num_players(num_players)
    deal_count.check("deals", deals)  # at least 2 (a confidence interval needs two), at most what memory holds
    check_rules_spec(rules)
    candidates = [name for name in references if name not in candidates] + list(candidates)
    policies = {spec: make_candidate(spec, seed, tuple(opponents), trust_model) for spec in candidates}
    check_tables(policies.values(), [(rules, num_players)])
    settings = {
        "candidates": list(candidates),
        "opponents": list(opponents),
        "players": num_players,
        "rules": rules,
        "deals": deals,
        "seed": seed,
        "references": list(references),
        "models": model_files(policies | made(opponents, trust_model, [(rules, num_players)])),
    }
    if variance_reduction:  # only then: the folders of plain evaluations keep their settings
        settings["variance_reduction"] = variance_reduction
    return policies, settings


def evaluate(
    candidates: list[str],
    opponents: list[str],
    num_players: int = 6,
    rules: str = "scarne",
    deals: int = 20000,
    seed: int = 0,
    reference: str = "random",
    compare_to: tuple[str, ...] = (),
    chunk: int = 8192,
    out_dir: str | None = None,
    quiet: bool = False,
    overwrite: bool = False,
    argv: list[str] | None = None,
    trust_model: bool = False,
    folder=None,
    variance_reduction: int = 0,
    progress: bool = True,
) -> list[Row]:
    """Play every candidate on the same paired deals; print and (with ``out_dir`` or ``folder``) save the results.

    Returns the rows against ``reference``; ``compare_to`` adds a table of differences to each of
    those candidates too. ``out_dir=""`` writes to ``results/evaluate/<settings hash>``; an existing folder
    is rewritten only if it holds this job's results for the same settings, or with ``overwrite``
    (train.runner.results_folder); ``argv`` is the command line recorded in its provenance. ``folder``: write into
    this results folder, already open, instead. ``variance_reduction``: rollouts per lead for the control
    variates of :mod:`train.measure.variance` (0: none), the reduced figures in the rows and the plain beside them.
    """
    references = (reference, *compare_to)
    policies, settings = prepare(
        candidates, opponents, num_players, rules, deals, seed, references, trust_model, variance_reduction
    )
    measure = dict(chunk=chunk, quiet=quiet, variance_reduction=variance_reduction, progress=progress)
    measure["trust_model"] = trust_model
    if folder is None and out_dir is None:
        return _measure(policies, opponents, num_players, rules, deals, seed, references, **measure)[0][0]
    if folder is not None:
        return measure_into(folder, policies, opponents, num_players, rules, deals, seed, references, **measure)
    with results_folder(out_dir, "evaluate", settings, overwrite, argv) as opened:
        return measure_into(opened, policies, opponents, num_players, rules, deals, seed, references, **measure)


def measure_into(folder, policies, opponents, num_players, rules, deals, seed, references, **measure) -> list[Row]:
    """:func:`_measure`, its tables saved into ``folder``; the rows against the first reference."""
    tables, title = _measure(policies, opponents, num_players, rules, deals, seed, references, **measure)
    save_results(tables, folder, title)
    if not measure.get("quiet"):
        print(f"results written to {folder.path}")
    return tables[0]


def _measure(
    policies: dict,
    opponents,
    num_players,
    rules,
    deals,
    seed,
    references,
    chunk,
    quiet,
    variance_reduction,
    progress=True,
    trust_model=False,
):
    """The tables of differences to each of ``references``, and their title (printed unless ``quiet``)."""
    paired = PairedDeals.draw(deals, num_players, len(opponents), seed, rules)
    started = time.perf_counter()
    results = {}
    # one part a candidate, timed by its own deals as they go: a search plays hundreds of times slower than a rule
    parts = [Part(short_name(spec), spec, deals, spec) for spec in policies]
    bar = PartsBar(parts, "evaluating", disable=quiet or not progress)
    for part in bar:
        results |= play_candidates(
            {part.what: policies[part.what]}, opponents, paired, rules, seed, chunk=chunk, progress=bar.advance,
            variance_reduction=variance_reduction, trust_model=trust_model,
        )  # fmt: skip
    tables = [summarise(results, name) for name in references]
    title = (
        f"{num_players} players, rules {rules}, opponents {'+'.join(opponents)}, {deals:,} paired deals, seed {seed}"
    )
    if variance_reduction:
        title += f", variance reduction ({variance_reduction} rollouts per lead)"
    if not quiet:
        print(f"{title} ({time.perf_counter() - started:.0f} s)")
        print("\n\n".join(format_table(table) for table in tables))
    return tables, title
