"""Agents choose only legal actions, for every preset and table size, in both the AEC env and the batch."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import play_aec_game

import agents
from snipsnap_env.batch import BatchEnv
from snipsnap_env.observation import OBS_DIM
from snipsnap_env.rules import PRESETS

SCRIPTED = ["random", "random_card", "most_copies", "fewest_copies", "control"]


@pytest.mark.parametrize("name", SCRIPTED)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_scripted_agents_play_legal_moves_in_the_aec_env(name, preset):
    for num_players in range(3, 9):
        play_aec_game(agents.make(name, seed=num_players), num_players, preset, seed=num_players)


@pytest.mark.parametrize("name", SCRIPTED)
def test_scripted_agents_play_legal_moves_in_the_batch(name):
    for num_players in (3, 6, 8):
        env = BatchEnv(512, num_players, rules="pairs", seed=1)
        obs, mask = env.reset()
        policy = agents.make(name, seed=2)
        for _ in range(40):
            actions = policy.act_batch(obs, mask)
            assert mask[np.arange(512), actions].all()
            obs, mask, *_ = env.step(actions)


def test_heuristics_pick_what_they_say():
    obs = np.zeros((1, OBS_DIM), np.float32)
    obs[0, [0, 4, 9]] = [0.25, 0.75, 0.5]  # one ace, three fives, two tens
    mask = np.zeros((1, 14), np.int8)
    mask[0, [0, 4, 9]] = 1
    assert agents.make("most_copies", seed=0).act_batch(obs, mask)[0] == 4
    assert agents.make("fewest_copies", seed=0).act_batch(obs, mask)[0] == 0
    assert agents.make("control", seed=0).act_batch(obs, mask)[0] == 4
    follow = np.zeros((1, 14), np.int8)
    follow[0, 13] = 1
    for name in SCRIPTED:
        assert agents.make(name, seed=0).act_batch(obs, follow)[0] == 13


def test_control_takes_a_lead_that_wins_at_once():
    obs = np.zeros((1, OBS_DIM), np.float32)
    obs[0, 7] = 0.25  # holding a single eight: leading it empties the hand
    mask = np.zeros((1, 14), np.int8)
    mask[0, 7] = 1
    assert agents.make("control").act_batch(obs, mask)[0] == 7


def test_policies_are_seeded_and_leave_global_state_alone():
    obs = np.zeros((256, OBS_DIM), np.float32)
    obs[:, :13] = 0.25
    mask = np.zeros((256, 14), np.int8)
    mask[:, :13] = 1
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    first = agents.make("random", seed=5).act_batch(obs, mask)
    again = agents.make("random", seed=5).act_batch(obs, mask)
    assert np.array_equal(first, again)
    assert np.array_equal(np.random.get_state()[1], before)
    assert len(set(first.tolist())) > 5


def test_unknown_agent_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown agent 'smart'; known agents: random, random_card, most_copies"):
        agents.make("smart")


def test_an_empty_mask_is_a_clear_error():
    with pytest.raises(ValueError, match=r"rows \[1\] of the action mask allow no action"):
        agents.make("random").act_batch(np.zeros((2, OBS_DIM), np.float32), np.array([[1] + [0] * 13, [0] * 14]))


def test_the_learned_policys_greedy_fast_path_decides_as_its_probabilities_do():
    """The most probable action; among ranks the observation cannot tell apart (equal up to torch's rounding),
    each about equally often."""
    pytest.importorskip("sb3_contrib")
    player = agents.make("ppo", seed=0)
    for n in (3, 6, 8):
        obs, mask = BatchEnv(2048, n, seed=n).reset()
        probs = player.probabilities(obs, mask)
        actions = player.act_batch(obs, mask)
        chosen = probs[np.arange(len(obs)), actions]
        assert np.all(chosen >= probs.max(axis=1) * (1 - 1e-5))
        best = probs >= probs.max(axis=1, keepdims=True) * (1 - 1e-5)
        ties = best.sum(axis=1)
        lowest = best.argmax(axis=1) == actions
        assert abs(lowest[ties > 1].mean() - (1 / ties[ties > 1]).mean()) < 0.05  # the lowest as often as any other
