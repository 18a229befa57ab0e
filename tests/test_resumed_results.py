"""Results that resume and re-run without misleading: kept tables and cells are used only if the job wrote them,
unchanged and whole; learned agents are keyed by their file's content; seeded outputs are the same bytes; bad
sizes, interruptions and an unreachable Ray are one line, before any folder."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from train import evaluate, exploit, league
from train.measure import exploitability, league_tables

ROOT = Path(__file__).resolve().parent.parent
POOL = ["--agents", "random", "most_copies", "fewest_copies"]
TINY = [*POOL, "--players", "3", "--deals", "60", "--tables", "2", "--no-progress"]


def run_league(out: Path, *extra: str) -> bytes:
    league.main([*TINY, "--out", str(out), *extra])
    return (out / "league.json").read_bytes()


def replays(monkeypatch) -> list:
    """Record the tables the league plays (rather than reads back)."""
    played, real = [], league_tables.play_table
    monkeypatch.setattr(league, "play_table", lambda *args: played.append(args[1:]) or real(*args))
    return played


def refusal(capsys, job, argv) -> str:
    """The one line a refused command prints (exit status 2)."""
    with pytest.raises(SystemExit) as exit_:
        job.main(argv)
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and len(error.strip().splitlines()) == 1, error
    return error


def test_a_kept_table_edited_by_hand_is_named_and_played_again(tmp_path, monkeypatch, capsys):
    whole = run_league(tmp_path / "l")
    table = tmp_path / "l" / "tables" / "3p_1.json"
    edited = json.loads(table.read_text())
    edited["chips"][0] = [chips + 50 for chips in edited["chips"][0]]  # valid JSON, +50 chips a deal for a seat
    table.write_text(json.dumps(edited))
    played = replays(monkeypatch)
    capsys.readouterr()
    assert run_league(tmp_path / "l") == whole
    assert played == [(3, 1)] and "3p_1.json has changed since this job wrote it" in capsys.readouterr().out


@pytest.mark.parametrize(
    "damage, words",
    [
        ({}, "not a table of a league"),
        ([1, 2], "not a table of a league"),
        ("agents", "its agents are not the ones"),
        ("short", "3 seats × 60 deals"),
        ("nan", "3 seats × 60 deals"),
        ("unbalanced", "do not add up to 0"),
    ],
)
def test_a_kept_table_of_the_wrong_shape_is_played_again_without_a_traceback(tmp_path, damage, words):
    settings = league_tables.Settings(("random", "most_copies", "fewest_copies"), (3,), "scarne", 60, 2, 20, 0)
    table = league_tables.play_table(settings, 3, 0)
    if damage == "agents":
        table["agents"] = ["random", "random", "nobody"]
    elif damage == "short":  # fewer deals than asked
        table["chips"] = [seat[:30] for seat in table["chips"]]
    elif damage == "nan":
        table["chips"][1][5] = float("nan")
    elif damage == "unbalanced":
        table["chips"][2][0] += 1
    else:
        table = damage
    with pytest.raises(ValueError, match=words):
        league.check_table(table, settings, 3, 0)


def test_a_table_file_the_league_never_wrote_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    real, calls = league_tables.play_table, []

    def stops_after_one(*args):
        if calls:
            raise KeyboardInterrupt
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(league, "play_table", stops_after_one)
    with pytest.raises(SystemExit) as stopped:
        run_league(tmp_path / "l")
    assert stopped.value.code == 130 and "the finished tables are kept in" in capsys.readouterr().err
    kept = tmp_path / "l" / "tables" / "3p_0.json"
    shutil.copy(kept, kept.with_name("3p_1.json"))  # dropped in by hand: not in the manifest
    monkeypatch.setattr(league, "play_table", real)
    assert "3p_1.json" in refusal(capsys, league, [*TINY, "--out", str(tmp_path / "l")])
    assert json.loads((tmp_path / "l" / "manifest.json").read_text())["files"].get("tables/3p_1.json") is None


def test_a_model_file_replaced_under_the_same_name_is_a_new_league(tmp_path, monkeypatch, capsys):
    pytest.importorskip("sb3_contrib")
    from agents.ppo import SHIPPED_MODEL

    model = tmp_path / "m.zip"
    shutil.copy(SHIPPED_MODEL, model)
    argv = ["--agents", "most_copies", f"ppo:{model}", "--players", "3", "--deals", "30", "--tables", "1"]
    argv += ["--no-progress"]
    monkeypatch.chdir(tmp_path)  # results/league/<settings hash> lands here
    league.main(argv)
    first = sorted((tmp_path / "results" / "league").iterdir())
    shutil.copy(ROOT / "agents" / "models" / "ppo_scratch_scarne.zip", model)  # another model, the same path
    played = replays(monkeypatch)
    league.main(argv)
    assert played and len(sorted((tmp_path / "results" / "league").iterdir())) == len(first) + 1
    out = ["--out", str(first[0])]  # and in the first league's folder: other settings, said in one line
    assert "models" in refusal(capsys, league, [*argv, *out])


@pytest.mark.parametrize(
    "job, argv, words",
    [
        (league, [*TINY, "--players", "3", "3"], "--players names 3 more than once"),
        (league, [*TINY, "--tables", "10000", "--deals", "5000"], "is more than 10,000,000 deals"),
        (exploit, ["--target", "most_copies", "most_copies"], "--target names most_copies more than once"),
        (exploit, ["--target", "pimc:²"], "must be a whole number from 1 to 4,096"),
        (evaluate, ["--candidates", "random", "ppo:"], "names no model file"),
    ],
)
def test_repeated_sizes_huge_jobs_and_odd_names_are_refused_before_any_folder(tmp_path, capsys, job, argv, words):
    assert words in refusal(capsys, job, [*argv, "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_ray_that_cannot_be_reached_is_one_line_before_any_folder(tmp_path, capsys, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    error = refusal(capsys, league, [*TINY, "--out", str(tmp_path / "out"), "--ray", "auto"])
    assert "--ray: cannot start or join the Ray cluster at auto" in error
    assert not (tmp_path / "out").exists()


def test_seeded_outputs_are_the_same_bytes_every_time(tmp_path):
    run_league(tmp_path / "a")
    run_league(tmp_path / "b")
    exploit_argv = ["--target", "most_copies", "--players", "3", "--deals", "40", "--samples", "4"]
    evaluate_argv = ["--candidates", "random", "most_copies", "--players", "3", "--deals", "200"]
    for folder in ("a", "b"):
        exploit.main([*exploit_argv, "--out", str(tmp_path / f"x{folder}")])
        evaluate.main([*evaluate_argv, "--out", str(tmp_path / f"e{folder}")])
    outputs = {
        "l": ["league.md", "league.json", "league.csv", "league.png"],
        "x": ["exploit.md", "exploit.json", "exploit.csv", "exploit.png"],
        "e": ["results.md", "results.json", "results.csv", "results.png"],
    }
    for prefix, names in outputs.items():
        first, second = (tmp_path / (f"{prefix}{run}" if prefix != "l" else run) for run in ("a", "b"))
        for name in names:
            assert (first / name).read_bytes() == (second / name).read_bytes(), name
        assert "seconds" in json.loads((first / "provenance.json").read_text())  # wall time lives here only


def test_an_exploit_job_resumes_from_its_finished_cells(tmp_path, monkeypatch, capsys):
    argv = ["--target", "most_copies", "--players", "3", "4", "--deals", "40", "--samples", "4"]
    argv += ["--out", str(tmp_path / "x")]
    exploit.main([*argv[:-1], str(tmp_path / "whole")])
    real, calls = exploitability.exploitability, []

    def stops_after_one(*args, **kwargs):
        if calls:
            raise KeyboardInterrupt
        calls.append(args[:2])
        return real(*args, **kwargs)

    monkeypatch.setattr(exploit, "exploitability", stops_after_one)
    with pytest.raises(SystemExit) as stopped:
        exploit.main(argv)
    assert stopped.value.code == 130 and "finished cells are kept" in capsys.readouterr().err
    calls.clear()
    monkeypatch.setattr(exploit, "exploitability", lambda *a, **k: calls.append(a[:2]) or real(*a, **k))
    exploit.main(argv)
    assert calls == [("most_copies", 4)]  # only the cell that had not finished
    assert (tmp_path / "x" / "exploit.json").read_bytes() == (tmp_path / "whole" / "exploit.json").read_bytes()


@pytest.mark.parametrize("signal_, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_league_stopped_by_a_signal_says_what_it_kept_and_exits_without_a_traceback(tmp_path, signal_, status):
    argv = [*POOL, "--players", "3", "4", "--deals", "400", "--tables", "40", "--no-progress"]
    process = subprocess.Popen(
        [sys.executable, "-m", "train.league", *argv, "--out", str(tmp_path / "l")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    tables = tmp_path / "l" / "tables"
    deadline = time.monotonic() + 120
    while not (tables.exists() and any(tables.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal_)
    _, error = process.communicate(timeout=60)
    assert process.returncode == status, error
    assert "Traceback" not in error and f"the finished tables are kept in {tables}" in error


@pytest.mark.parametrize("job", ["evaluate", "ladder"])
def test_an_opponents_model_file_keys_the_results_as_a_candidates_does(job, tmp_path):
    """``--opponents ppo:<file>``: its SHA-256 is in the settings, so another model under the same name is another
    evaluation (it was recorded as ``"models": {}``)."""
    import importlib

    model = tmp_path / "opp.zip"
    shutil.copy(ROOT / "agents" / "models" / "ppo_distilled_scarne.zip", model)
    argv = ["--candidates", "random", "most_copies", "--opponents", f"ppo:{model}", "--players", "3"]
    argv += ["--deals", "20", "--no-progress", "--out", str(tmp_path / "out")]
    importlib.import_module(f"train.{job}").main(argv)
    models = json.loads((tmp_path / "out" / "args.json").read_text())["models"]
    from train.runner.manifest import sha256

    assert models == {f"ppo:{model}": sha256(model)}


def test_a_benchmarks_json_is_checked_before_the_work_and_never_replaces_anothers_file(tmp_path, capsys):
    from train import bench_search

    argv = ["--players", "3", "--samples", "2", "--positions", "2"]
    mine = tmp_path / "notes.json"
    mine.write_text('{"mine": true}')
    cases = [(tmp_path, "folder"), (mine, "no figures of bench_search"), (tmp_path / "no" / "x.json", "not a folder")]
    for target, words in cases:
        assert words in refusal(capsys, bench_search, [*argv, "--json", str(target)])
    assert mine.read_text() == '{"mine": true}'
    figures = tmp_path / "figures.json"
    bench_search.main([*argv, "--json", str(figures)])
    assert json.loads(figures.read_text())["provenance"]["command"].startswith("python -m train.bench_search")
    assert "--overwrite" in refusal(capsys, bench_search, [*argv, "--json", str(figures)])
    bench_search.main([*argv, "--json", str(figures), "--overwrite"])


def test_the_reference_simulator_runs_in_a_process_and_a_cache_of_its_own(tmp_path):
    """train.bench_batch --reference: the script's figure, read from a process of its own (its folder's numba cache,
    shared with other tools, is never loaded into ours); a script without deals_per_second, or one that fails, is
    one line naming it."""
    from train.bench_batch import reference_speed

    (tmp_path / "neighbour.py").write_text("FIGURE = 123.5\n")
    good = tmp_path / "good.py"
    good.write_text("import os\nfrom neighbour import FIGURE\n\n\ndef deals_per_second(seconds=4.0):\n"
                    "    assert os.environ['NUMBA_CACHE_DIR'] != ''\n    return FIGURE * seconds\n")  # fmt: skip
    assert reference_speed(str(good), 2.0) == 247.0
    (tmp_path / "none.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("def deals_per_second(seconds=4.0):\n    raise ValueError('no deals')\n")
    for name, words in (("none.py", "defines no deals_per_second"), ("broken.py", "ValueError: no deals"),
                        ("missing.py", "no such file")):  # fmt: skip
        with pytest.raises(SystemExit, match=words):
            reference_speed(str(tmp_path / name), 0.1)
