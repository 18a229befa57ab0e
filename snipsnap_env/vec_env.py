"""An SB3 ``VecEnv`` over :class:`BatchEnv`: one learner seat per game, opponents evaluated in batch.

Needs stable-baselines3 (the training extras). Each of the ``num_envs`` games is a single-seat episode
as in :class:`snipsnap_env.single_agent.SingleSeatEnv`: the learner's seat is drawn per episode (or
fixed), each other seat draws a policy from the pool per episode, the other seats and every forced turn
are played between the learner's choices, and rewards are the learner's chips. ``action_masks()`` (and
``env_method("action_masks")``) give MaskablePPO the learner's legal actions. Episodes end with the deal;
a deal that ends before the learner chooses is not an episode of the learner's, and its chips are dropped.
Infos carry ``deal_score`` (the learner's chips for the finished deal) and no ``terminal_observation``:
episodes only terminate, never truncate, so SB3 never bootstraps from it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from .batch import BatchEnv
from .engine import NUM_ACTIONS
from .state import HANDS_DIM, hands, with_hands_bounds


class SnipSnapVecEnv(VecEnv):
    """``num_envs`` single-seat games on one :class:`BatchEnv`.

    ``opponents``: policies with ``act_batch(obs, mask)`` (any ``agents.Policy``); None means uniformly
    random legal actions drawn from this env's generator.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 6,
        rules="scarne",
        opponents: Sequence | None = None,
        learner_seat: int | None = None,
        seed: int | None = None,
        critic_state: bool = False,
    ):
        self.batch = BatchEnv(num_envs, num_players, rules=rules, seed=seed)
        if learner_seat is not None and not (isinstance(learner_seat, int) and 0 <= learner_seat < num_players):
            raise ValueError(f"learner_seat got {learner_seat!r}; allowed: None or a seat from 0 to {num_players - 1}")
        if opponents is not None and (len(opponents) == 0 or not all(hasattr(p, "act_batch") for p in opponents)):
            raise ValueError("opponents must be None or a non-empty sequence of policies with act_batch(obs, mask)")
        self.opponents = list(opponents) if opponents is not None else None
        self.fixed_seat = learner_seat
        self.critic_state = bool(critic_state)
        # with critic_state: the observation, then every hand relative to the learner (snipsnap_env.state)
        low, high = with_hands_bounds(HANDS_DIM if self.critic_state else 0)
        observation_space = spaces.Box(low, high, dtype=np.float32)
        self.num_envs, self.render_mode = num_envs, None  # read by VecEnv.__init__ through get_attr
        super().__init__(num_envs, observation_space, spaces.Discrete(NUM_ACTIONS))
        self.learner_seat = np.zeros(num_envs, np.int64)
        self._seat_policy = np.zeros((num_envs, num_players), np.int64)  # index into the pool per seat
        self._carry = np.zeros(num_envs)  # the learner's chips from before its first choice of an episode
        self._actions = np.zeros(num_envs, np.int64)
        self._obs = self._mask = None
        self._seed(seed, opponents=seed is not None)  # unseeded: the opponents keep the streams they came with

    # ---- VecEnv ---------------------------------------------------------------------------------------
    def seed(self, seed: int | None = None):
        """Restart every random stream of the env from ``seed``: the deals, the learner's seats, which
        opponent sits where, and each opponent policy's own generator (``reseed``); the next ``reset``
        starts from it, so two rollouts after the same ``seed`` are the same rollout."""
        self._seed(seed, opponents=True)
        return [seed] * self.num_envs

    def _seed(self, seed: int | None, opponents: bool) -> None:
        streams = np.random.SeedSequence(seed).spawn(2 + len(self.opponents or ()))
        self.batch.seed(int(streams[0].generate_state(1)[0]))
        self.rng = np.random.default_rng(streams[1])
        if opponents:
            for policy, stream in zip(self.opponents or (), streams[2:]):
                if hasattr(policy, "reseed"):
                    policy.reseed(int(stream.generate_state(1)[0]))

    def reset(self):
        obs, mask = self.batch.reset()
        self._new_episodes(np.arange(self.num_envs))
        self._carry[:] = 0.0
        done = np.ones(self.num_envs, bool)  # nothing of this reset belongs to an earlier transition
        self._obs, self._mask = self._play_others(
            obs, mask, np.zeros(self.num_envs), done, [{} for _ in range(self.num_envs)]
        )
        return self._with_state(self._obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(self.num_envs)

    def step_wait(self):
        rewards = self._carry.copy()
        self._carry[:] = 0.0
        dones = np.zeros(self.num_envs, bool)
        infos = [{} for _ in range(self.num_envs)]
        step = self.batch.step(self._actions)
        self._collect(step, rewards, dones, infos)
        self._obs, self._mask = self._play_others(step[0], step[1], rewards, dones, infos)
        return self._with_state(self._obs), rewards.astype(np.float32), dones, infos

    def _with_state(self, obs: np.ndarray) -> np.ndarray:
        """``obs``, followed with ``critic_state`` by every hand relative to the learner's seat: what a critic
        that sees the whole deal reads (an actor reads the first OBS_DIM columns only)."""
        if not self.critic_state:
            return obs
        return np.concatenate([obs, hands(self.batch.games.holding, self.learner_seat)], axis=1)

    def action_masks(self) -> np.ndarray:
        """(num_envs, 14) bool: the learner's legal actions in each game."""
        return self._mask.astype(bool)

    # ---- playing the other seats ----------------------------------------------------------------------
    def _play_others(self, obs, mask, rewards, dones, infos):
        """Step every game where another seat is to choose, until the learner chooses everywhere."""
        while True:
            others = self.batch.to_act != self.learner_seat
            if not others.any():
                return obs, mask
            actions = self._opponent_actions(obs, mask, others)
            step = self.batch.step(actions, active=others)
            self._collect(step, rewards, dones, infos)
            obs, mask = step[0], step[1]

    def _opponent_actions(self, obs, mask, others) -> np.ndarray:
        actions = np.zeros(self.num_envs, np.int64)
        games = np.flatnonzero(others)
        if self.opponents is None:
            noise = self.rng.random((len(games), NUM_ACTIONS))
            actions[games] = np.where(mask[games] > 0, noise, -1.0).argmax(axis=1)
            return actions
        chosen = self._seat_policy[games, self.batch.to_act[games]]
        for index, policy in enumerate(self.opponents):
            sel = games[chosen == index]
            if sel.size:
                actions[sel] = policy.act_batch(obs[sel], mask[sel])
        return actions

    def _collect(self, step, rewards, dones, infos) -> None:
        """Book the learner's rewards of one BatchEnv step to its open transition or to the next episode."""
        _, _, batch_rewards, ended, batch_infos = step
        mine = batch_rewards[np.arange(self.num_envs), self.learner_seat]
        open_ = ~dones
        rewards[open_] += mine[open_]
        self._carry[~open_] += mine[~open_]
        for b in np.flatnonzero(ended & open_):  # the learner's episode ends with its deal
            infos[b]["deal_score"] = float(batch_infos["deal_score"][b, self.learner_seat[b]])
            infos[b]["learner_seat"] = int(self.learner_seat[b])
        self._carry[ended & ~open_] = 0.0  # a deal the learner never chose in: not its episode
        dones |= ended
        self._new_episodes(np.flatnonzero(ended))

    def _new_episodes(self, games: np.ndarray) -> None:
        n = self.batch.num_players
        if self.fixed_seat is None:
            self.learner_seat[games] = self.rng.integers(n, size=len(games))
        else:
            self.learner_seat[games] = self.fixed_seat
        if self.opponents is not None:
            self._seat_policy[games] = self.rng.integers(len(self.opponents), size=(len(games), n))

    # ---- the rest of the VecEnv interface -------------------------------------------------------------
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
