"""Property tests over thousands of random deals, for every preset and 3..8 players."""

from __future__ import annotations

import numpy as np
import pytest

from snipsnap_env.cards import CARDS_PER_RANK, NUM_CARDS, NUM_RANKS
from snipsnap_env.engine import PASS, Match
from snipsnap_env.events import EventKind
from snipsnap_env.rules import PRESETS, make_rules

PLAYER_COUNTS = range(3, 9)


def play_random_match(preset: str, num_players: int, seed: int, num_deals: int = 1, check=None):
    """Play a match with uniformly random legal actions; ``check(match)`` runs before every action."""
    rng = np.random.default_rng(seed)
    match = Match(make_rules(preset), num_players, num_deals)
    events = match.start(rng)
    actions = []
    while not match.over:
        if check:
            check(match)
        legal = match.deal.legal_actions()
        action = legal[rng.integers(len(legal))]
        actions.append(action)
        events += match.apply(action)
    return match, actions, events


def check_invariants(match: Match) -> None:
    deal = match.deal
    n = match.num_players
    # 52 cards conserved: every card is in exactly one hand or played.
    held = [deal.count(s, r) for s in range(n) for r in range(NUM_RANKS)]
    assert sum(held) + sum(deal.played) == NUM_CARDS
    assert [sum(deal.count(s, r) for r in range(NUM_RANKS)) for s in range(n)] == deal.hand_size
    for rank in range(NUM_RANKS):
        # a rank is untouched, open or finished; never half-finished outside its set
        assert deal.played[rank] in (0, CARDS_PER_RANK) or rank == deal.open_rank
        assert sum(deal.count(s, rank) for s in range(n)) + deal.played[rank] == CARDS_PER_RANK
    # the player to act has a card and a legal action; the mask says the same as legal_actions
    assert deal.hand_size[deal.to_act] > 0
    mask = deal.legal_mask()
    assert mask.sum() >= 1 and list(np.flatnonzero(mask)) == deal.legal_actions()
    if deal.is_lead:
        assert mask[PASS] == 0
    # chips are zero-sum at every moment, counting the pot
    if match.rules.chips:
        assert sum(match.chips) + deal.pot == n * match.rules.starting_chips


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.slow
def test_random_deals_keep_the_invariants(preset, num_players):
    for seed in range(60):
        match, _, events = play_random_match(preset, num_players, seed, check=check_invariants)
        deal = match.deal
        assert deal.hand_size[deal.winner] == 0
        assert sum(1 for e in events if e.kind is EventKind.OUT) == 1
        if match.rules.chips:
            assert sum(match.chips) == num_players * match.rules.starting_chips and deal.pot == 0
        else:
            assert match.chips == [match.rules.starting_chips] * num_players
            assert sum(match.points) == pytest.approx(0.0)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_set_needs_at_most_three_laps(preset):
    for seed in range(100):
        match, _, events = play_random_match(preset, 6, seed)
        turns_in_set = 0
        for event in events:
            if event.kind is EventKind.LEAD:
                turns_in_set = 1
            elif event.kind in (EventKind.PLAY, EventKind.PASS):
                turns_in_set += 1
                assert turns_in_set <= 3 * 6 + 1


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_same_seed_same_game(preset):
    for seed in range(20):
        first = play_random_match(preset, 5, seed, num_deals=2)
        again = play_random_match(preset, 5, seed, num_deals=2)
        assert first[1] == again[1] and first[2] == again[2]
        assert first[0].chips == again[0].chips


def test_different_seeds_give_different_games():
    games = {tuple(play_random_match("scarne", 6, seed)[1]) for seed in range(20)}
    assert len(games) == 20


def test_three_deal_match_moves_the_dealer_left_and_carries_chips():
    rng = np.random.default_rng(3)
    match = Match(make_rules("scarne"), 4, num_deals=3)
    events = match.start(rng, dealer=1)
    balances_at_deal_start = [list(match.chips)]
    while not match.over:
        legal = match.deal.legal_actions()
        new = match.apply(legal[rng.integers(len(legal))])
        events += new
        if any(e.kind is EventKind.DEAL for e in new) and not match.over:
            balances_at_deal_start.append(list(match.chips))
    dealers = [e.seat for e in events if e.kind is EventKind.DEAL]
    assert dealers == [1, 2, 3]
    assert match.deals_played == 3
    assert balances_at_deal_start[0] == [100] * 4
    assert balances_at_deal_start[1] != [100] * 4  # the second deal starts from the first's result
    assert sum(match.chips) == 400
    # the first lead of each deal is by the dealer's left
    leads_after_deal = [events[i + 1].seat for i, e in enumerate(events) if e.kind is EventKind.DEAL]
    assert leads_after_deal == [2, 3, 0]


def test_many_deals_in_one_match_stay_zero_sum_per_deal():
    for preset in ("scarne", "bicycle", "parlett", "pairs"):
        rng = np.random.default_rng(11)
        match = Match(make_rules(preset), 6, num_deals=200)
        match.start(rng)
        while not match.over:
            legal = match.deal.legal_actions()
            match.apply(legal[rng.integers(len(legal))])
            assert sum(match.chips) + match.deal.pot == 600
