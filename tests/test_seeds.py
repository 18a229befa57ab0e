"""python -m train.seeds: recipes read and refused by name, the estimators over seeds (rliable's IQM, stratified
bootstrap and probability of improvement), and the job: the same table here, in processes and on a two-node Ray
cluster, and a unit killed midway resumed on the rerun."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import HELD_APART

from train import seeds
from train.learn import recipes
from train.measure import over_seeds
from train.measure.seeds_report import format_markdown, report

pytest.importorskip("rliable")
ROOT = Path(__file__).resolve().parent.parent


def test_a_recipe_is_a_name_and_train_ppo_flags():
    assert recipes.recipe("wide=--rank-head 64 128") == recipes.Recipe("wide", ("--rank-head", "64", "128"))
    assert recipes.recipe("default") == recipes.Recipe("default", ())
    assert recipes.recipe("t=--teacher ''").flags == ("--teacher", "")  # a shell's quoting, as train_ppo reads it


@pytest.mark.parametrize(
    "text, words",
    [("x=--seed 3", "--seed is the job's to set"), ("x=--runs r", "--runs is the job's"), ("bad name=", "a name of"),
     ("x=--teacher 'open", "do not parse")],
)  # fmt: skip
def test_a_recipe_that_sets_what_the_job_owns_or_does_not_parse_is_refused_by_name(text, words):
    with pytest.raises(Exception, match=words):
        recipes.recipe(text)


def test_a_recipe_with_a_bad_train_ppo_flag_is_refused_naming_the_recipe(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for recipe, words in (("odd=--no-such-flag 1", "--recipe odd: unrecognized"), ("odd=--n-epochs 0", "n_epochs")):
        with pytest.raises(SystemExit) as stop:
            seeds.main(["--recipe", recipe])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.iterdir())  # refused before any folder


def test_each_budget_multiplies_the_recipes_steps_and_names_its_own_run():
    arm = recipes.Arm(recipes.Recipe("default"), 4, "default_x4")
    args = arm.args("scarne", 2, "/tmp/runs")
    assert args.total_timesteps == 4 * 300_000 and args.seed == 2 and not args.progress
    assert args.run_name.startswith("seeds_default_s2_") and args.out_dir == "/tmp/runs"
    other = recipes.Arm(recipes.Recipe("default"), 1, "default_x4").args("scarne", 2, "/tmp/runs")
    assert other.run_name != args.run_name  # the key is the settings', not the arm's name
    alone = recipes.Arm(recipes.Recipe("default"), 4, "default").args("scarne", 2, "/tmp/runs")
    assert alone.run_name == args.run_name  # the same run, whichever study names it


def test_the_iqm_is_the_mean_of_the_middle_half_and_its_interval_holds_it():
    estimate = over_seeds.iqm(np.array([0.0, 1.0, 2.0, 3.0, 100.0, 4.0, 5.0, 6.0]))
    assert estimate.value == pytest.approx(np.mean([2.0, 3.0, 4.0, 5.0]))
    assert estimate.low <= estimate.value <= estimate.high
    assert over_seeds.iqm(np.array([0.5, 0.5, 0.5])) == over_seeds.Interval(0.5, 0.5, 0.5)
    again = over_seeds.iqm(np.array([0.0, 1.0, 2.0, 3.0, 100.0, 4.0, 5.0, 6.0]))
    assert again == estimate  # the bootstrap draws from its own seeded stream


def test_the_probability_of_improvement_counts_pairs_of_runs():
    assert over_seeds.probability_of_improvement([3.0, 4.0, 5.0], [0.0, 1.0, 2.0]).value == 1.0
    assert over_seeds.probability_of_improvement([0.0, 1.0], [3.0, 4.0]).value == 0.0
    assert over_seeds.probability_of_improvement([1.0, 3.0], [2.0, 2.0]).value == pytest.approx(0.5)


def _units(gains: dict, optimum=None) -> tuple[dict, dict]:
    settings = {
        "arms": {arm: {"flags": [], "budget": 1, "runs": []} for arm in gains},
        "seeds": [0, 1, 2],
        "evaluation": {"players": [3], "opponents": ["random"], "rules": "scarne", "deals": 100, "seed": 21},
        "references": ["random"],
    }
    units = {
        f"{arm}_s{s}": {"arm": arm, "seed": s, "run": "r", "model_sha256": "x", "ppo_timesteps": 10,
                        "training_seconds": 1.0, "gains": {"3": {"gain": g, "gain_ci95": 0.1, "chips": g}}}
        for arm, values in gains.items() for s, g in zip(range(3), values)
    }  # fmt: skip
    units["references_3p"] = {"players": 3, "gains": {"random": {"gain": -1.0, "gain_ci95": 0.2, "chips": 0.0}}}
    if optimum is not None:
        units["optimum_3p"] = {"players": 3, "optimum": optimum, "most_copies": 1.0, "random": 0.0}
    return settings, units


def test_the_report_gives_each_seed_the_iqm_and_the_share_of_the_exact_optimum():
    settings, units = _units({"a": [0.4, 0.6, 0.5], "b": [0.1, 0.2, 0.0]}, optimum=2.0)
    document = report(settings, units, 0)
    entry = document["by_size"]["3"]
    assert entry["recipes"]["a"]["seeds"] == [0.4, 0.6, 0.5] and entry["recipes"]["a"]["mean"] == pytest.approx(0.5)
    assert entry["recipes"]["a"]["share_of_optimum"]["iqm"] == pytest.approx(0.5)  # 0.5 of the optimum's 1.0
    assert entry["improvement"][0]["x"] == "a" and entry["improvement"][0]["value"] == 1.0
    text = format_markdown(settings, document)
    assert "| a | +0.400 +0.600 +0.500 | +0.500 |" in text and "50%" in text and "P(a > b) = 1.00" in text
    assert "| random (reference) | -1.000 ± 0.200 |" in text
    settings, units = _units({"a": [0.4, 0.6, 0.5]}, optimum=1.1)  # a gain within the deals' noise: no share
    entry = report(settings, units, 0)["by_size"]["3"]["recipes"]["a"]
    assert "share_of_optimum" not in entry and entry["below_optimum"] == pytest.approx(-0.4)


def _files(out: Path) -> set[Path]:
    """The files of a results folder but those that hold wall time."""
    return {p.relative_to(out) for p in out.rglob("*") if p.is_file()} - {Path(n) for n in HELD_APART}


def _run(tmp_path: Path, name: str, *extra: str) -> Path:
    """The job's example in a process of its own, training into its own runs folder."""
    out = tmp_path / name
    command = [sys.executable, "-m", "train.seeds", *seeds.JOB.example, "--runs", str(tmp_path / f"runs_{name}"),
               "--out", str(out), "--no-progress", *extra]  # fmt: skip
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (tmp_path / f"{name}.stderr").write_text(result.stderr)
    return out


def _trusted_checkpoint(runs: Path, pattern: str) -> bool:
    """Whether a run under ``runs`` has a checkpoint its manifest vouches for (renamed into place and hashed)."""
    from train.runner.manifest import Manifest, UntrustedFile
    from train.runner.run_folder import checkpoints

    for run in runs.glob(pattern):
        for path in checkpoints(run):
            try:
                Manifest(run).verify(path)
                return True
            except (UntrustedFile, OSError, ValueError):  # not hashed yet, or the manifest mid-replace
                pass
    return False


def _table(out: Path) -> dict:
    document = json.loads((out / "results.json").read_text())
    return document["by_size"]


@pytest.mark.slow
@pytest.mark.training
def test_here_and_in_two_processes_the_seeds_train_the_same_models_and_give_the_same_table(tmp_path):
    here, processes = _run(tmp_path, "here"), _run(tmp_path, "processes", "--workers", "2")
    assert (here / "results.json").read_bytes() == (processes / "results.json").read_bytes()
    # from fresh --runs folders: every file the same bytes, but for wall time (provenance.json, and its hash)
    files = _files(here)
    assert files == _files(processes)
    differ = [str(f) for f in sorted(files) if (here / f).read_bytes() != (processes / f).read_bytes()]
    assert not differ, differ
    assert "Traceback" not in (tmp_path / "processes.stderr").read_text()  # idle workers end quietly
    assert sorted(p.name for p in (here / "models").iterdir()) == ["tiny_s0.zip", "tiny_s1.zip"]


@pytest.mark.slow
@pytest.mark.training
@pytest.mark.ray
def test_on_a_two_node_ray_cluster_the_seeds_give_the_table_they_give_here(tmp_path):
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        on_ray = _run(tmp_path, "ray", "--ray", cluster.address)
    finally:
        cluster.shutdown()
    here = _run(tmp_path, "here")
    assert _table(on_ray) == _table(here)
    assert (on_ray / "results.json").read_bytes() == (here / "results.json").read_bytes()


@pytest.mark.slow
@pytest.mark.training
def test_a_unit_killed_midway_resumes_on_the_rerun_and_the_table_is_an_uninterrupted_runs(tmp_path):
    """SIGKILL to the whole job while a seed trains (after its first checkpoint); the same command again resumes
    that run from its checkpoint, keeps the finished unit, and writes the table of a run never interrupted."""
    recipe = seeds.TINY.replace("--total-timesteps 256", "--total-timesteps 4096")
    flags = ["--recipe", recipe, "--seeds", "0", "1", "--players", "3", "--deals", "40", "--references", "random"]
    runs, out = tmp_path / "runs", tmp_path / "killed"
    command = [sys.executable, "-m", "train.seeds", *flags, "--runs", str(runs), "--out", str(out), "--no-progress"]
    job = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not _trusted_checkpoint(runs, "seeds_tiny_s1_*"):  # the second seed is under way
            assert job.poll() is None and time.monotonic() < deadline, job.stdout.read().decode()[-2000:]
            time.sleep(0.05)
        os.killpg(job.pid, signal.SIGKILL)
    finally:
        job.wait()
    assert not (out / "results.json").exists()
    assert (out / "units" / "tiny_s0.json").exists()  # the first seed's unit was kept
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "resuming" in rerun.stdout and "seeds_tiny_s0" not in rerun.stdout.split("resuming")[0]
    whole = subprocess.run([*command[:-5], "--runs", str(tmp_path / "runs2"), "--out", str(tmp_path / "whole"),
                            "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert (out / "results.json").read_bytes() == (tmp_path / "whole" / "results.json").read_bytes()


@pytest.mark.slow
@pytest.mark.training
def test_with_exact_every_model_is_valued_exactly_and_kept(tmp_path):
    """--exact: each seed's gain is its kept model's exact gain over most_copies (train.measure.exact_tree), the
    references' too, and the optimum beside them."""
    import agents
    from train.measure.exact_tree import exact_agent_values

    out = tmp_path / "exact"
    command = [sys.executable, "-m", "train.seeds", "--recipe", seeds.TINY, "--seeds", "0", "--players", "3",
               "--rules", "scarne:ranks=3", "--exact", "--references", "random", "--runs", str(tmp_path / "runs"),
               "--out", str(out), "--no-progress"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    entry = json.loads((out / "results.json").read_text())["by_size"]["3"]
    model = agents.make("ppo", path=str(out / "models" / "tiny_s0.zip"))
    values, _ = exact_agent_values({"m": model, "most_copies": agents.make("most_copies")}, "random", 3,
                                   "scarne:ranks=3")  # fmt: skip
    assert entry["recipes"]["tiny"]["seeds"] == [pytest.approx(values["m"] - values["most_copies"], abs=1e-12)]
    assert "valued exactly over every deal of the deck" in (out / "results.md").read_text()


@pytest.mark.training
def test_a_run_another_job_trains_now_is_refused_before_any_folder_naming_runs(tmp_path, capsys):
    import fcntl

    runs, out = tmp_path / "runs", tmp_path / "out"
    flags = [*seeds.JOB.example, "--runs", str(runs), "--out", str(out), "--no-progress"]
    plan = seeds.check(seeds.parser().parse_args(flags))
    if plan.close:
        plan.close()
    busy = runs / plan.settings["arms"]["tiny"]["runs"][1]
    busy.mkdir(parents=True)
    with open(busy / ".lock", "w") as lock:  # as a training run holds it
        lock.write("4242")
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(SystemExit) as stop:
            seeds.main(flags)
    error = capsys.readouterr().err
    assert stop.value.code == 2 and len(error.strip().splitlines()) == 1, error
    assert "in use by another training run (pid 4242)" in error and "--runs" in error and "--run-name" not in error
    assert not out.exists() and sorted(p.name for p in runs.iterdir()) == [busy.name]


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that is still running (a zombie is not: it has ended, unreaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
@pytest.mark.training
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc (Linux)")
def test_sigkill_of_the_job_alone_leaves_no_worker_running_and_the_rerun_finishes(tmp_path):
    """As the OOM killer does: SIGKILL to the job's own process while its two workers train. The workers end with
    it (within seconds, not 30); the same command then finishes, nothing in use by an orphan."""
    recipe = seeds.TINY.replace("--total-timesteps 256", "--total-timesteps 8192")
    flags = ["--recipe", recipe, "--seeds", "0", "1", "--players", "3", "--deals", "40", "--references", "random",
             "--workers", "2"]  # fmt: skip
    runs, out = tmp_path / "runs", tmp_path / "out"
    command = [sys.executable, "-m", "train.seeds", *flags, "--runs", str(runs), "--out", str(out), "--no-progress"]
    job = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 300
        while not _trusted_checkpoint(runs, "seeds_tiny_s*"):  # both workers are training
            assert job.poll() is None and time.monotonic() < deadline, "the job ended before it was killed"
            time.sleep(0.05)
        workers = [pid for pid in _children(job.pid) if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text()]
        assert len(workers) == 2, workers
        job.kill()  # the job's process alone: its workers get no signal
    finally:
        job.wait()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in workers if _alive(pid)]
    for pid in left:  # the test's own cleanup, so that a failure leaves nothing running either
        os.kill(pid, signal.SIGKILL)
    assert not left, f"workers {left} still run 30 s after their job was killed"
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert (out / "results.json").exists()


@pytest.mark.slow
@pytest.mark.training
def test_sigterm_of_the_job_starts_no_further_unit_in_its_workers(tmp_path):
    """SIGTERM to the job while two workers train three seeds: the two keep their checkpoints and their processes
    end; the third seed, which the pool had handed a worker ahead of time, is never started (no run folder)."""
    recipe = seeds.TINY.replace("--total-timesteps 256", "--total-timesteps 8192")
    flags = ["--recipe", recipe, "--seeds", "0", "1", "2", "--players", "3", "--deals", "40", "--references", "random",
             "--workers", "2"]  # fmt: skip
    runs, out = tmp_path / "runs", tmp_path / "out"
    command = [sys.executable, "-m", "train.seeds", *flags, "--runs", str(runs), "--out", str(out), "--no-progress"]
    job = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not (_trusted_checkpoint(runs, "seeds_tiny_s0_*") and _trusted_checkpoint(runs, "seeds_tiny_s1_*")):
            assert job.poll() is None and time.monotonic() < deadline, "the job ended before it was stopped"
            time.sleep(0.05)
        job.terminate()
        job.wait(timeout=120)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode != 0
    assert not list(runs.glob("seeds_tiny_s2_*")), "the third seed started after the job was stopped"
