"""What code a training run was made by: a run is reused or resumed only by the code that made it.

Training is byte-reproducible for one version of the code and of the libraries it runs on, not across
versions: after a ``git pull`` the same settings train another model. So a run's recorded settings hold,
beside its flags, a fingerprint of the sources that shape what it learns (the engine, the agents, the
training and the measurements that pick its best model) and the versions of the libraries that compute it.
``train.main`` on an updated checkout then refuses the old run by name instead of reporting its model as
one this code trained, and ``--resume`` never continues a run with other code.

The scripted agents (``agents/scripted.py``) count by what a run plays: the file's shared code, and the class of
each scripted agent the run names (and of those every run plays: ``ALWAYS_PLAYED``). A scripted agent added to the
package, or changed, leaves the runs that never play it as they were.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import agents
import snipsnap_env
from agents.scripted import SCRIPTED

TRAIN = Path(__file__).resolve().parents[1]
SOURCES = (Path(snipsnap_env.__file__).parent, Path(agents.__file__).parent, TRAIN / "learn", TRAIN / "measure")
SCRIPTED_SOURCE = Path(agents.__file__).resolve().with_name("scripted.py")  # where the walk meets it
SCRIPTED_FILE = SCRIPTED_SOURCE  # what is read in its place (a test's copy)
ALWAYS_PLAYED = ("random", "most_copies")  # every run's evaluation and defaults play them
LIBRARIES = ("numpy", "numba", "torch", "stable-baselines3", "sb3-contrib", "gymnasium")


def code_version(played: Iterable[str] = ()) -> str:
    """``sources <sha256 of every .py under SOURCES, 16 hex>; <library> <version>, ...``: content, not the
    commit, so that uncommitted edits count and a copy outside git has a version too. ``played``: the agents the
    run names (names or specs; only the scripted ones' classes count, with ``ALWAYS_PLAYED``)."""
    scripted = {cls.name for cls in SCRIPTED}
    return _code_version(tuple(sorted({*ALWAYS_PLAYED, *played} & scripted)))


@functools.cache
def _code_version(scripted: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for root in SOURCES:
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{path.relative_to(root.parent).as_posix()}\0".encode())
            digest.update(scripted_part(scripted) if path.resolve() == SCRIPTED_SOURCE else path.read_bytes())
    return "; ".join([f"sources {digest.hexdigest()[:16]}", *map(_version, LIBRARIES)])


def scripted_part(names: tuple[str, ...]) -> bytes:
    """``agents/scripted.py`` as a run of ``names`` depends on it: every top-level statement but the classes of
    other scripted agents and the ``SCRIPTED`` list itself (which grows with every new agent)."""
    source = SCRIPTED_FILE.read_text()
    kept = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and _agent_name(node) not in (None, *names):
            continue
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "SCRIPTED" for t in node.targets):
            continue
        kept.append(ast.get_source_segment(source, node) or "")
    return "\n".join(kept).encode()


def _agent_name(node: ast.ClassDef) -> str | None:
    """The registry name a class declares (``name = "most_copies"``), or None for a class that declares none."""
    for statement in node.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant):
            if any(getattr(target, "id", None) == "name" for target in statement.targets):
                return statement.value.value
    return None


def _version(name: str) -> str:
    try:
        return f"{name} {metadata.version(name)}"
    except metadata.PackageNotFoundError:
        return f"{name} absent"
