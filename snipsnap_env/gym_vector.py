"""``snipsnap/SingleSeat-v0`` as a gymnasium vector env over the batched engine: many tables in one process.

    envs = gymnasium.make_vec("snipsnap/SingleSeat-v0", num_envs=64, vectorization_mode="vector_entry_point",
                              num_players=4, opponents=[agents.make("most_copies")], reward="lead_advantage")

The same episodes as ``SyncVectorEnv`` of :class:`snipsnap_env.single_agent.SingleSeatEnv` — the learner
holds one seat, the others and every forced turn are played between its choices — stepped together on the
compiled kernel (:class:`snipsnap_env.vec_env.SnipSnapVecEnv`), tens of times faster than one Python env per
table. Opponents are policies with ``act_batch(obs, mask)`` (any ``agents.Policy``), or None for uniformly
random leads. Autoreset is gymnasium's ``SAME_STEP``: a step that ends a deal returns the next deal's first
observation, with no ``final_obs`` (episodes only terminate, so nothing bootstraps from it); ``infos`` carry
``deal_score`` (the learner's chips for the finished deal) where a deal ended. ``action_masks()`` gives the
learner's legal actions, (num_envs, 14) bool. One difference from ``SingleSeatEnv``: an illegal action there ends
its episode with reward −1; here it raises a ValueError naming the tables and steps none of them (one batched
step cannot end some tables early), and a step before ``reset()`` is an ``EnvOrderError``.

It steps SB3's VecEnv underneath, so it needs the training extras (stable-baselines3).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .aec import check_seed
from .engine import NUM_ACTIONS
from .observation import HIGH, LOW, OBS_DIM
from .training_signal import DEFAULT_ROLLOUTS


class SingleSeatVectorEnv(VectorEnv):
    """``num_envs`` single-seat tables on one batched engine (see the module's docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 8,
        num_players: int = 6,
        rules="scarne",
        opponents=None,
        learner_seat: int | None = None,
        reward: str = "chips",
        reward_rollouts: int = DEFAULT_ROLLOUTS,
        seed: int | None = None,
    ):
        try:
            from .vec_env import SnipSnapVecEnv
        except ImportError as error:  # stable-baselines3 is a training extra
            from .install import install_hint

            raise ImportError(
                f"the vector env steps SB3's VecEnv: {error}. Install the training extras: {install_hint('train')}"
            ) from error
        self.tables = SnipSnapVecEnv(
            num_envs, num_players, rules=rules, opponents=opponents, learner_seat=learner_seat, seed=seed,
            reward=reward, reward_rollouts=reward_rollouts,
        )  # fmt: skip
        self.num_envs = num_envs
        self.single_observation_space = spaces.Box(LOW, HIGH, shape=(OBS_DIM,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal every table anew; ``seed`` restarts every stream (deals, seats, opponents, the signal)."""
        seed = check_seed(seed)  # 1.5 or True: refused by name, as the AEC env refuses them
        if seed is not None:
            self.tables.seed(seed)
        return self.tables.reset(), {}

    def step(self, actions):
        obs, rewards, dones, step_infos = self.tables.step(np.asarray(actions))
        infos: dict = {}
        ended = np.flatnonzero(dones)
        if ended.size:
            scores = np.zeros(self.num_envs)
            scores[ended] = [step_infos[b]["deal_score"] for b in ended]
            infos = {"deal_score": scores, "_deal_score": dones.copy()}
        return obs, rewards, dones, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, 14) bool: the learner's legal actions at every table."""
        return self.tables.action_masks()
