"""PettingZoo's standard wrappers (terminate on an illegal move, assert bounds, enforce order), made cheap.

PettingZoo's ``BaseWrapper`` finds ``agent_selection``, ``terminations`` and the other bookkeeping
attributes through ``__getattr__``, which Python calls only after a failed ordinary lookup, once per
wrapper layer. For a game whose turn costs a few microseconds that forwarding costs more than the game,
so these subclasses read those attributes straight from the unwrapped env. Behaviour, class hierarchy
(``isinstance`` checks) and error messages stay PettingZoo's own.
"""

from __future__ import annotations

from pettingzoo.utils import wrappers

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
    """PettingZoo's TerminateIllegalWrapper with direct attribute reads."""


class AssertOutOfBoundsWrapper(_DirectAttributes, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper with direct attribute reads."""


class OrderEnforcingWrapper(_DirectAttributes, wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper with direct attribute reads."""


for _name in _FORWARDED:
    setattr(TerminateIllegalWrapper, _name, _forward(_name, check_reset=False))
    setattr(AssertOutOfBoundsWrapper, _name, _forward(_name, check_reset=False))
    setattr(OrderEnforcingWrapper, _name, _forward(_name, check_reset=True))
