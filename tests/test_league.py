"""The league: who sits where, per-size ratings that order a clear gap and agree with the chips, the same bytes in
process, resumed or on Ray."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from train import league
from train.measure import league_tables

TINY = ["--agents", "random", "most_copies", "fewest_copies", "--players", "3", "4", "--deals", "120"]
TINY += ["--tables", "3", "--no-progress"]


def run(out: Path, *extra: str) -> bytes:
    league.main([*TINY, "--out", str(out), *extra])
    return (out / "league.json").read_bytes()


def settings(agents=("a", "b", "c"), players=(3, 5)) -> league_tables.Settings:
    return league_tables.Settings(tuple(agents), tuple(players), "scarne", 10, 20, 0)


def test_tables_seat_distinct_agents_while_the_pool_lasts_and_everyone_when_it_does_not():
    big = settings(agents=[f"agent{i}" for i in range(8)], players=(4,))
    assert league_tables.compositions(big, 4) == 70
    draws = [league_tables.seat_agents(big, 4, i) for i in range(140)]
    assert all(len(set(d)) == 4 for d in draws)
    for cycle in (draws[:70], draws[70:]):  # every set of four agents once per cycle, in a shuffled order
        assert len({frozenset(d) for d in cycle}) == 70
    assert draws[:70] != draws[70:] and len({tuple(d) for d in draws}) > 100  # other orders, other seatings
    small = settings(players=(5,))
    assert all(set(league_tables.seat_agents(small, 5, i)) == {"a", "b", "c"} for i in range(20))
    assert league_tables.seat_agents(small, 5, 3) == league_tables.seat_agents(small, 5, 3)


def test_a_tiny_league_rates_every_agent_and_ranks_a_clear_gap(tmp_path):
    document = json.loads(run(tmp_path / "l"))
    rows = document["leaderboard"]
    assert {row["agent"] for row in rows} == {"random", "most_copies", "fewest_copies"}
    assert [row["rating"] for row in rows] == sorted((row["rating"] for row in rows), reverse=True)
    for row in rows:  # three agents at every 3- and 4-player table: each plays every deal
        assert row["deals_3p"] == 3 * 120 and row["deals_4p"] == 3 * 120
    chips = {row["agent"]: row["chips_3p"] for row in rows}
    assert abs(sum(chips.values())) < 1e-6  # three agents, one at each seat of a zero-sum table
    assert rows[-1]["agent"] == "fewest_copies"  # it loses most, by far, against these two (docs/results.md)
    for players, board in document["by_size"].items():
        assert [row["rating"] for row in board] == sorted((row["rating"] for row in board), reverse=True)
        assert board[-1]["agent"] == "fewest_copies", players
        for row in board:
            low, high = row["rating_ci95"]
            assert low <= row["rating"] <= high and set(row) >= {"agent", "chips", "chips_ci95", "alpharank"}
        assert abs(sum(row["alpharank"] for row in board) - 1) < 1e-9
    assert "**3 players**" in (tmp_path / "l" / "league.md").read_text()
    for name in ("league.md", "league.csv", "league.png"):
        assert (tmp_path / "l" / name).stat().st_size > 0


def test_an_interrupted_league_resumes_from_its_finished_tables_with_the_same_bytes(tmp_path, monkeypatch):
    whole = run(tmp_path / "whole")
    real, calls = league_tables.play_table, []

    def dies_after_four_tables(*args):
        if len(calls) == 4:
            raise KeyboardInterrupt
        calls.append(args[1:])
        return real(*args)

    monkeypatch.setattr(league, "play_table", dies_after_four_tables)
    with pytest.raises(SystemExit) as stopped:  # Ctrl-C: what is done is kept, exit 130, no traceback
        run(tmp_path / "resumed")
    assert stopped.value.code == 130
    assert len(list((tmp_path / "resumed" / "tables").iterdir())) == 4
    calls.clear()
    monkeypatch.setattr(league, "play_table", lambda *args: calls.append(args[1:]) or real(*args))
    assert run(tmp_path / "resumed") == whole
    assert len(calls) == 2  # only the tables that had not finished


def test_bad_pools_are_refused_before_any_work(tmp_path, capsys):
    for agents, message in ((["random", "random"], "names an agent twice"), (["nobody", "random"], "unknown agent")):
        with pytest.raises(SystemExit):
            league.main([*TINY, "--out", str(tmp_path / "l"), "--agents", *agents])
        assert message in capsys.readouterr().err
    assert not (tmp_path / "l").exists()


@pytest.mark.ray
@pytest.mark.slow
def test_on_a_local_ray_with_two_cpus_the_league_json_is_byte_identical(tmp_path):
    pytest.importorskip("ray")
    assert run(tmp_path / "ray", "--ray", "--workers", "2") == run(tmp_path / "here")


def test_an_agent_that_never_sits_is_unrated_in_valid_json_and_listed_last(tmp_path):
    argv = ["--agents", "random", "most_copies", "fewest_copies", "control", "--players", "3", "--tables", "1"]
    rows = league.main([*argv, "--deals", "20", "--no-progress", "--out", str(tmp_path / "l")])
    text = (tmp_path / "l" / "league.json").read_text()
    json.loads(text, parse_constant=lambda name: pytest.fail(f"league.json holds {name}, which is not JSON"))
    assert rows[-1]["rating"] is None and all(row["rating"] is not None for row in rows[:-1])
    assert [row["rating"] for row in rows[:-1]] == sorted((row["rating"] for row in rows[:-1]), reverse=True)
