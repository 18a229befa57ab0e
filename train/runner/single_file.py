"""Where a script writes one named file (``train.play --record``, ``examples/*.py --out``): the same promise as a
job's folder (docs/trust.md), for one file. Nothing is written through a link, nothing that exists is replaced
without ``--overwrite``, and a file the repository tracks (the shipped models, the docs' pictures) never; the file
appears whole or not at all (written beside it, then renamed).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from .manifest import Refused
from .results_folder import ROOT


class FileTaken(Refused, ValueError):
    """The file named to write cannot be written: a link, an existing file without --overwrite, a tracked one."""


def is_tracked(path: Path) -> bool:
    """Whether git tracks ``path`` in the repository it lies in (False outside one, or without git)."""
    folder = path.parent if path.parent.is_dir() else ROOT
    try:
        result = subprocess.run(
            ["git", "ls-files", "--error-unmatch", "--", path.name], cwd=folder, capture_output=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


def check_new_file(path, flag: str, overwrite: bool = False) -> Path:
    """``path`` if a script may write it, else :class:`FileTaken` naming ``flag`` and what is in the way."""
    path = Path(path)
    if path.is_symlink():
        raise FileTaken(f"{flag} {path}: is a link (to {os.readlink(path)}); name the file itself")
    if path.exists() and not path.is_file():
        raise FileTaken(f"{flag} {path}: is a folder, not a file")
    if path.exists() and is_tracked(path):
        raise FileTaken(f"{flag} {path}: the repository tracks this file; write elsewhere (--overwrite or not)")
    if path.exists() and not overwrite:
        raise FileTaken(f"{flag} {path}: the file exists; choose another name, or --overwrite to replace it")
    return path


def write_new_file(path, flag: str, write: Callable[[Path], object], overwrite: bool = False) -> Path:
    """Check ``path`` (:func:`check_new_file`) again, ``write(temporary path)`` beside it, then rename it into
    place: a crash or Ctrl-C leaves the old file (or none), never half of one."""
    path = check_new_file(path, flag, overwrite)
    partial = path.with_name(f".{path.name}.partial{path.suffix}")  # the suffix: writers pick the format by it
    try:
        write(partial)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
