"""The committed result tables still describe the code: a cheap cell of each is played again (fewer deals,
other deals of the same kind) and must agree with the committed figures within their confidence intervals.
A change to the rules, the engine, an agent or the shipped model that moves a table fails here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from train.measure.evaluate import evaluate
from train.paired import Z95

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
SIGMAS = 3.0  # a deterministic check (seeded), loose enough that two honest samples agree


def agree(new: float, new_ci: float, committed: float, committed_ci: float) -> bool:
    spread = np.hypot(new_ci / Z95, committed_ci / Z95)
    return abs(new - committed) <= SIGMAS * spread


def check(cell: dict, rows: list, what: str) -> None:
    """``cell`` maps a candidate to its committed (gain, ci); ``rows`` are the new evaluation's rows."""
    for row in rows:
        if row.name in cell and row.name != row.reference:
            committed, committed_ci = cell[row.name]
            assert agree(row.diff_vs_reference, row.diff_ci95, committed, committed_ci), (
                f"{what}: {row.name} now {row.diff_vs_reference:+.2f} ± {row.diff_ci95:.2f}, "
                f"committed {committed:+.2f} ± {committed_ci:.2f}"
            )


def test_the_headline_table_still_holds():
    pytest.importorskip("sb3_contrib")
    committed = json.loads((RESULTS / "headline" / "results.json").read_text())
    cell = {
        row["name"]: (row["diff_vs_reference"], row["diff_ci95"]) for row in committed if row["reference"] == "random"
    }
    rows = evaluate(
        ["random", "most_copies", "control", "ppo"], ["random"], 6, "scarne", deals=4000, seed=101, quiet=True
    )
    check(cell, rows, "headline, 6 players vs random")


def test_a_cell_of_the_strength_ladder_still_holds():
    pytest.importorskip("sb3_contrib")
    committed = json.loads((RESULTS / "strength_ladder" / "ladder.json").read_text())["rows"]
    cell = {
        row["name"]: (row["diff_vs_reference"], row["diff_ci95"])
        for row in committed
        if row["players"] == 4 and row["opponents"] == "most_copies"
    }
    rows = evaluate(
        ["most_copies", "random", "pimc:32", "ppo"],
        ["most_copies"],
        4,
        "scarne",
        deals=3000,
        seed=102,
        reference="most_copies",
        quiet=True,
    )
    check(cell, rows, "ladder, 4 players vs most_copies")


def test_a_cell_of_the_strength_matrix_still_holds():
    pytest.importorskip("sb3_contrib")
    committed = json.loads((RESULTS / "strength_matrix" / "matrix.json").read_text())["rows"]
    cell = {
        row["agent"]: (row["gain_over_most_copies"], row["gain_ci95"])
        for row in committed
        if (row["players"], row["rules"], row["opponents"]) == (3, "bicycle", "random")
    }
    rows = evaluate(
        ["most_copies", "random", "ppo"],
        ["random"],
        3,
        "bicycle",
        deals=4000,
        seed=103,
        reference="most_copies",
        quiet=True,
    )
    check(cell, rows, "matrix, bicycle, 3 players vs random")
