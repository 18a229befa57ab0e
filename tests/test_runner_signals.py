"""A signal that lands while numba compiles: ctypes would drop what the handler raises in LLVM's callback, so
the runner raises it again once the main thread has left the compiler (train.runner.job)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

import pytest

from train.runner.job import Deferred, Job, Plan, compiling


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
