"""The runner's hold on SIGINT and SIGTERM while a job works (:func:`train.runner.job.run`):

- a signal that lands while numba compiles is held and raised once the compiler is left (:class:`Deferred`);
- a job's work must leave the runner's handlers in place (:func:`signals_kept`), and a signal that came during the
  work interrupts it even when a library swallowed the interrupt;
- a signal that a compiled loop keeps from its Python handler for more than :data:`GRACE` seconds ends the
  process there, saying what is kept (:class:`HardStop`): no job runs on for minutes after Ctrl-C.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
import time
from typing import Callable

from .cli import Terminated


def compiling(frame) -> bool:
    """Whether ``frame`` runs inside numba or llvmlite, which a job calls only to compile (a compiled function's
    own calls have no Python frame): LLVM calls back into Python through ctypes there, and ctypes prints and
    drops an exception a signal handler raises in such a callback."""
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith(("numba.", "llvmlite.")):
            return True
        frame = frame.f_back
    return False


class Deferred:
    """A signal that came while numba compiled, held until the compiler is left and delivered then; or, when the
    work returns first, cancelled (:func:`signals_kept` raises the interrupt as the work ends)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pending: list[int] = []

    def defer(self, signum: int) -> None:
        """Hold ``signum``; a thread signals the main thread again (its handler runs then) once it leaves the
        compiler."""
        main = threading.main_thread().ident
        with self.lock:
            self.pending.append(signum)

        def wait():
            while compiling(sys._current_frames().get(main)):
                time.sleep(0.05)
            with self.lock:
                if signum not in self.pending:
                    return  # the work has returned: the runner raises the interrupt
                self.pending.remove(signum)
                _thread.interrupt_main(signum)

        threading.Thread(target=wait, name="signal after compiling", daemon=True).start()

    def cancel(self) -> None:
        """Deliver nothing more: the work has returned (the runner raises the interrupt itself)."""
        with self.lock:
            self.pending.clear()


class SignalsTaken(RuntimeError):
    """A job replaced the runner's SIGINT or SIGTERM handler: its Ctrl-C would no longer stop it cleanly."""


def signals_kept(result, name: str, handler, int_ignored: bool, deferred: Deferred, received: list[int]):
    """``result``, once the work has left the runner's handler on SIGINT and SIGTERM (a job that ignores or
    catches them itself cannot be stopped by a person or a scheduler), else :class:`SignalsTaken`. A signal that
    came during the work interrupts it even when the work returned: a library swallowed the interrupt (werkzeug's
    server does) or the work ended while the signal was held for the compiler."""
    deferred.cancel()
    if received:
        raise Terminated() if received[-1] == signal.SIGTERM else KeyboardInterrupt()
    taken = [
        sig.name
        for sig in (signal.SIGINT, signal.SIGTERM)
        if not (sig == signal.SIGINT and int_ignored) and signal.getsignal(sig) is not handler
    ]
    if taken:
        raise SignalsTaken(
            f"train.{name} replaced the runner's {' and '.join(taken)} handler during its work; the runner owns the "
            "signals (docs/trust.md): leave them to it"
        )
    return result


GRACE = 2.5  # seconds a signal may wait for its Python handler (a compiled loop holds it) before the hard stop
#: called with the signal number just before a hard stop ends the process (which runs no exit handler): what must
#: outlive it, such as the conformance test's report of what the job did
before_hard_stop: list[Callable[[int], None]] = []


class HardStop:
    """While a job works, a thread sees each SIGINT/SIGTERM as it arrives (the C handler writes it to the wakeup
    fd, even while the main thread is deep in a compiled loop that runs no Python handler). If the runner's
    handler has not run :data:`GRACE` seconds later, the thread says what is kept and ends the process with
    130/143: what a job keeps is written atomically and its folder's lock dies with the process, so a compiled
    call that would run on for minutes loses only its own unfinished work."""

    def __init__(self, kept: Callable[[], str]):
        self.kept = kept
        self.answered = 0  # signals the runner's Python handler has seen
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        threading.Thread(target=self._watch, name="hard stop", daemon=True).start()

    def _watch(self) -> None:
        arrived = 0
        while byte := os.read(self._read, 1):
            signum = byte[0]
            if signum not in (signal.SIGINT, signal.SIGTERM):
                continue
            arrived += 1
            deadline = time.monotonic() + GRACE
            while self.answered < arrived and time.monotonic() < deadline:
                time.sleep(0.02)
            if self.answered < arrived:
                os.write(2, f"\ninterrupted (inside compiled work): {self.kept()}\n".encode())
                for hook in before_hard_stop:
                    try:
                        hook(signum)
                    except BaseException as error:  # the stop comes whatever a hook does
                        os.write(2, f"(a hard-stop hook failed: {type(error).__name__}: {error})\n".encode())
                os._exit(128 + signum)
        os.close(self._read)

    def close(self) -> None:
        """Stop watching: the wakeup fd back as it was, the thread's pipe closed (its read returns nothing)."""
        signal.set_wakeup_fd(self._previous)
        os.close(self._write)
