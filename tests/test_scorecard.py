"""The score card (train.scorecard): every part on a tiny budget, its anchors, and the same card for a seed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from train import scorecard

TINY = ["--deals", "200", "--exploit-deals", "20", "--exploit-samples", "2", "--league-deals", "20", "--no-progress"]


def test_the_anchors_cover_every_anchored_cell_and_the_search_is_above_a_random_lead():
    anchors = scorecard.read_anchors()
    expected = {f"{kind}_{n}p" for kind, pool in scorecard.POOLS.items() if pool is not None for n in scorecard.PLAYERS}
    assert set(anchors) == expected
    for cell, anchor in anchors.items():
        assert anchor["pimc:128"]["gain"] > anchor["random"]["gain"], cell
        if scorecard.scored(anchor):
            assert scorecard.score(0.0, anchor) == 0  # most_copies
            assert scorecard.score(anchor["pimc:128"]["gain"], anchor) == pytest.approx(100)
            assert scorecard.score(anchor["random"]["gain"], anchor) < 0
    scored = [cell for cell, anchor in anchors.items() if scorecard.scored(anchor)]
    assert {"random_3p", "random_4p", "most_copies_4p", "mixed_3p"} <= set(scored)  # the small tables, at least


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
        cell = f"{row['opponents']}_{row['players']}p"
        assert row["gain"] == 0 and ("score" in row) == (cell in card["scored_cells"])
    assert card["overall_score"] == 0 and card["overall_score_ci95"] == [0, 0]
    assert card["rules"] == "scarne" and card["trained_on_rules"] is None
    assert set(card["scored_cells"]) | set(card["unscored_cells"]) == {
        f"{kind}_{n}p" for kind, pool in scorecard.POOLS.items() if pool is not None for n in scorecard.PLAYERS
    }
    assert [e["players"] for e in card["exploitability"]] == list(scorecard.EXPLOIT_PLAYERS)
    assert set(card["league"]) == {str(n) for n in scorecard.LEAGUE_PLAYERS}
    assert all(1 <= place["place"] <= place["of"] for place in card["league"].values())
    written = json.loads((tmp_path / "card" / "scorecard.json").read_text())
    assert written["overall_score"] == card["overall_score"]
    assert "Overall score" in (tmp_path / "card" / "scorecard.md").read_text()
    assert (tmp_path / "card" / "scorecard.png").stat().st_size > 0


@pytest.mark.training
@pytest.mark.slow
def test_a_card_with_a_learned_best_response_says_so_and_trains_each_size_once(tmp_path, capsys):
    """--exploit-best-response learned: each exploitability row names the trained response's file, the card names
    the best response and its budget, and a second card of the same agent reuses the runs."""
    argv = ["ppo_scratch", *TINY, "--exploit-best-response", "learned", "--exploit-steps", "600",
            "--exploit-runs", str(tmp_path / "runs")]  # fmt: skip
    card = scorecard.main([*argv, "--out", str(tmp_path / "card")])
    runs = sorted(path.name for path in (tmp_path / "runs").iterdir())
    assert len(runs) == len(scorecard.EXPLOIT_PLAYERS)
    assert all(e["response_model"].startswith(str(tmp_path / "runs")) for e in card["exploitability"])
    assert card["exploit_learned"] == {"steps": 600, "start": "target", "runs": str(tmp_path / "runs")}
    text = (tmp_path / "card" / "scorecard.md").read_text()
    assert "a learned best response: PPO from its own weights, 600 steps a table size, a cheaper setting" in text
    again = scorecard.main([*argv, "--out", str(tmp_path / "card2")])
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == runs
    assert again["exploitability"] == card["exploitability"]
    with pytest.raises(SystemExit):  # a bad start is refused before any cell is played
        scorecard.main(["ppo_scratch", *TINY, "--exploit-best-response", "learned", "--exploit-start", "nonsense",
                        "--out", str(tmp_path / "card3")])  # fmt: skip
    assert "start got 'nonsense'" in capsys.readouterr().err and not (tmp_path / "card3").exists()


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
    tied = {"random": {"gain": -0.5, "gain_ci95": 0.1}, "pimc:128": {"gain": 0.05, "gain_ci95": 0.1}}
    assert scorecard.score(1.0, tied) is None  # pimc:128 not clear of most_copies' 0: no scale, no score
    assert scorecard.overall_score({"random_3p": np.ones(10)}, {"random_3p": tied}, seed=1)["score"] is None
    card = {"agent": "x", "rules": "scarne", "suite_version": 1, "scale_version": 2, "seed": 1, "deals_per_cell": 2,
            "variance_reduction": 0, "unscored_cells": [],
            "cells": [{"opponents": kind, "players": n, "gain": 0.0, "gain_ci95": 0.1} for kind in scorecard.POOLS
                      for n in scorecard.PLAYERS],
            "overall_score": None, "exploitability": [], "exploit_deals": 2, "exploit_samples": 1,
            "league": {}}  # fmt: skip
    text = scorecard.format_markdown(card)
    assert "No overall score" in text
    assert "*vs own copies* is never scored: that table is the agent itself" in text  # says why that column has none


NAN_GAIN = {"random": {"gain": float("nan"), "gain_ci95": 0.1}, "pimc:128": {"gain": 1.0, "gain_ci95": 0.1}}


@pytest.mark.parametrize(
    "cells, words",
    [({"random_3p": {"random": 1}}, "holds no score card anchors"), ({}, "has no cells"),
     ({"random_3p": NAN_GAIN}, "random_3p's random has gain nan")],
    ids=["no gains", "no cells", "NaN gain"],
)  # fmt: skip
def test_anchors_that_are_not_anchors_are_refused_in_one_line(cells, words, tmp_path, capsys):
    bad = tmp_path / "anchors.json"
    bad.write_text(json.dumps({"suite_version": scorecard.SUITE_VERSION, "cells": cells}))
    with pytest.raises(SystemExit) as refused:
        scorecard.main(["most_copies", "--anchors", str(bad), "--out", str(tmp_path / "card")])
    assert refused.value.code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "card").exists()


def test_the_overall_score_sums_gains_over_the_scored_cells_and_its_bootstrap_ci_covers_the_truth():
    anchors = {
        "a": {"random": {"gain": -1.0, "gain_ci95": 0.1}, "pimc:128": {"gain": 3.0, "gain_ci95": 0.1}},
        "b": {"random": {"gain": -1.0, "gain_ci95": 0.1}, "pimc:128": {"gain": 1.0, "gain_ci95": 0.1}},
        "c": {"random": {"gain": -1.0, "gain_ci95": 0.1}, "pimc:128": {"gain": 0.0, "gain_ci95": 0.1}},  # unscored
    }
    rng = np.random.default_rng(0)
    like_the_search = {"a": rng.normal(3.0, 5, 4000), "b": rng.normal(1.0, 5, 4000), "c": rng.normal(9, 5, 4000)}
    found = scorecard.overall_score(like_the_search, anchors, seed=3)
    assert found["cells"] == ["a", "b"]  # c's anchors are not apart: its large gain counts for nothing
    low, high = found["ci95"]
    assert low < 100 < high and high - low < 20 and low < found["score"] < high
    assert found["score"] == pytest.approx(100 * (like_the_search["a"].mean() + like_the_search["b"].mean()) / 4)
    nothing = scorecard.overall_score({cell: rng.normal(0, 5, 4000) for cell in anchors}, anchors, seed=3)
    assert nothing["ci95"][0] < 0 < nothing["ci95"][1] and nothing["ci95"][1] < low
    assert scorecard.overall_score(like_the_search, anchors, seed=3) == found  # the same for a seed


def test_the_score_ranks_random_below_most_copies_below_the_shipped_ppo():
    """The issue's test of the scale on real play, on the scored cells only, at a small budget."""
    anchors = scorecard.read_anchors()
    cells = [(kind, n) for kind in scorecard.POOLS for n in scorecard.PLAYERS
             if f"{kind}_{n}p" in anchors and scorecard.scored(anchors[f"{kind}_{n}p"])]  # fmt: skip
    scores = {}
    for agent in ("random", "most_copies", "ppo"):
        per_deal = {f"{k}_{n}p": scorecard.paired_gains(agent, k, n, 1500, 11 + n, 0, False) for k, n in cells}
        scores[agent] = scorecard.overall_score(per_deal, anchors, seed=1)
    assert scores["random"]["ci95"][1] < 0 == scores["most_copies"]["score"] < scores["ppo"]["ci95"][0]
    assert scores["ppo"]["ci95"][0] > 50  # clearly above the heuristic, not within noise of it


def test_a_model_trained_on_other_rules_is_scored_with_a_warning_at_the_top(tmp_path):
    import zipfile

    other = tmp_path / "parlett_model.zip"
    with zipfile.ZipFile(scorecard.Path(__file__).parent.parent / "agents/models/ppo_scarne.zip") as source:
        with zipfile.ZipFile(other, "w") as target:
            for name in source.namelist():
                data = source.read(name)
                if name == "snipsnap_policy.json":
                    meta = json.loads(data)
                    meta["trained_on"]["rules"] = "parlett"
                    data = json.dumps(meta).encode()
                target.writestr(name, data)
    card = scorecard.main([f"ppo:{other}", *TINY, "--out", str(tmp_path / "card")])
    assert card["trained_on_rules"] == "parlett"
    first = (tmp_path / "card" / "scorecard.md").read_text().splitlines()[2]
    assert first == f"**Warning: ppo:{other} was trained on the parlett rules; this suite plays scarne.**"


@pytest.mark.training
@pytest.mark.slow
def test_a_barely_trained_model_scores_clearly_below_the_shipped_ppo(tmp_path):
    from train import train_ppo

    argv = ["--total-timesteps", "20000", "--runs", str(tmp_path), "--run-name", "barely", "--no-progress"]
    train_ppo.main(argv)
    model = f"ppo:{tmp_path / 'barely' / 'final_model.zip'}"
    anchors = scorecard.read_anchors()
    cells = [cell for cell, anchor in anchors.items() if scorecard.scored(anchor)]
    scores = {}
    for agent in (model, "ppo"):
        per_deal = {}
        for cell in cells:
            kind, players = cell.rsplit("_", 1)
            per_deal[cell] = scorecard.paired_gains(agent, kind, int(players[:-1]), 1500, 11, 0, False)
        scores[agent] = scorecard.overall_score(per_deal, anchors, seed=1)
    assert scores[model]["ci95"][1] < scores["ppo"]["ci95"][0], scores
