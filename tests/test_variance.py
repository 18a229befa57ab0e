"""Variance reduction (train.measure.variance): the known lead distributions, the rollout values of someone else's
lead, and an estimate that stays unbiased — for a good value function and a deliberately bad one."""

from __future__ import annotations

import json

import numpy as np
import pytest

import agents
from snipsnap_env import kernel
from snipsnap_env.batch import BatchEnv, Games
from snipsnap_env.cards import hands_from_names
from snipsnap_env.engine import Deal
from snipsnap_env.kernel_network import no_networks
from snipsnap_env.lead_values import values_for
from snipsnap_env.observation import table_template
from snipsnap_env.rules import make_rules
from train.measure.evaluation import evaluate
from train.measure.paired import PairedDeals, mean_ci
from train.measure.variance import play_reduced

A, K = 0, 12


@pytest.mark.parametrize("name", ["random", "random_card", "most_copies", "fewest_copies"])
def test_the_lead_probabilities_are_what_act_batch_draws_from(name):
    env = BatchEnv(64, 4, seed=3)
    obs, mask = env.reset()
    policy = agents.make(name, seed=1)
    probabilities = policy.lead_probabilities(obs, mask)
    assert np.allclose(probabilities.sum(axis=1), 1.0) and (probabilities[mask == 0] == 0).all()
    draws = 4000
    counts = np.zeros_like(probabilities)
    rows = np.arange(len(obs))
    for _ in range(draws):
        counts[rows, policy.act_batch(obs, mask)] += 1
    # every frequency within 5 standard errors of its probability (and exactly 0 where it is 0)
    error = np.sqrt(probabilities * (1 - probabilities) / draws)
    assert (np.abs(counts / draws - probabilities) <= 5 * error + 1e-12).all()


def test_control_and_learned_players_say_their_odds_are_not_known():
    env = BatchEnv(4, 4, seed=3)
    obs, mask = env.reset()
    assert agents.make("control").lead_probabilities(obs, mask) is None
    assert agents.make("ppo").lead_probabilities(obs, mask) is None


def test_the_value_of_someone_elses_lead_is_the_viewers_chips():
    # Seat 0 holds four kings and an ace and leads: the kings win at once (seat 0 goes out with the ace after
    # them), so seat 1, holding 2 cards, pays 2 chips; leading the ace, seat 1 follows with its ace.
    rules = make_rules("scarne")
    deal = Deal(rules, hands_from_names(3, {0: "KC KD KH KS AC", 1: "AD 2C"}, rest=2), 2, [0] * 3)
    games = Games.from_deals([deal])
    values = np.empty((2, 13))
    state = [np.repeat(array, 2, axis=0) for array in (games.holding, games.hand_size, games.played, games.public,
                                                       games.deal_score)]  # fmt: skip
    wanted = np.ones((2, 13), bool)
    wanted[1, A] = False  # only the kings' value asked for in game 1
    policies = np.full((2, 3), kernel.POLICIES.index("random"), np.int64)
    values_for(2, *state, np.array([1, 0]), wanted, policies, 8, np.array([1, 2], np.uint64), kernel.rule_codes(rules),
               values, no_networks(), table_template(rules, 3).astype(np.float32))  # fmt: skip
    assert values[0, K] == -2.0 and values[1, K] == 47.0
    assert values[0, A] != values[0, K] and np.isnan(values[1, A])
    assert np.isnan(np.delete(values, [A, K], axis=1)).all()


@pytest.fixture(scope="module")
def three_player_runs():
    """Random and most_copies in the same 2,000 paired deals at random-lead tables, plain and reduced (32
    rollouts per lead); and the reduced estimate again with a bad value function (every seat rolled out as
    fewest_copies)."""
    deals = PairedDeals.draw(2000, 3, 1, 11)
    runs = {}
    for name in ("random", "most_copies"):
        made = lambda: (agents.make(name, seed=4), [agents.make("random", seed=5)])  # noqa: E731
        runs[name] = play_reduced(*made(), deals, "scarne", 32, 7)
        runs[name + " bad"] = play_reduced(*made(), deals, "scarne", 32, 7, rollout_policy="fewest_copies")
    return runs


@pytest.mark.slow
def test_the_reduced_estimate_agrees_with_the_plain_one_and_is_narrower(three_player_runs):
    runs = three_player_runs
    plain = runs["most_copies"][0] - runs["random"][0]
    reduced = runs["most_copies"][1] - runs["random"][1]
    (plain_mean, plain_ci), (reduced_mean, reduced_ci) = mean_ci(plain), mean_ci(reduced)
    assert abs(reduced_mean - plain_mean) < plain_ci
    assert reduced_ci < 0.6 * plain_ci
    for name in ("random", "most_copies"):  # each player's own chips too
        assert abs(runs[name][1].mean() - runs[name][0].mean()) < mean_ci(runs[name][0])[1]


def test_a_bad_value_function_changes_the_ci_not_the_mean(three_player_runs):
    runs = three_player_runs
    plain, plain_ci = mean_ci(runs["most_copies"][0] - runs["random"][0])
    good_ci = mean_ci(runs["most_copies"][1] - runs["random"][1])[1]
    bad, bad_ci = mean_ci(runs["most_copies bad"][1] - runs["random bad"][1])
    assert abs(bad - plain) < plain_ci
    assert bad_ci > 1.1 * good_ci
    assert np.array_equal(runs["random bad"][0], runs["random"][0])  # the play itself is the same


def test_evaluate_reports_the_reduced_and_the_plain_difference(tmp_path):
    common = dict(opponents=["random"], num_players=4, deals=300, seed=2, reference="most_copies", quiet=True)
    plain = evaluate(["most_copies", "ppo"], out_dir=str(tmp_path / "plain"), **common)
    reduced = evaluate(["most_copies", "ppo"], out_dir=str(tmp_path / "reduced"), variance_reduction=4, **common)
    assert plain[1].diff_ci95_plain is None and reduced[1].diff_ci95_plain is not None
    rows = json.loads((tmp_path / "reduced" / "results.json").read_text())
    assert {"diff_vs_reference_plain", "diff_ci95_plain"} <= set(rows[1])
    assert "diff_ci95_plain" not in json.loads((tmp_path / "plain" / "results.json").read_text())[1]
    assert "variance reduction" in (tmp_path / "reduced" / "results.md").read_text()
