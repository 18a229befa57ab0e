"""Faults of the machine — a full disk, a file-size limit, a read-only or forbidden folder, memory run out — end
every job in one line that names them (exit 1), never a traceback; a bug stays a traceback."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import test_jobs
from test_jobs import ROOT, example, jobs, run, with_out

from train.learn.run import TINY_RUN
from train.runner import run_folder
from train.runner.faults import fault_of
from train.runner.job import Job, Plan

here = test_jobs.here  # the fixture: each job in an empty working folder of its own

FAULTS = [
    (OSError(errno.ENOSPC, "No space left on device", "results.md"), "no space left on the device: results.md"),
    (OSError(errno.EFBIG, "File too large"), "file-size limit"),
    (PermissionError(errno.EACCES, "Permission denied", "/x"), "permission denied: /x"),
    (OSError(errno.EROFS, "Read-only file system", "/ro"), "read-only: /ro"),
    (MemoryError(), "out of memory"),
    (RuntimeError("[enforce fail at alloc_cpu.cpp:83] DefaultCPUAllocator: not enough memory"), "out of memory"),
]


@pytest.mark.parametrize("error, words", FAULTS, ids=[type(e).__name__ + str(i) for i, (e, _) in enumerate(FAULTS)])
def test_a_fault_is_named_even_when_another_error_was_raised_from_it(error, words):
    assert words in fault_of(error)
    try:
        try:
            raise error
        except Exception as inner:
            raise ValueError("saving the checkpoint failed") from inner
    except ValueError as outer:
        assert words in fault_of(outer)


def test_a_bug_is_no_fault():
    assert fault_of(ValueError("a bug")) is None and fault_of(OSError(errno.ENOENT, "No such file")) is None


@pytest.mark.parametrize("error, words", FAULTS[:5], ids=["ENOSPC", "EFBIG", "EACCES", "EROFS", "MemoryError"])
def test_the_runner_ends_a_job_hit_by_a_fault_in_one_line(error, words, capsys, tmp_path):
    def work(folder):
        raise error

    job = Job(lambda: __import__("argparse").ArgumentParser(prog="python -m train.faulty"),
              lambda args: Plan(work, {"a": 1}, tmp_path / "out", kept="the run is kept"))  # fmt: skip
    with pytest.raises(SystemExit) as stop:
        job.main([])
    err = capsys.readouterr().err
    assert stop.value.code == 1 and "Traceback" not in err
    assert err.strip() == f"python -m train.faulty: stopped, {fault_of(error)}; the run is kept", err


@pytest.mark.parametrize("name", jobs(folder=True, fast=True))
def test_every_job_that_writes_a_folder_stops_in_one_line_when_the_disk_is_full(name, here, capsys, monkeypatch):
    def full(path, write):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    inputs = here.parent / "inputs"
    inputs.mkdir()
    argv = with_out(name, example(name, inputs), here / "out")  # inputs made before the disk fills
    monkeypatch.setattr(run_folder, "write_atomically", full)
    status, err = run(name, argv, capsys)
    last = [line for line in err.splitlines() if line.strip()][-1]
    assert status in (1, 2) and "Traceback" not in err, err[-3000:]  # 2: when opening its folder (a refusal)
    assert last.startswith(f"python -m train.{name}: ") and "no space left" in last.lower(), err[-3000:]


def _limited(limits: dict):
    def apply():
        for name, value in limits.items():
            resource.setrlimit(name, (value, resource.getrlimit(name)[1]))

    return apply


@pytest.mark.slow
@pytest.mark.parametrize("name", jobs(fast=True))
def test_a_file_size_limit_ends_every_job_in_one_line_or_not_at_all(name, tmp_path):
    """Each job's example in a real process under ``ulimit -f 16`` (16 kB a file): it finishes (it writes no larger
    file) or stops with exit 1 and one line naming the limit — the kernel's SIGXFSZ is ignored by Python, so the
    write fails with EFBIG — and never a traceback."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    argv = with_out(name, example(name, inputs), tmp_path / "out")  # inputs made before the limit
    job = subprocess.Popen([sys.executable, "-m", f"train.{name}", *argv], cwd=tmp_path, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, preexec_fn=_limited({resource.RLIMIT_FSIZE: 16 * 1024}))
    try:
        _, err = job.communicate(timeout=test_jobs.LONG_ENOUGH * 6)
    except subprocess.TimeoutExpired:  # a server, or a benchmark that runs on: Ctrl-C
        job.send_signal(signal.SIGINT)
        _, err = job.communicate(timeout=120)
    assert "Traceback" not in err, err[-3000:]
    assert not (ROOT / ".git" / "index.lock").exists()  # its provenance's git status wrote nothing, held no lock
    if job.returncode not in (0, 130):
        assert job.returncode == 1, err[-3000:]
        assert f"python -m train.{name}: stopped, a file grew past the file-size limit" in err.splitlines()[-1]


@pytest.mark.slow
def test_out_of_memory_in_a_real_process_is_one_line(tmp_path):
    """An evaluation of five million deals under a 2.5 GB address-space limit: numpy cannot allocate them."""
    command = [sys.executable, "-m", "train.evaluate", "--players", "3", "--deals", "5000000", "--candidates",
               "most_copies", "random", "--out", str(tmp_path / "out"), "--no-progress"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          preexec_fn=_limited({resource.RLIMIT_AS: 2_500_000 * 1024}))  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "stopped, out of memory" in done.stderr.splitlines()[-1]


@pytest.mark.parametrize("name, words", [("ab\udcffc", "UTF-8"), ("x" * 230, "230 bytes long")])
def test_a_run_name_that_no_file_system_or_log_can_take_is_refused_before_any_folder(name, words, tmp_path, capsys):
    from train import train_ppo

    status, err = run("train_ppo", ["--runs", str(tmp_path / "runs"), "--run-name", name], capsys)
    assert status == 2 and words in err and not (tmp_path / "runs").exists(), err
    assert Path(run_folder.__file__).exists() and train_ppo.JOB is not None


@pytest.mark.slow
def test_a_job_short_of_memory_from_its_start_answers_signals():
    """Under a 450 MB address-space limit scipy's OpenBLAS (loaded by numba's first compile) retried its start-up
    for ever, in C, holding the GIL: SIGTERM did nothing. Loaded with one thread it starts; the job ends (or is
    stopped by SIGTERM) within the minute, never a traceback."""
    command = [sys.executable, "-m", "train.evaluate", "--players", "3", "--deals", "200", "--candidates",
               "most_copies", "random", "--no-progress", "--out", str(Path(tempfile.mkdtemp()) / "out")]  # fmt: skip
    job = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           preexec_fn=_limited({resource.RLIMIT_AS: 450_000 * 1024}))  # fmt: skip
    try:
        _, err = job.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        job.send_signal(signal.SIGTERM)
        try:
            _, err = job.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()
            raise AssertionError("SIGTERM was not answered within a minute") from None
    assert job.returncode in (0, 1, 143) and "Traceback" not in err, err[-3000:]


def test_loading_numba_s_blas_leaves_the_thread_setting_as_it_was():
    code = "import os, snipsnap_env.kernel; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    for given in ({}, {"OPENBLAS_NUM_THREADS": "2"}):
        env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"} | given
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.stdout.strip() == given.get("OPENBLAS_NUM_THREADS", "None"), done.stderr


def _can_mount() -> str:
    """Why a tmpfs cannot be mounted in a mount namespace of the test's own here ("" when it can)."""
    if not shutil.which("unshare") or not shutil.which("mount"):
        return "no unshare or mount command"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs",
                            tempfile.gettempdir()], capture_output=True, text=True)  # fmt: skip
    return "" if probe.returncode == 0 else f"cannot mount a tmpfs in a mount namespace ({probe.stderr.strip()})"


SMALL_DISK_JOBS = {
    "evaluate": {"argv": ["train.evaluate", "--candidates", "most_copies", "random", "--deals", "300", "--out",
                          "{out}", "--no-progress"], "results": "", "compare": None},
    "train_ppo": {"argv": ["train.train_ppo", *TINY_RUN, "--runs", "{out}", "--run-name", "r"], "results": "r",
                  "compare": ["final_model.zip", "best_model.zip"]},  # args.json names its folder
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL_DISK_JOBS)
def test_after_a_real_full_disk_the_same_command_finishes_with_the_bytes_of_a_run_that_never_failed(name, tmp_path):
    """On a real 16 MB tmpfs filled but for 0 to 256 kB (each amount stops the job at another write): the job ends
    in one line, and once the space is back the same command finishes with results byte-equal to a clean run's —
    never refused for the partial files its own cut-short writes left."""
    why = _can_mount()
    if why:
        pytest.skip(why)
    disk = tmp_path / "disk"
    disk.mkdir()
    command = ["unshare", "--mount", "--propagation", "private", sys.executable, str(ROOT / "tests" / "small_disk.py"),
               str(disk), json.dumps(SMALL_DISK_JOBS[name])]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    for outcome in json.loads(done.stdout.strip().splitlines()[-1]):
        said = f"{name} with {outcome['free']} bytes free"
        assert outcome["first"] in (0, 1, 2), (said, outcome)
        if outcome["first"]:
            assert "no space left" in outcome["said"].lower() and "Traceback" not in outcome["said"], (said, outcome)
        assert outcome["again"] == 0, (said, outcome["err"])
        assert not outcome["differ"], (said, outcome["differ"])
