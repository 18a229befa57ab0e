"""The compiled kernel's state: what a game is, as arrays and named scalars, with its random streams.

A game is a few arrays, the same whether it is one row of a :class:`~snipsnap_env.batch.BatchEnv` or a
world sampled by the search player:

=================  ==========  ===========================================================================
name               shape       meaning
=================  ==========  ===========================================================================
``holding``        (N, 13)     cards of each rank in each seat's hand (int8)
``hand_size``      (N,)        cards in each hand
``played``         (13,)       cards of each rank played
``public``         (34,)       the scalars named by ``PUBLIC``: open rank, latest card's player, …, the lead
                               record (what each seat showed it held when it chose a rank to lead) (int64)
``deal_score``     (N,)        chips each seat has won (+) or paid (−) this deal; deal points with chips off
``rng``            (1 + N,)    the game's splitmix64 random streams (uint64): the deal's, then one per seat
=================  ==========  ===========================================================================

A batch stacks them along a first axis; :data:`STATE` names the stacked arrays in the order kernels take
them. Rules arrive as one int64 array, :func:`rule_codes`. Randomness comes only from a game's ``rng``, so
results never depend on how many threads run the games. A new scalar is one name in ``PUBLIC``: code reads it
by the index its name gives (``PUBLIC.index``), never by position.
"""

from __future__ import annotations

import numba
import numpy as np

from .cards import CARDS_PER_RANK, NUM_RANKS
from .engine import NO_RANK
from .jit_cache import drop_if_sources_changed
from .kernel_leads import (  # noqa: F401 (the scripted lead policies the kernel plays: named with its state)
    FEWEST_COPIES,
    MOST_COPIES,
    POLICIES,
    RANDOM,
    RANDOM_CARD,
    kernel_policy,
    policy_codes,
)
from .rules import MAX_PLAYERS, OPENINGS, PASS_FEES, Rules

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)

# ---- rules: every Rules option the kernel reads, as one int64 each ---------------------------------------
RULE_CODES = ("chips", "penalties", "settle_per_card", "pass_fee", "ante", "multi_play", "opening", "ranks")
#: Rules options the kernel does not read, and why: a new option must land in one of the two tuples.
NOT_IN_KERNEL = {
    "calls": "what players say, not what they play",
    "starting_chips": "the kernel counts chips won or lost in the deal, not balances",
}
_CHOICES = {"pass_fee": PASS_FEES, "opening": OPENINGS}
CHIPS, PENALTIES, SETTLE_PER_CARD, PASS_FEE, ANTE, MULTI_PLAY, OPENING, RANKS = range(len(RULE_CODES))
FEE_TO_POT, FEE_TO_PREVIOUS = PASS_FEES.index("to_pot"), PASS_FEES.index("to_previous")
OPENING_SIX = OPENINGS.index("six")


def rule_codes(rules: Rules) -> np.ndarray:
    """The options of ``RULE_CODES`` as int64: booleans and numbers as they are, choices by their index."""
    return np.array(
        [
            _CHOICES[name].index(getattr(rules, name)) if name in _CHOICES else int(getattr(rules, name))
            for name in RULE_CODES
        ],
        np.int64,
    )


# ---- a game's public scalars -----------------------------------------------------------------------------
PUBLIC = (
    *("open_rank", "last_player", "previous_turn_played", "to_act", "pot", "turns", "winner", "dealer"),
    "set_leader",  # the seat that chose the open set's rank (-1: a forced lead, or no set open)
    "leader_cards",  # the cards it has played into that set so far
    *(f"leads_{seat}" for seat in range(MAX_PLAYERS)),  # sets the seat chose to lead, closed this deal
    *(f"copies_led_{seat}" for seat in range(MAX_PLAYERS)),  # its cards in those sets, summed
    *(f"fewest_led_{seat}" for seat in range(MAX_PLAYERS)),  # the fewest in one of them (NOT_LED before any)
)  # scalars before the per-seat blocks: batch.Games.from_deals reads each scalar from the engine by its name
# each scalar's index, found by its name in PUBLIC: a field is added there, and read by name
OPEN_RANK, LAST_PLAYER, PREVIOUS_TURN_PLAYED = (
    PUBLIC.index("open_rank"),
    PUBLIC.index("last_player"),
    PUBLIC.index("previous_turn_played"),
)
TO_ACT, POT, TURNS, WINNER = PUBLIC.index("to_act"), PUBLIC.index("pot"), PUBLIC.index("turns"), PUBLIC.index("winner")
DEALER, SET_LEADER, LEADER_CARDS = PUBLIC.index("dealer"), PUBLIC.index("set_leader"), PUBLIC.index("leader_cards")
LEADS, COPIES_LED, FEWEST_LED = (PUBLIC.index(f"{name}_0") for name in ("leads", "copies_led", "fewest_led"))
NOT_LED = CARDS_PER_RANK + 1
STATE = ("holding", "hand_size", "played", "public", "deal_score", "rng")

jit = numba.njit(cache=True, nogil=True)
# small helpers of the hot loops are inlined in numba's IR: a call with array arguments otherwise costs a
# reference-count update per array (atomic), which dominated the per-turn cost
inline = numba.njit(cache=True, nogil=True, inline="always")


# ---- randomness ------------------------------------------------------------------------------------------
def seed_streams(seed, count: int) -> np.ndarray:
    """``count`` independent uint64 stream states from one seed (``numpy.random.SeedSequence``)."""
    return np.random.SeedSequence(seed).generate_state(max(count, 1), np.uint64)[:count].copy()


@inline
def splitmix(state):
    """splitmix64: the advanced state and the next float in [0, 1) it gives."""
    state += np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return state, (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@inline
def uniform(rng):
    """The next float in [0, 1) of the splitmix64 stream held in ``rng[0]``."""
    rng[0], draw = splitmix(rng[0])
    return draw


@inline
def clear_lead_record(public):
    """No set led yet this deal."""
    public[SET_LEADER], public[LEADER_CARDS] = -1, 0
    public[LEADS : LEADS + MAX_PLAYERS] = 0
    public[COPIES_LED : COPIES_LED + MAX_PLAYERS] = 0
    public[FEWEST_LED : FEWEST_LED + MAX_PLAYERS] = NOT_LED


@inline
def lead_position(public, pot, dealer):
    """The scalars of a deal under way with no set open and seat 0 to lead (a searcher's sampled world): a
    turn played, ``pot`` chips in the pot, no lead record yet."""
    public[:] = 0
    public[OPEN_RANK], public[LAST_PLAYER], public[TO_ACT], public[POT] = NO_RANK, -1, 0, pot
    public[TURNS], public[WINNER], public[DEALER] = 1, -1, dealer
    clear_lead_record(public)


@jit
def lead_positions(public, pots, dealer):
    """:func:`lead_position` for each row of stacked scalars (B, len(PUBLIC))."""
    for b in range(public.shape[0]):
        lead_position(public[b], pots[b], dealer)


@jit
def new_game(num_players):
    """Zeroed arrays for one game: ``(holding, hand_size, played, public, deal_score, rng)``."""
    public = np.zeros(len(PUBLIC), np.int64)
    clear_lead_record(public)
    return (
        np.zeros((num_players, NUM_RANKS), np.int8),
        np.zeros(num_players, np.int64),
        np.zeros(NUM_RANKS, np.int64),
        public,
        np.zeros(num_players, np.float64),
        np.zeros(1 + num_players, np.uint64),
    )
