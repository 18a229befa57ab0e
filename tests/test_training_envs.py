"""The single-seat gymnasium env and the SB3 VecEnv over the batched engine."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agents
import snipsnap_env  # noqa: F401 - registers the gymnasium id
from snipsnap_env.observation import OBS_DIM
from snipsnap_env.single_agent import SingleSeatEnv

pytest.importorskip("stable_baselines3")
from snipsnap_env.vec_env import SnipSnapVecEnv  # noqa: E402


@pytest.mark.parametrize("preset", ["scarne", "kids", "bicycle", "pairs"])
def test_single_seat_env_passes_gymnasium_check_env(preset):
    env = SingleSeatEnv(
        num_players=5, rules=preset, opponents=[agents.make("most_copies", seed=1), agents.make("random", seed=2)]
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*infinity.*")  # chip and pot features are unbounded on purpose
        # check_env steps random actions, illegal ones too: the env's warning that the episode ends is its answer
        warnings.filterwarnings("ignore", message=".*illegal action .*; episode ends")
        # an env made by its class has no spec: check_env says it cannot try other render modes (gymnasium.make can)
        warnings.filterwarnings("ignore", message=".*Not able to test alternative render modes")
        check_env(env)


def test_gymnasium_make_and_a_whole_episode():
    env = gymnasium.make("snipsnap/SingleSeat-v0", num_players=6)
    obs, info = env.reset(seed=3)
    assert obs.shape == (OBS_DIM,)
    total, done = 0.0, False
    while not done:
        mask = env.unwrapped.action_masks()
        assert mask.sum() >= 2  # only real choices reach the learner
        obs, reward, done, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
        total += reward
    assert total == info["chips"][info["learner_seat"]] - 100


def test_an_illegal_action_ends_the_episode():
    env = SingleSeatEnv(num_players=4)
    env.reset(seed=1)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.warns(UserWarning, match="illegal action"):
        _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1 and info["illegal_action"]
    with pytest.raises(RuntimeError, match="the episode is over; call reset"):
        env.step(0)


def test_single_seat_env_bad_input():
    with pytest.raises(ValueError, match="learner_seat got 6"):
        SingleSeatEnv(num_players=6, learner_seat=6)
    with pytest.raises(ValueError, match="opponents must be None or a non-empty sequence"):
        SingleSeatEnv(opponents=[])


def test_vec_env_rewards_are_the_learners_chips():
    venv = SnipSnapVecEnv(64, 4, rules="parlett", opponents=[agents.make("control", seed=1)], seed=0)
    obs = venv.reset()
    learner = agents.make("most_copies", seed=2)
    episode = np.zeros(64)
    finished = 0
    for _ in range(100):
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.sum(axis=1).min() >= 2
        obs, rewards, dones, infos = venv.step(learner.act_batch(obs, masks))
        episode += rewards
        for b in np.flatnonzero(dones):
            assert episode[b] == pytest.approx(infos[b]["deal_score"])
            episode[b] = 0.0
            finished += 1
    assert finished > 100


def test_vec_env_is_deterministic_for_a_seed():
    def run():
        venv = SnipSnapVecEnv(16, 6, seed=5)
        obs = venv.reset()
        out = []
        for _ in range(20):
            obs, rewards, dones, _ = venv.step(venv.action_masks()[:, :13].argmax(axis=1))
            out.append((obs.copy(), rewards.copy(), dones.copy()))
        return out

    for (o1, r1, d1), (o2, r2, d2) in zip(run(), run()):
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)
