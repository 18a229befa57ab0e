"""The compiled rules kernel: the engine's rules (RULES.md §1–4) written turn by turn for one game, compiled
by numba. It is the project's one fast path — the batched engine, whole-deal evaluation and the search
player's rollouts all run these functions; :mod:`snipsnap_env.engine` stays the readable reference and
parity tests hold the two together.

The rules of play are written once, in :func:`play_set` (one set, from a lead to its close or a hand's end):
:func:`play_until_choice` (stop at each real choice) and :func:`play_out` (scripted choices to the deal's
end) both play every set through it. A game's arrays and named scalars are :mod:`snipsnap_env.kernel_state`'s
(re-exported here); its observer is :mod:`snipsnap_env.kernel_observe`.
"""

from __future__ import annotations

from .cards import CARDS_PER_RANK, NUM_CARDS, NUM_RANKS
from .engine import NO_RANK
from .jit_cache import drop_if_sources_changed
from .kernel_leads import DRAW, PICKS, lead_score
from .kernel_state import *  # noqa: F403 (the state's names are the kernel's public names too)
from .kernel_state import (
    ANTE,
    CHIPS,
    COPIES_LED,
    DEALER,
    FEE_TO_POT,
    FEE_TO_PREVIOUS,
    FEWEST_LED,
    LAST_PLAYER,
    LEADER_CARDS,
    LEADS,
    MULTI_PLAY,
    OPEN_RANK,
    OPENING,
    OPENING_SIX,
    PASS_FEE,
    PENALTIES,
    POT,
    PREVIOUS_TURN_PLAYED,
    RANKS,
    SET_LEADER,
    SETTLE_PER_CARD,
    TO_ACT,
    TURNS,
    WINNER,
    clear_lead_record,
    inline,
    jit,
    splitmix,
)
from .rules import SIX

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)


# ---- the deal --------------------------------------------------------------------------------------------
@inline
def first_to_lead(holding, dealer, rules):
    """The dealer's left, or with opening six the first holder of a 6 from the dealer's left (§2.5)."""
    n = holding.shape[0]
    seat = (dealer + 1) % n
    if rules[OPENING] == OPENING_SIX:
        while holding[seat, SIX] == 0:
            seat = (seat + 1) % n
    return seat


@inline
def start_deal(holding, hand_size, played, public, deal_score, dealer, rules):
    """Begin a deal whose ``holding`` is dealt: hand sizes, the first leader, the ante (Bicycle rules)."""
    n = holding.shape[0]
    longest = 0
    for s in range(n):
        size = 0
        for r in range(NUM_RANKS):
            size += holding[s, r]
        hand_size[s] = size
        longest = max(longest, size)
        deal_score[s] = 0.0
    for r in range(NUM_RANKS):  # a small research deck's missing ranks count as played out (Rules.ranks)
        played[r] = 0 if r < rules[RANKS] else CARDS_PER_RANK
    public[OPEN_RANK] = NO_RANK
    public[LAST_PLAYER] = -1
    public[PREVIOUS_TURN_PLAYED] = 0
    public[TO_ACT] = first_to_lead(holding, dealer, rules)
    public[POT] = 0
    public[TURNS] = 0
    public[WINNER] = -1
    public[DEALER] = dealer
    clear_lead_record(public)
    if rules[CHIPS] and rules[ANTE]:
        for s in range(n):
            paid = rules[ANTE] + (1 if hand_size[s] < longest else 0)
            deal_score[s] -= paid
            public[POT] += paid


@jit
def deal_from_stream(holding, hand_size, played, public, deal_score, rng, rules, pack):
    """Draw a dealer, shuffle (Fisher–Yates), deal one card at a time from the dealer's left, start the deal.

    Draws from the deal's stream ``rng[:1]`` (the draws of :func:`uniform`, with the state in a local, which the
    compiler keeps in a register); ``pack`` is scratch space for 52 cards (no allocation per deal). Only
    ranks matter to a hand, so the pack holds each card's rank; a deck of ``ranks`` ranks is its first 4 × ranks.
    """
    n = holding.shape[0]
    ranks = rules[RANKS]
    size = CARDS_PER_RANK * ranks
    state = rng[0]
    state, draw = splitmix(state)
    dealer = int(draw * n)
    for card in range(size):
        pack[card] = card % ranks
    for position in range(size - 1, 0, -1):
        state, draw = splitmix(state)
        other = int(draw * (position + 1))
        pack[position], pack[other] = pack[other], pack[position]
    rng[0] = state
    holding[:, :] = 0
    seat = dealer
    for position in range(size):
        seat = seat + 1 if seat + 1 < n else 0
        holding[seat, pack[position]] += 1
    start_deal(holding, hand_size, played, public, deal_score, dealer, rules)


@jit
def deal_given(holding, hand_size, played, public, deal_score, owners, dealer, rules):
    """Deal the given hands: ``owners[card]`` is the seat holding each card id (−1: not in a small deck)."""
    holding[:, :] = 0
    for card in range(NUM_CARDS):
        if owners[card] >= 0:
            holding[owners[card], card % NUM_RANKS] += 1
    start_deal(holding, hand_size, played, public, deal_score, dealer, rules)


# ---- legality: which ranks may be led --------------------------------------------------------------------
@inline
def opening_rank(played, rules):
    """The rank the next lead must be (a 6 before any card of an opening-six deal is played), else -1."""
    if rules[OPENING] != OPENING_SIX:
        return -1
    for r in range(rules[RANKS]):  # (a small deck's missing ranks count as played out before the deal)
        if played[r]:
            return -1
    return SIX


@inline
def may_lead(holding, seat, rank, forced):
    """``seat`` may lead ``rank``: held, and the opening rank if one is ``forced`` (≥ 0)."""
    return holding[seat, rank] > 0 and (forced < 0 or rank == forced)


@inline
def only_lead(holding, played, seat, rules):
    """The rank of a forced lead (exactly one legal), else -1: a real choice."""
    forced = opening_rank(played, rules)
    rank = -1
    for r in range(NUM_RANKS):
        if may_lead(holding, seat, r, forced):
            if rank >= 0:
                return -1
            rank = r
    return rank


# ---- playing ---------------------------------------------------------------------------------------------
@inline
def fee_kinds(rules):
    """Whether a pass pays 1 chip to the pot, and whether to the previous player (``pass_fee``, chips on)."""
    chips = rules[CHIPS] != 0
    return chips and rules[PASS_FEE] == FEE_TO_POT, chips and rules[PASS_FEE] == FEE_TO_PREVIOUS


@inline
def pay_pass_fee(deal_score, seat, last, fee_to_pot, fee_to_previous):
    """``seat`` passes: its fee, if any, to the pot or to ``last`` (the latest card's player); the pot's gain."""
    if fee_to_pot:
        deal_score[seat] -= 1
        return 1
    if fee_to_previous:
        deal_score[seat] -= 1
        deal_score[last] += 1
    return 0


@inline
def play_cards(holding, hand_size, played, seat, rank, multi):
    """``seat`` plays a card of ``rank`` (with multi-play, all it holds of it). Returns how many."""
    count = holding[seat, rank] if multi else 1
    holding[seat, rank] -= count
    hand_size[seat] -= count
    played[rank] += count
    return count


@inline
def play_set(holding, hand_size, played, public, deal_score, seat, rank, leading, last, previous_played, pot, turns,
             leader, leader_cards, rules):  # fmt: skip
    """**The rules step**: the set of ``rank`` played from ``seat``'s turn (its lead if ``leading``) until it
    closes or a hand empties — passes and their fees, follows, penalties, the lead record. Both
    :func:`play_until_choice` and :func:`play_out` play every set through here, so a rule is written once.

    Returns ``(seat, last, previous_played, pot, turns, leader, leader_cards, out)``: ``seat`` played the set's
    last card, and is out of cards if ``out`` (else it leads next). A closed set's leader joins the record.
    """
    n = holding.shape[0]
    fee_to_pot, fee_to_previous = fee_kinds(rules)
    penalties, multi = rules[CHIPS] != 0 and rules[PENALTIES] != 0, rules[MULTI_PLAY] != 0
    while True:
        if not leading:  # a follow: whoever does not hold the rank passes (paying any fee), the next holder plays
            while holding[seat, rank] == 0:
                pot += pay_pass_fee(deal_score, seat, last, fee_to_pot, fee_to_previous)
                previous_played = 0
                turns += 1
                seat = seat + 1 if seat + 1 < n else 0
            if penalties and previous_played:  # snipped/snapped/snoremed: card k pays k (§3.12)
                deal_score[last] -= played[rank]
                pot += played[rank]
        leading = False
        count = play_cards(holding, hand_size, played, seat, rank, multi)
        last, previous_played = seat, 1
        turns += 1
        if seat == leader:
            leader_cards += count
        closed = played[rank] == CARDS_PER_RANK
        if closed and leader >= 0:  # the leader has shown all it held of the rank
            public[LEADS + leader] += 1
            public[COPIES_LED + leader] += leader_cards
            public[FEWEST_LED + leader] = min(public[FEWEST_LED + leader], leader_cards)
            leader = -1
        if hand_size[seat] == 0:  # out: the deal ends at once (§2.9)
            return seat, last, previous_played, pot, turns, leader, leader_cards, True
        if closed:  # its last player leads next (all four led at once with multi-play: the leader again)
            return seat, last, previous_played, pot, turns, leader, leader_cards, False
        seat = seat + 1 if seat + 1 < n else 0


@jit
def play_until_choice(holding, hand_size, played, public, deal_score, lead, rules):
    """Lead ``lead`` (if ≥ 0), then play follows, passes and forced leads until a real choice or the end.

    The game's scalars live in locals while it runs; each set is played by :func:`play_set`.
    """
    rank, last, previous_played = public[OPEN_RANK], public[LAST_PLAYER], public[PREVIOUS_TURN_PLAYED]
    to_act, pot, turns = public[TO_ACT], public[POT], public[TURNS]
    leader, leader_cards = public[SET_LEADER], public[LEADER_CARDS]
    while public[WINNER] < 0:
        leading = rank == NO_RANK
        if leading:  # a lead: the choice given, or the only legal one, or stop for a real choice
            if lead >= 0:  # a real choice (play stopped for it): what it shows joins the lead record
                rank, lead, leader = lead, -1, to_act
            else:
                rank, leader = only_lead(holding, played, to_act, rules), -1
                if rank < 0:
                    break
            leader_cards = 0
        seat, last, previous_played, pot, turns, leader, leader_cards, out = play_set(
            holding, hand_size, played, public, deal_score, to_act, rank, leading, last, previous_played, pot, turns,
            leader, leader_cards, rules,
        )  # fmt: skip
        to_act = seat
        if out:
            public[WINNER] = seat
            settle(deal_score, hand_size, seat, pot, rules)
            pot = 0
        else:
            rank = NO_RANK
    public[OPEN_RANK], public[LAST_PLAYER], public[PREVIOUS_TURN_PLAYED] = rank, last, previous_played
    public[TO_ACT], public[POT], public[TURNS] = to_act, pot, turns
    public[SET_LEADER], public[LEADER_CARDS] = leader, leader_cards


@inline
def choose_lead(holding, played, seat, policy, rng, stream, rules):
    """The lead of ``seat``: the only legal rank without a draw, else its scripted policy's
    (:mod:`~snipsnap_env.kernel_leads`: a draw weighted by the policy's ``lead_score``, or its best score with
    ties broken uniformly at random), the draws from ``rng[stream]``.

    Each scan over the hand is a plain loop the compiler vectorises: one general scan that also tracked the
    legal ranks as bits cost a third of a whole rollout's time.
    """
    forced = opening_rank(played, rules)
    if forced >= 0:  # only the opening rank is legal
        return forced if holding[seat, forced] > 0 else -1
    draws = PICKS[policy] == DRAW
    count, total = 0, 0  # ranks held, and for a draw the sum of their weights (one scan: a second cost ~15%)
    for r in range(NUM_RANKS):
        held = holding[seat, r] > 0
        count += held
        if draws:
            total += held * lead_score(policy, r, holding[seat, r])
    if count <= 1:
        for r in range(NUM_RANKS):
            if holding[seat, r] > 0:
                return r
        return -1
    if draws:
        rng[stream], draw = splitmix(rng[stream])
        k = int(draw * total)
        for r in range(NUM_RANKS):
            if holding[seat, r] > 0:
                k -= lead_score(policy, r, holding[seat, r])
                if k < 0:
                    return r
        return -1
    best, best_score, ties = -1, 0, 0
    for r in range(NUM_RANKS):
        if holding[seat, r] > 0:
            score = lead_score(policy, r, holding[seat, r])
            if best < 0 or score > best_score:
                best, best_score, ties = r, score, 1
            elif score == best_score:  # reservoir sampling: each tied rank equally likely
                ties += 1
                rng[stream], draw = splitmix(rng[stream])
                if draw * ties < 1.0:
                    best = r
    return best


@jit
def play_out(holding, hand_size, played, public, deal_score, policies, rng, rules):
    """Play the deal to its end, each seat's real choices made by its scripted policy ``policies[seat]`` with
    the seat's own stream ``rng[1 + seat]`` (so one seat's choices never shift another's random draws).

    The whole-deal path of evaluation and search rollouts: every set is played by :func:`play_set`, and the
    lead record — which only an observation reads, and nobody observes a finished deal's leads — is not kept.
    """
    if public[WINNER] >= 0:
        return
    if public[OPEN_RANK] != NO_RANK:  # finish the open set (a lead, forced or chosen, is choose_lead's)
        play_until_choice(holding, hand_size, played, public, deal_score, -1, rules)
        if public[WINNER] >= 0:
            return
    seat, pot, turns, last, previous_played, rank = public[TO_ACT], public[POT], public[TURNS], -1, 0, NO_RANK
    out = False
    while not out:
        rank = choose_lead(holding, played, seat, policies[seat], rng, 1 + seat, rules)
        seat, last, previous_played, pot, turns, _, _, out = play_set(
            holding, hand_size, played, public, deal_score, seat, rank, True, last, previous_played, pot, turns,
            -1, 0, rules,
        )  # fmt: skip
    settle(deal_score, hand_size, seat, pot, rules)
    public[WINNER] = seat
    public[OPEN_RANK], public[LAST_PLAYER], public[PREVIOUS_TURN_PLAYED] = rank, last, previous_played
    public[TO_ACT], public[POT], public[TURNS] = seat, 0, turns
    public[SET_LEADER], public[LEADER_CARDS] = -1, 0


@inline
def settle(deal_score, hand_size, winner, pot, rules):
    """The deal's end (§3.13): with chips the winner takes the pot and per card left in every other hand;
    without, deal points (+1 for the winner, the rest share −1)."""
    n = hand_size.shape[0]
    if rules[CHIPS]:
        for other in range(n):
            if other != winner:
                owed = rules[SETTLE_PER_CARD] * hand_size[other]
                deal_score[other] -= owed
                pot += owed
        deal_score[winner] += pot
    else:
        for other in range(n):
            deal_score[other] = -1.0 / (n - 1)
        deal_score[winner] = 1.0
