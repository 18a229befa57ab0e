"""A training run's folder, owned by one run: a lock held while it trains, its settings recorded and checked
on resume, checkpoints written atomically and read back newest-readable-first, logs appended across resumes.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import warnings
from pathlib import Path

SETTINGS_FILE = "args.json"
LOCK_FILE = ".lock"
#: Settings a resumed (or reused) run may change; every other one must match the run's recorded settings.
MAY_CHANGE = ("total_timesteps", "progress", "threads", "resume", "overwrite", "checkpoint_every", "out_dir")


class RunFolderBusy(RuntimeError):
    """Another process is training in this run folder."""


def write_atomically(path: Path, write) -> Path:
    """``write(temporary_path)``, then rename it over ``path``: readers see the old file or the new one."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial" + path.suffix)
    write(partial)
    os.replace(partial, path)
    return path


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
    path = Path(run_dir) / SETTINGS_FILE
    return json.loads(path.read_text()) if path.exists() else None


class RunFolder:
    """``with RunFolder(path, settings, resume, overwrite):`` — the run owns ``path`` until the block ends.

    A new run refuses a folder that already holds a run unless ``overwrite`` (which empties it first); a
    resumed run refuses settings other than the recorded ones (except ``MAY_CHANGE``).
    """

    def __init__(self, path, settings: dict, resume: bool, overwrite: bool, job: str = "training run"):
        self.path, self.settings, self.resume, self.overwrite = Path(path), settings, resume, overwrite
        self.job = job  # "training run" (folders named by --run-name) or "matrix" (by --out)
        self._name_flag = "--run-name" if job == "training run" else "--out"
        self._lock = None

    def __enter__(self) -> "RunFolder":
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.path / LOCK_FILE, "a+")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.seek(0)
            owner = self._lock.read().strip() or "?"
            self._lock.close()
            raise RunFolderBusy(
                f"{self.path} is in use by another {self.job} (pid {owner}); wait for it or choose another "
                f"{self._name_flag}"
            ) from None
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(str(os.getpid()))
        self._lock.flush()
        try:
            self._check()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        write_atomically(self.path / SETTINGS_FILE, lambda p: p.write_text(json.dumps(self.settings, indent=2)))
        return self

    def _check(self) -> None:
        recorded = recorded_settings(self.path)
        if self.resume:
            if recorded is not None and settings_difference(recorded, self.settings):
                raise ValueError(
                    f"{self.path} was started with other settings "
                    f"({'; '.join(settings_difference(recorded, self.settings))}); resume with the recorded "
                    f"ones, or start anew (another {self._name_flag}, or --overwrite)"
                )
            return
        held = [p for p in self.path.iterdir() if p.name != LOCK_FILE]
        if held and not self.overwrite:
            raise FileExistsError(
                f"{self.path} already holds a run ({', '.join(sorted(p.name for p in held)[:4])}, …); "
                f"continue it with --resume, start it over with --overwrite, or choose another {self._name_flag}"
            )
        for item in held:  # --overwrite: start over in an empty folder, so nothing of the old run mixes in
            shutil.rmtree(item) if item.is_dir() else item.unlink()

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
    """``load(path)`` of the newest checkpoint that loads; a corrupt one is skipped with a warning.
    Returns ``(path, loaded)`` or ``(None, None)``."""
    for path in checkpoints(run_dir):
        try:
            return path, load(path)
        except Exception as error:  # a half-written or damaged file: fall back to the one before
            warnings.warn(f"skipping unreadable checkpoint {path.name} ({type(error).__name__}: {error})")
    return None, None
