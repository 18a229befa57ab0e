"""The strength matrix: same settings, same bytes — in process or on Ray, whole or resumed, with a worker
killed mid-task."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from train import matrix

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("matplotlib")
TINY = ["--players", "3", "4", "--rules", "scarne", "--agents", "random", "most_copies", "--deals", "600"]
TINY += ["--shard-deals", "250", "--no-progress"]


def run(out: Path, *extra: str) -> bytes:
    matrix.main([*TINY, "--out", str(out), *extra])
    return (out / "matrix.json").read_bytes()


def test_a_tiny_matrix_has_every_cell_and_agent_and_its_outputs(tmp_path):
    rows = json.loads(run(tmp_path / "m"))["rows"]
    cells = {(r["players"], r["opponents"]) for r in rows}
    assert cells == {(n, pool) for n in (3, 4) for pool in ("random", "most_copies")}
    assert all(r["deals"] == 600 for r in rows)
    for row in rows:  # the reference gains nothing over itself; random leading loses to it at 3 players
        if row["agent"] == "most_copies":
            assert row["gain_over_most_copies"] == 0
        elif row["players"] == 3 and row["opponents"] == "most_copies":
            assert row["gain_over_most_copies"] + row["gain_ci95"] < -5
    for name in ("matrix.md", "matrix.csv", "matrix.png"):
        assert (tmp_path / "m" / name).stat().st_size > 0
    assert "| scarne | random |" in (tmp_path / "m" / "matrix.md").read_text()


def test_the_shard_size_changes_the_deals_but_a_shard_is_the_same_deals_wherever_it_runs(tmp_path):
    assert run(tmp_path / "a") != run(tmp_path / "b", "--shard-deals", "300")  # other shards, other seeds
    cell = matrix.Cell(3, "scarne", "random")
    assert matrix.shard_seed(0, cell, 1) == matrix.shard_seed(0, cell, 1) != matrix.shard_seed(0, cell, 2)


def test_an_interrupted_matrix_resumes_with_its_finished_cells_and_gives_the_same_bytes(tmp_path, monkeypatch):
    whole = run(tmp_path / "whole")
    calls = []
    real = matrix.run_shard

    def dies_after_five_units(*args):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(args[1].key)
        return real(*args)

    monkeypatch.setattr(matrix, "run_shard", dies_after_five_units)
    with pytest.raises(SystemExit) as stopped:  # Ctrl-C: what is done is kept, exit 130, no traceback
        run(tmp_path / "resumed")
    assert stopped.value.code == 130
    finished = sorted(p.name for p in (tmp_path / "resumed" / "cells").iterdir())
    assert finished == ["scarne_3p_random.json"]  # three shards of the first cell made it; the second's did not
    calls.clear()
    monkeypatch.setattr(matrix, "run_shard", lambda *args: calls.append(args[1].key) or real(*args))
    assert run(tmp_path / "resumed") == whole
    assert "scarne_3p_random" not in calls and len(calls) == 9  # finished cells are read back, not recomputed


def test_resuming_with_other_settings_is_refused_and_overwrite_starts_anew(tmp_path, capsys):
    run(tmp_path / "m")
    with pytest.raises(SystemExit):
        matrix.main([*TINY, "--out", str(tmp_path / "m"), "--seed", "1"])
    assert "other settings (seed: 0 -> 1)" in capsys.readouterr().err
    run(tmp_path / "m", "--seed", "1", "--overwrite")
    assert json.loads((tmp_path / "m" / "matrix.json").read_text())["settings"]["seed"] == 1


def test_bad_names_are_refused_before_any_work(tmp_path, capsys):
    with pytest.raises(SystemExit):
        matrix.main([*TINY, "--out", str(tmp_path / "m"), "--agents", "nobody"])
    assert "unknown agent 'nobody'" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


@pytest.mark.ray
@pytest.mark.slow
def test_on_a_local_ray_with_two_cpus_the_matrix_json_is_byte_identical(tmp_path):
    pytest.importorskip("ray")
    assert run(tmp_path / "ray", "--ray", "--workers", "2") == run(tmp_path / "here")


@pytest.mark.ray
@pytest.mark.slow
def test_a_killed_worker_is_retried_with_an_identical_result(tmp_path):
    pytest.importorskip("ray")
    flags = ["--players", "3", "--opponents", "random", "--agents", "pimc:128", "--deals", "4000"]
    flags += ["--shard-deals", "1000", "--no-progress"]
    matrix.main([*flags, "--out", str(tmp_path / "here")])
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}  # a local Ray
    command = [sys.executable, "-m", "train.matrix", *flags, "--out", str(tmp_path / "ray"), "--ray", "--workers", "2"]
    job = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and job.poll() is None and time.monotonic() < deadline:
        killed = next(iter(_processes_titled("ray::work_unit")), None)
        if killed is None:
            time.sleep(0.02)
    assert killed is not None, "no Ray worker was seen running a work unit"
    os.kill(killed, signal.SIGKILL)
    output, _ = job.communicate(timeout=300)
    assert job.returncode == 0, output
    assert (tmp_path / "ray" / "matrix.json").read_bytes() == (tmp_path / "here" / "matrix.json").read_bytes()


def _processes_titled(title: str) -> list[int]:
    """Pids whose command line starts with ``title`` (Ray names a busy worker after its task)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(title.encode()):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.training
def test_train_distils_a_policy_per_cell_that_joins_the_table(tmp_path):
    flags = ["--players", "4", "--opponents", "random", "--agents", "random", "--deals", "400", "--no-progress"]
    flags += ["--train", "--train-positions", "3000", "--runs", str(tmp_path / "runs")]
    matrix.main([*flags, "--out", str(tmp_path / "m")])
    rows = json.loads((tmp_path / "m" / "matrix.json").read_text())["rows"]
    assert [r["agent"] for r in rows] == ["most_copies", "random", "trained"]
    assert (tmp_path / "m" / "models" / "scarne_4p_random.zip").exists()
    assert (tmp_path / "runs" / "matrix_scarne_4p_random_s0" / "final_model.zip").exists()


def test_variance_reduction_keeps_the_gain_as_played_beside_the_reduced_one(tmp_path):
    flags = ["--players", "4", "--rules", "scarne", "--opponents", "random", "--agents", "random", "most_copies"]
    flags += ["--deals", "300", "--shard-deals", "150", "--no-progress"]
    plain = json.loads(run_flags(flags, tmp_path / "plain"))["rows"]
    reduced = json.loads(run_flags([*flags, "--variance-reduction", "32"], tmp_path / "reduced"))["rows"]
    (played,) = [r for r in plain if r["agent"] == "random"]
    (row,) = [r for r in reduced if r["agent"] == "random"]
    # the same deals: the reduced run's own play (stepped in Python, other random streams than the kernel's)
    # and its reduced estimate agree with each other and with the plain matrix, within the plain CIs
    assert abs(row["gain_over_most_copies"] - row["gain_over_most_copies_plain"]) < 2 * row["gain_ci95_plain"]
    assert abs(row["gain_over_most_copies"] - played["gain_over_most_copies"]) < 2 * played["gain_ci95"]
    assert row["gain_ci95"] < row["gain_ci95_plain"]  # a random lead's odds are known: its luck cancels
    assert json.loads((tmp_path / "reduced" / "args.json").read_text())["variance_reduction"] == 32
    assert "variance_reduction" not in json.loads((tmp_path / "plain" / "args.json").read_text())


def run_flags(flags: list[str], out: Path) -> bytes:
    matrix.main([*flags, "--out", str(out)])
    return (out / "matrix.json").read_bytes()


@pytest.mark.ray
@pytest.mark.slow
def test_a_local_ray_keeps_its_session_files_in_the_jobs_temporary_folder_and_removes_them(tmp_path):
    """Ray's default is /tmp/ray/session_<date>_<pid>/ with /tmp/ray/session_latest repointed, and a token in
    ~/.ray/auth_token: files outside every folder the job names, left behind. Here they live in the job's
    temporary folder and go with the job."""
    pytest.importorskip("ray")
    home, temporary = tmp_path / "home", tmp_path / "t"
    home.mkdir()
    temporary.mkdir()
    shared = sorted(Path("/tmp/ray").glob("*")) if Path("/tmp/ray").is_dir() else []
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}  # a local Ray
    caches = tmp_path / "caches"  # matplotlib's font cache and config: a library's cache, not Ray's
    env |= {"HOME": str(home), "TMPDIR": str(temporary), "MPLCONFIGDIR": str(caches), "XDG_CACHE_HOME": str(caches)}
    command = [sys.executable, "-m", "train.matrix", *TINY, "--out", str(tmp_path / "ray"), "--ray", "--workers", "1"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not list(home.rglob("*")), sorted(home.rglob("*"))
    assert not list(temporary.rglob("*")), sorted(temporary.rglob("*"))
    now = sorted(Path("/tmp/ray").glob("*")) if Path("/tmp/ray").is_dir() else []
    assert now == shared, sorted(set(now) - set(shared))


@pytest.mark.ray
@pytest.mark.slow
def test_a_local_ray_leaves_the_authentication_settings_of_this_process_as_it_found_them():
    """Ray sets RAY_AUTH_MODE=token in the process that starts a local Ray; left so after the runner's Ray and its
    token are gone, the next Ray this process starts (a test's two-node cluster) asked for a token nobody had
    and its GCS would not start (CI, 2026-12-07)."""
    pytest.importorskip("ray")
    from train.runner.units import RAY_AUTHENTICATION, OnRay

    before = {key: os.environ.get(key) for key in RAY_AUTHENTICATION}
    OnRay(None, workers=1).close()
    assert {key: os.environ.get(key) for key in RAY_AUTHENTICATION} == before
