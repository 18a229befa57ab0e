"""Parity: the batched engine (both backends) and the single-game engine, given the same hands, dealers
and lead choices, produce the same chips, winners, turn counts and observations."""

from __future__ import annotations

import numpy as np
import pytest

from snipsnap_env import batch_kernels
from snipsnap_env.batch import BatchEnv, owners_from_hands
from snipsnap_env.cards import deal_pack, shuffled_pack
from snipsnap_env.engine import Match
from snipsnap_env.observation import encode
from snipsnap_env.rules import PRESETS, make_rules

BACKENDS = ["numpy"] + (["numba"] if batch_kernels.numba is not None else [])
GAMES = 150
MAX_DECISIONS = 64


def random_deals(num_players: int, seed: int):
    rng = np.random.default_rng(seed)
    dealers = rng.integers(num_players, size=GAMES)
    hands = [deal_pack(shuffled_pack(rng), num_players, int(d)) for d in dealers]
    choices = rng.random((GAMES, MAX_DECISIONS))  # the i-th real choice of game b picks by choices[b, i]
    return hands, dealers, choices


def pick(legal: list[int], u: float) -> int:
    return legal[int(u * len(legal))]


def play_single(preset, num_players, hands, dealer, choices):
    match = Match(make_rules(preset), num_players)
    match.start(np.random.default_rng(0), hands=hands, dealer=int(dealer))
    decisions, observations = 0, []
    while not match.over:
        legal = match.deal.legal_actions()
        if len(legal) == 1:
            match.apply(legal[0])
            continue
        observations.append(encode(match, match.deal.to_act))
        match.apply(pick(legal, choices[decisions]))
        decisions += 1
    start = match.rules.starting_chips if match.rules.chips else 0
    return np.array(match.score, float) - start, match.deal.winner, match.deal.turns, observations


def play_batch(preset, num_players, hands, dealers, choices, backend):
    env = BatchEnv(GAMES, num_players, rules=preset, backend=backend)
    obs, mask = env.reset(owners=np.stack([owners_from_hands(h) for h in hands]), dealers=dealers)
    finished = np.zeros(GAMES, bool)
    decisions = np.zeros(GAMES, int)
    scores, winners, turns = np.zeros((GAMES, num_players)), np.zeros(GAMES, int), np.zeros(GAMES, int)
    observations = [[] for _ in range(GAMES)]
    while not finished.all():
        actions = np.zeros(GAMES, np.int64)
        for b in np.flatnonzero(~finished):
            observations[b].append(obs[b].copy())
            actions[b] = pick(list(np.flatnonzero(mask[b])), choices[b, decisions[b]])
            decisions[b] += 1
        obs, mask, _, dones, infos = env.step(actions, active=~finished)
        for b in np.flatnonzero(dones & ~finished):
            scores[b], winners[b], turns[b] = infos["deal_score"][b], infos["winner"][b], infos["turns"][b]
        finished |= dones
    return scores, winners, turns, observations


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("num_players", range(3, 9))
def test_batch_matches_single_engine(backend, preset, num_players):
    hands, dealers, choices = random_deals(num_players, seed=num_players * 100 + len(preset))
    scores, winners, turns, observations = play_batch(preset, num_players, hands, dealers, choices, backend)
    for b in range(GAMES):
        score, winner, turn_count, single_obs = play_single(preset, num_players, hands[b], dealers[b], choices[b])
        assert winners[b] == winner, f"game {b}"
        assert turns[b] == turn_count, f"game {b}"
        np.testing.assert_allclose(scores[b], score, err_msg=f"game {b}")
        assert len(observations[b]) == len(single_obs)
        for batch_row, single_row in zip(observations[b], single_obs):
            np.testing.assert_allclose(batch_row, single_row, rtol=1e-6, atol=1e-7, err_msg=f"game {b}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_rewards_add_up_to_each_deals_score(backend):
    env = BatchEnv(256, 5, rules="bicycle", seed=3, backend=backend)
    obs, mask = env.reset()
    policy_rng = np.random.default_rng(3)
    paid = np.zeros((256, 5))
    finished_deals = 0
    for _ in range(200):
        actions = np.where(mask, policy_rng.random(mask.shape), -1).argmax(axis=1)
        obs, mask, rewards, dones, infos = env.step(actions)
        paid += rewards
        for b in np.flatnonzero(dones):
            np.testing.assert_allclose(paid[b], infos["deal_score"][b])
            assert infos["deal_score"][b].sum() == pytest.approx(0.0)
            paid[b] = 0.0
            finished_deals += 1
        assert mask.sum(axis=1).min() >= 2  # every game waits at a real choice
    assert finished_deals > 500


def test_same_seed_same_games():
    runs = []
    for _ in range(2):
        env = BatchEnv(64, 6, seed=9)
        obs, mask = env.reset()
        trace = []
        for _ in range(30):
            obs, mask, rewards, dones, _ = env.step(mask[:, :13].argmax(axis=1))
            trace.append((obs.copy(), rewards.copy(), dones.copy()))
        runs.append(trace)
    for (o1, r1, d1), (o2, r2, d2) in zip(*runs):
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="num_games got 0"):
        BatchEnv(0, 6)
    with pytest.raises(ValueError, match="num_players got 9"):
        BatchEnv(4, 9)
    with pytest.raises(ValueError, match="backend got 'gpu'"):
        BatchEnv(4, 6, backend="gpu")
    env = BatchEnv(4, 6, seed=0)
    obs, mask = env.reset()
    with pytest.raises(ValueError, match="actions must have shape"):
        env.step(np.zeros(3, int))
    illegal = np.where(mask[:, :13] == 0, 1, 0).argmax(axis=1)  # a rank the leader does not hold
    with pytest.raises(ValueError, match="illegal actions .* in games"):
        env.step(illegal)
    with pytest.raises(ValueError, match="owners must have shape"):
        env.reset(owners=np.zeros((4, 51), int))


@pytest.mark.skipif(len(BACKENDS) < 2, reason="needs numba")
def test_both_backends_deal_the_same_games_from_a_seed():
    runs = []
    for backend in BACKENDS:
        env = BatchEnv(128, 5, rules="bicycle", seed=21, backend=backend)
        obs, mask = env.reset()
        trace = [obs.copy()]
        for _ in range(25):
            obs, mask, rewards, dones, _ = env.step(mask[:, :13].argmax(axis=1))
            trace += [obs.copy(), rewards.copy(), dones.copy()]
        runs.append(trace)
    for numpy_item, numba_item in zip(*runs):
        np.testing.assert_allclose(numpy_item, numba_item, rtol=1e-6)


def test_shuffle_packs_are_permutations():
    from snipsnap_env.batch import shuffle_packs

    packs = shuffle_packs(np.random.default_rng(0).random((500, 52)))
    assert (np.sort(packs, axis=1) == np.arange(52)).all()
    assert np.abs(packs.mean(axis=0) - 25.5).max() < 2.5  # each position gets low and high cards alike
