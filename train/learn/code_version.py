"""What code a training run was made by: a run is reused or resumed only by the code that made it.

Training is byte-reproducible for one version of the code and of the libraries it runs on, not across
versions: after a ``git pull`` the same settings train another model. So a run's recorded settings hold,
beside its flags, a fingerprint of the sources that shape what it learns (the engine, the agents, the
training and the measurements that pick its best model) and the versions of the libraries that compute it.
``train.main`` on an updated checkout then refuses the old run by name instead of reporting its model as
one this code trained, and ``--resume`` never continues a run with other code.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import metadata
from pathlib import Path

import agents
import snipsnap_env

TRAIN = Path(__file__).resolve().parents[1]
SOURCES = (Path(snipsnap_env.__file__).parent, Path(agents.__file__).parent, TRAIN / "learn", TRAIN / "measure")
LIBRARIES = ("numpy", "numba", "torch", "stable-baselines3", "sb3-contrib", "gymnasium")


@functools.cache
def code_version() -> str:
    """``sources <sha256 of every .py under SOURCES, 16 hex>; <library> <version>, ...``: content, not the
    commit, so that uncommitted edits count and a copy outside git has a version too."""
    digest = hashlib.sha256()
    for root in SOURCES:
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{path.relative_to(root.parent).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return "; ".join([f"sources {digest.hexdigest()[:16]}", *map(_version, LIBRARIES)])


def _version(name: str) -> str:
    try:
        return f"{name} {metadata.version(name)}"
    except metadata.PackageNotFoundError:
        return f"{name} absent"
