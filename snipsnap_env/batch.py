"""The batched engine: B independent deals at once on the compiled kernel, and whole deals played in it.

The rules are :mod:`snipsnap_env.kernel`'s (parity tests hold it to :mod:`snipsnap_env.engine`); the
observation's layout is :mod:`snipsnap_env.observation`'s. Only leads are decisions — a follow or a pass is
always the one legal action — so ``step`` applies one lead per game and then plays every forced turn
(follows, passes and forced leads) until each game waits at its next real choice or its deal ends.

>>> env = BatchEnv(num_games=4, num_players=6, seed=0)
>>> obs, mask = env.reset()
>>> obs.shape == (4, OBS_DIM), mask.shape, env.to_act.shape
(True, (4, 14), (4,))
>>> play_deals(1000, 6, "scarne", ["most_copies"] + ["random"] * 5, seed=0).shape
(1000, 6)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import batch_kernels
from .cards import NUM_CARDS, NUM_RANKS, deck
from .engine import NUM_ACTIONS, PASS, Deal, EnvOrderError
from .kernel import DEALER, NOT_LED, PUBLIC, STATE, TO_ACT, WINNER, policy_codes, rule_codes, seed_streams
from .observation import OBS_DIM, table_template
from .rules import MAX_PLAYERS, check_count, check_table, make_rules


class Games:
    """The stacked kernel state of B games of N players (:data:`snipsnap_env.kernel.STATE`)."""

    def __init__(self, num_games: int, num_players: int, seed=None):
        B, N = num_games, num_players
        self.holding = np.zeros((B, N, NUM_RANKS), np.int8)  #: cards of each rank in each hand
        self.hand_size = np.zeros((B, N), np.int64)
        self.played = np.zeros((B, NUM_RANKS), np.int64)
        self.public = np.zeros((B, len(PUBLIC)), np.int64)  #: the scalars of kernel.PUBLIC, one row per game
        self.deal_score = np.zeros((B, N), np.float64)  #: chips won this deal (points with chips off)
        self.rng = seed_streams(seed, B * (1 + N)).reshape(B, 1 + N)  #: each game's deal and seat streams
        self.state = tuple(getattr(self, name) for name in STATE)  # the arrays only ever change in place

    @classmethod
    def from_deals(cls, deals: Sequence[Deal], seed=None) -> "Games":
        """The kernel state of engine deals in progress (any position), e.g. to play them out in the kernel."""
        games = cls(len(deals), deals[0].num_players, seed)
        for b, deal in enumerate(deals):
            for array, row in zip(games.state[:5], state_of(deal)):
                array[b] = row
        return games


_SCALARS = PUBLIC[: PUBLIC.index("leads_0")]  # each is the engine's attribute of the same name (None: -1)
# then the lead record, seat by seat within each field: state_of writes it in this order
_RECORD = tuple(f"{field}_{seat}" for field in ("leads", "copies_led", "fewest_led") for seat in range(MAX_PLAYERS))
assert PUBLIC[len(_SCALARS) :] == _RECORD


def state_of(deal: Deal) -> tuple:
    """One engine deal in progress as the kernel's arrays ``(holding, hand_size, played, public, deal_score)``
    (the first five of :data:`snipsnap_env.kernel.STATE`, without a game axis); chips won so far are 0."""
    n = deal.num_players
    holding = np.array([[len(suits) for suits in hand] for hand in deal.holding], np.int8)
    public = [-1 if value is None else int(value) for value in map(deal.__getattribute__, _SCALARS)]
    public += [deal.leads[seat] if seat < n else 0 for seat in range(MAX_PLAYERS)]
    public += [deal.copies_led[seat] if seat < n else 0 for seat in range(MAX_PLAYERS)]
    fewest = [deal.fewest_led[seat] if seat < n else None for seat in range(MAX_PLAYERS)]
    public += [NOT_LED if value is None else value for value in fewest]
    return (
        holding,
        np.asarray(deal.hand_size, np.int64),
        np.asarray(deal.played, np.int64),
        np.array(public, np.int64),
        np.zeros(n),
    )


MAX_GAMES = 1 << 20  # games side by side: ~1 kB each with their observations and streams, a GB at most


class BatchEnv:
    """``num_games`` deals of ``num_players`` played side by side; finished deals restart by themselves.

    ``reset() -> (obs, mask)``; ``step(actions) -> (obs, mask, rewards, dones, infos)``. ``obs`` (B, OBS_DIM)
    and ``mask`` (B, 14) are for the seat to act in each game (``to_act``, shape (B,)); ``rewards`` (B, N)
    are chips for every seat (deal points with chips off); a game whose deal ended in this step has
    ``dones`` True, its results in ``infos`` (``winner``, ``turns``, ``deal_score`` per seat), and is
    already dealt anew: its ``obs``/``mask`` are the new deal's. Each deal is a match of one deal with a
    random dealer; chips moved before anyone acts (the ante, forced turns) arrive with that game's next
    rewards. Every game draws from its own random stream, seeded from ``seed``.
    """

    def __init__(self, num_games: int, num_players: int, rules="scarne", seed: int | None = None):
        self.num_games = B = check_count("num_games", num_games, maximum=MAX_GAMES)
        self.rules = make_rules(rules)
        self.num_players = N = check_table(self.rules, num_players)
        self.games = Games(B, N, seed)
        self._rule_codes = rule_codes(self.rules)
        self._template = table_template(self.rules, N)
        self._reported = np.zeros((B, N))  # chips already paid out as rewards
        self._obs = np.zeros((B, OBS_DIM), np.float32)
        self._mask = np.zeros((B, NUM_ACTIONS), np.int8)
        self._dealt = False  # step() before reset() (or observe()) is an order error, not "illegal actions"

    def seed(self, seed: int | None) -> None:
        """Restart every game's random stream from ``seed`` (takes effect at the next deal)."""
        self.games.rng[:] = seed_streams(seed, self.games.rng.size).reshape(self.games.rng.shape)

    @property
    def to_act(self) -> np.ndarray:
        """(B,) the seat to act in each game: the leader at its real choice."""
        return self.games.public[:, TO_ACT]

    @property
    def dealer(self) -> np.ndarray:
        """(B,) each game's dealer."""
        return self.games.public[:, DEALER]

    # ---- dealing --------------------------------------------------------------------------------------
    def reset(self, owners: np.ndarray | None = None, dealers: np.ndarray | None = None):
        """Deal every game anew and play to the first real choice; return ``(obs, mask)``.

        ``owners`` (B, 52) gives the seat holding each card id (−1 for a card a small deck leaves out,
        ``Rules.ranks``) and ``dealers`` (B,) the dealers, for given deals (both or neither); by default each
        game deals from its own random stream.
        """
        B, N = self.num_games, self.num_players
        if (owners is None) != (dealers is None):
            raise ValueError("reset takes owners and dealers together (given deals) or neither (random deals)")
        if owners is None:
            owners, dealers = np.zeros((0, NUM_CARDS), np.int64), np.zeros(0, np.int64)
        else:
            owners = check_owners(owners, B, N, self.rules.ranks)
            dealers = check_seats("dealers", dealers, B, N)
        batch_kernels.deal_games(B, np.arange(B), owners, dealers, self._rule_codes, self.games.state)
        self._reported[:] = 0.0
        return self.observe()

    # ---- observing ------------------------------------------------------------------------------------
    def observe(self):
        """``(obs, mask)`` for the seat to act in every game: at a real choice, or (possible only on a small
        research deck, ``Rules.ranks``) in a deal that ended before any, whose one legal action is the pass, a
        no-op whose step reports the deal's end."""
        batch_kernels.observe_games(
            self.num_games, self.to_act, self._template, self._rule_codes, self.games.state, self._obs, self._mask
        )
        self._mask[self.games.public[:, WINNER] >= 0, PASS] = 1
        self._dealt = True  # games set up by hand (a search's worlds) start here, as reset()'s do
        return self._obs.copy(), self._mask.copy()

    # ---- playing --------------------------------------------------------------------------------------
    def step(self, actions: np.ndarray, active: np.ndarray | None = None):
        """Lead ``actions[b]`` in every game ``b`` (or only where ``active``), then play all forced turns."""
        B = self.num_games
        if not self._dealt:
            raise EnvOrderError("step() before reset(): deal the games first")
        actions = np.asarray(actions)
        if actions.shape != (B,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be integers of shape ({B},), got {actions.dtype} {actions.shape}")
        if active is None:
            active = np.ones(B, bool)
        else:
            active = np.asarray(active)
            if active.shape != (B,) or active.dtype != bool:
                raise ValueError(f"active must be a bool mask of shape ({B},), got {active.dtype} {active.shape}")
        games = np.flatnonzero(active)
        acts = actions[games].astype(np.int64)
        legal = (acts >= 0) & (acts < NUM_ACTIONS)
        legal[legal] = self._mask[games[legal], acts[legal]] > 0
        if not legal.all():
            bad = games[~legal][:10]
            raise ValueError(
                f"illegal actions {actions[bad].tolist()} in games {bad.tolist()}: "
                "a lead must be a rank (0..12) that the seat to act may lead"
            )
        return self._advance(batch_kernels.step_games, len(games), actions.astype(np.int64), active)

    def use_deal_streams(self, seed: int, first_deal: int = 0) -> None:
        """Give game ``b`` the random streams of deal ``first_deal + b`` of :func:`play_given_deals` with ``seed``:
        the seats :meth:`choose_leads` plays then draw what they draw there (set after :meth:`reset`)."""
        batch_kernels.seat_deal_streams(seed_streams(seed, 1)[0], int(first_deal), self.games.rng)

    def choose_leads(self, games: np.ndarray, policy: str) -> np.ndarray:
        """The leads the kernel policy ``policy`` (a name in :data:`~snipsnap_env.kernel.POLICIES`) makes for the
        seat to act in each of ``games``, each from that seat's own stream (the games are not stepped)."""
        games = np.asarray(games, np.int64)
        leads = np.empty(len(games), np.int64)
        codes = np.full(len(games), policy_codes([policy])[0], np.int64)
        batch_kernels.choose_leads_games(len(games), games, codes, self._rule_codes, self.games.state, leads)
        leads[self.games.public[games, WINNER] >= 0] = PASS  # a deal over before any choice: its no-op (observe)
        return leads

    def play_others(self, learns: np.ndarray, policies: np.ndarray):
        """Play, in every game, the seats that do not learn (``learns`` (B, N) bool), each real lead by its kernel
        policy ``policies[b, seat]`` (:data:`~snipsnap_env.kernel.POLICIES` codes) with the seat's own random
        stream, until a seat that learns is to choose or the deal ends (then dealt anew, as by :meth:`step`);
        returns what :meth:`step` returns. One compiled call for all the other seats' turns."""
        B = self.num_games
        return self._advance(batch_kernels.play_others_games, B * self.num_players, learns, policies)

    def _advance(self, kernel, work: int, *args):
        B = self.num_games
        rewards = np.empty((B, self.num_players))
        ended = np.zeros(B, bool)
        final_score = np.zeros((B, self.num_players))
        final_turns = np.zeros(B, np.int64)
        winners = np.full(B, -1, np.int64)
        kernel(work, *args, rewards, self._reported, ended, winners, final_score, final_turns, self._rule_codes,
               self.games.state)  # fmt: skip
        infos = {"winner": winners, "turns": final_turns, "deal_score": final_score}
        obs, mask = self.observe()
        return obs, mask, rewards, ended, infos


def play_deals(num_deals: int, num_players: int, rules, policies: Sequence[str], seed=0, with_details: bool = False):
    """Deal and play ``num_deals`` whole deals in the kernel, seat ``s`` led by the scripted policy
    ``policies[s]`` (``kernel.POLICIES``); return each deal's chips, shape ``(num_deals, num_players)``
    (deal points with chips off). ``with_details`` also returns the dealers and turn counts."""
    num_deals = check_count("num_deals", num_deals)
    rules = make_rules(rules)
    num_players = check_table(rules, num_players)
    if len(policies) != num_players:
        raise ValueError(f"policies must name one policy per seat ({num_players}), got {len(policies)}")
    chips = np.zeros((num_deals, num_players))
    dealers = np.zeros(num_deals, np.int64)
    turns = np.zeros(num_deals, np.int64)
    stream = seed_streams(seed, 1)[0]
    codes = rule_codes(make_rules(rules))
    batch_kernels.play_deals_kernel(
        2 * num_deals, num_deals, num_players, policy_codes(policies), stream, codes, chips, dealers, turns
    )
    return (chips, dealers, turns) if with_details else chips


def play_given_deals(owners, dealers, policies, rules, seed=0) -> np.ndarray:
    """Play given deals to the end in the kernel: ``owners`` (D, 52) and ``dealers`` (D,) as in
    ``BatchEnv.reset``, ``policies`` (D, N) scripted policy names per deal and seat; return chips (D, N)."""
    policies = np.asarray(policies)
    if policies.ndim != 2:
        raise ValueError(f"policies must be (deals, players) names, got shape {policies.shape}")
    num_deals, num_players = policies.shape
    rules = make_rules(rules)
    check_table(rules, num_players)
    owners = check_owners(owners, num_deals, num_players, rules.ranks)
    dealers = check_seats("dealers", dealers, num_deals, num_players)
    codes = policy_codes(policies.ravel().tolist()).reshape(policies.shape)
    chips = np.zeros((num_deals, num_players))
    stream = seed_streams(seed, 1)[0]
    batch_kernels.play_given_deals_kernel(2 * num_deals, owners, dealers, codes, stream, rule_codes(rules), chips)
    return chips


def play_seated(env: BatchEnv, start, seats, lead, opponents: list, opponent_index, in_kernel=()) -> np.ndarray:
    """Play every deal of ``env`` (dealt, at ``start = (obs, mask)``) to its end; return the chips of the seat
    ``seats[b]`` in each. ``lead(env, rows, obs, mask)`` chooses that seat's leads in games ``rows``;
    ``opponents[opponent_index[b, s]]`` leads for seat ``s`` elsewhere — by ``act_batch``, or, where
    ``in_kernel[i]`` names its kernel policy, by :meth:`BatchEnv.choose_leads` from the seat's own stream."""
    obs, mask = start
    games = len(seats)
    finished = np.zeros(games, bool)
    chips = np.zeros(games)
    rows = np.arange(games)
    while not finished.all():
        live = ~finished
        to_act = env.to_act
        actions = np.zeros(games, np.int64)
        mine = live & (to_act == seats)
        if mine.any():
            actions[mine] = lead(env, np.flatnonzero(mine), obs[mine], mask[mine])
        theirs = opponent_index[rows, to_act]
        for index, policy in enumerate(opponents):
            sel = live & ~mine & (theirs == index)
            if sel.any():
                kernel = in_kernel[index] if index < len(in_kernel) else None
                actions[sel] = env.choose_leads(np.flatnonzero(sel), kernel) if kernel else policy.act_batch(
                    obs[sel], mask[sel]
                )
        obs, mask, _, dones, infos = env.step(actions, active=live)
        ended = dones & live
        chips[ended] = infos["deal_score"][ended, seats[ended]]
        finished |= ended
    return chips


def check_seats(name: str, seats, num_games: int, num_players: int) -> np.ndarray:
    """``seats`` (B,) of whole seat numbers 0..N-1, or a clear error."""
    seats = np.asarray(seats)
    if seats.shape != (num_games,) or not np.issubdtype(seats.dtype, np.integer):
        raise ValueError(f"{name} must be integers of shape ({num_games},), got {seats.dtype} {seats.shape}")
    if seats.size and (seats.min() < 0 or seats.max() >= num_players):
        raise ValueError(f"{name} must be seats from 0 to {num_players - 1}, got {np.unique(seats)[:10].tolist()}")
    return seats.astype(np.int64)


def check_owners(owners, num_games: int, num_players: int, ranks: int = NUM_RANKS) -> np.ndarray:
    """``owners`` (B, 52) of seats (−1 for the cards a deck of ``ranks`` ranks leaves out), each game's hands
    non-empty, or a clear error."""
    owners = np.asarray(owners)
    if owners.shape != (num_games, NUM_CARDS):
        raise ValueError(
            f"owners must have shape ({num_games}, {NUM_CARDS}): the seat of each card, got {owners.shape}"
        )
    in_deck = np.asarray(deck(ranks))
    outside = np.setdiff1d(np.arange(NUM_CARDS), in_deck)
    if (
        not np.issubdtype(owners.dtype, np.integer)
        or owners.size
        and (owners[:, in_deck].min() < 0 or owners.max() >= num_players)
    ):
        raise ValueError(f"owners must hold seats from 0 to {num_players - 1}")
    if outside.size and (owners[:, outside] != -1).any():
        raise ValueError(f"owners must be -1 for the cards a deck of {ranks} ranks leaves out (ranks {ranks}..12)")
    sizes = np.stack([(owners == seat).sum(axis=1) for seat in range(num_players)], axis=1)
    if (sizes == 0).any():
        raise ValueError(f"games {np.flatnonzero((sizes == 0).any(axis=1))[:10].tolist()} deal a seat no card")
    return owners.astype(np.int64)


def owners_from_hands(hands: list[list[int]]) -> np.ndarray:
    """The (52,) seat-of-each-card array for a list of hands of card ids (−1 for a card in no hand)."""
    owners = np.full(NUM_CARDS, -1, np.int64)
    for seat, hand in enumerate(hands):
        owners[list(hand)] = seat
    return owners
