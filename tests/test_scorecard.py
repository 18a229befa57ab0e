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
