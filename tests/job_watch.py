"""What a job does while it runs, watched from inside its process: the files it writes (through Python's audit
hooks, which see every ``open`` for writing, rename, removal and new folder, however the job spells them), who sets
a signal handler, and a signal sent in the middle of its work. ``tests/test_jobs.py`` holds every job to what it
sees here, so a job that breaks a promise fails by what it does, not by how its source reads."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from train.runner import job as runner

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_CHANGES = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1), "os.symlink": (1,),
            "os.link": (1,), "os.truncate": (0,), "shutil.rmtree": (0,), "os.chmod": (0,)}  # fmt: skip
_CACHES = ("__pycache__",)  # compiled bytecode and numba's kernels: written beside the sources by design
_watch: dict | None = None  # the watch in force (one at a time): allowed roots and what was seen outside them


def _hook(event: str, args: tuple) -> None:
    watch = _watch
    if watch is None or watch["busy"] or threading.current_thread() is not watch["thread"]:
        return
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None))[:3]
        by_flags = isinstance(flags, int) and flags & _WRITE_FLAGS
        writes = by_flags or (isinstance(mode, str) and set(mode) & set("wax+"))
        paths = [path] if writes else []
    else:
        paths = [args[i] for i in _CHANGES.get(event, ()) if i < len(args)]
    for path in paths:
        if isinstance(path, (str, bytes, os.PathLike)):
            watch["busy"] = True
            try:
                where = Path(os.path.realpath(os.fsdecode(path)))
                if not any(where == root or where.is_relative_to(root) for root in watch["roots"]) and not (
                    set(where.parts) & set(_CACHES)
                ):
                    watch["outside"].append(f"{event} {where}")
            finally:
                watch["busy"] = False


sys.addaudithook(_hook)  # audit hooks cannot be removed: this one does nothing unless a watch is in force


@contextmanager
def writes_outside(roots):
    """Yield a list that fills with every write (in this thread) to a path outside ``roots`` (and the caches)."""
    global _watch
    seen: list[str] = []
    _watch = {"roots": [Path(os.path.realpath(r)) for r in roots], "outside": seen, "busy": False,
              "thread": threading.current_thread()}  # fmt: skip
    try:
        yield seen
    finally:
        _watch = None


@contextmanager
def handlers_set(monkeypatch):
    """Yield a list that fills with every ``signal.signal`` call made by anyone but the runner (however the
    caller imported the module: ``import signal as sig`` reads the same attribute)."""
    calls: list[str] = []
    original = signal.signal

    def watched(signum, handler):
        caller = sys._getframe(1).f_code.co_filename
        if Path(caller) != Path(runner.__file__):
            calls.append(f"{signal.Signals(signum).name} set from {caller}")
        return original(signum, handler)

    monkeypatch.setattr(signal, "signal", watched)
    yield calls


def places_named(job: runner.Job, argv: list[str], cwd: Path) -> list[Path]:
    """Where a job may write: every path its flags (given or default) name, bar the working folder itself and the
    folders above it (a job writes ``--out``, ``--runs``, ``--json``, ``--record``..., nothing else)."""
    args = job.parser().parse_args(argv)
    values = [v for value in vars(args).values() for v in (value if isinstance(value, (list, tuple)) else [value])]
    cwd = Path(os.path.realpath(cwd))
    places = []
    for value in values:
        if isinstance(value, (str, Path)) and str(value):
            path = Path(os.path.realpath(cwd / value))
            if path != cwd and not cwd.is_relative_to(path):
                places.append(path)
    return places


def timed_work(run) -> tuple[object, float]:
    """``run()``'s result and the seconds its job worked (from the runner's ``work_started`` to the end)."""
    started: list[float] = []
    mark = lambda: started.append(time.perf_counter())  # noqa: E731
    runner.work_started.append(mark)
    try:
        result = run()
    finally:
        runner.work_started.remove(mark)
    return result, (time.perf_counter() - started[0]) if started else 0.0


def interrupted(run, signum: int, after: float) -> tuple[object, str, float]:
    """Call ``run()`` and send ``signum`` to this process ``after`` seconds into the job's work (0: as it starts).

    Returns ``run()``'s result, what became of the signal — ``"handled"`` (sent while the job ran), ``"late"`` (the
    work had ended, or nearly: the signal reached the handler the runner puts back) or ``"unsent"`` — and the
    seconds from the signal to the job's end. A signal the job's own code swallowed reads as ``"handled"`` with a
    result that says it finished: the caller's to judge."""
    done, lock = threading.Event(), threading.Lock()
    sent: list[float] = []
    late: list[int] = []

    def send():
        with lock:
            if not done.is_set():
                sent.append(time.perf_counter())
                os.kill(os.getpid(), signum)

    def start():
        if after <= 0:
            send()
        else:
            threading.Thread(target=lambda: done.wait(after) or send(), daemon=True).start()

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in before:
        signal.signal(s, lambda number, frame: late.append(number))  # the runner restores these after the job
    runner.work_started.append(start)
    try:
        result = run()
    finally:
        with lock:
            done.set()
        ended = time.perf_counter()
        runner.work_started.remove(start)
        time.sleep(0.05)  # a signal sent as the job ended is handled now, by the handlers set above
        for s, handler in before.items():
            signal.signal(s, handler)
    fate = "late" if late else ("handled" if sent else "unsent")
    return result, fate, (ended - sent[0]) if sent else 0.0
