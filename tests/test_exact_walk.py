"""The compiled exact walk (train.measure.exact_walk): the same values as the Python walk of train.measure.exact
(which OpenSpiel's best response checks) for every kernel policy and rules preset a small deck allows, a policy's
own value as the kernel plays it, and refusals that name the reason."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from snipsnap_env.batch import play_deals
from snipsnap_env.kernel import POLICIES
from train.measure.exact import best_response_value, count_worlds
from train.measure.exact_walk import MAX_WORLDS, check_exact, exact_values


def test_opponents_the_walk_cannot_weigh_and_decks_too_large_are_refused_by_name():
    with pytest.raises(ValueError, match="one policy the kernel plays"):
        check_exact(["random", "most_copies"], 3, "scarne:ranks=3")
    with pytest.raises(ValueError, match="one policy the kernel plays"):
        check_exact(["pimc:8"], 3, "scarne:ranks=3")
    with pytest.raises(ValueError, match="tens of millions of holdings matrices at 3 players with a deck of 13"):
        check_exact(["random"], 3, "scarne")
    assert count_worlds(3, "scarne:ranks=7", limit=MAX_WORLDS) == MAX_WORLDS + 1  # not counted: refused at once


@pytest.mark.slow
# not pairs: the Python walk groups worlds by the action alone, and a multi-play batch's size (public) differs
# between them; the compiled walk groups by the cards each seat showed (pairs is checked against play below)
@pytest.mark.parametrize("preset", ["scarne", "parlett", "bicycle", "wiswell", "kids"])
@pytest.mark.parametrize("table", POLICIES)
def test_the_walk_gives_the_python_walks_best_response_and_the_tables_own_value(preset, table):
    rules, players = f"{preset}:ranks=3", 3
    python = best_response_value(agents.make(table), players, rules)
    compiled = exact_values(table, players, rules, policies=(table,))
    assert compiled["optimum"] == pytest.approx(python.best_response, abs=1e-9)
    assert compiled[table] == pytest.approx(python.target, abs=1e-9)


@pytest.mark.slow
def test_at_four_players_too():
    python = best_response_value(agents.make("most_copies"), 4, "scarne:ranks=2")
    assert exact_values("most_copies", 4, "scarne:ranks=2", policies=())["optimum"] == pytest.approx(
        python.best_response, abs=1e-9
    )


@pytest.mark.slow
@pytest.mark.parametrize("rules", ["scarne:ranks=4", "pairs:ranks=3"])
def test_a_policys_exact_value_is_what_the_kernel_plays_it_to(rules):
    """Every policy the kernel plays: the walk's value (whose lead probabilities the test above holds to the Python
    agents') is what the kernel's own play gives — a name in POLICIES that the kernel played as another fails."""
    exact = exact_values("random", 3, rules, policies=POLICIES)
    assert exact["optimum"] >= max(exact[name] for name in POLICIES) - 1e-12
    for name in POLICIES:
        chips = play_deals(300_000, 3, rules, [name, "random", "random"], seed=11)[:, 0]
        error = 4 * chips.std() / np.sqrt(len(chips))
        assert abs(chips.mean() - exact[name]) < error, (name, chips.mean(), exact[name])


@pytest.mark.slow
def test_the_committed_small_deck_optima_are_what_the_walk_computes_now():
    """docs/results/seeds_small_deck_*: every exact value there is the walk's today, to the last bit."""
    import json
    from pathlib import Path

    results = Path(__file__).resolve().parent.parent / "docs" / "results"
    units = sorted(results.glob("seeds_small_deck_r4/units/optimum_*p.json"))
    assert units
    for path in units:
        committed = json.loads(path.read_text())
        rules = json.loads((path.parent.parent / "args.json").read_text())["evaluation"]["rules"]
        now = exact_values("random", committed["players"], rules)
        assert {k: committed[k] for k in now} == now, path
