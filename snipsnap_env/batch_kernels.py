"""Compiled per-game kernels for :class:`snipsnap_env.batch.BatchEnv`, used when numba is installed.

The same rules as the engine, written turn by turn for one game ``b`` and compiled by numba; ``advance``
and ``observe`` run them over every game in parallel. Without numba, BatchEnv uses its numpy path.
Install with ``pip install "snipsnap[fast]"`` (the training extras include it).
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:  # the numpy path of BatchEnv is used instead
    numba = None

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
    def _go_out(b, w, hand_size, pot, score, winner, rules):
        winner[b] = w
        n = hand_size.shape[1]
        if rules[CHIPS]:
            total = pot[b]
            for s in range(n):
                if s != w:
                    owed = rules[SETTLE] * hand_size[b, s]
                    score[b, s] -= owed
                    total += owed
            score[b, w] += total
            pot[b] = 0
        else:
            for s in range(n):
                score[b, s] = -1.0 / (n - 1)
            score[b, w] = 1.0

    @jit
    def _play(b, s, r, counts, hand_size, played, open_rank, last_player, current_player, pot, score, turns,
              winner, rules):
        k = counts[b, s, r] if rules[MULTI] else 1
        counts[b, s, r] -= k
        hand_size[b, s] -= k
        played[b, r] += k
        last_player[b] = s
        current_player[b] = s
        turns[b] += 1
        if hand_size[b, s] == 0:
            _go_out(b, s, hand_size, pot, score, winner, rules)
        elif played[b, r] == 4:
            open_rank[b] = -1  # the closing player leads next

    @jit
    def _follow(b, counts, hand_size, played, open_rank, last_player, current_player, pot, score, turns,
                winner, rules):
        n = hand_size.shape[1]
        r = open_rank[b]
        last = last_player[b]
        s = (last + 1) % n
        passes = 0
        while counts[b, s, r] == 0:  # s passes
            if rules[CHIPS] and rules[PASS_FEE] == FEE_TO_POT:
                score[b, s] -= 1
                pot[b] += 1
            elif rules[CHIPS] and rules[PASS_FEE] == FEE_TO_PREVIOUS:
                score[b, s] -= 1
                score[b, last] += 1
            passes += 1
            s = (s + 1) % n
        turns[b] += passes
        if rules[CHIPS] and rules[PENALTIES] and passes == 0:
            score[b, last] -= played[b, r]  # the latest card's player played card k = cards so far
            pot[b] += played[b, r]
        _play(b, s, r, counts, hand_size, played, open_rank, last_player, current_player, pot, score, turns,
              winner, rules)

    @jit
    def _play_forced(b, counts, hand_size, played, open_rank, last_player, current_player, pot, score, turns, winner,
                     rules):
        """Play game ``b``'s follows, passes and one-rank leads until a real choice or the end."""
        while winner[b] < 0:
            if open_rank[b] >= 0:
                _follow(b, counts, hand_size, played, open_rank, last_player, current_player, pot, score, turns,
                        winner, rules)
                continue
            s = current_player[b]
            distinct = 0
            only = -1
            for r in range(counts.shape[2]):
                if counts[b, s, r] > 0:
                    distinct += 1
                    only = r
            if distinct != 1:
                return  # a real choice
            open_rank[b] = only
            _play(b, s, only, counts, hand_size, played, open_rank, last_player, current_player, pot, score,
                  turns, winner, rules)

    @numba.njit(cache=True, nogil=True, parallel=True)
    def advance(actions, active, counts, hand_size, played, open_rank, last_player, current_player, pot, score,
                turns, winner, rules, rewards, reported):
        """Lead ``actions[b]`` where ``active[b]``, play each game's forced turns, and book ``rewards``."""
        for b in numba.prange(counts.shape[0]):
            if active[b] and winner[b] < 0:
                open_rank[b] = actions[b]
                _play(b, current_player[b], actions[b], counts, hand_size, played, open_rank, last_player,
                      current_player, pot, score, turns, winner, rules)
            _play_forced(b, counts, hand_size, played, open_rank, last_player, current_player, pot, score, turns,
                         winner, rules)
            for s in range(score.shape[1]):
                rewards[b, s] = score[b, s] - reported[b, s]
                reported[b, s] = score[b, s]

    @numba.njit(cache=True, nogil=True, parallel=True)
    def deal(games, uniforms, dealers, counts, hand_size, played, open_rank, last_player, current_player, dealer,
             pot, score, turns, winner, reported, rules, ante):
        """Deal ``games`` anew (the pack ordered by ``argsort`` of each row of ``uniforms``, as the numpy
        path does) and play their forced turns."""
        n = hand_size.shape[1]
        num_ranks = counts.shape[2]
        for i in numba.prange(games.shape[0]):
            b = games[i]
            pack = np.argsort(uniforms[i])
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
            _play_forced(b, counts, hand_size, played, open_rank, last_player, current_player, pot, score, turns,
                         winner, rules)

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
