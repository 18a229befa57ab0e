"""PettingZoo's standard wrappers (terminate on an illegal move, assert bounds, enforce order), made cheap.

PettingZoo's ``BaseWrapper`` finds ``agent_selection``, ``terminations`` and the other bookkeeping
attributes through ``__getattr__``, which Python calls only after a failed ordinary lookup, once per
wrapper layer. For a game whose turn costs a few microseconds that forwarding costs more than the game,
so these subclasses read those attributes straight from the unwrapped env. Behaviour, class hierarchy
(``isinstance`` checks) and error messages stay PettingZoo's own.
"""

from __future__ import annotations

import numpy as np
from pettingzoo.utils import wrappers

from .engine import NUM_ACTIONS, EnvOrderError, as_action

_FORWARDED = (
    "agent_selection",
    "agents",
    "possible_agents",
    "num_agents",
    "max_num_agents",
    "terminations",
    "truncations",
    "rewards",
    "infos",
    "_cumulative_rewards",
)
# OrderEnforcingWrapper refuses these before reset(); falling back to its __getattr__ keeps its message.
_NEED_RESET = {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}


def _forward(name: str, check_reset: bool) -> property:
    if check_reset and name in _NEED_RESET:

        def read(self):
            if not self._has_reset:
                raise AttributeError(name)  # Python then asks the wrapper's __getattr__, which explains
            return getattr(self._raw, name)
    else:

        def read(self):
            return getattr(self._raw, name)

    return property(read, doc=f"``{name}`` of the unwrapped env.")


class _DirectAttributes:
    """Mixin: remembers the unwrapped env and reads the bookkeeping attributes from it."""

    def __init__(self, env, *args, **kwargs):
        super().__init__(env, *args, **kwargs)
        self._raw = self.env.unwrapped


class TerminateIllegalWrapper(_DirectAttributes, wrappers.TerminateIllegalWrapper):
    """PettingZoo's TerminateIllegalWrapper with direct attribute reads; a step that comes without an
    observation first reads the engine's mask instead of encoding a whole observation for it."""

    def step(self, action) -> None:
        raw = self._raw
        agent = raw.agent_selection
        if self._prev_obs is None and agent in raw.agents:
            self._prev_obs = {"action_mask": raw.mask(agent)}
            self._prev_info = raw.infos.get(agent, {})
        live = not (raw.terminations.get(agent, True) or raw.truncations.get(agent, True))
        if live and not self._terminated and type(action) is not bool and self._legal(action):
            # the common case, PettingZoo's outcome without its layers of lookups: a legal move, played
            self._prev_obs = self._prev_info = None
            raw.step(action)
            return
        super().step(action)

    def _legal(self, action) -> bool:
        if not isinstance(action, (int, np.integer)) or not 0 <= action < NUM_ACTIONS:
            return False
        return bool(self._prev_obs["action_mask"][action])


class AssertOutOfBoundsWrapper(_DirectAttributes, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper with direct attribute reads. An action id is checked by a
    range test (gymnasium's ``Discrete.contains`` costs more than a turn); anything else, PettingZoo's way.
    A bool or a float is refused by name (the engine's message): it would pass for the number it equals."""

    def step(self, action) -> None:
        if action is not None:  # None: the step a finished agent takes
            action = as_action(action)  # here, before PettingZoo's wrapper indexes the mask with it
        if type(action) is int or isinstance(action, np.integer):
            assert 0 <= action < NUM_ACTIONS, "action is not in action space"
            wrappers.BaseWrapper.step(self, action)
            return
        super().step(action)


class OrderEnforcingWrapper(_DirectAttributes, wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper with direct attribute reads; ``step`` and ``observe`` before
    ``reset``, and ``step`` after every agent has finished, raise :class:`~snipsnap_env.engine.EnvOrderError`
    as ``raw_env`` does."""

    def step(self, action) -> None:
        if not self._has_reset:
            raise EnvOrderError("reset() must be called before step()")
        if not self._raw.agents:  # PettingZoo would only log a warning and do nothing
            raise EnvOrderError("the game is over: every agent has finished; call reset() to play again")
        super().step(action)

    def observe(self, agent):
        if not self._has_reset:
            raise EnvOrderError("reset() must be called before observe()")
        return super().observe(agent)

    def state(self):
        if not self._has_reset:
            raise EnvOrderError("reset() must be called before state()")
        return super().state()


for _name in _FORWARDED:
    setattr(TerminateIllegalWrapper, _name, _forward(_name, check_reset=False))
    setattr(AssertOutOfBoundsWrapper, _name, _forward(_name, check_reset=False))
    setattr(OrderEnforcingWrapper, _name, _forward(_name, check_reset=True))
