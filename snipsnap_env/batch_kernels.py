"""Compiled per-game kernels for :class:`snipsnap_env.batch.BatchEnv`, used when numba is installed.

The same rules as the engine, written turn by turn for one game ``b`` (``_run``) and compiled by numba;
``advance`` (leads, forced turns, rewards), ``deal`` (shuffle, deal, ante) and ``observe`` run over the
games in parallel. Without numba, BatchEnv uses its numpy path; parity tests hold all three together.
Install with ``pip install "snipsnap[fast]"`` (the training extras include it).
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:  # the numpy path of BatchEnv is used instead
    numba = None

# The game state every kernel shares: BatchEnv passes its arrays as one tuple, in this order.
STATE = (
    "counts",
    "hand_size",
    "played",
    "open_rank",
    "last_player",
    "current_player",
    "pot",
    "score",
    "turns",
    "winner",
)
STATE_SCORE = STATE.index("score")

# rule codes passed to the kernels as one int64 array
CHIPS, PENALTIES, SETTLE, PASS_FEE, MULTI = range(5)
FEE_NONE, FEE_TO_POT, FEE_TO_PREVIOUS = range(3)


def rule_codes(rules) -> np.ndarray:
    """The rule options the kernels need, as int64."""
    fee = {"none": FEE_NONE, "to_pot": FEE_TO_POT, "to_previous": FEE_TO_PREVIOUS}[rules.pass_fee]
    return np.array([rules.chips, rules.penalties, rules.settle_per_card, fee, rules.multi_play], np.int64)


if numba is not None:
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def _run(b, lead, rules, state):
        """Game ``b``: lead rank ``lead`` (if ≥ 0), then play follows, passes and one-rank leads until a real
        choice or the end of the deal. The game's state lives in locals while it runs (this is the hot loop)."""
        counts, hand_size, played, open_rank, last_player, current_player, pot, score, turns, winner = state
        chips, penalties, settle, fee, multi = (
            rules[CHIPS],
            rules[PENALTIES],
            rules[SETTLE],
            rules[PASS_FEE],
            rules[MULTI],
        )
        held, sizes, done, chips_won = counts[b], hand_size[b], played[b], score[b]
        n = sizes.shape[0]
        rank, last, to_act, turn, in_pot = open_rank[b], last_player[b], current_player[b], turns[b], pot[b]
        while winner[b] < 0:
            if rank < 0:  # a lead: the choice given, else the only rank held, else stop for a real choice
                if lead >= 0:
                    rank, lead = lead, -1
                else:
                    distinct = 0
                    for r in range(held.shape[1]):
                        if held[to_act, r] > 0:
                            distinct += 1
                            rank = r
                    if distinct != 1:
                        rank = -1
                        break
                seat = to_act
            else:  # a follow: the first holder going left from the latest card's player; the rest pass
                seat = (last + 1) % n
                passes = 0
                while held[seat, rank] == 0:
                    if chips and fee == FEE_TO_POT:
                        chips_won[seat] -= 1
                        in_pot += 1
                    elif chips and fee == FEE_TO_PREVIOUS:
                        chips_won[seat] -= 1
                        chips_won[last] += 1
                    passes += 1
                    seat = (seat + 1) % n
                turn += passes
                if chips and penalties and passes == 0:  # the latest card's player played card k = cards so far
                    chips_won[last] -= done[rank]
                    in_pot += done[rank]
            count = held[seat, rank] if multi else 1
            held[seat, rank] -= count
            sizes[seat] -= count
            done[rank] += count
            last = to_act = seat
            turn += 1
            if sizes[seat] == 0:  # out: the winner takes the pot and the settlement
                winner[b] = seat
                if chips:
                    for other in range(n):
                        if other != seat:
                            owed = settle * sizes[other]
                            chips_won[other] -= owed
                            in_pot += owed
                    chips_won[seat] += in_pot
                    in_pot = 0
                else:
                    for other in range(n):
                        chips_won[other] = -1.0 / (n - 1)
                    chips_won[seat] = 1.0
            elif done[rank] == 4:
                rank = -1  # set closed: its last player leads next
        open_rank[b], last_player[b], current_player[b], turns[b], pot[b] = rank, last, to_act, turn, in_pot

    @numba.njit(cache=True, nogil=True, parallel=True)
    def advance(actions, active, rewards, reported, rules, state):
        """Lead ``actions[b]`` where ``active[b]``, play each game's forced turns, and book ``rewards``."""
        score = state[STATE_SCORE]
        for b in numba.prange(actions.shape[0]):
            _run(b, actions[b] if active[b] else -1, rules, state)
            for s in range(score.shape[1]):
                rewards[b, s] = score[b, s] - reported[b, s]
                reported[b, s] = score[b, s]

    @numba.njit(cache=True, nogil=True, parallel=True)
    def deal(games, uniforms, dealers, dealer, reported, ante, rules, state):
        """Deal ``games`` anew, the pack shuffled by ``uniforms`` as :func:`snipsnap_env.batch.shuffle_packs`
        does, and play their forced turns."""
        counts, hand_size, played, open_rank, _, current_player, pot, score, turns, winner = state
        n = hand_size.shape[1]
        num_ranks = counts.shape[2]
        for i in numba.prange(games.shape[0]):
            b = games[i]
            pack = np.arange(uniforms.shape[1])
            for position in range(pack.shape[0] - 1, 0, -1):  # Fisher–Yates
                other = int(uniforms[i, position] * (position + 1))
                pack[position], pack[other] = pack[other], pack[position]
            counts[b, :, :] = 0
            for position in range(pack.shape[0]):
                counts[b, (dealers[i] + 1 + position) % n, pack[position] % num_ranks] += 1
            longest = 0
            for s in range(n):
                size = 0
                for r in range(num_ranks):
                    size += counts[b, s, r]
                hand_size[b, s] = size
                longest = max(longest, size)
                score[b, s] = 0.0
                reported[b, s] = 0.0
            played[b, :] = 0
            open_rank[b] = -1
            dealer[b] = dealers[i]
            current_player[b] = (dealers[i] + 1) % n
            pot[b] = 0
            turns[b] = 0
            winner[b] = -1
            if rules[CHIPS] and ante:
                for s in range(n):
                    paid = ante + (1 if hand_size[b, s] < longest else 0)
                    score[b, s] -= paid
                    pot[b] += paid
            _run(b, -1, rules, state)

    @numba.njit(cache=True, nogil=True, parallel=True)
    def observe(obs, mask, const_obs, scale, counts, hand_size, played, pot, score, current_player, offsets):
        """Fill ``obs`` and ``mask`` for the seat to act in every game (all at a lead)."""
        num_ranks = counts.shape[2]
        n = hand_size.shape[1]
        hand_at, played_at, unseen_at, size_at, score_at, pot_at = offsets
        for b in numba.prange(counts.shape[0]):
            s = current_player[b]
            obs[b, :] = const_obs
            for r in range(num_ranks):
                held = counts[b, s, r]
                obs[b, hand_at + r] = held * scale[hand_at]
                obs[b, played_at + r] = played[b, r] * scale[played_at]
                obs[b, unseen_at + r] = (4 - held - played[b, r]) * scale[unseen_at]
                mask[b, r] = 1 if held > 0 else 0
            mask[b, num_ranks] = 0
            for i in range(n):
                seat = (s + i) % n
                obs[b, size_at + i] = hand_size[b, seat] * scale[size_at]
                obs[b, score_at + i] = score[b, seat] * scale[score_at]
            obs[b, pot_at] = pot[b] * scale[pot_at]
else:
    advance = deal = observe = None
