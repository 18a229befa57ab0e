"""The conformance test of every job, as PettingZoo's ``api_test`` is of every env: each module in ``train/`` is
a job (the code they share lives in packages), found by listing the folder, so a new job is held to the same
guarantees without being named here.

- a refusal (bad ``--players``, an unknown agent, a size over its bound, a bad ``--out``) is one line and exit
  status 2, and leaves no folder, lock or file behind;
- ``--out`` at a file, ``.``, a folder of someone else's files, a folder whose ``.lock`` or ``manifest.json`` is a
  link, a folder of another job or one inside it (``--overwrite`` or not) is refused, and the files there stay as
  they were;
- SIGINT and SIGTERM during the work end the job with 130 and 143, saying what is kept, with no traceback;
- the same seeded command writes the same bytes twice (wall time only in provenance.json);
- ``--overwrite`` replaces the job's own files, never another's;
- watched in a process of its own (``tests/job_watch.py``), a job writes only where its flags name, sets no signal
  handler, and a signal sent halfway through its work ends it within seconds; every flag given a bad value (an
  unknown name, 10**12, a negative, NaN) is a one-line refusal or a run without a traceback.

``tests/test_planted_jobs.py`` plants jobs that break these promises in a copy of the project and checks that
this file fails them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import job_watch as watch
import pytest
from helpers import HELD_APART

from train.runner import cli
from train.runner import job as runner
from train.runner.run_folder import RunFolder

ROOT = Path(__file__).resolve().parent.parent
NAMES = sorted(path.stem for path in (ROOT / "train").glob("*.py") if path.stem != "__init__")
# their examples train or time PPO: tens of seconds
SLOW = {"train_ppo", "main", "convert_model", "bench_batch", "seeds"}
# their agents are names from the registry, never files (train_ppo's --init-from is read as data): nothing to trust
NO_MODEL_FILES = {"oracle", "train_ppo", "main", "bench_training"}  # training settings: model files never unpickled


def job_of(name: str) -> runner.Job:
    return importlib.import_module(f"train.{name}").JOB


def jobs(*, folder: bool | None = None, fast: bool = False):
    """The jobs (as pytest params), those that write a results folder (or not), the slow ones marked."""
    found = []
    for name in NAMES:
        job = job_of(name)
        if folder is not None and job.writes_folder() != folder:
            continue
        if fast and name in SLOW:
            continue
        marks = [pytest.mark.training, pytest.mark.slow] if name in SLOW else []
        found.append(pytest.param(name, marks=marks, id=name))
    return found


def actions(name: str) -> list[argparse.Action]:
    return job_of(name).parser()._actions


def example(name: str, folder: Path) -> list[str]:
    """The job's example command, its inputs made in ``folder`` where it needs any."""
    made = job_of(name).example
    return list(made(folder) if callable(made) else made)


def flags_only(name: str, folder: Path) -> list[str] | None:
    """The example's flags, for probes that are refused before any work: a slow job's inputs are not made
    (None where its example needs them)."""
    made = job_of(name).example
    if callable(made):
        return None if name in SLOW else made(folder)
    return list(made)


def run(name: str, argv: list[str], capsys) -> tuple[int, str]:
    """``python -m train.<name> argv`` in this process: its exit status and what it wrote to stderr."""
    capsys.readouterr()
    try:
        job_of(name).main(argv)
        status = 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else 1
    return status, capsys.readouterr().err


def assert_refused(name: str, argv: list[str], capsys, before: set[str], where: Path, words: str = "") -> None:
    """Exit status 2, one line naming the job, and nothing new in ``where``."""
    status, err = run(name, argv, capsys)
    assert_a_refusal(name, argv, status, err, before, where)
    assert words.lower() in err.lower(), err


def assert_a_refusal(name: str, argv: list[str], status: int, err: str, before: set[str], where: Path) -> None:
    """What ``python -m train.<name> argv`` ended with is a refusal: exit 2, one line naming the job, no traceback,
    nothing new in ``where``."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, (name, argv, status, err)
    assert len(lines) == 1 and lines[0].startswith(f"python -m train.{name}: error: "), err
    assert "Traceback" not in err
    assert listing(where) == before, f"train.{name} {argv} left {listing(where) - before}"


def listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} | {
        str(p.relative_to(folder)) for p in folder.rglob(".*")
    }


def with_out(name: str, argv: list[str], out: Path) -> list[str]:
    return [*argv, "--out", str(out)] if job_of(name).writes_folder() else argv


@pytest.fixture
def here(tmp_path, monkeypatch):
    """Every job runs in an empty folder of its own: its default folders land there, and what it leaves is seen."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def test_every_module_in_train_is_a_job_run_by_the_runner():
    assert len(NAMES) >= 20, NAMES
    for name in NAMES:
        module = importlib.import_module(f"train.{name}")
        assert isinstance(getattr(module, "JOB", None), runner.Job), f"train.{name} declares no JOB"
        assert module.main == module.JOB.main, f"train.{name}.main is not its JOB's"
        source = (ROOT / "train" / f"{name}.py").read_text()
        for wired in ("parse_args(", ".error(", "stops_cleanly", "signal.signal(signal.SIGINT"):
            assert wired not in source, f"train.{name} wires {wired!r} itself: the runner does that for every job"


@pytest.mark.parametrize("name", jobs())
def test_one_flag_name_means_one_thing_in_every_job(name):
    flags = {flag: action for action in actions(name) for flag in action.option_strings}
    if job_of(name).writes_folder():
        assert {"--out", "--overwrite", "--progress", "--no-progress"} <= set(flags), name
    if job_of(name).agents and name not in NO_MODEL_FILES:
        assert "--trust-model" in flags, f"train.{name} names agents but takes no --trust-model"
    for flag in ("--progress", "--trust-model", "--overwrite", "--seed"):
        if flag in flags:
            shared = cli.FLAGS[flag[2:]]
            assert type(flags[flag]) is type(argparse.ArgumentParser().add_argument(flag, **shared)), (name, flag)


@pytest.mark.parametrize("name", NAMES)  # the slow jobs too: help is instant
def test_help_prints_and_exits_0(name, capsys):
    # argparse %-formats every help text: a bare "%" ("15-25% from") crashed train_ppo --help with a TypeError
    status, err = run(name, ["--help"], capsys)
    assert (status, err) == (0, ""), (name, status, err)


def make_run_folder(path: Path) -> dict[str, bytes]:
    """A training run's folder (as train_ppo leaves one): its models, logs and settings."""
    with RunFolder(path, {"run_name": path.name, "seed": 0}, resume=False, overwrite=False) as run:
        for file in ("final_model.zip", "best_model.zip", "eval.csv"):
            run.write(path / file, lambda p, f=file: p.write_bytes(f"the run's {f}".encode()))
    return contents(path)


def contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", jobs(folder=True))
def test_out_that_is_not_the_jobs_own_is_refused_and_left_as_it_was(name, here, capsys, tmp_path):
    base = flags_only(name, tmp_path)
    precious = tmp_path / "precious.txt"
    precious.write_text("precious")
    a_file = here / "a_file"
    a_file.write_text("mine")
    notes = here / "notes"
    notes.mkdir()
    (notes / "notes.txt").write_text("mine")
    (here / "README.md").write_text("a folder of my own")
    lock = here / "linked_lock"
    lock.mkdir()
    (lock / ".lock").symlink_to(precious)
    listed = here / "linked_manifest"
    listed.mkdir()
    (listed / "manifest.json").symlink_to(precious)
    training = here / "runs" / "mine"
    kept = make_run_folder(training)
    before = listing(here)
    for out, words in [
        (a_file, "is a file"),
        (notes, "notes.txt"),
        (Path("."), "README.md"),
        (lock, "symbolic link"),
        (listed, "symbolic link"),
        (training, "train_ppo"),
        (training / "sub", "inside"),  # inside another job's folder: its files would be neither its own nor ours
    ]:
        for overwrite in ([], ["--overwrite"]):
            assert_refused(name, [*base, "--out", str(out), *overwrite], capsys, before, here, words)
    assert precious.read_text() == "precious"
    assert contents(training) == kept


@pytest.mark.parametrize("signal_", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("name", jobs())
def test_a_signal_during_the_work_stops_the_job_with_its_status_and_no_traceback(name, signal_, here, capsys):
    argv = with_out(name, example(name, here.parent), here.parent / "out")
    stop = lambda: os.kill(os.getpid(), signal_)  # noqa: E731
    runner.work_started.append(stop)
    try:
        status, err = run(name, argv, capsys)
    finally:
        runner.work_started.remove(stop)
    assert status == 128 + signal_, (name, status, err)
    assert "interrupted: " in err and "Traceback" not in err, err
    assert signal.getsignal(signal.SIGTERM) is not cli.on_sigterm  # the job's handler is gone with the job


@pytest.mark.parametrize("name", jobs(folder=True))
def test_the_same_seeded_command_writes_the_same_bytes(name, here, tmp_path, capsys):
    argv = example(name, tmp_path)
    for out in ("first", "second"):
        assert run(name, [*argv, "--out", out, "--no-progress"], capsys)[0] == 0
    first, second = contents(here / "first"), contents(here / "second")
    assert first.keys() == second.keys()
    differ = [file for file in first if first[file] != second[file] and file not in HELD_APART]
    assert not differ, f"train.{name} wrote other bytes the second time: {differ}"
    manifests = [json.loads(m) for m in (first["manifest.json"], second["manifest.json"])]
    for manifest in manifests:
        manifest["files"].pop("provenance.json")
    assert manifests[0] == manifests[1]
    assert manifests[0]["job"] == name


@pytest.mark.parametrize("name", jobs(folder=True))
def test_overwrite_replaces_the_jobs_own_files_and_nothing_else(name, here, tmp_path, capsys):
    argv = [*example(name, tmp_path), "--no-progress"]
    assert run(name, [*argv, "--out", "o"], capsys)[0] == 0
    own = set(contents(here / "o"))
    other = [*argv, "--seed", "1"] if "--seed" in {f for a in actions(name) for f in a.option_strings} else argv
    if other != argv:
        status, err = run(name, [*other, "--out", "o"], capsys)
        assert status == 2 and "--overwrite" in err, err  # other settings: refused without it
        assert run(name, [*other, "--out", "o", "--overwrite"], capsys)[0] == 0
        assert set(contents(here / "o")) == own
    (here / "o" / "notes.txt").write_text("mine")
    status, err = run(name, [*other, "--out", "o", "--overwrite"], capsys)
    assert status == 2 and "notes.txt" in err, err
    assert (here / "o" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "name, argv",
    [
        ("evaluate", ["--candidates", "pimc:128", "most_copies", "--deals", "200000", "--players", "4"]),
        ("scorecard", ["most_copies", "--deals", "200000"]),
    ],
)
@pytest.mark.parametrize("signal_", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.slow
def test_a_real_signal_mid_run_in_a_real_process(name, argv, signal_, tmp_path):
    """The in-process test above stops each job where its work starts; here the signal comes from outside, while
    the search player (or the suite) is deep in its work."""
    process = subprocess.Popen(
        [sys.executable, "-m", f"train.{name}", *argv, "--out", str(tmp_path / "out"), "--no-progress"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = 120
    provenance = tmp_path / "out" / "provenance.json"
    for _ in range(deadline * 10):
        if provenance.exists() or process.poll() is not None:
            break
        try:
            process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            pass
    assert process.poll() is None, process.communicate()
    try:
        process.wait(timeout=3)  # well into the work
    except subprocess.TimeoutExpired:
        pass
    process.send_signal(signal_)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signal_, err
    assert "Traceback" not in err and "interrupted: " in err, err


def places_named(name: str, argv: list[str], cwd: Path) -> list[Path]:
    """Where a job may write: its results folder (``--out``) and the places its declared output flags name
    (``JOB.writes``), given or default. Every other path it is given is an input, to be left as it was."""
    job = job_of(name)
    args = job.parser().parse_args(argv)
    dests = (*job.writes, *(("out",) if job.writes_folder() else ()))
    values = [v for dest in dests for v in (lambda x: x if isinstance(x, (list, tuple)) else [x])(getattr(args, dest))]
    cwd = Path(os.path.realpath(cwd))
    return [Path(os.path.realpath(cwd / value)) for value in values if isinstance(value, (str, Path)) and str(value)]


def watched(name: str, argv: list[str], here: Path, signum: int = 0, after: float = 0.0) -> watch.Report:
    """The job run in a process of its own from ``here``, allowed to write where its flags name."""
    return watch.watched(name, argv, here, places_named(name, argv, here), signum, after, root=ROOT)


def undeclared(name: str) -> list[argparse.Action]:
    """The job's flags that take a free value and are declared neither as agents nor as places it writes."""
    job = job_of(name)
    declared = (*job.agents, *job.writes, "help", "out")
    return [action for action in actions(name) if action.dest not in declared and action.nargs != 0
            and not action.choices]  # fmt: skip


def undeclared_agents(name: str, argv: list[str], made: set[str]) -> dict[str, str]:
    """The flags not declared in JOB.agents whose value (given or default) names an agent made in the work: a flag
    the job plays agents by without the checks an agent flag gets (one that falls back to random on a name it
    does not know, say)."""
    args = job_of(name).parser().parse_args(argv)
    found = {}
    for action in undeclared(name):
        value = getattr(args, action.dest, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str) and item.split(":")[0] in made:
                found[action.dest] = item
    return found


LONG_ENOUGH = 10.0  # seconds of an example's work that are watched (a server's, or a benchmark's, run on)
STOPS_WITHIN = 10.0  # seconds from a signal to the end: ~1 s here, GRACE (2.5 s) at most for a compiled loop, more
# only on a loaded machine; a job that ignores the signal runs on for its whole work


@pytest.mark.slow
@pytest.mark.parametrize("name", jobs())
def test_a_job_writes_only_where_told_leaves_the_signals_alone_and_stops_inside_its_work(name, here):
    """The example runs to its end (or ten seconds into its work, then Ctrl-C), watched: exit 0 (130), no write
    outside the places its flags name, no signal handler set by the job's code. Then SIGINT and SIGTERM, each
    sent halfway through the work (a quarter, then as it starts, where the work is too short to hit): the job
    ends with 130 or 143 within seconds, saying what it kept, without a traceback — never finishing as if
    nothing came."""

    def command(run: str) -> list[str]:  # each run its own inputs and outputs (a job may refuse to replace them)
        folder = here.parent / run
        folder.mkdir()
        return with_out(name, example(name, folder), folder / "out")

    whole = command("whole")
    done = watched(name, whole, here, signal.SIGINT, LONG_ENOUGH)
    assert done.status == (0 if done.fate == "unsent" else 130), (name, done.err[-3000:])
    assert not done.outside, f"train.{name} wrote where its flags do not name: {done.outside}"
    assert not done.lingering, f"train.{name} left processes running after it ended: {done.lingering}"
    if job_of(name).writes_folder():  # again over its own folder: what only --overwrite does is watched too
        again = watched(name, [*whole, "--overwrite"], here, signal.SIGINT, LONG_ENOUGH)
        assert again.status == (0 if again.fate == "unsent" else 130), (name, again.err[-3000:])
        assert not again.outside, f"train.{name} --overwrite wrote where its flags do not name: {again.outside}"
        assert not again.lingering, f"train.{name} --overwrite left processes running: {again.lingering}"
    named = undeclared_agents(name, whole, set(done.made))
    assert not named, f"train.{name} made agents named by flags not declared in JOB.agents (unchecked): {named}"
    assert not done.handlers, f"train.{name} set signal handlers itself (the runner owns them): {done.handlers}"
    for signum in (signal.SIGINT, signal.SIGTERM):
        for after in (done.worked / 2, done.worked / 4, 0.0):
            stopped = watched(name, command(f"{signum.name}-{after:.3f}"), here, signum, after)
            if stopped.fate == "handled":
                break
        said = f"train.{name} with {signum.name} {after:.2f} s into its work"
        assert stopped.status == 128 + signum, f"{said}: exit {stopped.status}\n{stopped.err[-3000:]}"
        # "interrupted: <what is kept>", or the same from the hard stop when a compile held the signal GRACE seconds
        told = re.search(r"interrupted( \(inside compiled work\))?: ", stopped.err)
        assert told and "Traceback" not in stopped.err, f"{said}: {stopped.err[-3000:]}"
        assert stopped.answered < STOPS_WITHIN, f"{said} took {stopped.answered:.1f} s to stop"
        assert not stopped.outside and not stopped.handlers, (said, stopped.outside, stopped.handlers)
        assert not stopped.lingering, f"{said} left processes running after it ended: {stopped.lingering}"


def ray_jobs():
    """The jobs that run their units on Ray with --ray (as pytest params; slow: Ray takes seconds to start)."""
    return [pytest.param(name, marks=[pytest.mark.slow, pytest.mark.ray], id=name) for name in NAMES
            if "--ray" in {flag for action in actions(name) for flag in action.option_strings}]  # fmt: skip


@pytest.mark.parametrize("name", ray_jobs())
def test_a_job_on_a_local_ray_writes_only_where_told_and_leaves_nothing_running(name, here):
    """The example with --ray (a local Ray on one CPU), watched: Ray's session files, its workers and its token
    are the job's own and go with it."""
    pytest.importorskip("ray")
    folder = here.parent / "ray"
    folder.mkdir()
    argv = [*with_out(name, example(name, folder), folder / "out"), "--ray", "--workers", "1"]
    done = watched(name, argv, here)
    assert done.status == 0, (name, done.err[-3000:])
    assert not done.outside, f"train.{name} --ray wrote where its flags do not name: {done.outside}"
    assert not done.lingering, f"train.{name} --ray left processes running after it ended: {done.lingering}"


def remove_new(folder: Path, before: set[str]) -> None:
    """Remove what is in ``folder`` but not in ``before`` (a listing of it)."""
    for path in folder.iterdir():
        if path.name not in before:
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def test_a_manifest_json_that_is_not_a_jobs_does_not_fence_off_the_folders_below_it(here, capsys):
    """A web app's manifest.json above the working folder names no job: --out below it is the user's to choose."""
    (here / "manifest.json").write_text('{"name": "my web app", "icons": []}')
    argv = [*example("evaluate", here), "--out", str(here / "results" / "mine"), "--no-progress"]
    assert run("evaluate", argv, capsys)[0] == 0


@pytest.mark.slow
def test_a_good_job_passes_while_other_programs_write_in_tmp_and_home(here):
    """A busy machine: another program (pip, a training run, a test suite) makes and removes files in /tmp and the
    home folder while a job is watched. They are not the job's: in the sandbox its /tmp is its own and its view
    of the disk changes only by its own writes, so the good job passes."""
    import tempfile
    import threading

    why = watch.sandbox_unavailable()
    if why:
        pytest.skip(f"needs the sandbox: {why}")
    stop = threading.Event()

    def busy() -> None:
        for place in (Path(tempfile.gettempdir()), Path.home()):
            place.mkdir(exist_ok=True)
        while not stop.is_set():
            for place in (Path("/tmp"), Path.home()):
                stray = place / f"zz-other-program-{os.getpid()}"
                stray.write_text("another program's file")
                stray.unlink()
            stop.wait(0.01)

    other = threading.Thread(target=busy, daemon=True)
    other.start()
    try:
        folder = here.parent / "busy"
        folder.mkdir()
        done = watched("evaluate", with_out("evaluate", example("evaluate", folder), folder / "out"), here)
    finally:
        stop.set()
        other.join()
    assert done.status == 0 and not done.outside and not done.lingering, (done.outside, done.err[-2000:])
