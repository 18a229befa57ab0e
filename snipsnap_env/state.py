"""The global state: every seat's hand, which no observation holds, for critics that see the whole deal.

PettingZoo's convention for centralised critics (MAPPO; PerfectDou's perfect-training-imperfect-execution):
``env.state()`` and ``env.state_space``. Here the state is the hands block below followed by the observation
of seat 0, so it holds every hand and the whole public table in a fixed seat order:

=====  =============  ====  ==========================================================================
index  name           size  meaning (scale)
=====  =============  ====  ==========================================================================
0      hands          104   cards of each rank (A..K) in the hand of relative seat 0..7 (/4): seat 0
                            first, then its left, and so on; 0 for seats the table does not have
104    observation    136   the observation of seat 0 (:mod:`snipsnap_env.observation`)
=====  =============  ====  ==========================================================================

Training relative to a learner's seat uses the hands block alone, relative to that seat (its own hand is
slot 0, as in its observation): a critic reads the observation and that block; an actor only the
observation. Worked example: at a 3-player table where seat 2 holds two kings, ``hands(holding, 2)[12]``
is 0.5, and ``hands(holding, 0)[2 * 13 + 12]`` is 0.5 too (seat 2 is two to seat 0's left).
"""

from __future__ import annotations

import numpy as np

from .cards import CARDS_PER_RANK, NUM_RANKS
from .observation import HIGH, LOW, OBS_DIM, encode
from .rules import MAX_PLAYERS

HANDS_DIM = MAX_PLAYERS * NUM_RANKS  # 104
STATE_DIM = HANDS_DIM + OBS_DIM  # 240
STATE_LOW = np.concatenate([np.zeros(HANDS_DIM, np.float32), LOW])
STATE_HIGH = np.concatenate([np.ones(HANDS_DIM, np.float32), HIGH])
LEAD_VALUES_DIM = NUM_RANKS


#: the columns a critic may read after the observation: none, the hands block (``train_ppo --critic state``)
#: or the value of each lead in the true deal, chips / CHIP_SCALE (``--critic rollouts``, :mod:`.lead_values`)
CRITIC_INPUTS = {0: "none", HANDS_DIM: "hands", LEAD_VALUES_DIM: "lead values"}


def critic_bounds(critic_inputs: int) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of an observation followed by ``critic_inputs`` columns (a key of ``CRITIC_INPUTS``): what a
    critic that sees the whole deal reads; the actor reads the first OBS_DIM columns only."""
    if critic_inputs not in CRITIC_INPUTS:
        raise ValueError(f"critic_inputs got {critic_inputs!r}; allowed: {', '.join(map(str, CRITIC_INPUTS))}")
    if critic_inputs == LEAD_VALUES_DIM:  # chips: no fixed bound
        extra = np.full(LEAD_VALUES_DIM, -np.inf, np.float32), np.full(LEAD_VALUES_DIM, np.inf, np.float32)
    else:
        extra = STATE_LOW[:critic_inputs], STATE_HIGH[:critic_inputs]
    return np.concatenate([LOW, extra[0]]), np.concatenate([HIGH, extra[1]])


def hands(holding: np.ndarray, seat) -> np.ndarray:
    """Every hand, relative to ``seat``: ``holding`` (N, 13) counts per seat and rank, or (B, N, 13) with
    ``seat`` (B,), gives (104,) or (B, 104) float32, scaled by 1/4, with zeros for absent seats."""
    holding = np.asarray(holding)
    single = holding.ndim == 2
    if single:
        holding, seat = holding[None], np.array([seat])
    games, n, _ = holding.shape
    order = (np.asarray(seat)[:, None] + np.arange(n)[None, :]) % n  # absolute seat of each relative slot
    block = np.zeros((games, MAX_PLAYERS, NUM_RANKS), np.float32)
    block[:, :n] = np.take_along_axis(holding, order[:, :, None], axis=1) / CARDS_PER_RANK
    block = block.reshape(games, HANDS_DIM)
    return block[0] if single else block


def holding_of(deal) -> np.ndarray:
    """(N, 13) cards of each rank in each hand of an engine deal."""
    return np.array([[deal.count(seat, rank) for rank in range(NUM_RANKS)] for seat in range(deal.num_players)])


def global_state(match) -> np.ndarray:
    """The state of ``match`` (an :class:`engine.Match`): every hand from seat 0, then seat 0's observation."""
    return np.concatenate([hands(holding_of(match.deal), 0), encode(match, 0)])
