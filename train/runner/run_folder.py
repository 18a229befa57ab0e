"""A training run's folder, owned by one run: a lock held while it trains, its settings recorded and checked
on resume, checkpoints written atomically and read back newest-readable-first, logs appended across resumes.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import warnings
from pathlib import Path

from .manifest import BOOKKEEPING, LOCK_FILE, MANIFEST_FILE, Manifest, Refused, UntrustedFile

SETTINGS_FILE = "args.json"
#: Settings a resumed (or reused) run may change; every other one must match the run's recorded settings.
MAY_CHANGE = ("total_timesteps", "progress", "threads", "resume", "overwrite", "checkpoint_every", "out_dir")


class RunFolderBusy(Refused, RuntimeError):
    """Another process is working in this folder."""


class NothingToResume(Refused, FileNotFoundError):
    """``--resume`` names a folder that holds no run, or no checkpoint that can be read."""


class FolderTaken(Refused, FileExistsError):
    """The folder holds a run already (start over with ``--overwrite``) or files that are not the job's."""


class OtherSettings(Refused, ValueError):
    """The folder holds a run with other settings."""


__all__ = ["Refused", "RunFolder", "RunFolderBusy", "NothingToResume", "FolderTaken", "OtherSettings"]


def write_atomically(path: Path, write) -> Path:
    """``write(temporary_path)``, then rename it over ``path``: readers see the old file or the new one, and a write
    that fails or is interrupted leaves no temporary file."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial" + path.suffix)
    if os.path.lexists(partial):  # a leftover, or a planted link: write a new file, never through a link
        os.unlink(partial)
    try:
        write(partial)
    except BaseException:  # interrupted or failed: no half-written twin left beside the file
        if os.path.lexists(partial):
            os.unlink(partial)
        raise
    os.replace(partial, path)
    return path


MAX_NAME_BYTES = 200  # a file system's name limit is 255 bytes: room for the suffixes files beside a run get


def check_folder_name(name: str, flag: str = "--run-name") -> str:
    """``name`` if it is one plain folder name (no path): a run lives inside ``--runs``, never elsewhere."""
    if (
        not name
        or name in (".", "..")
        or "/" in name
        or (os.altsep and os.altsep in name)
        or os.sep in name
        or "\0" in name
        or Path(name).is_absolute()
    ):
        raise ValueError(f"{flag} got {name!r}; allowed: one plain folder name (no '/', not '.' or '..')")
    try:  # a name from argv with bytes that are no UTF-8 arrives with surrogates: the logs' libraries cannot write it
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{flag} got {name!r}; allowed: a name in UTF-8 (it holds bytes that are not)") from None
    if len(encoded) > MAX_NAME_BYTES:
        raise ValueError(f"{flag} is {len(encoded)} bytes long; allowed: at most {MAX_NAME_BYTES} bytes")
    return name


def settings_difference(recorded: dict, current: dict) -> list[str]:
    """The settings (other than ``MAY_CHANGE``) whose recorded and current values differ, in words."""
    current = json.loads(json.dumps(current))  # as recorded: tuples become lists
    names = sorted((set(recorded) | set(current)) - set(MAY_CHANGE))
    return [
        f"{name}: {recorded.get(name)!r} -> {current.get(name)!r}"
        for name in names
        if recorded.get(name) != current.get(name)
    ]


def recorded_settings(run_dir: Path) -> dict | None:
    """The settings a job recorded in ``run_dir`` (None when no job of ours wrote them there)."""
    path = Path(run_dir) / SETTINGS_FILE
    if not path.is_file():
        return None
    try:
        if not Manifest(run_dir).owns(path):
            return None
        return json.loads(path.read_text())
    except (ValueError, UntrustedFile):
        return None


def _listing(names: list[str]) -> str:
    return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")


def _differences(differences: list[str]) -> str:
    """A few of the differing settings in full, the rest by name: a refusal stays one readable line."""
    shown = [d if len(d) <= 80 else d.split(":", 1)[0] + ": (differs)" for d in differences[:3]]
    rest = [d.split(":", 1)[0] for d in differences[3:]]
    return "; ".join(shown) + (f"; and {len(rest)} more: {', '.join(rest[:8])}" if rest else "")


def enclosing_folder(path: Path) -> tuple[Path, str] | None:
    """The nearest folder above ``path`` that one of our jobs keeps, and that job: its manifest.json names one
    (a web app's manifest.json higher up is not ours, and does not count)."""
    for parent in Path(os.path.realpath(path)).parents:
        if (parent / MANIFEST_FILE).is_file():
            try:
                owner = Manifest(parent).owner()
            except UntrustedFile:
                owner = None
            if owner:
                return parent, owner
    return None


def open_lock(path: Path):
    """The folder's lock file, opened for reading and writing without following a symbolic link (a planted link
    would have the job write its PID into the file it points to)."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as error:
        raise FolderTaken(f"cannot use {path} as the folder's lock ({error.strerror or error})") from None
    return os.fdopen(descriptor, "r+")


def refuse_if_busy(path: Path, noun: str, flag: str) -> None:
    """:class:`RunFolderBusy` if another process holds the lock of the folder ``path`` (tested on its lock file if
    there is one, creating nothing): a job that will work in the folder says so before it makes anything."""
    lock_path = Path(path) / LOCK_FILE
    if not lock_path.is_file():
        return
    try:
        descriptor = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return  # unreadable: opening it for the lock says why
    with os.fdopen(descriptor) as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(lock, fcntl.LOCK_UN)
        except BlockingIOError:
            raise busy_refusal(path, noun, flag, lock) from None


def busy_refusal(path: Path, noun: str, flag: str, lock) -> RunFolderBusy:
    """The refusal for the folder ``path`` whose ``lock`` (its open lock file) another process holds, naming it."""
    lock.seek(0)
    owner = lock.read().strip() or "?"
    return RunFolderBusy(f"{path} is in use by another {noun} (pid {owner}); wait for it or choose another {flag}")


class RunFolder:
    """``with RunFolder(path, settings, resume, overwrite) as folder:`` — the job owns ``path`` until the block
    ends, and writes there only through ``folder.write`` / ``folder.record``, which list each file in the
    folder's manifest.

    A new run refuses a folder that already holds a run unless ``overwrite``, which removes exactly the files
    the manifest lists; any other file in the folder (a person's notes, another program's data) makes both
    refuse, naming it. A resumed run refuses settings other than the recorded ones (except ``MAY_CHANGE``);
    ``resume`` of a folder that holds no run is refused before anything is written, unless
    ``resume_may_start`` (jobs that continue or start, like the matrix).
    """

    def __init__(
        self,
        path,
        settings: dict,
        resume: bool,
        overwrite: bool,
        job: str = "train_ppo",
        name_flag: str = "--run-name",
        resume_may_start: bool = False,
    ):
        self.path, self.settings, self.resume, self.overwrite = Path(path), settings, resume, overwrite
        self.job, self._name_flag, self._resume_may_start = job, name_flag, resume_may_start
        self.noun = "training run" if job == "train_ppo" else f"{job} job"  # how its messages name the job
        self._lock = None
        self.manifest: Manifest | None = None
        self.timings: dict[str, float] = {}  # wall times the job measured: its provenance keeps them, no table

    def __enter__(self) -> "RunFolder":
        self._refusals()  # before anything is made
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = open_lock(self.path / LOCK_FILE)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            busy = busy_refusal(self.path, self.noun, self._name_flag, self._lock)
            self._lock.close()
            self._lock = None
            raise busy from None
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(str(os.getpid()))
        self._lock.flush()
        try:
            self.manifest = Manifest(self.path, self.job)
            self._refusals(self.manifest)  # again, now that no other process can change the folder
            if not self.resume:
                self.manifest.remove_listed()  # --overwrite: start over with nothing of the old run mixed in
            self.write(self.path / SETTINGS_FILE, lambda p: p.write_text(json.dumps(self.settings, indent=2)))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _refusals(self, manifest: "Manifest | None" = None) -> None:
        """Raise the refusal that applies to this folder (``manifest``: its manifest, read here if not given);
        reads only, so that a refused job leaves no trace."""
        if self.path.exists() and not self.path.is_dir():
            raise FolderTaken(f"{self.path} is a file, not a folder; choose another {self._name_flag}")
        enclosing = enclosing_folder(self.path)
        if enclosing is not None:
            raise FolderTaken(
                f"{self.path} is inside {enclosing[0]}, a folder train.{enclosing[1]} keeps: no job writes into "
                f"another's folder; choose another {self._name_flag} outside it"
            )
        for name in BOOKKEEPING:
            if (self.path / name).is_symlink():
                raise FolderTaken(
                    f"{self.path / name} is a symbolic link: a job's bookkeeping is never one (it would write "
                    f"through it); remove it or choose another {self._name_flag}"
                )
        self._refuse_if_busy()
        if manifest is None and self.path.is_dir():
            manifest = Manifest(self.path)
        recorded = recorded_settings(self.path) if manifest is not None else None
        if self.resume and not self._resume_may_start and recorded is None:
            raise NothingToResume(
                f"--resume: {self.path} holds no {self.noun} to resume; start one without --resume"
            )
        if manifest is None:
            return
        foreign = manifest.foreign()
        if foreign and (not self.resume or not manifest.files):
            raise FolderTaken(
                f"{self.path} holds files that this {self.noun} did not write ({_listing(foreign)}); a job writes "
                f"only into a folder of its own: choose another {self._name_flag}, or move those files away"
            )
        owner = manifest.owner()
        if manifest.files and owner != self.job:
            raise FolderTaken(
                f"{self.path} holds the files of a {owner or 'job of unknown kind'} "
                f"({_listing(sorted(manifest.files))}); "
                f"{self.job} writes only into its own folders, and --overwrite never removes another job's files: "
                f"choose another {self._name_flag}"
            )
        if self.resume:
            differences = settings_difference(recorded, self.settings) if recorded is not None else []
            if differences:
                raise OtherSettings(
                    f"{self.path} holds a {self.noun} with other settings ({_differences(differences)}); resume "
                    f"with the recorded ones, or start anew (another {self._name_flag}, or --overwrite)"
                )
            return
        if manifest.files and not self.overwrite:
            raise FolderTaken(
                f"{self.path} already holds a run ({_listing(sorted(manifest.files))}); continue it with "
                f"--resume, start it over with --overwrite, or choose another {self._name_flag}"
            )

    def _refuse_if_busy(self) -> None:
        """:class:`RunFolderBusy` if another process holds the folder's lock: that is the first thing to say
        about a folder in use."""
        if self._lock is None:
            refuse_if_busy(self.path, self.noun, self._name_flag)

    def write(self, path: Path, write, hashed: bool = True) -> Path:
        """``write(temporary_path)`` renamed to ``path`` (in the folder), listed in the manifest; refuses to
        replace a file the job did not write."""
        path = Path(path)
        if path.exists() and not self.manifest.owns(path):
            raise FolderTaken(f"{path} was not written by this {self.noun}; it stays as it is (move it away)")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.manifest.record_pending(path)  # a write cut short leaves a temporary file the folder still owns
        write_atomically(path, write)
        return self.manifest.record(path, hashed)

    def record(self, path: Path, hashed: bool = False) -> Path:
        """List a file that a library wrote into the folder (a log) as the job's own."""
        return self.manifest.record(path, hashed)

    def verify(self, path: Path) -> Path:
        """``path``, if this job wrote it and it has not changed since (raises :class:`UntrustedFile`)."""
        return self.manifest.verify(path)

    def __exit__(self, *exc) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None


def checkpoints(run_dir: Path) -> list[Path]:
    """The run's checkpoint files, newest (most timesteps) first."""
    found = [
        (int(m.group(1)), p)
        for p in (Path(run_dir) / "checkpoints").glob("ppo_*_steps.zip")
        if (m := re.search(r"^ppo_(\d+)_steps\.zip$", p.name))
    ]
    return [p for _, p in sorted(found, reverse=True)]


def load_newest_readable(run_dir: Path, load):
    """``load(path)`` of the newest checkpoint that loads; a corrupt or unverified one is skipped with a warning.
    Returns ``(path, loaded)`` or ``(None, None)``."""
    for path in checkpoints(run_dir):
        try:
            return path, load(path)
        except Exception as error:  # a half-written or damaged file: fall back to the one before
            warnings.warn(f"skipping unreadable checkpoint {path.name} ({type(error).__name__}: {error})")
    return None, None
