"""Policies for Snip Snap Snorem and a registry by name: ``agents.make("most_copies", seed=0)``.

>>> import agents
>>> agents.names()[:4]
['random', 'random_card', 'most_copies', 'fewest_copies']
"""

from __future__ import annotations

from .base import Policy
from .pimc import PIMC
from .scripted import SCRIPTED, Control, FewestCopies, MostCopies, RandomCard, RandomPolicy
from .spec import is_spec
from .spec import load as load_spec

_REGISTRY = {cls.name: cls for cls in (*SCRIPTED, PIMC)}  # a new scripted agent: agents.scripted.SCRIPTED


def _make_ppo(**kwargs) -> Policy:
    """The shipped model (``agents.ppo.SHIPPED_MODEL``), or another model file with ``path=``: greedy play runs
    on numpy (the core install); sampling (``deterministic=False``) uses torch where it is installed."""
    from .ppo import PPOPolicy  # imported only when asked

    return PPOPolicy(**kwargs)


def _shipped(file: str, **kwargs) -> Policy:
    from pathlib import Path

    return _make_ppo(path=Path(__file__).parent / "models" / file, **kwargs)


def _make_ppo_scratch(**kwargs) -> Policy:
    """The shipped model that PPO learned from scratch, with no teacher (``train_ppo --critic rollouts``)."""
    return _shipped("ppo_scratch_scarne.zip", **kwargs)


def _make_ppo_distilled(**kwargs) -> Policy:
    """The shipped model distilled from the search player (``train_ppo --teacher pimc:256``)."""
    return _shipped("ppo_distilled_scarne.zip", **kwargs)


_LEARNED = {
    "ppo": _make_ppo,
    "ppo_distilled": _make_ppo_distilled,
    "ppo_scratch": _make_ppo_scratch,
}


def names() -> list[str]:
    """The names ``make`` accepts: the scripted agents, the search, the learned."""
    return [*_REGISTRY, *_LEARNED]


def learned() -> list[str]:
    """The names of the learned agents (a network each; ``make`` loads it)."""
    return list(_LEARNED)


def make(name: str, **kwargs) -> Policy:
    """A policy by name; keyword arguments go to its constructor (``seed``, and ``path`` for ``ppo``). An agent of
    your own by its spec, ``package.module:attr`` or ``path/to/file.py:attr`` (:mod:`agents.spec`; ``seed`` only)."""
    if is_spec(name) and name.rpartition(":")[0] not in names():
        unknown = set(kwargs) - {"seed"}
        if unknown:
            raise ValueError(f"agent {name!r}: an agent spec takes only seed=, not {', '.join(sorted(unknown))}")
        return load_spec(name, seed=kwargs.get("seed"))
    if name in _LEARNED:
        return _LEARNED[name](**kwargs)
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(names())}")
    return _REGISTRY[name](**kwargs)


__all__ = [
    "Policy", "make", "names", "learned", "RandomPolicy", "MostCopies", "FewestCopies", "Control", "RandomCard", "PIMC",
]  # fmt: skip
