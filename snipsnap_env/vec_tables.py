"""The SB3 ``VecEnv`` plumbing of envs whose games all live in this process: the methods such an env answers as
one object (:class:`InProcessVecEnv`), actions checked as whole ranks (:func:`whole_actions`), and several
:class:`~snipsnap_env.vec_env.SnipSnapVecEnv` side by side as one VecEnv (:class:`TablesVecEnv`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from .engine import NUM_ACTIONS, IllegalActionError

if TYPE_CHECKING:
    from .vec_env import SnipSnapVecEnv


def whole_actions(actions, num_envs: int) -> np.ndarray:
    """``actions`` as ``num_envs`` int64 ranks; floats that are not whole numbers and bools are refused by name
    (cast, 2.5 would be played as 2 and True as 1)."""
    array = np.asarray(actions)
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise IllegalActionError(f"actions of dtype {array.dtype}; actions are whole numbers 0..{NUM_ACTIONS - 1}")
    if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array) & (array == np.round(array))):
        bad = array[~(np.isfinite(array) & (array == np.round(array)))].ravel()[0]
        raise IllegalActionError(f"action {bad!r} is no whole number; actions are whole numbers 0..{NUM_ACTIONS - 1}")
    return array.astype(np.int64).reshape(num_envs)


class InProcessVecEnv(VecEnv):
    """The VecEnv methods of an env whose games all live in this process, as one object (no sub-envs)."""

    def close(self) -> None:
        pass

    def get_attr(self, attr_name, indices=None):
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks":
            return list(self.action_masks()[self._indices(indices)])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._indices(indices))

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name)

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> np.ndarray:
        return np.arange(self.num_envs)[indices if indices is not None else slice(None)]


class TablesVecEnv(InProcessVecEnv):
    """Several :class:`SnipSnapVecEnv` (table sizes, say) as one VecEnv: their games side by side, in order.

    One policy then learns every table at once: the observation says how many players sit at the table.
    """

    def __init__(self, tables: Sequence[SnipSnapVecEnv]):
        self.tables = list(tables)
        spaces_ = {(t.observation_space.shape, t.observation_space.dtype) for t in self.tables}
        if not self.tables or len(spaces_) != 1:
            raise ValueError("TablesVecEnv needs one or more SnipSnapVecEnvs with the same observation space")
        self._bounds = np.cumsum([0] + [t.num_envs for t in self.tables])
        self.num_envs, self.render_mode = int(self._bounds[-1]), None
        super().__init__(self.num_envs, self.tables[0].observation_space, self.tables[0].action_space)

    def seed(self, seed: int | None = None):
        for table, stream in zip(self.tables, np.random.SeedSequence(seed).spawn(len(self.tables))):
            table.seed(int(stream.generate_state(1)[0]))
        return [seed] * self.num_envs

    def reset(self):
        return np.concatenate([table.reset() for table in self.tables])

    def step_async(self, actions: np.ndarray) -> None:
        actions = whole_actions(actions, self.num_envs)
        for table, start, stop in zip(self.tables, self._bounds[:-1], self._bounds[1:]):
            table.step_async(actions[start:stop])

    def step_wait(self):
        # each table's critic rollouts run on the pool's threads while the tables after it step (docs/speed.md)
        begun = [table._begin_step() for table in self.tables]
        steps = [table._finish_step(step) for table, step in zip(self.tables, begun)]
        obs, rewards, dones = (np.concatenate([step[i] for step in steps]) for i in range(3))
        return obs, rewards, dones, [info for step in steps for info in step[3]]

    def action_masks(self) -> np.ndarray:
        return np.concatenate([table.action_masks() for table in self.tables])
