"""The batched engine: B independent deals at once, as arrays, with no Python loop over games.

The rules are those of :mod:`snipsnap_env.engine` (parity tests hold the two together); the layout of the
observation is that of :mod:`snipsnap_env.observation`. Only leads are decisions — a follow or a pass is
always the one legal action — so ``step`` applies one lead per game and then plays every forced turn
(follows, passes and one-rank leads) until each game waits at its next real choice or its deal ends.
A whole run of passes is played in one array operation: the next player to act in a set is the first
seat, going left from the latest card's player, that holds the rank.

>>> env = BatchEnv(num_games=4, num_players=6, seed=0)
>>> obs, mask = env.reset()
>>> obs.shape, mask.shape, env.current_player.shape
((4, 111), (4, 14), (4,))
"""

from __future__ import annotations

import numpy as np

from . import batch_kernels as kernels
from .cards import CARDS_PER_RANK, NUM_CARDS, NUM_RANKS
from .engine import NUM_ACTIONS
from .observation import OBS_DIM, SCALE, SLICES, rules_features
from .rules import MIN_PLAYERS, check_num_players, make_rules

_RANK_OF_CARD = np.arange(NUM_CARDS) % NUM_RANKS


class BatchEnv:
    """``num_games`` deals of ``num_players`` played side by side; finished deals restart by themselves.

    ``reset() -> (obs, mask)``; ``step(actions) -> (obs, mask, rewards, dones, infos)``. ``obs`` (B, 111)
    and ``mask`` (B, 14) are for the seat to act in each game (``current_player``, shape (B,)); ``rewards``
    (B, N) are chips for every seat (deal points with chips off); a game whose deal ended in this step has
    ``dones`` True, its results in ``infos`` (``winner``, ``turns``, ``deal_score`` per seat), and is
    already dealt anew: its ``obs``/``mask`` are the new deal's. Each deal is a match of one deal, with a
    random dealer; chips moved before anyone acts (the ante) arrive with that game's next rewards.

    ``backend``: ``"numba"`` (compiled per-game kernels, needs numba), ``"numpy"`` (array operations over
    all games), or ``"auto"``: numba when it is installed.
    """

    def __init__(
        self, num_games: int, num_players: int, rules="scarne", seed: int | None = None, backend: str = "auto"
    ):
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games got {num_games!r}; allowed: an integer of at least 1")
        if backend not in ("auto", "numba", "numpy"):
            raise ValueError(f"backend got {backend!r}; allowed: 'auto', 'numba', 'numpy'")
        if backend == "numba" and kernels.numba is None:
            raise ValueError("backend 'numba' needs numba: pip install 'snipsnap[fast]'")
        self.backend = backend if backend != "auto" else ("numba" if kernels.numba is not None else "numpy")
        self.num_games = B = int(num_games)
        self.num_players = N = check_num_players(num_players)
        self.rules = make_rules(rules)
        self.rng = np.random.default_rng(seed)
        self._seat_ids = np.arange(N)
        self.counts = np.zeros((B, N, NUM_RANKS), np.int8)  #: cards of each rank in each hand
        self.hand_size = np.zeros((B, N), np.int64)
        self.played = np.zeros((B, NUM_RANKS), np.int64)
        self.open_rank = np.full(B, -1, np.int64)  #: -1: no set open
        self.last_player = np.zeros(B, np.int64)  #: player of the open set's latest card
        self.current_player = np.zeros(B, np.int64)  #: the seat to act (the leader at a decision)
        self.dealer = np.zeros(B, np.int64)
        self.pot = np.zeros(B, np.int64)
        self.score = np.zeros((B, N), np.float64)  #: chips won this deal (points with chips off)
        self.turns = np.zeros(B, np.int64)
        self.winner = np.full(B, -1, np.int64)
        self._reported = np.zeros((B, N), np.float64)  # score already paid out as rewards
        const = np.zeros(OBS_DIM, np.float32)  # the fields that never change at a decision point
        const[SLICES["is_lead"]] = 1
        const[SLICES["to_act"].start] = 1  # the observer is the seat to act
        const[SLICES["seat_present"].start : SLICES["seat_present"].start + N] = 1
        const[SLICES["num_players"].start + N - MIN_PLAYERS] = 1
        const[SLICES["rules"]] = rules_features(self.rules)
        const[SLICES["deals_left"]] = 1
        self._const_obs = const * SCALE
        self._rule_codes = kernels.rule_codes(self.rules)
        self._state = tuple(getattr(self, name) for name in kernels.STATE)  # arrays only ever change in place
        self._offsets = np.array(
            [SLICES[name].start for name in ("hand", "played", "unseen", "hand_size", "score", "pot")], np.int64
        )

    # ---- dealing --------------------------------------------------------------------------------------
    def reset(self, owners: np.ndarray | None = None, dealers: np.ndarray | None = None):
        """Deal every game anew and play to the first real choice; return ``(obs, mask)``.

        ``owners`` (B, 52) gives the seat holding each card id and ``dealers`` (B,) the dealers, for
        given deals; by default both are drawn from the env's random generator.
        """
        games = np.arange(self.num_games)
        self._deal(games, owners, dealers)
        self._play_forced()
        return self.observe()

    def _deal(self, games: np.ndarray, owners=None, dealers=None) -> None:
        k, N = len(games), self.num_players
        if dealers is None:
            dealers = self.rng.integers(N, size=k)
        dealers = np.asarray(dealers, np.int64)
        if owners is None and self.backend == "numba":  # the same shuffle as below, compiled
            uniforms = self.rng.random((k, NUM_CARDS))
            kernels.deal(
                games, uniforms, dealers, self.dealer, self._reported, self.rules.ante, self._rule_codes, self._state
            )
            return
        if owners is None:  # shuffle, then deal one card at a time from the dealer's left
            pack = shuffle_packs(self.rng.random((k, NUM_CARDS)))
            owners = np.empty((k, NUM_CARDS), np.int64)
            np.put_along_axis(owners, pack, (dealers[:, None] + 1 + np.arange(NUM_CARDS)) % N, axis=1)
        else:
            owners = check_owners(owners, k, N)
            if np.any((dealers < 0) | (dealers >= N)):
                raise ValueError(f"dealers must be seats from 0 to {N - 1}, got {np.unique(dealers).tolist()}")
        flat = ((np.arange(k)[:, None] * N + owners) * NUM_RANKS + _RANK_OF_CARD).ravel()
        self.counts[games] = np.bincount(flat, minlength=k * N * NUM_RANKS).reshape(k, N, NUM_RANKS)
        self.hand_size[games] = self.counts[games].sum(axis=2)
        self.played[games] = 0
        self.open_rank[games] = -1
        self.dealer[games] = dealers
        self.current_player[games] = (dealers + 1) % N  # the dealer's left leads
        self.pot[games] = 0
        self.score[games] = 0.0
        self._reported[games] = 0.0
        self.turns[games] = 0
        self.winner[games] = -1
        if self.rules.chips and self.rules.ante:  # 1 each, 1 more from whoever was dealt fewer cards
            sizes = self.hand_size[games]
            ante = self.rules.ante + (sizes < sizes.max(axis=1, keepdims=True))
            self.score[games] -= ante
            self.pot[games] += ante.sum(axis=1)

    # ---- observing ------------------------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        """(B, 14) int8: at a decision the leader may lead any rank it holds, never pass."""
        mask = np.zeros((self.num_games, NUM_ACTIONS), np.int8)
        mask[:, :NUM_RANKS] = self.counts[np.arange(self.num_games), self.current_player] > 0
        return mask

    def observe(self):
        """``(obs, mask)`` for the seat to act in every game, all at a lead."""
        B, N = self.num_games, self.num_players
        if self.backend == "numba":
            obs = np.empty((B, OBS_DIM), np.float32)
            mask = np.empty((B, NUM_ACTIONS), np.int8)
            kernels.observe(
                obs,
                mask,
                self._const_obs,
                SCALE,
                self.counts,
                self.hand_size,
                self.played,
                self.pot,
                self.score,
                self.current_player,
                self._offsets,
            )
            return obs, mask
        games = np.arange(B)
        hand = self.counts[games, self.current_player].astype(np.float32)
        obs = np.empty((B, OBS_DIM), np.float32)
        obs[:] = self._const_obs
        obs[:, SLICES["hand"]] = hand * SCALE[SLICES["hand"]]
        obs[:, SLICES["played"]] = self.played * SCALE[SLICES["played"]]
        obs[:, SLICES["unseen"]] = (CARDS_PER_RANK - hand - self.played) * SCALE[SLICES["unseen"]]
        seats = (self.current_player[:, None] + self._seat_ids) % N  # absolute seat of each relative slot
        start = SLICES["hand_size"].start
        obs[:, start : start + N] = self.hand_size[games[:, None], seats] * SCALE[start]
        start = SLICES["score"].start
        obs[:, start : start + N] = self.score[games[:, None], seats] * SCALE[start]
        obs[:, SLICES["pot"].start] = self.pot * SCALE[SLICES["pot"].start]
        return obs, self.legal_mask()

    # ---- playing --------------------------------------------------------------------------------------
    def step(self, actions: np.ndarray, active: np.ndarray | None = None):
        """Lead ``actions[b]`` in every game ``b`` (or only where ``active``), then play all forced turns."""
        actions = np.asarray(actions, np.int64)
        if actions.shape != (self.num_games,):
            raise ValueError(f"actions must have shape ({self.num_games},), got {actions.shape}")
        games = np.arange(self.num_games) if active is None else np.flatnonzero(active)
        acts = actions[games]
        legal = (acts >= 0) & (acts < NUM_RANKS)
        legal[legal] = self.counts[games[legal], self.current_player[games[legal]], acts[legal]] > 0
        if not legal.all():
            bad = games[~legal][:10]
            raise ValueError(
                f"illegal actions {actions[bad].tolist()} in games {bad.tolist()}: "
                "a lead must be a rank (0..12) that the seat to act holds"
            )
        if self.backend == "numba":  # lead, forced turns and rewards in one compiled pass
            rewards = np.empty_like(self.score)
            self._advance(
                actions, np.ones(self.num_games, bool) if active is None else np.asarray(active, bool), rewards
            )
        else:
            self._lead(games, acts)
            self._play_forced()
            rewards = self.score - self._reported
            self._reported[:] = self.score
        ended = self.winner >= 0
        infos = {
            "winner": self.winner.copy(),
            "turns": np.where(ended, self.turns, 0),
            "deal_score": np.where(ended[:, None], self.score, 0.0),
        }
        done_games = np.flatnonzero(ended)
        if done_games.size:
            self._deal(done_games)  # the numba backend also plays the new deals' forced turns
            if self.backend == "numpy":
                self._play_forced()
        obs, mask = self.observe()
        return obs, mask, rewards, ended, infos

    def _advance(self, actions: np.ndarray, active: np.ndarray, rewards: np.ndarray) -> None:
        kernels.advance(actions, active, rewards, self._reported, self._rule_codes, self._state)

    def _lead(self, games: np.ndarray, ranks: np.ndarray) -> None:
        self.open_rank[games] = ranks
        self._play(games, self.current_player[games], ranks)

    def _play(self, games, seats, ranks) -> None:
        """``seats`` play the rank in ``games`` (every copy they hold with multi_play)."""
        n = self.counts[games, seats, ranks].astype(np.int64) if self.rules.multi_play else 1
        self.counts[games, seats, ranks] -= n
        self.hand_size[games, seats] -= n
        self.played[games, ranks] += n
        self.last_player[games] = seats
        self.current_player[games] = seats
        self.turns[games] += 1
        out = self.hand_size[games, seats] == 0
        if out.any():
            self._go_out(games[out], seats[out])
        closed = ~out & (self.played[games, ranks] == CARDS_PER_RANK)
        self.open_rank[games[closed]] = -1  # the closing player leads next: current_player already

    def _follow(self, games: np.ndarray) -> None:
        """The next card of each open set: its holder nearest the latest card's left plays; the seats
        between pass (paying any pass fee); with no pass in between, the latest card's player pays."""
        N = self.num_players
        ranks, last = self.open_rank[games], self.last_player[games]
        order = (last[:, None] + 1 + self._seat_ids) % N  # turn order starting at the latest card's left
        holds = self.counts[games[:, None], order, ranks[:, None]] > 0
        passes = holds.argmax(axis=1)  # some seat holds the rank: all four are in hands or played
        seats = order[np.arange(len(games)), passes]
        self.turns[games] += passes
        rules = self.rules
        if rules.chips and rules.pass_fee != "none":
            passed = (self._seat_ids[None, :] - last[:, None] - 1) % N < passes[:, None]
            self.score[games] -= passed
            if rules.pass_fee == "to_pot":
                self.pot[games] += passes
            else:  # to_previous: each passer pays the latest card's player
                self.score[games, last] += passes
        if rules.chips and rules.penalties:
            snipped = passes == 0
            g, payer = games[snipped], last[snipped]
            amount = self.played[g, ranks[snipped]]  # the payer played card k = cards played so far
            self.score[g, payer] -= amount
            self.pot[g] += amount
        self._play(games, seats, ranks)

    def _go_out(self, games: np.ndarray, winners: np.ndarray) -> None:
        """Deal over: the winner takes the pot and the settlement (or +1 / −1/(N−1) with chips off)."""
        N = self.num_players
        self.winner[games] = winners
        if self.rules.chips:
            owed = self.rules.settle_per_card * self.hand_size[games]  # the winner's own hand is empty
            self.score[games] -= owed
            self.score[games, winners] += owed.sum(axis=1) + self.pot[games]
            self.pot[games] = 0
        else:
            self.score[games] = -1.0 / (N - 1)
            self.score[games, winners] = 1.0

    def _play_forced(self) -> None:
        """Play follows, passes and one-rank leads until every game is at a real choice or over."""
        if self.backend == "numba":  # rewards booked here stay unpaid: forced turns at a deal's start are
            unpaid = self._reported.copy()  # paid with the game's next step, as in the numpy path
            self._advance(np.zeros(self.num_games, np.int64), np.zeros(self.num_games, bool), np.empty_like(self.score))
            self._reported[:] = unpaid
            return
        while True:
            live = self.winner < 0
            following = np.flatnonzero(live & (self.open_rank >= 0))
            if following.size:
                self._follow(following)
                continue
            leading = np.flatnonzero(live)
            held = self.counts[leading, self.current_player[leading]] > 0
            forced = held.sum(axis=1) == 1
            if not forced.any():
                return
            self._lead(leading[forced], held[forced].argmax(axis=1))


def shuffle_packs(uniforms: np.ndarray) -> np.ndarray:
    """One shuffled pack of card ids per row of ``uniforms`` (k, 52): a Fisher–Yates shuffle whose i-th swap
    partner is ``floor(u[i] * (i + 1))``, the same in both backends so a seed deals the same games."""
    k = len(uniforms)
    packs = np.tile(np.arange(NUM_CARDS), (k, 1))
    rows = np.arange(k)
    for position in range(NUM_CARDS - 1, 0, -1):
        other = (uniforms[:, position] * (position + 1)).astype(np.int64)
        packs[rows, position], packs[rows, other] = packs[rows, other], packs[rows, position].copy()
    return packs


def check_owners(owners, num_games: int, num_players: int) -> np.ndarray:
    """``owners`` (B, 52) of seats, each game's hands non-empty, or a clear error."""
    owners = np.asarray(owners)
    if owners.shape != (num_games, NUM_CARDS):
        raise ValueError(
            f"owners must have shape ({num_games}, {NUM_CARDS}): the seat of each card, got {owners.shape}"
        )
    if not np.issubdtype(owners.dtype, np.integer) or owners.min() < 0 or owners.max() >= num_players:
        raise ValueError(f"owners must hold seats from 0 to {num_players - 1}")
    sizes = np.stack([(owners == seat).sum(axis=1) for seat in range(num_players)], axis=1)
    if (sizes == 0).any():
        raise ValueError(f"games {np.flatnonzero((sizes == 0).any(axis=1))[:10].tolist()} deal a seat no card")
    return owners.astype(np.int64)


def owners_from_hands(hands: list[list[int]]) -> np.ndarray:
    """The (52,) seat-of-each-card array for a list of hands of card ids."""
    owners = np.empty(NUM_CARDS, np.int64)
    for seat, hand in enumerate(hands):
        owners[list(hand)] = seat
    return owners
