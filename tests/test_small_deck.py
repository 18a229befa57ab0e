"""The research deck (``Rules.ranks``): rules specs, refusals, dealing and the envs on a deck of a few ranks."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

import snipsnap_env
from snipsnap_env.batch import BatchEnv
from snipsnap_env.cards import deck
from snipsnap_env.engine import Match
from snipsnap_env.observation import SLICES
from snipsnap_env.rules import make_rules
from train.measure.paired import PairedDeals


def test_a_rules_spec_sets_options_on_a_preset():
    rules = make_rules("parlett:ranks=4,multi_play=true")
    assert (rules.ranks, rules.multi_play, rules.pass_fee) == (4, True, "to_previous")
    assert make_rules("scarne").ranks == 13


@pytest.mark.parametrize(
    "spec, message",
    [
        ("scarne:ranks", "has no value"),
        ("scarne:colour=red", "unknown rules option 'colour'"),
        ("scarne:ranks=three", "'ranks' got 'three'; allowed: a whole number"),
        ("scarne:ranks=0", "'ranks' got 0; allowed: an integer from 1 to 13"),
        ("scarne:ranks=14", "'ranks' got 14"),
        ("scarne:chips=maybe", "'chips' got 'maybe'; allowed: true, false"),
        ("earl_of_coventry:ranks=5", "opening 'six' needs a deck with the 6 in it"),
        ("hearts:ranks=3", "unknown rules preset 'hearts'"),
        # one spelling per rules, so that results are keyed by the rules and not by how they were written
        ("scarne:", "an empty option"),
        ("scarne:,", "an empty option"),
        ("scarne:ranks=3,", "an empty option"),
        ("scarne:ranks=4,ranks=13", "'ranks' is given twice"),
        ("scarne:ranks=\u0661", "allowed: a whole number \\(digits 0-9\\)"),  # an Arabic-Indic 1, which int() reads
    ],
)
def test_a_bad_rules_spec_is_refused_naming_the_problem(spec, message):
    with pytest.raises(ValueError, match=message):
        make_rules(spec)


def test_a_deck_too_small_for_the_table_is_refused_everywhere():
    for make in (
        lambda: snipsnap_env.env(num_players=5, rules="scarne:ranks=1"),
        lambda: BatchEnv(4, 5, rules="scarne:ranks=1"),
        lambda: Match(make_rules("scarne:ranks=1"), 5),
    ):
        with pytest.raises(ValueError, match="cannot deal a card to each of 5 players"):
            make()


@pytest.mark.parametrize("ranks", [1, 2, 3, 6])
def test_the_kernel_deals_the_small_deck_and_shows_the_rest_as_played(ranks):
    env = BatchEnv(64, 3, rules=f"scarne:ranks={ranks}", seed=ranks)
    obs, mask = env.reset()
    held = env.games.holding.sum(axis=1)  # (games, 13): in hands, played so far (forced turns), or left out
    assert (held + env.games.played == 4).all() and not held[:, ranks:].any()
    played = np.rint(obs[:, SLICES["played"]] * 4)
    assert (played[:, ranks:] == 4).all() and not obs[:, SLICES["unseen"]][:, ranks:].any()
    assert mask.any(axis=1).all()  # a real choice, or a deal over before one: the pass that reports it


def test_paired_deals_of_the_full_pack_are_the_same_as_ever_and_of_a_small_deck_only_its_cards():
    full = PairedDeals.draw(50, 4, 1, seed=3)
    assert (np.sort(full.owners, axis=1) >= 0).all()
    small = PairedDeals.draw(50, 4, 1, seed=3, rules="scarne:ranks=2")
    cards = deck(2)
    assert (small.owners[:, cards] >= 0).all() and (np.delete(small.owners, cards, axis=1) == -1).all()


@pytest.mark.parametrize("players, ranks", [(3, 1), (3, 2), (4, 3), (8, 2)])
def test_the_aec_env_plays_small_decks_within_the_rules(players, ranks):
    api_test(snipsnap_env.env(num_players=players, rules=f"scarne:ranks={ranks}"), num_cycles=200)
    env = snipsnap_env.env(num_players=players, rules=f"scarne:ranks={ranks}", num_deals=5)
    rng = np.random.default_rng(players * ranks)
    for seed in range(5):
        env.reset(seed=seed)
        total = 0.0
        for agent in env.agent_iter():
            observation, reward, termination, truncation, _ = env.last()
            total += reward
            if termination or truncation:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            assert legal.size  # never an empty mask for the agent to act
            env.step(int(rng.choice(legal)))
        match = env.unwrapped.match
        assert sum(match.chips) == players * match.rules.starting_chips  # zero-sum


def test_numpy_numbers_are_rules_options_as_python_numbers_are():
    """As num_players and seeds take numpy's whole numbers, so do the rules (stored as Python's: one hash)."""
    import numpy as np

    rules = make_rules(ranks=np.int64(4), multi_play=np.bool_(True))
    assert rules == make_rules(ranks=4, multi_play=True) and type(rules.ranks) is int
    with pytest.raises(ValueError, match="'ranks' got np.float64"):
        make_rules(ranks=np.float64(4))
