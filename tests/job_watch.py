"""A job run in a process of its own, watched from inside it: every file it writes (Python's audit hooks see each
``open`` for writing, rename, removal and new folder, however the job spells them), every signal handler set by
the project's code outside the runner, and a signal sent the given seconds into its work. A watchdog ends a run
that hangs, printing where every thread was. And watched from outside, by what the machine shows: the repository,
the test's folder, the home folder, the temporary folder's top level and ``/dev/shm`` before and after it, so that a
file created, changed or removed outside the job's places fails whoever wrote it (a child process, C code, an
import, an exit handler) — the audit hook sees only Python's own calls. ``tests/test_jobs.py`` holds every job to
what is seen here, so a job that breaks a promise fails by what it does, not by how its source reads.

    python tests/job_watch.py SPEC.json      # SPEC: see watched(); the report is written to SPEC's "report"
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import sandbox  # this folder is on sys.path: pytest's, and the watched process's own (its script's folder)

ROOT = Path(__file__).resolve().parent.parent
WATCHDOG = 240  # seconds: a run still going then has hung (the slowest example takes ~30 s on a busy machine)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_CHANGES = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1), "os.symlink": (1,),
            "os.link": (1,), "os.truncate": (0,), "shutil.rmtree": (0,), "os.chmod": (0,)}  # fmt: skip
#: where each event gives the folder (a file descriptor) its relative paths are taken in: shutil.rmtree walks a tree
#: by descriptors, naming each entry by its bare name
_DIR_FD = {"os.remove": 1, "os.rmdir": 1, "os.mkdir": 2, "os.chmod": 2, "os.symlink": 2}


@dataclass
class Report:
    """What a watched run did: its exit status and stderr, the writes outside its places, the handlers set by
    the project's code outside the runner, the seconds it worked, and the signal's fate: ``"handled"`` (sent
    while the job ran), ``"unsent"`` (the work ended first) — with the seconds from the signal to the end."""

    status: int
    err: str = ""
    outside: list[str] = field(default_factory=list)
    handlers: list[str] = field(default_factory=list)
    worked: float = 0.0
    fate: str = "unsent"
    answered: float = 0.0
    made: list[str] = field(default_factory=list)  # the agents (registry names) made during the work
    lingering: list[str] = field(default_factory=list)  # processes it started still running after it ended


#: folders of installed software under the home folder, not walked (hundreds of thousands of files): the Python
#: interpreter's and other toolchains' installs, which no job writes
INSTALLS = (".pyenv", ".rustup", ".cargo", ".m2", ".npm")


def snapshot(roots: list[Path], skip: list[Path]) -> dict[str, tuple[int, int, int]]:
    """(size, modification time, status-change time) of every file under ``roots``, the files and folders in
    ``skip`` (and the repository's git and virtual environments) left out: what the machine shows, whoever writes
    it. The status-change time moves with every write, and no ``os.utime`` can put it back."""
    skipped = {os.path.realpath(p) for p in skip}
    seen = {}
    for root in roots:
        for folder, folders, files in os.walk(root):
            folders[:] = [f for f in folders if os.path.join(folder, f) not in skipped
                          and not (f in (".git", ".venv", ".venv-rllib") and folder == str(ROOT))]  # fmt: skip
            for file in files:
                path = os.path.join(folder, file)
                if path in skipped:
                    continue
                try:
                    stat = os.lstat(path)
                except OSError:  # gone while walked
                    continue
                seen[path] = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)  # ctime: no os.utime hides a write
    return seen


def top_level(folder: Path, skip: list[Path]) -> dict[str, tuple[int, int, int]]:
    """The entries directly in ``folder``: a file's (size, modification and status-change time), a folder's
    presence only."""
    skipped = {os.path.realpath(p) for p in skip}
    seen = {}
    for entry in os.scandir(folder):
        if entry.path in skipped:
            continue
        try:
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if entry.is_dir(follow_symlinks=False):
            seen[entry.path] = (0, 0, 0)
        else:
            seen[entry.path] = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    return seen


def _written_here() -> list[Path]:
    """The files this (the watching) process holds open: the test run's own output, when it goes to a file (a CI
    log in the temporary folder grows while a job is watched, and is no job's write)."""
    held = []
    for fd in Path("/proc/self/fd").glob("*") if Path("/proc/self/fd").is_dir() else ():
        try:
            target = Path(os.readlink(fd))
        except OSError:
            continue
        if target.is_absolute() and target.is_file():
            held.append(target)
    return held


#: what importing and compiling names a file in a ``__pycache__``: bytecode (and importlib's temporary twin),
#: numba's index and compiled code (and its temporary twins), the kernel's source stamps (snipsnap_env.jit_cache)
_CACHE_NAMES = re.compile(
    r"^(?P<stem>[A-Za-z_][\w]*)\.(cpython-\d+(\.opt-\d)?\.pyc(\.\d+)?"
    r"|[^/]*-\d+\.py\d+(\.\d+)?\.nb[ic](\.tmp\.[\w-]+)?|sources-sha256)$"
)


def _compiled_cache(path: str, root: Path) -> bool:
    """What importing and compiling writes, and nothing else: a ``__pycache__`` folder of the project's, and in
    one the bytecode, numba cache or source stamp of a module that is there beside it (``x.cpython-311.pyc`` with
    ``x.py``); bytecode of the installed libraries in theirs."""
    where = Path(path)
    if where.name == "__pycache__" and where.is_relative_to(root):  # made, or tried for writing (numba's check)
        return True
    if where.parent.name != "__pycache__":
        return False
    named = _CACHE_NAMES.match(where.name)
    if not named or not (where.parent.parent / f"{named['stem']}.py").is_file():
        return False
    if where.is_relative_to(root):
        return True
    installed = (Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve())
    return ".pyc" in where.name and any(where.is_relative_to(prefix) for prefix in installed)


def changed_outside(before: dict, after: dict, places: list[Path], root: Path) -> list[str]:
    """Files created, changed or removed between two snapshots, outside ``places``."""
    inside = [Path(os.path.realpath(p)) for p in places]
    changes = [(f"created {p}" if p not in before else f"removed {p}" if p not in after else f"changed {p}", p)
               for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]  # fmt: skip
    return [what for what, path in changes
            if not any(_within(Path(path), place) for place in inside) and not _compiled_cache(path, root)]  # fmt: skip


_SANDBOX: list[str] = []  # why this machine cannot sandbox a job ("" when it can), found once


def sandbox_unavailable() -> str:
    """"" when jobs are watched in the sandbox (tests/sandbox.py), else why not: then they are watched by
    snapshots and audit hooks only, and the test run's header says so (conftest.py)."""
    if not _SANDBOX:
        _SANDBOX.append(sandbox.available())
    return _SANDBOX[0]


def watched(name: str, argv: list[str], cwd: Path, places: list[Path], signum: int = 0, after: float = 0.0,
            root: Path = ROOT) -> Report:  # fmt: skip
    """Run ``python -m train.<name> argv`` from ``cwd`` (with the project at ``root``), allowed to write in
    ``places`` only, sending ``signum`` (0: none) ``after`` seconds into its work: in the sandbox where the machine
    makes one (writes elsewhere fail or never land, and are named; a process left running is named), else
    watched by snapshots of the places around it."""
    cwd = Path(cwd)
    scratch = Path(tempfile.mkdtemp(prefix="watch-", dir=cwd.parent))
    home, temporary = Path.home(), Path(tempfile.gettempdir())
    sandboxed = not sandbox_unavailable()
    if sandboxed:  # only the test's folder (its inputs) is snapshot: the job's writes cannot reach the disk, and
        roots, skip = [cwd.parent], [scratch, *_written_here()]  # other programs' (in the repository too) are theirs
    else:  # the test's own folder in full, the temporary folder's top level, home and shared memory
        roots = [root, cwd.parent, home, *([Path("/dev/shm")] if Path("/dev/shm").is_dir() else [])]
        skip = [scratch, *(home / name for name in INSTALLS), *_written_here()]

    def seen_now() -> dict:
        return snapshot(roots, skip) | ({} if sandboxed else top_level(temporary, skip))

    before = seen_now()
    projects = sorted({str(root), os.path.realpath(root), str(ROOT), os.path.realpath(ROOT)})
    layers = Path(tempfile.mkdtemp(prefix="layers-", dir=temporary)) if sandboxed else None
    spec = {"name": name, "argv": argv, "cwd": str(cwd), "places": [str(p) for p in places], "signum": signum,
            "after": after, "root": str(root), "tmp": str(scratch), "report": str(scratch / "report.json"),
            "layers": str(layers), "projects": projects}  # fmt: skip
    (scratch / "spec.json").write_text(json.dumps(spec))
    environment = {**os.environ, "PYTHONPATH": str(root), "TMPDIR": str(scratch), "COLUMNS": "80",
                   "TORCHINDUCTOR_CACHE_DIR": str(scratch / "torch"), "MPLCONFIGDIR": str(scratch / "matplotlib"),
                   "XDG_CACHE_HOME": str(scratch / "cache")}  # fmt: skip (libraries' caches: the job's own scratch)
    if sandboxed:
        command = sandbox.command(scratch / "spec.json")
    else:
        command = [sys.executable, str(Path(__file__).resolve()), str(scratch / "spec.json")]
    try:
        done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                              timeout=WATCHDOG + 60)  # fmt: skip
    finally:
        if layers is not None:
            shutil.rmtree(layers, ignore_errors=True)
    if sandboxed:
        lines = [line for line in done.stdout.splitlines() if line.startswith(sandbox.REPORT_MARK)]
        found = lines[-1][len(sandbox.REPORT_MARK):] if lines else ""
    else:
        report = scratch / "report.json"
        found = report.read_text() if report.exists() else ""
    if not found.strip():  # the watchdog fired, or the job died before it could report
        raise AssertionError(f"train.{name} {argv} did not finish (exit {done.returncode}):\n{done.stderr[-4000:]}")
    seen = Report(**json.loads(found), err=done.stderr)
    seen.outside += changed_outside(before, seen_now(), places, root)
    return seen


# --- in the watched process -----------------------------------------------------------------------------------


def _allowed(spec: dict) -> list[Path]:
    """The job's places, its own temporary folder (the libraries' caches are pointed there too) and /dev/null:
    nothing else, not even the user's caches."""
    private = [spec["private_tmp"]] if spec.get("private_tmp") else []  # the sandbox's temporary folder
    return [Path(os.path.realpath(p)) for p in (*spec["places"], spec["tmp"], *private, os.devnull)]


def _ipc(path: Path) -> bool:
    """A segment of multiprocessing's own in /dev/shm (``pym-<pid>-…``: its shared memory and heaps): made and
    removed by the library within the run; one left behind still shows in the snapshot, and fails."""
    return path.parent == Path("/dev/shm") and path.name.startswith("pym-")


def _within(path: Path, place: Path) -> bool:
    """``path`` is ``place``, inside it, or the partial file an atomic write of ``place`` goes through
    (train.runner.run_folder.write_atomically: ``<name>.partial<suffix>`` beside it)."""
    return path.is_relative_to(place) or (path.parent == place.parent and path.name.startswith(place.name + ".partial"))


def _watch_writes(allowed: list[Path], outside: list[str], root: Path) -> None:
    busy = threading.local()

    def hook(event: str, args: tuple) -> None:
        if getattr(busy, "on", False):
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None))[:3]
            writes = (isinstance(flags, int) and flags & _WRITE_FLAGS) or (
                isinstance(mode, str) and set(mode) & set("wax+")
            )
            paths = [path] if writes else []
        else:
            paths = [args[i] for i in _CHANGES.get(event, ()) if i < len(args)]
        at = _DIR_FD.get(event)
        folder = args[at] if at is not None and at < len(args) and isinstance(args[at], int) else None
        folder = folder if folder is not None and folder >= 0 else None  # -1: no folder given
        for path in paths:
            if not isinstance(path, (str, bytes, os.PathLike)):
                continue  # a file descriptor: opened (and watched) before
            busy.on = True
            try:
                name = os.fsdecode(path)
                if folder is not None and not os.path.isabs(name):  # relative to that folder, not to the cwd
                    name = os.path.join(os.readlink(f"/proc/self/fd/{folder}"), name)
                where = Path(os.path.realpath(name))
                if not (_compiled_cache(str(where), root) or _ipc(where) or any(_within(where, p) for p in allowed)):
                    outside.append(f"{event} {where}")
            finally:
                busy.on = False

    sys.addaudithook(hook)


def _watch_handlers(root: Path, handlers: list[str]) -> None:
    """Record each ``signal.signal`` call made from the project's own code outside ``train/runner/`` (a library's
    calls are the runner's to undo; a job's are not allowed)."""
    original = signal.signal
    runner = root / "train" / "runner"

    def watched_signal(signum, handler):
        caller = Path(sys._getframe(1).f_code.co_filename)
        if caller.is_relative_to(root) and not caller.is_relative_to(runner) and ".venv" not in caller.parts:
            handlers.append(f"{signal.Signals(signum).name} set from {caller.relative_to(root)}")
        return original(signum, handler)

    signal.signal = watched_signal


def record_agents(made: list, recording=lambda: True):
    """Append the registry name of every agent made (while ``recording()``), however it is made, to ``made``;
    return ``agents.Policy.__init__`` as it was, to be put back."""
    import agents

    original = agents.Policy.__init__

    def recorded(self, *args, **kwargs):
        if recording():
            made.append(getattr(type(self), "name", type(self).__name__))
        original(self, *args, **kwargs)

    agents.Policy.__init__ = recorded
    return original


def _child(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    root = Path(spec["root"])
    faulthandler.dump_traceback_later(WATCHDOG, exit=True)  # a hang: every thread's stack, then exit 1
    from train.runner import job as runner
    from train.runner import signals

    module = __import__(f"train.{spec['name']}", fromlist=["JOB"])
    report = {"outside": [], "handlers": [], "worked": 0.0, "fate": "unsent", "answered": 0.0, "made": []}
    started, sent, lock, ended = [], [], threading.Lock(), threading.Event()

    def send():
        with lock:
            if not ended.is_set():
                sent.append(time.perf_counter())
                os.kill(os.getpid(), spec["signum"])

    def on_start():
        started.append(time.perf_counter())
        if spec["signum"] and spec["after"] <= 0:
            send()
        elif spec["signum"]:
            threading.Thread(target=lambda: ended.wait(spec["after"]) or send(), daemon=True).start()

    def reported(status: int) -> None:
        with lock:
            ended.set()
        finish = time.perf_counter()
        report["worked"] = finish - started[0] if started else 0.0
        if sent:
            report["fate"], report["answered"] = "handled", finish - sent[0]
        sys.stderr.flush()
        faulthandler.cancel_dump_traceback_later()
        Path(spec["report"]).write_text(json.dumps({**report, "status": status}))

    runner.work_started.append(on_start)
    # a signal a compiled call keeps from its handler for GRACE seconds ends the job at once (exit 130/143, no exit
    # handlers): that ending is reported too (on a busy machine a compile can hold a signal that long)
    signals.before_hard_stop.append(lambda signum: reported(128 + signum))
    record_agents(report["made"], lambda: bool(started))  # the agents made once the work has started
    _watch_handlers(root, report["handlers"])
    _watch_writes(_allowed(spec), report["outside"], root)
    try:
        module.JOB.main(spec["argv"])
        status = 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # what `python -m` would print: a traceback and exit status 1
        import traceback

        traceback.print_exc()
        status = 1
    reported(status)


if __name__ == "__main__":
    _child(sys.argv[1])
