"""The search player: legal, reproducible, reads the position right, and beats most_copies where it should."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.pimc import PIMC
from snipsnap_env.batch import BatchEnv, owners_from_hands
from snipsnap_env.cards import hands_from_names
from snipsnap_env.rules import PRESETS
from train.measure.evaluation import evaluate


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_pimc_plays_legal_leads_at_every_table_size(preset):
    for num_players in range(3, 9):
        env = BatchEnv(64, num_players, rules=preset, seed=num_players)
        obs, mask = env.reset()
        policy = agents.make("pimc", samples=8, seed=1)
        for _ in range(5):
            actions = policy.act_batch(obs, mask)
            assert mask[np.arange(64), actions].all()
            obs, mask, *_ = env.step(actions)


def test_pimc_is_reproducible_by_seed_and_scores_one_rank_per_copy_count():
    env = BatchEnv(32, 5, seed=3)
    obs, mask = env.reset()
    first = agents.make("pimc", samples=16, seed=7).scores(obs, mask)
    again = agents.make("pimc", samples=16, seed=7).scores(obs, mask)
    np.testing.assert_array_equal(first, again)
    own = np.rint(obs[:, :13] * 4)
    for row, counts in zip(first, own):
        scored = np.flatnonzero(~np.isnan(row))
        assert sorted(counts[scored].tolist()) == sorted(set(counts[counts > 0].tolist()))


def test_pimc_told_the_seated_opponents_rolls_them_out_as_that_model():
    from snipsnap_env.kernel import POLICIES

    env = BatchEnv(32, 5, seed=3)
    obs, mask = env.reset()
    for model in ("random", "most_copies"):
        seated = np.full((32, 7), POLICIES.index(model))
        told = PIMC(samples=16, seed=7).scores(obs, mask, opponents=seated)
        np.testing.assert_array_equal(told, PIMC(samples=16, opponent_model=model, seed=7).scores(obs, mask))
    mixed = np.full((32, 7), POLICIES.index("random"))
    mixed[::2, 1] = POLICIES.index("most_copies")  # other seatings, other rollouts: scored apart, all finite
    scores = PIMC(samples=16, seed=7).scores(obs, mask, opponents=mixed)
    own = np.rint(obs[:, :13] * 4)
    for row in range(len(obs)):  # the same copy counts scored (which rank stands for each is drawn)
        assert sorted(own[row, ~np.isnan(scores[row])]) == sorted(own[row, ~np.isnan(told[row])])
    assert np.isfinite(scores[~np.isnan(scores)]).all()
    with pytest.raises(ValueError, match="kernel policy codes"):
        PIMC(samples=16).scores(obs, mask, opponents=np.full((32, 7), 99))


def test_worlds_respect_what_most_copies_opponents_showed():
    from agents.pimc import respect_caps, sample_world
    from snipsnap_env.kernel import seed_streams

    own = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0])  # six singletons; 46 cards unseen
    played = np.zeros(13, np.int64)
    sizes = np.array([6, 12, 17, 17])
    caps = np.array([4, 1, 2, 4])  # seat 1 led a singleton as most_copies: no pairs; seat 2: no triples
    rng = seed_streams(5, 1)
    for _ in range(200):
        world = np.empty((4, 13), np.int8)
        sample_world(own, played, sizes, rng, world)
        assert respect_caps(world, caps, rng, 16 * 52)
        assert (world.max(axis=1) <= caps).all()
        assert (world.sum(axis=1) == sizes).all() and (world.sum(axis=0) == 4).all()  # every card, once
        assert (world[0] == own).all()


def test_pimc_leads_the_four_of_a_kind_that_takes_it_out():
    """Seat 0 holds four aces and a king: leading the aces keeps the lead and goes out next; the king does not."""
    hands = hands_from_names(3, {0: "AC AD AH AS KC", 1: "2C"}, rest=2)
    env = BatchEnv(1, 3, seed=0)
    obs, mask = env.reset(owners=owners_from_hands(hands)[None, :], dealers=np.array([2]))
    assert env.to_act[0] == 0
    scores = PIMC(samples=64, seed=0).scores(obs, mask)[0]
    assert scores[0] > scores[12] and PIMC(samples=64, seed=0).act_batch(obs, mask)[0] == 0
    assert scores[0] == 1 + 46  # certain in every world: paid per card left, 1 by seat 1 and 46 by seat 2


def test_pimc_refuses_a_follow_it_cannot_search():
    env = BatchEnv(1, 4, seed=0)
    obs, mask = env.reset()
    bad = obs.copy()
    bad[0, 52] = 0  # "is_lead" off: a position the search player does not search
    with pytest.raises(ValueError, match="searches leads only"):
        PIMC(samples=4).act_batch(bad, mask)
    with pytest.raises(ValueError, match="samples got 0"):
        PIMC(samples=0)
    with pytest.raises(ValueError, match="not played by the kernel"):
        PIMC(opponent_model="control")


def test_pimc_gains_over_most_copies_at_four_players():
    """The strength check, small: 3,000 paired deals at 4 players (RULES.md §6: about +2 chips per deal)."""
    rows = evaluate(
        ["most_copies", "pimc:32"], ["random"], 4, "scarne", 3000, seed=11, reference="most_copies", quiet=True
    )
    gain = rows[-1]
    assert gain.diff_vs_reference - gain.diff_ci95 > 0, gain


def test_behaviour_reports_how_a_policy_leads():
    from train.behaviour import behaviour

    table = behaviour("most_copies", [3, 6], "scarne", ["random"], 500, seed=1)
    assert all(row["leaves_most_copies"] == 0 for row in table.values())
    fewest = behaviour("fewest_copies", [4], "scarne", ["random"], 500, seed=1)[4]
    assert fewest["leads_by_copies"][0] == 1.0 and fewest["leaves_most_copies"] == 1.0


def test_the_search_player_leads_any_of_the_ranks_it_holds_equally_often():
    """A first lead of many singletons: the search player's rank among them varies (always the lowest would be
    a convention opponents exploit), its copy count does not depend on which."""
    from snipsnap_env.batch import BatchEnv

    obs, mask = BatchEnv(1, 6, seed=11).reset()
    obs, mask = np.repeat(obs, 400, axis=0), np.repeat(mask, 400, axis=0)
    actions = agents.make("pimc", samples=4, seed=0).act_batch(obs, mask)
    held = np.rint(obs[0, :13] * 4).astype(int)
    for copies in set(held[actions]):
        group = np.flatnonzero((held == copies) & (mask[0, :13] > 0))
        chosen = actions[held[actions] == copies]
        if len(group) > 1 and len(chosen) > 40:
            assert len(set(chosen)) == len(group), (group, np.bincount(chosen))
