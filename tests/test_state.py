"""The global state for critics (PettingZoo's ``state()``): every hand, exactly the engine's, from the AEC env
and from the batched engine alike; no observation ever holds another seat's hidden cards; and an actor-critic
whose critic reads the state has an actor that does not."""

from __future__ import annotations

import numpy as np
import pytest

import snipsnap_env
from snipsnap_env.cards import CARDS_PER_RANK, NUM_CARDS, NUM_RANKS
from snipsnap_env.observation import OBS_DIM, encode
from snipsnap_env.rules import PRESETS
from snipsnap_env.state import HANDS_DIM, STATE_DIM, hands


@pytest.mark.parametrize("num_players", range(3, 9))
@pytest.mark.parametrize("rules", sorted(PRESETS))
def test_the_state_is_every_hand_and_seat_zeros_view_at_every_step(num_players, rules):
    env = snipsnap_env.env(num_players=num_players, rules=rules)
    env.reset(seed=num_players)
    assert env.state_space.shape == (STATE_DIM,)
    for agent in env.agent_iter():
        state = env.state()
        deal = env.unwrapped.match.deal
        assert env.state_space.contains(state)
        block = state[:HANDS_DIM].reshape(8, NUM_RANKS) * CARDS_PER_RANK
        for seat in range(num_players):
            assert block[seat].tolist() == [deal.count(seat, rank) for rank in range(NUM_RANKS)]
        assert not block[num_players:].any()
        assert np.array_equal(state[HANDS_DIM:], encode(env.unwrapped.match, 0))
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))


def redealt(owners: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
    """The same deal for ``seat`` (its own cards) with every other card dealt anew among the other seats,
    each keeping its hand size."""
    others = np.flatnonzero(owners != seat)
    shuffled = owners.copy()
    shuffled[others] = rng.permutation(owners[others])
    return shuffled


def hands_of(owners: np.ndarray, n: int) -> list[list[int]]:
    return [np.flatnonzero(owners == s).tolist() for s in range(n)]


@pytest.mark.parametrize("num_players", [3, 5, 8])
def test_no_observation_holds_another_seats_hidden_cards(num_players):
    rng = np.random.default_rng(num_players)
    for _ in range(20):
        owners = np.arange(NUM_CARDS) % num_players
        rng.shuffle(owners)
        seat = int(rng.integers(num_players))
        views, states = [], []
        for deal in (owners, redealt(owners, seat, rng)):
            env = snipsnap_env.raw_env(num_players=num_players)
            env.reset(seed=0, options={"hands": hands_of(deal, num_players), "dealer": 0})
            views.append(env.observe(f"player_{seat}")["observation"])
            states.append(env.state())
        assert np.array_equal(views[0], views[1])  # what the seat sees does not depend on the others' cards
        assert not np.array_equal(states[0], states[1]) or num_players == 3 and not (owners != seat).any()


def test_the_batched_engine_gives_the_same_hands_relative_to_the_learner():
    pytest.importorskip("stable_baselines3")
    from snipsnap_env.vec_env import SnipSnapVecEnv

    env = SnipSnapVecEnv(64, 5, critic_state=True, seed=3)
    obs = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        assert obs.shape == (64, OBS_DIM + HANDS_DIM) and all(env.observation_space.contains(row) for row in obs)
        block = obs[:, OBS_DIM:].reshape(64, 8, NUM_RANKS) * CARDS_PER_RANK
        assert np.array_equal(block[:, 0], obs[:, :NUM_RANKS] * CARDS_PER_RANK)  # slot 0: the learner's own hand
        played = obs[:, NUM_RANKS : 2 * NUM_RANKS] * CARDS_PER_RANK
        assert np.allclose(block.sum(axis=1) + played, CARDS_PER_RANK)  # every card is in a hand or played
        assert np.array_equal(obs[:, OBS_DIM:], hands(env.batch.games.holding, env.learner_seat))
        mask = env.action_masks()
        obs, *_ = env.step(np.where(mask, rng.random(mask.shape), -1).argmax(axis=1))


def test_the_actor_reads_the_observation_alone_and_the_critic_the_hidden_hands():
    """Re-deal the other seats' hidden cards (same public information and own hand): the actor's action
    probabilities stay identical to the last bit and the critic's value changes."""
    pytest.importorskip("sb3_contrib")
    import torch
    from gymnasium import spaces

    from agents.rank_policy import RankSharedPolicy
    from snipsnap_env.vec_env import SnipSnapVecEnv

    env = SnipSnapVecEnv(256, 4, critic_state=True, seed=1)
    obs = env.reset()
    space = env.observation_space
    torch.manual_seed(0)
    policy = RankSharedPolicy(space, spaces.Discrete(14), lambda _: 1e-3, net_arch=[64, 64])
    rng = np.random.default_rng(0)
    other = obs.copy()
    for row in range(len(obs)):  # deal the cards of seats 1..3 anew among them, keeping each hand's size
        block = other[row, OBS_DIM:].reshape(8, NUM_RANKS) * CARDS_PER_RANK
        cards = np.repeat(np.tile(np.arange(NUM_RANKS), 3), block[1:4].astype(int).ravel())
        sizes = block[1:4].sum(axis=1).astype(int)
        dealt = np.split(rng.permutation(cards), np.cumsum(sizes)[:-1])
        block[1:4] = [np.bincount(part, minlength=NUM_RANKS) for part in dealt]
        other[row, OBS_DIM:] = (block / CARDS_PER_RANK).ravel()
    masks = env.action_masks()
    with torch.no_grad():
        probs = [
            policy.get_distribution(torch.as_tensor(o), action_masks=masks).distribution.probs for o in (obs, other)
        ]
        values = [policy.predict_values(torch.as_tensor(o)) for o in (obs, other)]
        alone = policy.get_distribution(torch.as_tensor(obs[:, :OBS_DIM]), action_masks=masks).distribution.probs
    assert torch.equal(probs[0], probs[1]) and torch.equal(probs[0], alone)  # the actor never sees the state
    changed = (values[0] != values[1]).float().mean()
    assert changed > 0.9  # the critic does


def test_fine_tuning_starts_from_the_model_files_actor_with_a_fresh_state_critic():
    pytest.importorskip("sb3_contrib")
    import torch

    import agents
    from agents.ppo import SHIPPED_MODEL
    from snipsnap_env.batch import BatchEnv
    from train.learn import run as training

    args = training.Args(
        num_players=4, teacher="", total_timesteps=256, num_envs=8, init_from=str(SHIPPED_MODEL), critic="state"
    )
    model = training.new_model(args, training.make_vec_env(args, 0))
    obs, mask = BatchEnv(512, 4, seed=2).reset()
    model.policy.set_training_mode(False)  # as it plays (the update scores held ranks only: test_rank_policy.py)
    with torch.no_grad():
        mine = model.policy.get_distribution(torch.as_tensor(obs), action_masks=mask.astype(bool)).distribution.probs
    assert np.array_equal(mine.numpy(), agents.make("ppo").probabilities(obs, mask))
    assert model.policy.observation_space.shape == (OBS_DIM + HANDS_DIM,)
    with pytest.raises(ValueError, match="holds a rank_shared policy with head"):
        training.Args(teacher="", total_timesteps=256, init_from=str(SHIPPED_MODEL), rank_head=(8, 8))
