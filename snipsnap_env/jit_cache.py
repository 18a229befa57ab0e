"""Keeps numba's on-disk cache honest across files.

numba checks a cached function against the file it is defined in only, not against the constants it froze
in from other modules (the observation layout, the rules' codes) nor the kernel functions it calls from
another file: after a ``git pull`` or an edit of those, cached machine code would run stale — silently
wrong results. So every module with cached compiled functions calls :func:`drop_if_sources_changed` on
import: its cache entries are deleted when the sources the kernel is built from differ from those they
were compiled against, and numba compiles them afresh.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from .blas import load_bounded

load_bounded()  # every module of ours with compiled code imports this one before numba compiles anything (see blas)

SOURCES = tuple(
    Path(__file__).with_name(name)
    for name in (
        "cards.py",
        "rules.py",
        "engine.py",
        "observation.py",
        "kernel_state.py",
        "kernel_leads.py",
        "kernel.py",
        "kernel_observe.py",
        "kernel_network.py",
    )
)


@functools.lru_cache(maxsize=None)
def _digest(sources: tuple[Path, ...]) -> str:
    """The sources' hash, read once per process (three modules ask on import)."""
    return hashlib.sha256(b"".join(source.read_bytes() for source in sources)).hexdigest()


def drop_if_sources_changed(module_file: str) -> None:
    """Delete ``module_file``'s numba cache entries if the kernel's sources changed since they were written."""
    module = Path(module_file)
    cache = module.parent / "__pycache__"
    stamp = cache / f"{module.stem}.sources-sha256"
    digest = _digest(SOURCES)
    try:
        if stamp.exists() and stamp.read_text() == digest:
            return
        for entry in [*cache.glob(f"{module.stem}.*.nbi"), *cache.glob(f"{module.stem}.*.nbc")]:
            entry.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba cannot cache there either
        pass


def is_compiled(module_file: str) -> bool:
    """Whether ``module_file``'s compiled functions are in numba's on-disk cache for the kernel's current sources
    (its stamp matches and an index is there): what lets a job say "compiling, about a minute" only when it will."""
    module = Path(module_file)
    cache = module.parent / "__pycache__"
    stamp = cache / f"{module.stem}.sources-sha256"
    try:
        return stamp.read_text() == _digest(SOURCES) and any(cache.glob(f"{module.stem}.*.nbi"))
    except OSError:
        return False
