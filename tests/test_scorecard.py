"""The score card (train.scorecard): every part on a tiny budget, its anchors, and the same card for a seed."""

from __future__ import annotations

import json

import pytest

from train import scorecard

TINY = ["--deals", "200", "--exploit-deals", "20", "--exploit-samples", "2", "--league-deals", "20", "--no-progress"]


def test_the_anchors_cover_every_anchored_cell_and_the_search_is_above_a_random_lead():
    anchors = scorecard.read_anchors()
    expected = {f"{kind}_{n}p" for kind, pool in scorecard.POOLS.items() if pool is not None for n in scorecard.PLAYERS}
    assert set(anchors) == expected
    for cell, anchor in anchors.items():
        assert anchor["pimc:128"]["gain"] > anchor["random"]["gain"], cell
        assert scorecard.score(anchor["random"]["gain"], anchor) == 0
        assert scorecard.score(anchor["pimc:128"]["gain"], anchor) == pytest.approx(100)


def test_the_anchors_record_a_command_that_remakes_them():
    document = json.loads(scorecard.ANCHORS.read_text())
    words = document["command"].split()
    assert words[:3] == ["python", "-m", "train.scorecard"]
    args = scorecard.parser().parse_args(words[3:])  # argparse exits on a command that no longer parses
    assert args.make_anchors and args.deals == document["deals"] and args.seed == document["seed"]


def test_a_tiny_score_card_has_every_part(tmp_path):
    card = scorecard.main(["most_copies", *TINY, "--out", str(tmp_path / "card")])
    assert {(row["opponents"], row["players"]) for row in card["cells"]} == {
        (kind, n) for kind in scorecard.POOLS for n in scorecard.PLAYERS
    }
    for row in card["cells"]:  # most_copies over itself: exactly 0 in every cell
        assert row["gain"] == 0 and ("score" in row) == (row["opponents"] != "own copies")
    assert [e["players"] for e in card["exploitability"]] == list(scorecard.EXPLOIT_PLAYERS)
    assert set(card["league"]) == {str(n) for n in scorecard.LEAGUE_PLAYERS}
    assert all(1 <= place["place"] <= place["of"] for place in card["league"].values())
    written = json.loads((tmp_path / "card" / "scorecard.json").read_text())
    assert written["overall_score"] == card["overall_score"]
    assert "Overall score" in (tmp_path / "card" / "scorecard.md").read_text()
    assert (tmp_path / "card" / "scorecard.png").stat().st_size > 0


def test_a_cell_is_the_same_for_the_same_seed():
    first = scorecard.gains("ppo", "mixed", 4, 300, 5, 0, False)
    assert scorecard.gains("ppo", "mixed", 4, 300, 5, 0, False) == first
    assert scorecard.gains("ppo", "mixed", 4, 300, 6, 0, False) != first


def test_an_unknown_agent_is_refused_before_any_work(tmp_path, capsys):
    with pytest.raises(SystemExit):
        scorecard.main(["nobody", *TINY, "--out", str(tmp_path / "card")])
    assert "unknown agent" in capsys.readouterr().err
    assert not (tmp_path / "card").exists()


def test_make_anchors_writes_into_its_own_folder_never_over_the_shipped_anchors(tmp_path, capsys):
    shipped = scorecard.ANCHORS.read_bytes()
    with pytest.raises(SystemExit) as refused:
        scorecard.main(["random", "--make-anchors", "--deals", "2", "--out", str(tmp_path / "x")])
    assert refused.value.code == 2 and "scores no agent" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    argv = ["--make-anchors", "--deals", "2", "--seed", "5", "--no-progress"]
    document = scorecard.main([*argv, "--out", str(tmp_path / "a")])
    assert scorecard.ANCHORS.read_bytes() == shipped
    made = tmp_path / "a" / "anchors.json"
    assert json.loads(made.read_text()) == document and "--seed 5" in document["command"]
    assert set(scorecard.read_anchors(made)) == set(scorecard.read_anchors())


def test_a_cell_whose_anchors_are_not_apart_is_left_unscored():
    tied = {"random": {"gain": 0.5, "gain_ci95": 0.1}, "pimc:128": {"gain": 0.5, "gain_ci95": 0.1}}
    assert scorecard.score(1.0, tied) is None  # no scale: no score (was a ZeroDivisionError after every cell)
    card = {"agent": "x", "suite_version": 1, "seed": 1, "deals_per_cell": 2, "variance_reduction": 0,
            "cells": [{"opponents": kind, "players": n, "gain": 0.0, "gain_ci95": 0.1} for kind in scorecard.POOLS
                      for n in scorecard.PLAYERS],
            "overall_score": None, "exploitability": [], "exploit_deals": 2, "exploit_samples": 1,
            "league": {}}  # fmt: skip
    assert "No overall score" in scorecard.format_markdown(card)


def test_anchors_that_are_not_anchors_are_refused_in_one_line(tmp_path, capsys):
    bad = tmp_path / "anchors.json"
    bad.write_text(json.dumps({"suite_version": scorecard.SUITE_VERSION, "cells": {"random_3p": {"random": 1}}}))
    with pytest.raises(SystemExit) as refused:
        scorecard.main(["most_copies", "--anchors", str(bad), "--out", str(tmp_path / "card")])
    assert refused.value.code == 2 and "holds no score card anchors" in capsys.readouterr().err
    assert not (tmp_path / "card").exists()
