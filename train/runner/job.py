"""One way every job runs. A job (``train/<job>.py``) declares three things:

- its flags (``parser()``);
- ``check(args)``: everything that can be checked before work starts (agent names, sizes, bounds, model files
  loaded and verified, the output folder's path), returning a :class:`Plan`, or raising a refusal;
- the work, the plan's ``work(folder)``.

:func:`run` does the rest, the same for every job: parse → check → output folder → work, with SIGINT and
SIGTERM handled → provenance (:mod:`train.runner.results_folder`, whose writes are atomic and listed in the
folder's manifest). A refusal is one line and exit status 2, printed before any folder or lock exists; Ctrl-C
or SIGTERM says what is kept and where, and exits with 130 or 143, never a traceback; so does a fault of the
machine (a full disk, a file-size limit, a read-only folder, memory: :mod:`train.runner.faults`), with exit
status 1. ``tests/test_jobs.py`` holds every module in ``train/`` to this, so a new job inherits the guarantees by
being written this way.
"""

from __future__ import annotations

import argparse
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from agents.spec import AgentFailed

from .cli import Terminated, command_line, on_sigterm
from .faults import fault_of
from .manifest import Refused
from .results_folder import results_folder
from .signals import Deferred, HardStop, compiling, signals_kept

#: What a check may raise to refuse: a bad name or value, a missing or unreadable file, a missing extra.
REFUSALS = (Refused, ValueError, OSError, ImportError, LookupError)

#: Called with no argument just before a job's work starts (the conformance test interrupts jobs there).
work_started: list[Callable[[], None]] = []


@dataclass
class Plan:
    """What a job's check hands the runner.

    ``work(folder)`` does the job (``folder`` the open :class:`~train.runner.run_folder.RunFolder` of its
    results, or None for a job that writes none) and returns what ``main`` returns. ``settings`` key the
    results folder (None: the job writes no results folder); ``out`` is ``--out`` (None: the default
    ``results/<job>/<settings hash>``). ``kept`` says what an interrupt keeps (or a function that says it as
    things stand when the job stops); ``{folder}`` in it is the
    folder's path. ``close`` is called once the job ends, however it ends (a Ray runner's shutdown)."""

    work: Callable[[Any], Any]
    settings: dict | None = None
    out: str | Path | None = None
    overwrite: bool = False
    kept: str | Callable[[], str] | None = None
    close: Callable[[], None] | None = None


class Refusal(Refused):
    """A job's own refusal (a rule of its flags that argparse cannot say): one line, exit status 2."""


def one_line(error: BaseException) -> str:
    """The error's message on one line (a refusal is read at a glance)."""
    return " ".join(str(error).split()) or type(error).__name__


@dataclass(frozen=True)
class Job:
    """A job: ``parser`` (its flags), ``check`` (args → :class:`Plan`, or a refusal) and ``example``: a quick,
    seeded command (its flags, without ``--out``) that the conformance test runs, or a function that makes the
    inputs such a command needs in a folder and returns it.

    ``writes``: the flags (their dests) that name the places the job writes besides its results folder (``--out``)
    — a run's folder, a JSON of figures, a recording. Every other path it is given is an input: read, and left as
    it was to the byte. ``agents``: the flags that name agents, each checked before any folder is made.
    ``tests/test_jobs.py`` holds every job to both by what it does."""

    parser: Callable[[], argparse.ArgumentParser]
    check: Callable[[argparse.Namespace], Plan]
    example: tuple[str, ...] | Callable[[Path], list[str]] = ()
    writes: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()

    def main(self, argv=None):
        """``python -m train.<job> argv``."""
        return run(self, argv)

    def writes_folder(self) -> bool:
        """Whether the job writes a results folder (it then takes ``--out`` and ``--overwrite``)."""
        flags = {flag for action in self.parser()._actions for flag in action.option_strings}
        return "--out" in flags


def run(job: Job, argv=None):
    """Run ``job`` with the flags ``argv`` (None: the process's own) as every job runs: see the module."""
    parser = job.parser()
    received: list[int] = []  # signals seen: a library may swallow the interrupt they raise and fail otherwise
    deferred = Deferred()

    def on_signal(signum, frame):
        received.append(signum)
        stop.answered += 1
        if compiling(frame):  # raised now, it would vanish in the compiler's ctypes callback: raise it after
            deferred.defer(signum)
            return
        (on_sigterm if signum == signal.SIGTERM else signal.default_int_handler)(signum, frame)

    previous = signal.signal(signal.SIGTERM, on_signal)
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # started with Ctrl-C ignored (nohup): kept so
    previous_int = signal.getsignal(signal.SIGINT) if ignored else signal.signal(signal.SIGINT, on_signal)
    plan = None
    kept = "nothing is kept; the same command starts again"

    def told() -> str:  # what the stop keeps, as it stands now
        return kept() if callable(kept) else kept

    stop = HardStop(told)
    try:
        args = parser.parse_args(argv)
        args.command = command_line(argv)  # the flags as given, for the provenance of what the job writes
        try:
            plan = job.check(args)
        except REFUSALS as error:
            parser.error(one_line(error))
        kept = plan.kept or kept
        if plan.settings is None:
            for hook in work_started:
                hook()
            return signals_kept(plan.work(None), _name(parser), on_signal, ignored, deferred, received)
        with results_folder(plan.out, _name(parser), plan.settings, plan.overwrite, args.command) as folder:
            if not callable(plan.kept):
                kept = (plan.kept or "{folder} keeps nothing finished; the same command starts again").format(
                    folder=folder.path
                )
            for hook in work_started:
                hook()
            return signals_kept(plan.work(folder), _name(parser), on_signal, ignored, deferred, received)
    except (Refused, AgentFailed) as error:  # found while opening the folder or working (a kept file that is not
        # ours; an agent of the user's own that raised or chose an illegal action mid-job: its results not written)
        parser.error(one_line(error))
    except KeyboardInterrupt as interrupt:
        print(f"\ninterrupted: {told()}", file=sys.stderr)
        raise SystemExit(143 if isinstance(interrupt, Terminated) else 130) from None
    except Exception as error:  # numba compiling when Ctrl-C came (the interrupt ignored, then an error), or a fault
        if received:
            print(f"\ninterrupted: {told()}", file=sys.stderr)
            raise SystemExit(143 if received[-1] == signal.SIGTERM else 130) from None
        fault = fault_of(error)
        if fault is None:
            raise
        print(f"{parser.prog}: stopped, {fault}; {told()}", file=sys.stderr)  # the machine's fault: one line
        raise SystemExit(1) from None
    finally:
        deferred.cancel()  # however the job ended, a signal held for the compiler is not delivered after it
        stop.close()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
        if plan is not None and plan.close is not None:
            plan.close()


def _name(parser: argparse.ArgumentParser) -> str:
    """The job's name (``python -m train.evaluate`` → ``evaluate``): its results folders' owner."""
    return (parser.prog or "job").rsplit(".", 1)[-1]
