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
from .kernel import may_lead, new_game, opening_rank, play_out, play_until_choice, uniform
from .kernel_network import NETWORK, play_out_observed
from .observation import OBS_DIM

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)

_MIX = np.uint64(0xD1B54A32D192ED03)


@numba.njit(cache=True, nogil=True, parallel=True)
def lead_values(holding, hand_size, played, public, deal_score, seats, policies, samples, seeds, rules, values, nets,
                template):  # fmt: skip
    """``values[b, r]``: the mean chips seat ``seats[b]`` makes from now in game ``b`` when it leads rank ``r``
    (NaN where ``r`` is not a legal lead), over ``samples`` rollouts with common random numbers.

    Game ``b`` (the stacked kernel state, :data:`snipsnap_env.kernel.STATE`) must stand at a lead of
    ``seats[b]``; ``policies[b, seat]`` is the kernel policy each absolute seat plays in the rollouts (the
    leading seat's entry is its own rollout policy), a code from ``NETWORK`` on playing a network of ``nets``
    (:mod:`snipsnap_env.kernel_network`) that observes the seat (``template``: this table's observation
    template); ``seeds[b]`` seeds game ``b``'s rollout streams.
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
        h, size, done, pub, score, streams = new_game(n)
        observed = False  # a network seat: play out observing, keeping the lead record it reads
        for i in range(n):
            observed |= policies[b, i] >= NETWORK
        obs, mask = np.empty(OBS_DIM, np.float32), np.empty(NUM_ACTIONS, np.int8)
        logits = np.empty(NUM_ACTIONS, np.float32)
        for k in range(samples):
            for copies in range(1, CARDS_PER_RANK + 1):
                if standing_for[copies] < 0:
                    continue
                h[:, :] = holding[b]
                size[:] = hand_size[b]
                done[:] = played[b]
                pub[:] = public[b]
                score[:] = deal_score[b]
                for i in range(1 + n):  # the same draws for every lead of this sample
                    streams[i] = seeds[b] ^ (np.uint64(k * (1 + n) + i + 1) * _MIX)
                    uniform(streams[i : i + 1])
                play_until_choice(h, size, done, pub, score, standing_for[copies], rules)
                if observed:
                    play_out_observed(
                        h, size, done, pub, score, policies[b], streams, rules, nets, template, obs, mask, logits
                    )
                else:
                    play_out(h, size, done, pub, score, policies[b], streams, rules)
                totals[copies] += score[seat] - deal_score[b, seat]
        for r in range(NUM_RANKS):
            if may_lead(holding[b], seat, r, forced):
                values[b, r] = totals[holding[b, seat, r]] / samples
            else:
                values[b, r] = np.nan
