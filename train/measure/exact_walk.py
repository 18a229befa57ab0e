"""The exact best lead policy at a table of one scripted policy, by a compiled walk of every deal of a small deck.

Against opponents whose lead probabilities are known (a policy the kernel plays: ``random``, ``most_copies``, ...),
the best response in a seat *is* the best any lead policy can do there: nothing a policy observes is hidden from
it (its own hand and all play, which is public), and it maximises over everything it could choose. Its value
bounds every learned agent at that table from above, so a learned lead's gain over most_copies can be given as
a share of the best gain.

How: only ranks matter and follows are forced, so a deal is a holdings matrix (seat × rank) and the game branches
only where a set is led. A led set's play shows how many of its rank each seat held (or ends the deal), so the
worlds a seat cannot tell apart after a set are those that showed the same column and pass the lead to the
same seat. The walk (:func:`_node`) carries, per hand of the responder, every world with its weight (chance × the
opponents' probabilities of the leads so far); at an opponent's lead it sums over the ranks each world's leader
may lead; at the responder's own it takes the rank of most chips summed over the worlds (or, for a policy's own
value, follows its probabilities). Every set is played by the kernel's rules step (:func:`~snipsnap_env.kernel.
play_set`), so every rules option is walked as the engine plays it. ``tests/test_exact_walk.py`` holds it to the
Python walk of :mod:`train.measure.exact` (which OpenSpiel's best response checks) and to play in the kernel.
"""

from __future__ import annotations

import numba
import numpy as np

from snipsnap_env.cards import NUM_RANKS
from snipsnap_env.jit_cache import drop_if_sources_changed
from snipsnap_env.kernel import (
    POLICIES,
    PUBLIC,
    TO_ACT,
    opening_rank,
    play_set,
    rule_codes,
    settle,
    start_deal,
)
from snipsnap_env.kernel_leads import DRAW, PICKS, lead_score
from snipsnap_env.kernel_state import POT as POT_INDEX
from snipsnap_env.rules import check_table, make_rules

from .exact import MAX_RANKS, DeckTooLarge, NoExactAnswer, count_worlds, dealt

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache): it inlines the kernel

#: holdings matrices at most (over every dealer): 3 players with 6 ranks (632,880), 4 with 5 (1,045,324)
MAX_WORLDS = 1_200_000
LAST, PREVIOUS_PLAYED, POT, TURNS = range(4)  # the carried scalars of a world between sets
BEST = -1  # in place of a policy code: the best response
PUBLIC_SIZE = len(PUBLIC)


def deck(text: str) -> tuple[int, int]:
    """A small deck named ``KxN`` (K ranks at N players) as (ranks, players), or a ValueError naming the form."""
    ranks, _, players = text.partition("x")
    if not (ranks.isdigit() and players.isdigit()):
        raise ValueError(f"a deck is <ranks>x<players>, e.g. 4x3; got {text!r}")
    return int(ranks), int(players)


def check_exact(opponents, num_players: int, rules) -> None:
    """A :class:`NoExactAnswer` (a ValueError, so a job's refusal) naming why the exact values cannot be had: the
    opponents are not one policy the kernel plays, or the deck has too many deals to walk."""
    if len(set(opponents)) != 1 or opponents[0] not in POLICIES:
        raise NoExactAnswer(
            f"the exact optimum needs opponents of one policy the kernel plays ({', '.join(POLICIES)}), not "
            f"{'+'.join(opponents)}"
        )
    rules = make_rules(rules)
    check_table(rules, num_players)
    worlds = count_worlds(num_players, rules, limit=MAX_WORLDS)
    if worlds > MAX_WORLDS:
        shown = f"over {MAX_WORLDS:,}" if rules.ranks <= MAX_RANKS else "tens of millions of"  # counting stopped
        raise DeckTooLarge(
            f"{shown} holdings matrices at {num_players} players with a deck of {rules.ranks} ranks: more than the "
            f"{MAX_WORLDS:,} the exact walk takes; use a smaller deck (--rules <preset>:ranks=<k>)"
        )


def exact_values(table: str, num_players: int, rules, seat: int = 0, policies=("most_copies", "random")) -> dict:
    """Chips per deal in ``seat`` at a table of ``table`` players, the dealer uniform (so averaged over the seat's
    positions): the best lead policy's (``optimum``) and each of ``policies``' own, all exact."""
    check_exact([table], num_players, rules)
    rules = make_rules(rules)
    codes = rule_codes(rules)
    table_code = POLICIES.index(table)
    own = {"optimum": BEST} | {name: POLICIES.index(name) for name in policies}
    totals = dict.fromkeys(own, 0.0)
    for dealer, matrices, weights in hands(num_players, rules, seat):  # per name: the same order of sums as ever
        for name, code in own.items():
            totals[name] += _deal_and_walk(matrices, weights, dealer, seat, table_code, code, codes)
    return {name: total / num_players for name, total in totals.items()}


def hands(num_players: int, rules, seat: int):
    """Per dealer, the seat's possible hands: ``(dealer, matrices, weights)`` of the worlds dealt each hand."""
    for dealer in range(num_players):
        matrices, weights = zip(*dealt(num_players, rules, dealer))
        stacked = np.zeros((len(matrices), num_players, NUM_RANKS), np.int8)
        stacked[:, :, : rules.ranks] = np.array(matrices)
        weights = np.array(weights)
        rows = stacked[:, seat, :].astype(np.int64) @ (5 ** np.arange(NUM_RANKS))  # the seat's hand, as a key
        order = np.argsort(rows, kind="stable")
        starts = np.flatnonzero(np.diff(rows[order], prepend=-1))
        for lo, hi in zip(starts, np.append(starts[1:], len(order))):
            group = order[lo:hi]
            yield dealer, stacked[group], weights[group]


@numba.njit(cache=True, nogil=True)
def deal_worlds(matrices, dealer, rules):
    """The worlds of one hand dealt from ``dealer`` (the engine's own start of a deal): ``(holding, hand_size,
    played, public, deal_score, carry)``, the scalars a walk carries between sets in ``carry``."""
    worlds, n = matrices.shape[0], matrices.shape[1]
    holding = matrices.copy()
    hand_size = np.zeros((worlds, n), np.int64)
    played = np.zeros((worlds, NUM_RANKS), np.int64)
    public = np.zeros((worlds, PUBLIC_SIZE), np.int64)
    deal_score = np.zeros((worlds, n), np.float64)
    for w in range(worlds):
        start_deal(holding[w], hand_size[w], played[w], public[w], deal_score[w], dealer, rules)
    carry = np.zeros((worlds, 4), np.int64)
    carry[:, LAST] = -1
    carry[:, POT] = public[:, POT_INDEX]  # an ante is in the pot from the start
    return holding, hand_size, played, public, deal_score, carry


@numba.njit(cache=True, nogil=True)
def _deal_and_walk(matrices, weights, dealer, seat, table, own, rules):
    """The worlds of one hand of the responder dealt, then walked: the sum over them of weight × the responder's
    chips."""
    n = matrices.shape[1]
    holding, hand_size, played, public, deal_score, carry = deal_worlds(matrices, dealer, rules)
    # the first leader may differ between worlds (opening six: the first holder of a 6), and is seen: apart
    total = 0.0
    for leader in range(n):
        members = np.flatnonzero(public[:, TO_ACT] == leader)
        if members.size:
            total += _node(holding[members], hand_size[members], played[members], public[members],
                           deal_score[members], carry[members], weights[members], seat, table, own, rules)  # fmt: skip
    return total


@numba.njit(cache=True, nogil=True)
def lead_probabilities_at(holding, played, seat, policy, rules, probs):
    """``probs[r]``: the chance that ``policy`` (a kernel code) in ``seat`` leads rank ``r`` (the kernel's
    :func:`~snipsnap_env.kernel.choose_lead` as a distribution: a forced lead, else the policy's rule — a draw
    weighted by its ``lead_score``, or its best score with ties uniform)."""
    probs[:] = 0.0
    forced = opening_rank(played, rules)
    if forced >= 0:
        probs[forced] = 1.0
        return
    draw, best, found = PICKS[policy] == DRAW, 0, False
    for r in range(NUM_RANKS):
        k = holding[seat, r]
        if k > 0:
            score = lead_score(policy, r, k)
            probs[r] = score if draw else 1.0
            if not draw and (not found or score > best):
                best, found = score, True
    if not draw:
        for r in range(NUM_RANKS):
            if holding[seat, r] > 0 and lead_score(policy, r, holding[seat, r]) != best:
                probs[r] = 0.0
    probs /= probs.sum()


@numba.njit(cache=True, nogil=True)
def play_led_set(held, sizes, shown, seen, scores, carried, weights, leader, rank, recorded, seat, rules, keys):
    """``rank`` led by ``leader`` in every world given (``recorded``: the leader joins the lead record, or −1 where
    it does not: the walks that read no observation): returns Σ weight × ``seat``'s chips over the worlds whose deal
    ended, and fills ``keys`` with what tells each other world's next node apart (who leads next, and each seat's
    cards of the rank that the set showed), −1 where the deal ended."""
    n = held.shape[1]
    reached = 0.0
    keys[:] = -1
    for w in range(held.shape[0]):
        before = held[w, :, rank].copy()
        closer, last, previous, pot, turns, _, _, out = play_set(
            held[w], sizes[w], shown[w], seen[w], scores[w], leader, rank, True, carried[w, LAST],
            carried[w, PREVIOUS_PLAYED], carried[w, POT], carried[w, TURNS], recorded[w], 0, rules,
        )  # fmt: skip
        if out:
            settle(scores[w], sizes[w], closer, pot, rules)
            reached += weights[w] * scores[w, seat]
            continue
        carried[w, LAST], carried[w, PREVIOUS_PLAYED] = last, previous
        carried[w, POT], carried[w, TURNS] = pot, turns
        seen[w, TO_ACT] = closer
        key = closer
        for s in range(n):
            key = key * 5 + before[s] - held[w, s, rank]
        keys[w] = key
    return reached


@numba.njit(cache=True, nogil=True)
def groups_of(keys):
    """The worlds ``keys`` sorts into nodes: ``(order, starts)``, group ``g`` being ``order[starts[g]:starts[g +
    1]]``, the ended deals' (key −1) left out."""
    order = np.argsort(keys, kind="mergesort")
    order = order[keys[order] >= 0]
    starts = [0]
    for i in range(1, order.size):
        if keys[order[i]] != keys[order[i - 1]]:
            starts.append(i)
    starts.append(order.size)
    return order, np.array(starts, np.int64) if order.size else np.zeros(1, np.int64)


@numba.njit(cache=True, nogil=True)
def _node(holding, hand_size, played, public, deal_score, carry, weight, seat, table, own, rules):
    """Σ weight × the responder's chips from a lead on, over worlds it cannot tell apart (the same seat leads in
    all of them), the responder playing its best (``own`` = BEST) or by its policy, the others by ``table``.

    Each rank the leader may lead is played in the worlds where it may: a deal that ends adds its chips; the
    others, grouped by what the set showed (each seat's cards of the rank, and who leads next), walk on. (One
    function that calls itself: numba's cache cannot hold two that call each other.)"""
    worlds = holding.shape[0]
    leader = public[0, TO_ACT]
    best_response = leader == seat and own == BEST
    probs = np.zeros((worlds, NUM_RANKS))
    if best_response:  # its hand is the same in every world: a rank is legal in all or in none
        forced = opening_rank(played[0], rules)
        for r in range(NUM_RANKS):
            probs[:, r] = 1.0 if holding[0, seat, r] > 0 and (forced < 0 or r == forced) else 0.0
    else:
        for w in range(worlds):
            lead_probabilities_at(holding[w], played[w], leader, own if leader == seat else table, rules, probs[w])
    total, best = 0.0, -np.inf
    for rank in range(NUM_RANKS):
        members = np.flatnonzero(probs[:, rank] > 0)
        if members.size == 0:
            continue
        held, sizes, shown = holding[members], hand_size[members], played[members]
        seen, scores, carried = public[members], deal_score[members], carry[members]
        weights = weight[members] * probs[members, rank]
        keys = np.empty(members.size, np.int64)
        unrecorded = np.full(members.size, -1, np.int64)  # no observation is read: no lead record kept
        value = play_led_set(held, sizes, shown, seen, scores, carried, weights, leader, rank, unrecorded, seat,
                             rules, keys)  # fmt: skip
        order, starts = groups_of(keys)
        for g in range(starts.size - 1):
            group = order[starts[g] : starts[g + 1]]
            value += _node(held[group], sizes[group], shown[group], seen[group], scores[group], carried[group],
                           weights[group], seat, table, own, rules)  # fmt: skip
        total += value
        best = max(best, value)
    return best if best_response else total
