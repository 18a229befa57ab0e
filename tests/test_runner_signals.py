"""A signal that lands while numba compiles: ctypes would drop what the handler raises in LLVM's callback, so
the runner raises it again once the main thread has left the compiler (train.runner.job)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from train.runner.job import Job, Plan
from train.runner.signals import GRACE, Deferred, compiling


def test_a_frame_inside_numba_or_llvmlite_counts_as_compiling():
    assert not compiling(sys._getframe())
    namespace = {"__name__": "numba.core.codegen", "sys": sys}
    exec("def callback():\n    return sys._getframe()", namespace)
    assert compiling(namespace["callback"]())
    namespace["__name__"] = "llvmlite.binding"
    assert compiling(namespace["callback"]())


def test_the_signal_is_raised_again_in_the_main_thread_once_out_of_the_compiler():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            Deferred().defer(signal.SIGINT)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_held_signal_is_not_delivered_once_the_work_has_returned():
    """The work may return before the thread sees the compiler left: the runner raises the interrupt then, and
    the thread must not signal the process again after the job (its handler would be someone else's)."""
    deferred = Deferred()
    with deferred.lock:
        deferred.pending.append(signal.SIGTERM)
    deferred.cancel()
    assert deferred.pending == []


def test_a_signal_the_work_swallowed_still_ends_the_job_as_interrupted(capsys):
    """A library may catch the KeyboardInterrupt (werkzeug's server does) and return: the runner saw the signal,
    so the job still ends with 130 and says so, rather than exit 0 as if it had finished."""

    def work(_):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            return "finished, it says"

    job = Job(lambda: argparse.ArgumentParser(prog="python -m train.swallower"), lambda args: Plan(work))
    with pytest.raises(SystemExit) as stop:
        job.main([])
    assert stop.value.code == 130
    assert "interrupted: " in capsys.readouterr().err


SPINNER = """
import argparse

import numba

from train.runner import signals
from train.runner.job import Job, Plan

# what must outlive the hard stop (the conformance test's report) is written by a hook just before it
signals.before_hard_stop.append(lambda signum: 1 / 0)  # a hook that fails stops nothing
signals.before_hard_stop.append(lambda signum: open("hard_stop.txt", "w").write(str(signum)))


@numba.njit(nogil=True)  # as every kernel of the project: the watch thread runs meanwhile
def spin(n):
    x = 0
    for _ in range(n):
        x = (x * 1103515245 + 12345) % 2147483648
    return x


def work(_):
    spin(10)  # compiled before the signal comes
    print("working", flush=True)
    return spin(10**11)  # minutes in one compiled call: no Python handler runs until it returns


JOB = Job(lambda: argparse.ArgumentParser(prog="spinner"), lambda args: Plan(work, kept="a test's nothing"))
JOB.main([])
"""


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_job_deep_in_a_compiled_call_ends_within_seconds_of_a_signal(signum, tmp_path):
    """The compiled loop never returns to Python: the runner's watch ends the process GRACE seconds after the
    signal, with 130/143 and what is kept, instead of minutes later."""
    root = Path(__file__).resolve().parent.parent
    environment = {**os.environ, "PYTHONPATH": str(root)}
    job = subprocess.Popen([sys.executable, "-c", SPINNER], cwd=tmp_path, env=environment, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert job.stdout.readline().strip() == "working", job.communicate(timeout=60)
    time.sleep(0.5)
    sent = time.monotonic()
    job.send_signal(signum)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 128 + signum, err
    assert time.monotonic() - sent < GRACE + 3, err
    assert "interrupted (inside compiled work): a test's nothing" in err, err
    assert (tmp_path / "hard_stop.txt").read_text() == str(int(signum))  # the hooks ran, with the signal
    assert "a hard-stop hook failed: ZeroDivisionError" in err and "Traceback" not in err, err
