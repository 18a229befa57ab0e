"""An agent of your own, named by a spec: ``package.module:attr`` or ``path/to/file.py:attr``.

The attribute may be a :class:`~agents.base.Policy` (or anything with ``act_batch(obs, mask)``), a callable
``obs -> action`` on the AEC env's observation dict ``{"observation", "action_mask"}``, a class of either (made with
``seed=`` where it takes one), or a factory of no required arguments (called with ``seed=`` where it takes one).
It is played through :class:`UserAgent`, which checks every action it returns and turns a failure into one line
naming the spec (:class:`AgentFailed`), and whose ``path`` is the file it came from: results are keyed by that
file's SHA-256, so a changed file is a new result. Importing the file runs its code (docs/trust.md).

>>> agent = load("agents.scripted:MostCopies", seed=0)
>>> agent.name, agent.path.endswith("scripted.py")
('agents.scripted:MostCopies', True)
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

import numpy as np

from snipsnap_env.engine import NUM_ACTIONS

from .base import Policy, check_masks, first_illegal


class AgentFailed(Exception):
    """An agent of a spec raised, or chose an illegal action, while it played: the job stops in one line."""


def is_spec(name: str) -> bool:
    """Whether ``name`` is ``<module or file.py>:<attr>`` rather than a registry name (``ppo:<file>`` and
    ``pimc:<samples>`` are the registry's own options, not specs)."""
    target, colon, attr = name.rpartition(":")
    if not colon or not target or not all(part.isidentifier() for part in attr.split(".")):
        return False
    return target.endswith(".py") or all(part.isidentifier() for part in target.split("."))


def load(spec: str, seed: int | None = None) -> "UserAgent":
    """The agent ``spec`` names, seeded, checked to play: a ValueError naming the spec for a file or module that
    does not exist or does not import, a missing attribute, something that is not an agent, or an agent that raises
    on its first observations or returns an illegal action there."""
    target, _, attr = spec.rpartition(":")
    if not is_spec(spec):
        raise ValueError(f"agent {spec!r}: an agent spec is package.module:attr or path/to/file.py:attr")
    module = _import(spec, target)
    thing = module
    for part in attr.split("."):
        if not hasattr(thing, part):
            raise ValueError(f"agent {spec!r}: {target} has no attribute {part!r}")
        thing = getattr(thing, part)
    agent = UserAgent(spec, _made(spec, thing, seed), getattr(module, "__file__", None))
    agent.check_plays()
    agent.reseed(seed)  # the check's draws do not shift the agent's play
    return agent


def _import(spec: str, target: str):
    if target.endswith(".py"):
        path = Path(target).expanduser()
        if not path.is_file():
            raise ValueError(f"agent {spec!r}: no such file {target}")
        digest = hashlib.sha256(str(path.resolve()).encode() + b"\0" + path.read_bytes()).hexdigest()[:16]
        name = f"snipsnap_user_agent_{path.stem}_{digest}"  # a changed (or other) file is imported anew, as its own
        if name in sys.modules:
            return sys.modules[name]
        found = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module  # dataclasses and pickling look a module up by name while it runs
        try:
            found.loader.exec_module(module)
        except BaseException as error:
            del sys.modules[name]
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            raise ValueError(f"agent {spec!r}: importing {target} raised {_said(error)}") from None
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        raise ValueError(f"agent {spec!r}: no module {error.name!r} (is it on the path? run from its folder, or pip "
                         "install it)") from None  # fmt: skip
    except Exception as error:
        raise ValueError(f"agent {spec!r}: importing {target} raised {_said(error)}") from None


def _made(spec: str, thing, seed):
    """The policy object ``thing`` stands for: itself (a copy), an instance of it, or what it makes."""
    if _plays(thing) and not inspect.isclass(thing) and not _is_factory(thing):
        return copy.deepcopy(thing) if isinstance(thing, Policy) or hasattr(thing, "act_batch") else thing
    if not callable(thing):
        raise ValueError(f"agent {spec!r}: {type(thing).__name__} is not an agent: give a Policy, a callable "
                         "obs -> action, a class of either, or a factory of no arguments")  # fmt: skip
    try:
        made = thing(**({"seed": seed} if _takes_seed(thing) else {}))
    except Exception as error:
        raise ValueError(f"agent {spec!r}: making it raised {_said(error)}") from None
    if not _plays(made) or inspect.isclass(made):
        raise ValueError(f"agent {spec!r}: it made a {type(made).__name__}, not an agent (a Policy or a callable "
                         "obs -> action)")  # fmt: skip
    return made


def _plays(thing) -> bool:
    return hasattr(thing, "act_batch") or callable(thing)


def _is_factory(thing) -> bool:
    """A callable with no required positional argument: it makes the agent (an ``obs -> action`` takes one)."""
    try:
        parameters = inspect.signature(thing).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: taken as a policy
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return not [p for p in parameters if p.default is p.empty and p.kind in positional]


def _takes_seed(thing) -> bool:
    try:
        parameters = inspect.signature(thing).parameters
    except (TypeError, ValueError):
        return False
    return "seed" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def _said(error: BaseException) -> str:
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


class UserAgent(Policy):
    """An agent of a spec, played as the project's own are: every action checked against the mask, a failure one
    line naming the spec (:class:`AgentFailed`); ``path``: its source file, which results are keyed by."""

    def __init__(self, spec: str, inner, path: str | None):
        super().__init__()
        self.name = self.spec = spec
        self.inner = inner
        self.path = path

    def reseed(self, seed: int | None) -> None:
        super().reseed(seed)
        if hasattr(self.inner, "reseed"):
            self.inner.reseed(seed)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        mask = check_masks(mask)
        obs = np.asarray(obs, dtype=np.float32)
        try:
            if hasattr(self.inner, "act_batch"):
                actions = np.asarray(self.inner.act_batch(obs, mask))
            else:
                masks = mask.astype(np.int8)
                rows = ({"observation": obs[i], "action_mask": masks[i]} for i in range(len(obs)))
                actions = np.array([self.inner(row) for row in rows])
        except AgentFailed:
            raise
        except Exception as error:
            raise AgentFailed(f"agent {self.spec} raised {_said(error)} at a lead") from None
        return self._checked(actions.reshape(-1) if actions.ndim else actions.reshape(1), mask)

    def _checked(self, actions: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if actions.shape != (len(mask),) or not (np.issubdtype(actions.dtype, np.integer) or _whole(actions)):
            raise AgentFailed(f"agent {self.spec} must return one whole-number action per observation: got "
                              f"{actions.dtype} of shape {actions.shape} for {len(mask)}")  # fmt: skip
        actions = actions.astype(np.int64)
        row = first_illegal(actions, mask)
        if row is not None:
            raise AgentFailed(f"agent {self.spec} chose the illegal action {int(actions[row])}; the legal actions "
                              f"were {np.flatnonzero(mask[row]).tolist()}")  # fmt: skip
        return actions

    def lead_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
        """The inner agent's own distribution, where it gives one (then its exact values need no assumption)."""
        give = getattr(self.inner, "lead_probabilities", None)
        if give is None:
            return None
        try:
            probs = give(np.asarray(obs, dtype=np.float32), check_masks(mask))
        except Exception as error:
            raise AgentFailed(f"agent {self.spec}: lead_probabilities raised {_said(error)}") from None
        if probs is None:
            return None
        probs = np.asarray(probs, dtype=float)
        if probs.shape != mask.shape or (probs < 0).any() or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-6):
            raise AgentFailed(f"agent {self.spec}: lead_probabilities must give each row a distribution over the "
                              f"{NUM_ACTIONS} actions (shape {mask.shape}), got shape {probs.shape}")  # fmt: skip
        if (probs[~np.asarray(mask, bool)] > 0).any():
            raise AgentFailed(f"agent {self.spec}: lead_probabilities gives an illegal action a chance")
        return probs

    def check_plays(self) -> None:
        """A ValueError naming the spec if the agent cannot play the first leads of a few deals at 3..8 players."""
        from snipsnap_env.batch import BatchEnv

        for players in (3, 4, 6, 8):
            obs, mask = BatchEnv(8, players, seed=players).reset()
            try:
                self.act_batch(obs, mask)
                self.lead_probabilities(obs, mask)
            except AgentFailed as error:
                raise ValueError(f"{error} (on its first observations, {players} players)") from None

    def __repr__(self) -> str:
        return f"UserAgent({self.spec!r})"


def as_policy(thing, name: str = "policy") -> Policy:
    """``thing`` as a policy the project plays: a :class:`~agents.base.Policy` as it is; anything else with
    ``act_batch``, or a callable ``obs -> action`` on the AEC observation dict, played through :class:`UserAgent`."""
    if isinstance(thing, Policy):
        return thing
    if not _plays(thing):
        raise ValueError(f"{name}: {type(thing).__name__} is not an agent (a Policy or a callable obs -> action)")
    return UserAgent(name, thing, None)


def _whole(actions: np.ndarray) -> bool:
    """Floats that are whole numbers (a network's argmax as float): taken as actions."""
    return np.issubdtype(actions.dtype, np.floating) and bool(np.all(actions == np.round(actions)))
