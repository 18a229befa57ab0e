"""Hand-built deals as tables: explicit hands and actions → expected events and chip changes.

Three players, dealer = seat 2, so seat 0 leads; every card not listed goes to seat 2.
Actions: 0..12 play that rank (A = 0, 2 = 1, …), P = pass.
"""

from __future__ import annotations

import pytest

from snipsnap_env.cards import hands_from_names as build_hands
from snipsnap_env.engine import PASS as P
from snipsnap_env.engine import Deal
from snipsnap_env.rules import make_rules

A, TWO, SIX = 0, 1, 5

# Snip, Snap and Snorem on three consecutive turns; seat 0 then goes out by leading its last card.
IN_A_ROW = {0: "AC AS 2C", 1: "AD 3C", 2: "AH"}
IN_A_ROW_ACTIONS = [A, A, A, A, TWO]
# Seat 2 plays three aces of one set, each after a lap of passes; then it is snipped by the winning card.
LAPS = {0: "AC 2C", 1: "4C"}
LAPS_ACTIONS = [A, P, A, P, P, A, P, P, A, TWO, TWO]
# Seat 1 goes out by a follow in the middle of a set, snipping the leader with its winning card.
OUT_BY_FOLLOW = {0: "AC 2C 3C", 1: "AD"}

CASES = [
    (
        "snip snap snorem in a row, out by a lead",
        "scarne",
        IN_A_ROW,
        IN_A_ROW_ACTIONS,
        [
            "player_0 leads AC",
            "player_1 plays AD: Snip!",
            "player_0 is snipped: pays 1 chip into the pot",
            "player_2 plays AH: Snap!",
            "player_1 is snapped: pays 2 chips into the pot",
            "player_0 plays AS: Snorem!",
            "player_2 is snoremed: pays 3 chips into the pot",
            "player_0 leads 2C",
            "player_0 is out of cards and wins the deal",
            "player_0 takes the pot of 6 chips",
            "player_1 pays 1 chip to player_0 (cards left)",
            "player_2 pays 46 chips to player_0 (cards left)",
        ],
        [52, -3, -49],
    ),
    (
        "passes cancel penalties; one player plays three cards of a set",
        "scarne",
        LAPS,
        LAPS_ACTIONS,
        [
            "player_0 leads AC",
            "player_1 passes",
            "player_2 plays AD: Snip!",
            "player_0 passes",
            "player_1 passes",
            "player_2 plays AH: Snap!",
            "player_0 passes",
            "player_1 passes",
            "player_2 plays AS: Snorem!",
            "player_2 leads 2D",
            "player_0 plays 2C: Snip!",
            "player_2 is snipped: pays 1 chip into the pot",
            "player_0 is out of cards and wins the deal",
            "player_0 takes the pot of 1 chip",
            "player_1 pays 1 chip to player_0 (cards left)",
            "player_2 pays 45 chips to player_0 (cards left)",
        ],
        [47, -1, -46],
    ),
    (
        "out by a follow mid-set; the winning card's penalty is paid first",
        "scarne",
        OUT_BY_FOLLOW,
        [A, A],
        [
            "player_0 leads AC",
            "player_1 plays AD: Snip!",
            "player_0 is snipped: pays 1 chip into the pot",
            "player_1 is out of cards and wins the deal",
            "player_1 takes the pot of 1 chip",
            "player_2 pays 48 chips to player_1 (cards left)",
            "player_0 pays 2 chips to player_1 (cards left)",
        ],
        [-3, 51, -48],
    ),
    (
        "kids: chips off, first out wins",
        "kids",
        IN_A_ROW,
        IN_A_ROW_ACTIONS,
        [
            "player_0 leads AC",
            "player_1 plays AD: Snip!",
            "player_2 plays AH: Snap!",
            "player_0 plays AS: Snorem!",
            "player_0 leads 2C",
            "player_0 is out of cards and wins the deal",
        ],
        [0, 0, 0],
    ),
    (
        "kids_settle: no penalties, only the cards-left settlement",
        "kids_settle",
        IN_A_ROW,
        IN_A_ROW_ACTIONS,
        [
            "player_0 leads AC",
            "player_1 plays AD: Snip!",
            "player_2 plays AH: Snap!",
            "player_0 plays AS: Snorem!",
            "player_0 leads 2C",
            "player_0 is out of cards and wins the deal",
            "player_1 pays 1 chip to player_0 (cards left)",
            "player_2 pays 46 chips to player_0 (cards left)",
        ],
        [47, -1, -46],
    ),
    (
        "wiswell: every pass pays 1 into the pot; no penalties, no settlement",
        "wiswell",
        LAPS,
        LAPS_ACTIONS,
        [
            "player_0 leads AC",
            "player_1 passes",
            "player_1 pays 1 chip to the pot (pass fee)",
            "player_2 plays AD: Snip!",
            "player_0 passes",
            "player_0 pays 1 chip to the pot (pass fee)",
            "player_1 passes",
            "player_1 pays 1 chip to the pot (pass fee)",
            "player_2 plays AH: Snap!",
            "player_0 passes",
            "player_0 pays 1 chip to the pot (pass fee)",
            "player_1 passes",
            "player_1 pays 1 chip to the pot (pass fee)",
            "player_2 plays AS: Snorem!",
            "player_2 leads 2D",
            "player_0 plays 2C: Snip!",
            "player_0 is out of cards and wins the deal",
            "player_0 takes the pot of 5 chips",
        ],
        [3, -3, 0],
    ),
    (
        "parlett: every pass pays 1 to the player of the set's latest card",
        "parlett",
        LAPS,
        LAPS_ACTIONS,
        [
            "player_0 leads AC",
            "player_1 passes",
            "player_1 pays 1 chip to player_0 (pass fee)",
            "player_2 plays AD: Snip!",
            "player_0 passes",
            "player_0 pays 1 chip to player_2 (pass fee)",
            "player_1 passes",
            "player_1 pays 1 chip to player_2 (pass fee)",
            "player_2 plays AH: Snap!",
            "player_0 passes",
            "player_0 pays 1 chip to player_2 (pass fee)",
            "player_1 passes",
            "player_1 pays 1 chip to player_2 (pass fee)",
            "player_2 plays AS: Snorem!",
            "player_2 leads 2D",
            "player_0 plays 2C: Snip!",
            "player_2 is snipped: pays 1 chip into the pot",
            "player_0 is out of cards and wins the deal",
            "player_0 takes the pot of 1 chip",
            "player_1 pays 1 chip to player_0 (cards left)",
            "player_2 pays 45 chips to player_0 (cards left)",
        ],
        [46, -4, -42],
    ),
    (
        "bicycle: ante 1, 1 more if dealt fewer cards; passes pay the pot",
        "bicycle",
        LAPS,
        LAPS_ACTIONS,
        [
            "player_0 pays 2 chips to the pot (ante)",
            "player_1 pays 2 chips to the pot (ante)",
            "player_2 pays 1 chip to the pot (ante)",
            "player_0 leads AC",
            "player_1 passes",
            "player_1 pays 1 chip to the pot (pass fee)",
            "player_2 plays AD: Snip!",
            "player_0 passes",
            "player_0 pays 1 chip to the pot (pass fee)",
            "player_1 passes",
            "player_1 pays 1 chip to the pot (pass fee)",
            "player_2 plays AH: Snap!",
            "player_0 passes",
            "player_0 pays 1 chip to the pot (pass fee)",
            "player_1 passes",
            "player_1 pays 1 chip to the pot (pass fee)",
            "player_2 plays AS: Snorem!",
            "player_2 leads 2D",
            "player_0 plays 2C: Snip!",
            "player_2 is snipped: pays 1 chip into the pot",
            "player_0 is out of cards and wins the deal",
            "player_0 takes the pot of 11 chips",
            "player_1 pays 1 chip to player_0 (cards left)",
            "player_2 pays 45 chips to player_0 (cards left)",
        ],
        [53, -6, -47],
    ),
    (
        "pairs: a player plays every card of the rank at once; a batch is judged on its first card",
        "pairs",
        {0: "AC AD 2C", 1: "AH 3C", 2: "AS 2D 2H 2S"},
        [A, A, A, TWO, TWO],
        [
            "player_0 leads AC",
            "player_0 plays AD: Snip!",
            "player_1 plays AH: Snap!",
            "player_0 is snapped: pays 2 chips into the pot",
            "player_2 plays AS: Snorem!",
            "player_1 is snoremed: pays 3 chips into the pot",
            "player_2 leads 2D",
            "player_2 plays 2H: Snip!",
            "player_2 plays 2S: Snap!",
            "player_0 plays 2C: Snorem!",
            "player_2 is snoremed: pays 3 chips into the pot",
            "player_0 is out of cards and wins the deal",
            "player_0 takes the pot of 8 chips",
            "player_1 pays 1 chip to player_0 (cards left)",
            "player_2 pays 43 chips to player_0 (cards left)",
        ],
        [50, -4, -46],
    ),
    (
        "earl_of_coventry: the first 6 from the dealer's left opens; rhymes; no penalties; 1 per card",
        "earl_of_coventry",
        {0: "AC 2C", 1: "6C 6D", 2: "AH"},  # seat 0 (the dealer's left) holds no 6: seat 1 opens
        [SIX, SIX, P, SIX],
        [
            "player_1 leads 6C: There's as good as 6 can be",
            "player_2 plays 6H: There's a 6 as good as he",
            "player_0 passes",
            "player_1 plays 6D: There's the best of all the three",
            "player_1 is out of cards and wins the deal",
            "player_2 pays 47 chips to player_1 (cards left)",
            "player_0 pays 2 chips to player_1 (cards left)",
        ],
        [-2, 49, -47],
    ),
]


@pytest.mark.parametrize(
    "name, preset, explicit, actions, expected_events, chip_change", CASES, ids=[case[0] for case in CASES]
)
def test_scripted_deal(name, preset, explicit, actions, expected_events, chip_change):
    chips = [100, 100, 100]
    deal = Deal(make_rules(preset), build_hands(3, explicit, rest=2), dealer=2, chips=chips)
    for action in actions:
        assert not deal.over
        deal.apply(action)
    assert deal.over
    assert [str(e) for e in deal.events[1:]] == expected_events  # events[0] is "player_2 deals"
    assert [c - 100 for c in chips] == chip_change
    assert deal.pot == 0 and sum(chips) == 300


def test_follow_is_forced_and_lead_is_free():
    deal = Deal(make_rules(), build_hands(3, IN_A_ROW, rest=2), dealer=2, chips=[100] * 3)
    assert deal.legal_actions() == [A, TWO]  # a lead: any rank held, never a pass
    deal.apply(A)
    assert deal.legal_actions() == [A]  # seat 1 holds AD: must follow
    deal.apply(A)
    deal.apply(A)
    assert deal.legal_actions() == [A]  # seat 0 holds AS: must follow, even having led the set


def test_holder_without_the_rank_must_pass():
    deal = Deal(make_rules(), build_hands(3, LAPS, rest=2), dealer=2, chips=[100] * 3)
    deal.apply(A)
    assert deal.legal_actions() == [P]


def test_the_closing_player_leads_next():
    deal = Deal(make_rules(), build_hands(3, LAPS, rest=2), dealer=2, chips=[100] * 3)
    for action in LAPS_ACTIONS[:9]:
        deal.apply(action)
    assert deal.is_lead and deal.to_act == 2 and deal.played[A] == 4


def test_ante_with_a_real_deal_charges_the_short_hands():
    from snipsnap_env.cards import deal_pack

    hands = deal_pack(list(range(52)), 3, dealer=2)  # seat 0 (dealer's left) gets the 18th card
    assert [len(h) for h in hands] == [18, 17, 17]
    deal = Deal(make_rules("bicycle"), hands, dealer=2, chips=[100] * 3)
    assert [str(e) for e in deal.events[1:]] == [
        "player_0 pays 1 chip to the pot (ante)",
        "player_1 pays 2 chips to the pot (ante)",
        "player_2 pays 2 chips to the pot (ante)",
    ]
    assert deal.pot == 5


def test_deal_pack_starts_left_of_dealer_and_gives_extras_there():
    from snipsnap_env.cards import deal_pack

    hands = deal_pack(list(range(52)), 5, dealer=3)
    assert hands[4][0] == 0 and hands[0][0] == 1  # first card to the dealer's left
    assert [len(h) for h in hands] == [11, 10, 10, 10, 11]  # 52 mod 5 = 2 extras: seats 4 and 0


def test_opening_six_only_a_six_opens_and_only_once():
    hands = build_hands(3, {0: "AC 6S", 1: "6C 6D 2C"}, rest=2)
    deal = Deal(make_rules("earl_of_coventry"), hands, dealer=2, chips=[100] * 3)
    assert deal.to_act == 0 and deal.legal_actions() == [SIX]  # the dealer's left holds a 6: it must lead it
    free = Deal(
        make_rules("scarne", opening="six"), build_hands(3, {1: "6C 6D 6H 6S 2D", 2: "2C"}, rest=0), 2, [100] * 3
    )
    assert free.to_act == 1 and free.legal_actions() == [SIX]  # seat 0 holds no 6: seat 1 opens
    while free.played[SIX] < 4:  # seat 1 plays all four 6s, the others pass each lap
        free.apply(free.legal_actions()[0])
    assert free.is_lead and free.to_act == 1 and free.legal_actions() == [TWO]  # later leads are free (one rank left)


def test_the_lead_record_shows_the_copies_a_chosen_lead_held_once_its_set_closes():
    import numpy as np

    from snipsnap_env.engine import Match
    from snipsnap_env.observation import SLICES, encode

    match = Match(make_rules(), 3)
    match.start(np.random.default_rng(0), hands=build_hands(3, IN_A_ROW, rest=2), dealer=2)
    deal = match.deal
    match.apply(A)  # seat 0 chooses the aces (it could lead a two): it holds AC AS
    assert (deal.set_leader, deal.leads) == (0, [0, 0, 0])  # open: the record waits for the set to close
    for action in IN_A_ROW_ACTIONS[1:4]:
        match.apply(action)
    assert (deal.leads, deal.copies_led, deal.fewest_led) == ([1, 0, 0], [2, 0, 0], [2, None, None])
    obs = encode(match, 1)  # seat 0 is seat 1's relative slot 2
    assert obs[SLICES["leads"]][2] == np.float32(1 / 13)
    assert (obs[SLICES["copies_led"]][2], obs[SLICES["fewest_led"]][2]) == (0.5, 0.5)
    assert not obs[SLICES["leads"]][:2].any()
    match.apply(TWO)  # its only card left: a forced lead shows nothing of a choice
    assert deal.set_leader is None


def test_a_forced_lead_and_a_set_closed_by_others_count_as_what_they_are():
    deal = Deal(make_rules(), build_hands(3, LAPS, rest=2), dealer=2, chips=[100] * 3)
    for action in LAPS_ACTIONS[:9]:  # seat 0 chose the ace holding one; seat 2 played the other three
        deal.apply(action)
    assert (deal.leads, deal.copies_led, deal.fewest_led) == ([1, 0, 0], [1, 0, 0], [1, None, None])
    opening = Deal(
        make_rules("earl_of_coventry"), build_hands(3, {0: "6C AC AD", 1: "2C"}, rest=2), dealer=2, chips=[0] * 3
    )
    opening.apply(SIX)  # the opening six is forced: no choice, no record
    assert opening.set_leader is None
