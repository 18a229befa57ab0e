"""The compiled loops over many games: each runs :mod:`snipsnap_env.kernel`'s one-game functions on row
``b`` of the stacked :data:`~snipsnap_env.kernel.STATE` arrays, games side by side (``numba.prange``).

Each is compiled serially and in parallel (:mod:`snipsnap_env.parallelism`): call it with the call's work
first, ``step_games(games, ...)``, and it takes numba's threads only when that work pays for them.

``state`` is the tuple ``(holding, hand_size, played, public, deal_score, rng)``; ``rules`` the int64
array of :func:`~snipsnap_env.kernel.rule_codes`.
"""

from __future__ import annotations

import numba
import numpy as np

from .cards import NUM_CARDS, NUM_RANKS
from .jit_cache import drop_if_sources_changed
from .kernel import (
    DEALER,
    PUBLIC,
    TO_ACT,
    TURNS,
    WINNER,
    choose_lead,
    deal_from_stream,
    deal_given,
    new_game,
    play_out,
    play_until_choice,
    uniform,
)
from .kernel_observe import observe
from .parallelism import by_work

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)

NUM_PUBLIC = len(PUBLIC)


@by_work
def deal_games(games, owners, dealers, rules, state):
    """Deal ``games`` anew and play to their first real choice: from ``owners``/``dealers`` when given
    (one row per game), else from each game's own random stream."""
    holding, hand_size, played, public, deal_score, rng = state
    for i in numba.prange(games.shape[0]):
        b = games[i]
        if owners.shape[0]:
            deal_given(holding[b], hand_size[b], played[b], public[b], deal_score[b], owners[i], dealers[i], rules)
        else:
            pack = np.empty(NUM_CARDS, np.int64)
            deal_from_stream(holding[b], hand_size[b], played[b], public[b], deal_score[b], rng[b], rules, pack)
        play_until_choice(holding[b], hand_size[b], played[b], public[b], deal_score[b], -1, rules)


@by_work
def step_games(leads, active, rewards, reported, ended, winners, final_score, final_turns, rules, state):
    """Lead ``leads[b]`` where ``active[b]`` and play to the next real choice; book every seat's ``rewards``
    (chips since the last booking). A deal that ends records its result in ``ended``, ``winners``,
    ``final_score`` and ``final_turns`` and is dealt anew from the game's stream; the new deal's forced turns
    are booked next time.
    """
    holding, hand_size, played, public, deal_score, _ = state
    for b in numba.prange(leads.shape[0]):
        if active[b]:
            play_until_choice(holding[b], hand_size[b], played[b], public[b], deal_score[b], leads[b], rules)
        book_and_restart(b, rewards, reported, ended, winners, final_score, final_turns, rules, state)


@numba.njit(cache=True, nogil=True)
def book_and_restart(b, rewards, reported, ended, winners, final_score, final_turns, rules, state):
    """Game ``b`` after a step: every seat's chips since the last booking into ``rewards``; a deal that ended
    recorded (``ended``, ``winners``, ``final_score``, ``final_turns``), dealt anew from the game's stream and
    played to its first real choice (the new deal's forced turns are booked next time)."""
    holding, hand_size, played, public, deal_score, rng = state
    ended[b] = False
    for s in range(hand_size.shape[1]):
        rewards[b, s] = deal_score[b, s] - reported[b, s]
        reported[b, s] = deal_score[b, s]
    if public[b, WINNER] >= 0:
        ended[b] = True
        winners[b] = public[b, WINNER]
        final_score[b, :] = deal_score[b]
        final_turns[b] = public[b, TURNS]
        pack = np.empty(NUM_CARDS, np.int64)
        deal_from_stream(holding[b], hand_size[b], played[b], public[b], deal_score[b], rng[b], rules, pack)
        play_until_choice(holding[b], hand_size[b], played[b], public[b], deal_score[b], -1, rules)
        reported[b, :] = 0.0


@by_work
def play_others_games(learns, policies, rewards, reported, ended, winners, final_score, final_turns, rules, state):
    """In every game, play the seats that do not learn (``learns[b, seat]`` False), each lead by its kernel
    policy ``policies[b, seat]`` with the seat's own stream, until a seat that learns is to choose or the deal
    ends; then :func:`book_and_restart`. (Play stops at a deal's end: the caller seats the next episode
    before anyone chooses in it.) One call instead of one Python step per turn of the other seats."""
    holding, hand_size, played, public, deal_score, rng = state
    for b in numba.prange(learns.shape[0]):
        while public[b, WINNER] < 0 and not learns[b, public[b, TO_ACT]]:
            seat = public[b, TO_ACT]
            lead = choose_lead(holding[b], played[b], seat, policies[b, seat], rng[b], 1 + seat, rules)
            play_until_choice(holding[b], hand_size[b], played[b], public[b], deal_score[b], lead, rules)
        book_and_restart(b, rewards, reported, ended, winners, final_score, final_turns, rules, state)


@by_work
def choose_leads_games(rows, policies, rules, state, leads):
    """``leads[i]``: the lead of the seat to act in game ``rows[i]`` by its kernel policy ``policies[i]``, drawn
    from the seat's own stream as :func:`~snipsnap_env.kernel.play_out` draws it (the game is not stepped)."""
    holding, hand_size, played, public, deal_score, rng = state
    for i in numba.prange(rows.shape[0]):
        b = rows[i]
        seat = public[b, TO_ACT]
        leads[i] = choose_lead(holding[b], played[b], seat, policies[i], rng[b], 1 + seat, rules)


@by_work
def observe_games(seats, template, rules, state, obs, mask):
    """``obs``/``mask`` of ``seats[b]`` in every game ``b``."""
    holding, hand_size, played, public, deal_score, _ = state
    for b in numba.prange(seats.shape[0]):
        observe(
            holding[b], hand_size[b], played[b], public[b], deal_score[b], seats[b], template, rules, obs[b], mask[b]
        )


@by_work
def play_out_games(policies, rules, state):
    """Play every game from where it stands to the end of its deal; ``policies[b, seat]`` choose the leads."""
    holding, hand_size, played, public, deal_score, rng = state
    for b in numba.prange(policies.shape[0]):
        play_out(holding[b], hand_size[b], played[b], public[b], deal_score[b], policies[b], rng[b], rules)


@numba.njit(cache=True, nogil=True)
def deal_streams(stream, d, rng):
    """Fill ``rng`` with deal ``d``'s own streams (the deal's and one per seat): ``stream`` mixed with ``d``."""
    num_players = rng.shape[0] - 1
    for i in range(1 + num_players):
        rng[i] = stream ^ (np.uint64(d * (1 + num_players) + i) * np.uint64(0xD1B54A32D192ED03))
        uniform(rng[i : i + 1])


@numba.njit(cache=True, nogil=True)
def seat_deal_streams(stream, first_deal, rng):
    """Each game ``b``'s streams (``rng[b]``: the deal's and one per seat) those of deal ``first_deal + b`` in
    :func:`play_given_deals_kernel`: given deals then draw as they draw there."""
    for b in range(rng.shape[0]):
        deal_streams(stream, first_deal + b, rng[b])


@by_work
def play_deals_kernel(num_deals, num_players, policies, stream, rules, chips, dealers, turns):
    """Deal and play ``num_deals`` whole deals; deal ``d`` draws only from its own stream, so results are the
    same on any number of threads. Games are played in chunks that reuse one set of arrays."""
    # One deal's streams depend only on (stream, d): results never depend on threads or chunking.
    chunk = 256
    for c in numba.prange((num_deals + chunk - 1) // chunk):
        holding, hand_size, played, public, deal_score, rng = new_game(num_players)
        pack = np.empty(NUM_CARDS, np.int64)
        for d in range(c * chunk, min((c + 1) * chunk, num_deals)):
            deal_streams(stream, d, rng)
            deal_from_stream(holding, hand_size, played, public, deal_score, rng, rules, pack)
            dealers[d] = public[DEALER]
            play_out(holding, hand_size, played, public, deal_score, policies, rng, rules)
            chips[d, :] = deal_score
            turns[d] = public[TURNS]


@by_work
def play_given_deals_kernel(owners, dealers, policies, stream, rules, chips):
    """Play the given deals (``owners[d]``, ``dealers[d]``) to the end, seat ``s`` of deal ``d`` led by
    ``policies[d, s]``; seat streams as in :func:`play_deals_kernel`, so the same deal and seat draw the same
    random numbers whatever the other seats do."""
    num_deals, num_players = policies.shape
    holding = np.zeros((num_deals, num_players, NUM_RANKS), np.int8)
    hand_size = np.zeros((num_deals, num_players), np.int64)
    played = np.zeros((num_deals, NUM_RANKS), np.int64)
    public = np.zeros((num_deals, NUM_PUBLIC), np.int64)
    for d in numba.prange(num_deals):
        rng = np.empty(1 + num_players, np.uint64)
        deal_streams(stream, d, rng)
        deal_given(holding[d], hand_size[d], played[d], public[d], chips[d], owners[d], dealers[d], rules)
        play_out(holding[d], hand_size[d], played[d], public[d], chips[d], policies[d], rng, rules)
