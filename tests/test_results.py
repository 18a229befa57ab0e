"""The committed result tables still describe the code, exactly: one cell of each is played again with the
command's own deals and seeds, and every number must be the committed one, to the last bit. A change to the
rules, the engine, an agent or a shipped model that moves a table fails here; remake the tables then
(``bash docs/results/remake.sh``, which writes them with the commands that made them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from train import league, matrix, scorecard
from train.measure import exploitability, league_tables
from train.measure.evaluation import evaluate
from train.runner.manifest import sha256

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
REPLAYED = {"headline", "strength_ladder", "strength_matrix", "league", "ppo_scratch", "ppo"}
# train.scorecard of each
SCORECARDS = {"scorecard_most_copies", "scorecard_ppo", "scorecard_ppo_distilled", "scorecard_ppo_scratch"}
REPLAYED |= SCORECARDS | {"leaderboard"}
# experiments whose models are not shipped: records of the commit their provenance names, not replayable
RECORDS = {"ppo_finetune", "ppo_state_critic", "ppo_critics", "exploit_league_attempt", "exploit_league_attempt2"}
RECORDS |= {"exploit_6p_precise", "shipped_model", "speed", "ppo_league", "exploit_ppo", "ismcts", "ppo_continuation"}
RECORDS |= {"ppo_retrain_ties", "recipe_curves", "training_speed"}  # curves against this machine's minutes
# learned best responses (their trained runs are not shipped) and the small deck's (a small PPO's file, not shipped)
RECORDS |= {"exploit_learned_search", "exploit_learned_most_copies_6p", "exploit_learned_agents"}
RECORDS |= {"scorecard_ppo_learned_exploit"}
# made before the evaluation path was one (version 0.2.0: the opponents' draws changed for a search played lead by
# lead); remaking it takes about two hours on 2 cores (docs/results/remake.sh exploit); a record until then
RECORDS |= {"exploit"}
RECORDS |= {"exploit_small_deck", "exploit_small_deck_learned", "exploit_small_deck_learned_ppo", "exploit_weakened"}
# train.seeds: trained runs, records of their commit (the exact optimum in them is replayed by test_exact_walk)
RECORDS |= {"seeds_main_range", "seeds_budgets", "seeds_small_deck_r4", "seeds_small_deck_r5", "seeds_small_deck_r6"}
RECORDS |= {"seeds_small_deck_r4_more", "seeds_small_deck_r4_self", "seeds_budgets_own_copies"}
# the library recipes' trained agents (examples/leaderboard_recipes.py): a record of its commit, whose agents the
# leaderboard's replay values again
RECORDS |= {"leaderboard_agents"}
FIGURES = ("chips_per_deal", "ci95", "diff_vs_reference", "diff_ci95", "deals")

pytest.importorskip("sb3_contrib")


def committed(name: str, file: str):
    return json.loads((RESULTS / name / file).read_text())


def test_every_committed_folder_is_replayed_here_or_is_a_record_of_its_commit():
    folders = {path.name for path in RESULTS.iterdir() if path.is_dir()}
    assert folders == REPLAYED | RECORDS
    for name in folders:
        assert "commit" in committed(name, "provenance.json"), name


@pytest.mark.parametrize("name", ["headline", "strength_ladder", "strength_matrix", "league", "exploit", "exploit_ppo"])
def test_the_tables_were_made_with_the_shipped_models(name):
    """A table keys each learned agent by its model file's SHA-256: a new shipped model means new tables."""
    import agents

    for spec, digest in committed(name, "args.json")["models"].items():
        assert sha256(agents.make(spec).path) == digest, f"{name}: {spec} is not the model it was made with"


def same_rows(new: list[dict], old: list[dict], keys: tuple[str, ...], what: str) -> None:
    """Every new row equals the committed row of the same keys, figure for figure."""
    index = {tuple(row[k] for k in keys): row for row in old}
    for row in new:
        match = index[tuple(row[k] for k in keys)]
        for figure in set(row) & set(FIGURES) | set(row) & {"gain_over_most_copies", "gain_ci95"}:
            assert row[figure] == match[figure], f"{what}: {row} moved from {match} (remake the table)"


def test_the_headline_table_replays_exactly():
    args = committed("headline", "args.json")
    rows = evaluate(
        ["random", "most_copies", "control", "ppo"],  # the search player's row costs minutes: the others replay
        args["opponents"],
        args["players"],
        args["rules"],
        args["deals"],
        args["seed"],
        quiet=True,
    )
    old = [row for row in committed("headline", "results.json") if row["reference"] == "random"]
    same_rows([vars(row) for row in rows], old, ("name",), "headline")


@pytest.mark.parametrize("players, opponents", [(4, "random"), (6, "most_copies")])
def test_a_cell_of_the_strength_ladder_replays_exactly(players, opponents):
    args = committed("strength_ladder", "args.json")
    rows = evaluate(
        ["most_copies", "random", "ppo"],
        [opponents],
        players,
        args["rules"],
        args["deals"],
        args["seed"],
        reference="most_copies",
        quiet=True,
    )
    old = [row for row in committed("strength_ladder", "ladder.json")["rows"] if row["players"] == players]
    old = [row for row in old if row["opponents"] == opponents]
    same_rows([vars(row) for row in rows], old, ("name",), f"ladder, {players} players vs {opponents}")


def test_a_cell_of_the_strength_matrix_replays_exactly():
    if "strength_matrix" in RECORDS:
        pytest.skip("docs/results/strength_matrix is a record of the evaluation path before 0.2.0 (remake.sh)")
    args = committed("strength_matrix", "args.json")
    settings = matrix.Settings(
        **{key: tuple(value) if isinstance(value, list) else value for key, value in args.items() if key != "models"}
    )
    settings = matrix.Settings(**{**vars(settings), "agents": ("most_copies", "random", "ppo")})
    cell = matrix.Cell(3, "bicycle", "random")
    parts = [matrix.run_shard(settings, cell, index, deals, None) for index, deals in settings.shards(cell)]
    chips = {name: [value for part in parts for value in part[name]] for name in settings.agents}
    import numpy as np

    rows = matrix.cell_rows(cell, {name: np.asarray(values) for name, values in chips.items()})
    old = [row for row in committed("strength_matrix", "matrix.json")["rows"] if row["rules"] == "bicycle"]
    old = [row for row in old if (row["players"], row["opponents"]) == (3, "random")]
    same_rows(rows, old, ("agent",), "matrix, bicycle, 3 players vs random")


def test_a_table_of_the_league_replays_to_the_bytes_its_leaderboard_was_made_from():
    document = committed("league", "league.json")
    settings = league_tables.Settings(
        **{key: tuple(value) if isinstance(value, list) else value for key, value in document["settings"].items()}
    )
    assert set(document["by_size"]) == {str(n) for n in settings.players}, "the league has no per-size ratings"
    cheap = next(t for t in document["tables"] if not any(a.startswith("pimc") for a in t["agents"]))
    table = league_tables.play_table(settings, cheap["players"], cheap["index"])
    assert table["agents"] == cheap["agents"]
    assert league.table_digest(table) == cheap["sha256"], "the league moved (remake the table)"


@pytest.mark.slow
def test_a_cell_of_exploitability_replays_exactly():
    if "exploit" in RECORDS:
        pytest.skip("docs/results/exploit is a record of the evaluation path before 0.2.0 (remake.sh exploit)")
    args = committed("exploit", "args.json")
    row = exploitability.exploitability("most_copies", 3, args["rules"], args["deals"], args["samples"], args["seed"])
    (old,) = [r for r in committed("exploit", "exploit.json") if (r["target"], r["players"]) == ("most_copies", 3)]
    assert row == old, f"exploitability moved from {old} to {row} (remake the table)"


@pytest.mark.slow
def test_an_evaluation_of_ppo_scratch_replays_exactly():
    rows = evaluate(
        ["most_copies", "ppo_scratch"], ["random"], 3, "scarne", 200_000, 21, reference="most_copies", quiet=True
    )
    same_rows([vars(row) for row in rows], committed("ppo_scratch", "random_3p.json"), ("name",), "ppo_scratch")


@pytest.mark.slow
def test_an_evaluation_of_the_shipped_ppo_replays_exactly():
    """A cell of the shipped model's held-out grid: 4 players against most_copies tables."""
    rows = evaluate(
        ["most_copies", "ppo"], ["most_copies"], 4, "scarne", 100_000, 41, reference="most_copies", quiet=True
    )
    old = committed("ppo", "most_copies_4p.json")
    same_rows([vars(row) for row in rows], old, ("name",), "ppo")


@pytest.mark.parametrize("name", sorted(SCORECARDS))
def test_a_cell_of_each_shipped_score_card_replays_exactly(name):
    """The 4-player most_copies cell (one of the cheap ones); the card's anchors are the ones shipped now."""
    card = committed(name, "scorecard.json")
    assert card["suite_version"] == scorecard.SUITE_VERSION and card["seed"] == scorecard.SEED
    assert card["scale_version"] == scorecard.SCALE_VERSION, f"{name} is on another scale (remake.sh scorecards)"
    (old,) = [c for c in card["cells"] if (c["opponents"], c["players"]) == ("most_copies", 4)]
    new = scorecard.gains(card["agent"], "most_copies", 4, card["deals_per_cell"], card["seed"] + 4, 0, False)
    assert (new["gain"], new["gain_ci95"]) == (old["gain"], old["gain_ci95"]), f"{name} moved (remake.sh scorecards)"
    anchor = scorecard.read_anchors()["most_copies_4p"]
    assert scorecard.score(old["gain"], anchor) == old["score"], f"{name} was scored with other anchors"


def test_the_leaderboard_replays_from_its_kept_models():
    """Its 4-rank, 3-player column, every entry: the exact regrets of the models the small-deck studies keep."""
    from train.leaderboard import board, from_seeds
    from train.measure.candidates import made

    document = committed("leaderboard", "leaderboard.json")
    settings = committed("leaderboard", "args.json")

    def here(spec: str) -> str:  # a kept model's or agent file's path, from the repository wherever the tests run
        if spec.startswith("ppo:docs/"):
            return f"ppo:{RESULTS.parent.parent / spec[4:]}"
        return str(RESULTS.parent.parent / spec) if spec.startswith("docs/") else spec

    kept = {"*", "4x3"}
    entries = {name: {**e, "agents": {d: [here(s) for s in g] for d, g in e["agents"].items() if d in kept}}
               for name, e in settings["entries"].items()}  # fmt: skip
    kept_models = from_seeds(RESULTS / "seeds_small_deck_r4")["default"]["agents"]["4x3"]
    assert kept_models == entries["default"]["agents"]["4x3"]
    specs = {spec for e in entries.values() for group in e["agents"].values() for spec in group}
    rules = f"{settings['rules']}:ranks=4"
    now = board(entries, made(sorted(specs)), [("4x3", rules, 3)], settings["opponents"][0], settings["bootstrap_seed"])
    for name, row in now["entries"].items():
        assert row["decks"]["4x3"] == document["entries"][name]["decks"]["4x3"], name
