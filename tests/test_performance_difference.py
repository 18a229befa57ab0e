"""The gain over a reference estimated by the reference's advantages along the candidate's play: the same
mean as the plain paired difference, a narrower CI, and nothing where the candidate plays as the reference."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from train.measure.paired import PairedDeals, mean_ci, play_paired
from train.measure.performance_difference import AdvantageSums, kernel_plays


def gains(candidate: str, reference: str, table: str, num_players: int, deals: int, seed: int = 3):
    paired = PairedDeals.draw(deals, num_players, 1, seed)
    chips = {}
    for name in (candidate, reference):
        policy = agents.make(name, seed=seed)
        chips[name] = play_paired(policy, [agents.make(table, seed=seed + 1)], paired, "scarne", seed=seed)
    sums = AdvantageSums(agents.make(reference, seed=seed + 2), [agents.make(table, seed=seed + 1)],
                         paired.opponent_index, 16, seed)  # fmt: skip
    play_paired(agents.make(candidate, seed=seed), [agents.make(table, seed=seed + 1)], paired, "scarne",
                seed=seed, on_lead=sums)  # fmt: skip
    return mean_ci(chips[candidate] - chips[reference]), mean_ci(sums.sums), sums


def test_it_estimates_the_plain_paired_difference_with_a_narrower_ci():
    (plain, plain_ci), (by_advantages, ci), sums = gains("most_copies", "fewest_copies", "random", 3, 3000)
    assert plain - plain_ci > 2.0 and by_advantages - ci > 2.0  # most_copies out-earns fewest_copies
    assert abs(plain - by_advantages) < 2 * np.hypot(plain_ci, ci), (plain, by_advantages)
    assert ci < 0.6 * plain_ci, (ci, plain_ci)
    assert sums.leads.mean() > 2  # the candidate chose at several leads a deal


def test_a_candidate_that_plays_as_the_reference_gains_nothing():
    pytest.importorskip("torch")
    _, (by_advantages, ci), sums = gains("ppo", "ppo", "ppo", 4, 600)
    assert abs(by_advantages) < 2 * ci + 0.05, (by_advantages, ci)
    # a greedy network's lead is one rank, or one of equal ones: wherever it is one, the advantage is exactly 0
    assert (sums.sums == 0).mean() > 0.2


def test_a_reference_or_table_the_kernel_does_not_play_is_refused():
    assert kernel_plays([agents.make("most_copies")]) and not kernel_plays([agents.make("control")])
    with pytest.raises(ValueError, match="kernel plays itself"):
        AdvantageSums(agents.make("control"), [agents.make("random")], np.zeros((4, 3), np.int64), 4, 0)
