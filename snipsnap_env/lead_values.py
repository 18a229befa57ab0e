"""What each lead is worth in the true deal: Monte-Carlo rollouts of every hand, for a critic that sees the
whole deal (``train_ppo --critic rollouts``).

At a lead of seat ``s``, :func:`lead_values` plays the *real* deal — every hidden hand as it is — to its end
``samples`` times after each legal lead, seat ``s`` continuing with a scripted rollout policy and every other
seat with the kernel policy that models it, and averages the chips ``s`` makes from this point on. Training
uses it as PPO's advantage (the vine estimate of Schulman et al.'s TRPO, §5.2): the lead's value minus the
policy's expected value over the legal leads. It exists only at training time, when the engine knows every
hand; the actor never sees it (perfect-training-imperfect-execution, as PerfectDou's critic).

Why rollouts of the whole deal rather than the episode's return: one deal's chips spread by 15–21, while
the leads of one position differ by about 2, so a return-based advantage has a signal-to-noise ratio near
0.05 (README). Rollouts of the same deal remove the luck of the deal, and common random numbers (every lead
meets the same draws) remove much of the rest.

Ranks the seat holds equally often are one candidate (as in :mod:`agents.pimc`): the rank-shared actor
cannot tell them apart from its observation, so it learns their mean value; one of them, drawn uniformly,
stands for them, which estimates that mean without bias at a quarter of the cost.
"""

from __future__ import annotations

import numba
import numpy as np

from .cards import CARDS_PER_RANK, NUM_RANKS
from .engine import NUM_ACTIONS
from .jit_cache import drop_if_sources_changed
from .kernel import MOST_COPIES, TO_ACT, may_lead, new_game, opening_rank, play_out, play_until_choice, uniform
from .kernel_network import NETWORK, play_out_observed
from .observation import OBS_DIM
from .parallelism import by_work

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)

_MIX = np.uint64(0xD1B54A32D192ED03)


@numba.njit(cache=True, nogil=True)
def _lead_total(b, rank, k, viewer, holding, hand_size, played, public, deal_score, policies, seeds, rules, nets,
                template, observed, game, work):  # fmt: skip
    """The chips ``viewer`` makes from now in sample ``k`` of game ``b`` after its seat to act leads ``rank``:
    the game copied into ``game`` (a :func:`new_game`), every seat's streams drawn from ``seeds[b]`` and ``k``
    alone, so every lead of one sample meets the same draws (common random numbers)."""
    h, size, done, pub, score, streams = game
    obs, mask, logits = work
    n = hand_size.shape[1]
    h[:, :] = holding[b]
    size[:] = hand_size[b]
    done[:] = played[b]
    pub[:] = public[b]
    score[:] = deal_score[b]
    for i in range(1 + n):
        streams[i] = seeds[b] ^ (np.uint64(k * (1 + n) + i + 1) * _MIX)
        uniform(streams[i : i + 1])
    play_until_choice(h, size, done, pub, score, rank, rules)
    if observed:  # a network seat: play out observing, keeping the lead record it reads
        play_out_observed(h, size, done, pub, score, policies[b], streams, rules, nets, template, obs, mask, logits)
    else:
        play_out(h, size, done, pub, score, policies[b], streams, rules)
    return score[viewer] - deal_score[b, viewer]


@numba.njit(cache=True, nogil=True)
def _plays_a_network(policies, b):
    for code in policies[b]:
        if code >= NETWORK:
            return True
    return False


@by_work
def lead_values(holding, hand_size, played, public, deal_score, seats, policies, samples, seeds, rules, values, nets,
                template):  # fmt: skip
    """``values[b, r]``: the mean chips seat ``seats[b]`` makes from now in game ``b`` when it leads rank ``r``
    (NaN where ``r`` is not a legal lead), over ``samples`` rollouts with common random numbers.

    Game ``b`` (the stacked kernel state, :data:`snipsnap_env.kernel.STATE`) must stand at a lead of
    ``seats[b]``; ``policies[b, seat]`` is the kernel policy each absolute seat plays in the rollouts (the
    leading seat's entry is its own rollout policy), a code from ``NETWORK`` on playing a network of ``nets``
    (:mod:`snipsnap_env.kernel_network`) that observes the seat (``template``: this table's observation
    template); ``seeds[b]`` seeds game ``b``'s rollout streams. Called with its work first (rollouts per
    candidate times games: :mod:`snipsnap_env.parallelism`).
    """
    games, n = hand_size.shape
    for b in numba.prange(games):
        seat = seats[b]
        pick = np.empty(1, np.uint64)
        pick[0] = seeds[b]
        forced = opening_rank(played[b], rules)
        standing_for = np.full(CARDS_PER_RANK + 1, -1, np.int64)  # one legal rank per copy count
        seen = np.zeros(CARDS_PER_RANK + 1, np.int64)
        for r in range(NUM_RANKS):
            if may_lead(holding[b], seat, r, forced):
                copies = holding[b, seat, r]
                seen[copies] += 1
                if uniform(pick) * seen[copies] < 1.0:  # reservoir sampling: uniform among equal counts
                    standing_for[copies] = r
        totals = np.zeros(CARDS_PER_RANK + 1)
        game = new_game(n)
        work = np.empty(OBS_DIM, np.float32), np.empty(NUM_ACTIONS, np.int8), np.empty(NUM_ACTIONS, np.float32)
        observed = _plays_a_network(policies, b)
        for k in range(samples):
            for copies in range(1, CARDS_PER_RANK + 1):
                if standing_for[copies] >= 0:
                    totals[copies] += _lead_total(
                        b, standing_for[copies], k, seat, holding, hand_size, played, public, deal_score, policies,
                        seeds, rules, nets, template, observed, game, work,
                    )  # fmt: skip
        for r in range(NUM_RANKS):
            if may_lead(holding[b], seat, r, forced):
                values[b, r] = totals[holding[b, seat, r]] / samples
            else:
                values[b, r] = np.nan


@numba.njit(cache=True, nogil=True)
def _values_of_game(b, holding, hand_size, played, public, deal_score, viewers, wanted, policies, samples, seeds, rules,
                    values, nets, template):  # fmt: skip
    """Row ``b`` of :func:`values_for`."""
    n = hand_size.shape[1]
    seat = public[b, TO_ACT]
    forced = opening_rank(played[b], rules)
    game = new_game(n)
    work = np.empty(OBS_DIM, np.float32), np.empty(NUM_ACTIONS, np.int8), np.empty(NUM_ACTIONS, np.float32)
    observed = _plays_a_network(policies, b)
    for r in range(NUM_RANKS):
        values[b, r] = np.nan
        if wanted[b, r] and may_lead(holding[b], seat, r, forced):
            total = 0.0
            for k in range(samples):
                total += _lead_total(
                    b, r, k, viewers[b], holding, hand_size, played, public, deal_score, policies, seeds, rules,
                    nets, template, observed, game, work,
                )  # fmt: skip
            values[b, r] = total / samples


@by_work
def values_for(holding, hand_size, played, public, deal_score, viewers, wanted, policies, samples, seeds, rules, values,
               nets, template):  # fmt: skip
    """``values[b, r]``: the mean chips seat ``viewers[b]`` makes from now in game ``b`` when the seat to act
    there leads rank ``r`` (NaN where not legal or not ``wanted[b, r]``), over ``samples`` rollouts with common
    random numbers — every rank its own, since the deal, not the leader's view, tells equally held ranks
    apart. The values of a decision by someone else, for the control variates of an evaluation
    (:mod:`train.measure.variance`); the other arguments as :func:`lead_values`'s."""
    for b in numba.prange(hand_size.shape[0]):
        _values_of_game(b, holding, hand_size, played, public, deal_score, viewers, wanted, policies, samples, seeds,
                        rules, values, nets, template)  # fmt: skip


@numba.njit(cache=True, nogil=True)
def _most_copies_advantage(b, holding, hand_size, played, public, deal_score, actions, samples, seeds, rules, nets,
                           template, wanted, policies, values):  # fmt: skip
    """Row ``b`` of :func:`most_copies_advantages`; ``wanted``, ``policies``, ``values`` are its scratch rows."""
    seat = public[b, TO_ACT]
    forced = opening_rank(played[b], rules)
    most = 0
    for r in range(NUM_RANKS):
        if may_lead(holding[b], seat, r, forced):
            most = max(most, holding[b, seat, r])
    for r in range(NUM_RANKS):  # the lead taken, and most_copies' leads (the legal ranks held most often)
        most_held = most > 0 and holding[b, seat, r] == most and may_lead(holding[b], seat, r, forced)
        wanted[b, r] = r == actions[b] or most_held
    policies[b, :] = MOST_COPIES
    _values_of_game(b, holding, hand_size, played, public, deal_score, public[:, TO_ACT], wanted, policies, samples,
                    seeds, rules, values, nets, template)  # fmt: skip
    reference, ties = 0.0, 0
    for r in range(NUM_RANKS):  # the wanted ranks held most often: most_copies' leads (the taken one may be one)
        if wanted[b, r] and holding[b, seat, r] == most:
            reference += values[b, r]
            ties += 1
    return values[b, actions[b]] - reference / ties


@numba.njit(cache=True, nogil=True)
def _advantage_scratch(hand_size):
    """The rows :func:`_most_copies_advantage` works in, one per game: ranks wanted, seats' policies, values."""
    games, n = hand_size.shape
    return np.zeros((games, NUM_RANKS), np.bool_), np.empty((games, n), np.int64), np.empty((games, NUM_RANKS))


@by_work
def most_copies_advantages(holding, hand_size, played, public, deal_score, actions, samples, seeds, rules, nets,
                           template, out):  # fmt: skip
    """``out[b]``: the advantage of lead ``actions[b]`` (legal) by the seat to act in game ``b`` over most_copies'
    lead, in the true deal with every seat continuing as most_copies: ``Q(a) - mean Q(b)`` over the legal ranks
    held most often, ``Q`` from ``samples`` rollouts with common random numbers (:func:`values_for`)."""
    games = hand_size.shape[0]
    wanted, policies, values = _advantage_scratch(hand_size)
    for b in numba.prange(games):
        out[b] = _most_copies_advantage(b, holding, hand_size, played, public, deal_score, actions, samples, seeds,
                                        rules, nets, template, wanted, policies, values)  # fmt: skip

