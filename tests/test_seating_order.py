"""Who sits after whom is worth chips, so mixed tables and the league draw the order round the table for
every deal: their results do not depend on the order the agents are named in."""

from __future__ import annotations

import numpy as np

import agents
from train.measure.paired import PairedDeals, mean_ci
from train.measure.rotations import arrangements, play_mixed, play_rotations

NAMES = ["most_copies", "fewest_copies", "random"]


def test_each_deal_has_its_own_order_round_the_table():
    order = arrangements(6000, 4, seed=3)
    np.testing.assert_array_equal(np.sort(order, axis=1), np.tile(np.arange(4), (6000, 1)))  # permutations
    assert len(np.unique(order, axis=0)) == 24  # every order of four
    share = (order == 0).mean(axis=0)  # where agent 0 sits: each position about a quarter of the deals
    assert np.abs(share - 0.25).max() < 0.03
    np.testing.assert_array_equal(order, arrangements(6000, 4, seed=3))


def test_the_order_is_worth_chips_and_a_mixed_table_averages_it_out():
    deals = 3000
    paired = PairedDeals.draw(deals, 3, 1, 1)
    fixed = []
    for order in ([0, 1, 2], [0, 2, 1]):  # a 3-player table has two orders round it: B after A, or C
        policies = [agents.make(name, seed=i) for i, name in enumerate(NAMES)]
        fixed.append(play_rotations(policies, paired, "scarne", 1, False, np.tile(order, (deals, 1)))[0])
    gap, ci = mean_ci(fixed[1] - fixed[0])
    assert gap - ci > 1.0, (gap, ci)  # most_copies makes more with random lead choice, not fewest_copies, after it
    named = [play_mixed(names, 3, "scarne", deals, 1)["most_copies"] for names in (NAMES, [NAMES[0], *NAMES[:0:-1]])]
    first, second = (row["chips_per_deal"] for row in named)
    assert abs(first - second) < 2 * np.hypot(named[0]["ci95"], named[1]["ci95"]), (first, second)
