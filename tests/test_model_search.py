"""The search player whose worlds seat any policy: its worlds are the position it searches, and it plays."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.model_search import ModelSearch
from snipsnap_env.batch import BatchEnv
from snipsnap_env.cards import CARDS_PER_RANK
from snipsnap_env.observation import MAX_HAND, SLICES


def lead_positions(num_players: int, count: int, seed: int = 0):
    """Leads with a choice from deals played some way in by most_copies players."""
    env = BatchEnv(64, num_players, seed=seed)
    obs, mask = env.reset()
    policy, kept = agents.make("most_copies", seed=seed), []
    for step in range(40):
        choice = mask.sum(axis=1) > 1
        if step % 3 == 2:
            kept.append((obs[choice], mask[choice]))
        obs, mask, *_ = env.step(policy.act_batch(obs, mask))
    obs, mask = (np.concatenate(part)[:count] for part in zip(*kept))
    assert len(obs) == count and (obs[:, SLICES["leads"]] > 0).any()  # some seats have a lead record
    return obs, mask


@pytest.mark.parametrize("num_players", [3, 6, 8])
def test_a_world_seen_from_the_searchers_seat_is_the_position_it_searches(num_players):
    obs, mask = lead_positions(num_players, 50)
    searcher = ModelSearch(agents.make("random"), samples=4, seed=0)
    own = np.rint(obs[:, SLICES["hand"]] * CARDS_PER_RANK).astype(np.int8)
    hidden = np.zeros((len(obs), num_players, 13), np.int8)
    hidden[:, 0] = own  # the other hands are the world's: they do not show in seat 0's observation
    played = np.rint(obs[:, SLICES["played"]] * CARDS_PER_RANK).astype(np.int64)
    sizes = np.rint(obs[:, SLICES["hand_size"]][:, :num_players] * MAX_HAND).astype(np.int64)
    env = BatchEnv(len(obs), num_players)
    searcher._set_up(env, obs, hidden, played, sizes, num_players)
    seen, seen_mask = env.observe()
    np.testing.assert_allclose(seen, obs, atol=1e-6)
    np.testing.assert_array_equal(seen_mask, mask)


def test_it_plays_legal_leads_the_same_for_the_same_seed_and_sees_what_its_model_does():
    obs, mask = lead_positions(4, 40, seed=1)
    first = ModelSearch(agents.make("most_copies"), samples=16, seed=3).act_batch(obs, mask)
    again = ModelSearch(agents.make("most_copies"), samples=16, seed=3).act_batch(obs, mask)
    np.testing.assert_array_equal(first, again)
    assert mask[np.arange(len(obs)), first].all()
    # the kernel's search with the same model values the candidates alike (independent worlds: loose)
    scores = ModelSearch(agents.make("random"), samples=512, seed=0, in_kernel=False).scores(obs[:8], mask[:8])
    kernel = agents.make("pimc", samples=512, opponent_model="random", seed=0).scores(obs[:8], mask[:8])
    np.testing.assert_array_equal(np.isnan(scores), np.isnan(kernel))
    assert np.nanmax(np.abs(scores - kernel)) < 4.0  # a candidate's mean over 512 worlds: about ±1 chip each


@pytest.mark.parametrize("num_players", [3, 5])
@pytest.mark.slow
def test_rollouts_in_compiled_code_value_the_worlds_as_the_engine_plays_them(num_players):
    """With every seat a kernel policy or a greedy network, the worlds roll out in compiled code: the same
    worlds and candidates (the same seed), valued as the engine values them, up to the draws of the rollouts
    (ties of most_copies and of the network, which the two draw from other streams): no bias."""
    obs, mask = lead_positions(num_players, 24, seed=2)
    model = agents.make("ppo", seed=4)
    assert model.kernel_playable()
    compiled = ModelSearch(model, samples=256, seed=7).scores(obs, mask)
    engine = ModelSearch(model, samples=256, seed=7, in_kernel=False).scores(obs, mask)
    np.testing.assert_array_equal(np.isnan(compiled), np.isnan(engine))
    gap = (compiled - engine)[~np.isnan(engine)]
    # a candidate's mean over 256 worlds is about ±1.2 chips from the draws alone; a wrong seat or score is more
    assert np.abs(gap).mean() < 2.0, np.abs(gap).mean()
    assert abs(gap.mean()) < 4 * gap.std() / np.sqrt(gap.size), (gap.mean(), gap.std(), gap.size)
    # a model the kernel cannot play (one that samples its leads) stays on the engine
    sampling = ModelSearch(agents.make("ppo", deterministic=False, seed=4), samples=8, seed=7)
    assert np.isfinite(sampling.scores(obs[:4], mask[:4])).any()


def test_a_model_without_act_batch_is_refused():
    with pytest.raises(TypeError, match="act_batch"):
        ModelSearch(lambda obs: 0)


def test_a_teacher_that_knows_its_table_seats_each_positions_real_opponents():
    from train.learn.distill import collect_positions, label, teacher_from_spec

    pool = [agents.make("most_copies", seed=1), agents.make("fewest_copies", seed=2)]
    teacher = teacher_from_spec("model_search:32", 0, pool)
    assert isinstance(teacher, ModelSearch) and teacher.models == pool and teacher.samples == 32
    obs, mask, seated = collect_positions(4, "scarne", 60, pool, seed=3)
    values, gaps = label(teacher, obs, mask, seated)
    legal = mask[:, :13] > 0
    assert (values[~np.pad(legal, ((0, 0), (0, 1)))] == 0).all() and (gaps >= 0).all()
    # the same worlds with every seat played by the other model: other values
    swapped = teacher_from_spec("model_search:32", 0, pool).scores(obs, mask, 1 - seated)
    mine = teacher_from_spec("model_search:32", 0, pool).scores(obs, mask, seated)
    assert np.nanmax(np.abs(swapped - mine)) > 1.0
    with pytest.raises(ValueError, match="indices into the models"):
        teacher.scores(obs, mask, seated[:, :3])
    with pytest.raises(ValueError, match="model_search:<samples>"):
        teacher_from_spec("model_search:x", 0)


def test_worlds_respect_what_a_most_copies_seat_showed_by_its_leads():
    obs, mask = lead_positions(4, 200, seed=5)
    n = 4
    shown = np.rint(obs[:, SLICES["fewest_led"]][:, :n] * CARDS_PER_RANK)
    led = obs[:, SLICES["leads"]][:, :n] > 0
    pool = [agents.make("most_copies"), agents.make("random")]
    streams = np.random.SeedSequence(0).generate_state(len(obs) * 8, np.uint64).reshape(len(obs), 8)
    everyone_most = np.zeros((len(obs), 7), np.int64)
    worlds = ModelSearch(pool, samples=8, seed=0).sample_worlds(obs, n, everyone_most, streams.copy())
    capped = led[:, None, 1:] & (shown[:, None, 1:] < 4)
    most_held = worlds[:, :, 1:].max(axis=3)
    assert capped.any()
    broken = capped & (most_held > shown[:, None, 1:])
    assert broken.mean() < 0.01  # (the swaps give up where a deal cannot satisfy every cap)
    # the same streams with random-lead seats: their worlds break those caps, so the caps did the work
    free = ModelSearch(pool, samples=8, seed=0).sample_worlds(obs, n, everyone_most + 1, streams.copy())
    assert (capped & (free[:, :, 1:].max(axis=3) > shown[:, None, 1:])).mean() > 0.05
    hands = worlds.sum(axis=3)  # the caps swap cards between seats: sizes and the unseen cards stay
    np.testing.assert_array_equal(hands, free.sum(axis=3))
    np.testing.assert_array_equal(worlds.sum(axis=2), free.sum(axis=2))
