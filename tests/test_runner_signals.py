"""A signal that lands while numba compiles: ctypes would drop what the handler raises in LLVM's callback, so
the runner raises it again once the main thread has left the compiler (train.runner.job)."""

from __future__ import annotations

import signal
import sys
import time

import pytest

from train.runner.job import compiling, deliver_after_compiling


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
            deliver_after_compiling(signal.SIGINT)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, previous)
