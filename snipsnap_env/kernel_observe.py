"""The kernel's observer: a seat's observation vector and action mask from a game's arrays, compiled.

The layout is :mod:`snipsnap_env.observation`'s (its offsets and scales are frozen into the compiled code);
parity tests hold it equal to the engine's encoder at every position.
"""

from __future__ import annotations

import numpy as np

from .cards import CARDS_PER_RANK, NUM_RANKS
from .engine import NO_RANK, PASS
from .jit_cache import drop_if_sources_changed
from .kernel import may_lead, opening_rank
from .kernel_state import (
    CHIPS,
    COPIES_LED,
    FEWEST_LED,
    LAST_PLAYER,
    LEADS,
    OPEN_RANK,
    PENALTIES,
    POT,
    PREVIOUS_TURN_PLAYED,
    TO_ACT,
    WINNER,
    jit,
)
from .observation import SCALE, SLICES

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)

# observation offsets and scales, frozen into the compiled code
_OBS_AT = np.array(
    [
        SLICES[name].start
        for name in (
            "hand",
            "played",
            "unseen",
            "open_rank",
            "is_lead",
            "set_cards",
            "would_penalise",
            "last_player",
            "to_act",
            "hand_size",
            "score",
            "pot",
            "leads",
            "copies_led",
            "fewest_led",
        )
    ],
    np.int64,
)
_SCALE = SCALE.astype(np.float64)


@jit
def observe(holding, hand_size, played, public, deal_score, seat, template, rules, obs, mask):
    """Fill ``obs`` (the layout of :mod:`snipsnap_env.observation`) and ``mask`` for ``seat`` (one deal)."""
    n = holding.shape[0]
    hand_at, played_at, unseen_at, open_at, is_lead_at, set_at, penalise_at = _OBS_AT[:7]
    last_at, to_act_at, size_at, score_at, pot_at, leads_at, copies_at, fewest_at = _OBS_AT[7:]
    obs[:] = template
    mask[:] = 0
    rank, to_act, over = public[OPEN_RANK], public[TO_ACT], public[WINNER] >= 0
    for r in range(NUM_RANKS):
        held = holding[seat, r]
        obs[hand_at + r] = held * _SCALE[hand_at]
        obs[played_at + r] = played[r] * _SCALE[played_at]
        obs[unseen_at + r] = (CARDS_PER_RANK - held - played[r]) * _SCALE[unseen_at]
    if rank == NO_RANK:
        obs[is_lead_at] = 1.0
    else:
        obs[open_at + rank] = 1.0
        obs[set_at] = played[rank] * _SCALE[set_at]
        obs[penalise_at] = 1.0 if public[PREVIOUS_TURN_PLAYED] and rules[CHIPS] and rules[PENALTIES] else 0.0
        obs[last_at + (public[LAST_PLAYER] - seat) % n] = 1.0
    for i in range(n):
        other = (seat + i) % n
        obs[size_at + i] = hand_size[other] * _SCALE[size_at]
        obs[score_at + i] = deal_score[other] * _SCALE[score_at]
        leads = public[LEADS + other]
        if leads:
            obs[leads_at + i] = leads * _SCALE[leads_at]
            obs[copies_at + i] = public[COPIES_LED + other] / leads * _SCALE[copies_at]
            obs[fewest_at + i] = public[FEWEST_LED + other] * _SCALE[fewest_at]
    obs[pot_at] = public[POT] * _SCALE[pot_at]
    if over:
        return
    obs[to_act_at + (to_act - seat) % n] = 1.0
    if seat != to_act:
        return
    if rank == NO_RANK:
        forced = opening_rank(played, rules)
        for r in range(NUM_RANKS):
            mask[r] = 1 if may_lead(holding, seat, r, forced) else 0
    elif holding[seat, rank] > 0:
        mask[rank] = 1
    else:
        mask[PASS] = 1
