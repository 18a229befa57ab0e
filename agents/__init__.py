"""Policies for Snip Snap Snorem and a registry by name: ``agents.make("most_copies", seed=0)``.

>>> import agents
>>> sorted(agents.names())
['control', 'fewest_copies', 'most_copies', 'pimc', 'ppo', 'random', 'random_card']
"""

from __future__ import annotations

from .base import Policy
from .pimc import PIMC
from .scripted import Control, FewestCopies, MostCopies, RandomCard, RandomPolicy

_REGISTRY = {cls.name: cls for cls in (RandomPolicy, RandomCard, MostCopies, FewestCopies, Control, PIMC)}


def _make_ppo(**kwargs) -> Policy:
    import importlib.util

    missing = [name for name in ("torch", "sb3_contrib", "safetensors") if importlib.util.find_spec(name) is None]
    if missing:
        raise ModuleNotFoundError(f'the ppo agent needs {", ".join(missing)}: pip install -e ".[train]"')
    from .ppo import PPOPolicy  # needs the training extras; imported only when asked

    return PPOPolicy(**kwargs)


def names() -> list[str]:
    """The names ``make`` accepts."""
    return [*_REGISTRY, "ppo"]


def make(name: str, **kwargs) -> Policy:
    """A policy by name; keyword arguments go to its constructor (``seed``, and ``path`` for ``ppo``)."""
    if name == "ppo":
        return _make_ppo(**kwargs)
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(names())}")
    return _REGISTRY[name](**kwargs)


__all__ = ["Policy", "make", "names", "RandomPolicy", "MostCopies", "FewestCopies", "Control", "RandomCard", "PIMC"]
