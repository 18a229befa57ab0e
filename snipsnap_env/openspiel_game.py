"""Snip Snap Snorem as an OpenSpiel game, so that OpenSpiel's algorithms and bots play it.

    import pyspiel
    import snipsnap_env.openspiel_game  # registers "python_snipsnap"
    game = pyspiel.load_game("python_snipsnap", {"players": 4, "rules": "parlett"})

Needs ``pip install -e ".[recipes]"`` (open-spiel). One game is one deal. The rules are the engine's
(:class:`snipsnap_env.engine.Match`): this module only translates, as the PettingZoo env does.

- **Chance**: the dealer (one of ``players`` outcomes), then the 52 cards one at a time from the shuffled pack,
  dealt clockwise from the dealer's left as :func:`snipsnap_env.cards.deal_pack` deals them (RULES.md §1.4).
  ``rules`` takes a preset or a spec with options, e.g. ``"scarne:ranks=2"``: the small research deck
  (``Rules.ranks``), whose tree is small enough for OpenSpiel's exact ``best_response``.
- **Actions**: 14 distinct, as in the env: 0..12 play a card of that rank (A..K), 13 pass. Every turn is a
  decision, forced follows included (one legal action).
- **Returns**: each player's chips won or lost in the deal (deal points with chips off), zero-sum.
- **Information state string** (perfect recall): the player's seat, the dealer, its own hand as dealt and every
  action since. **Observation tensor**: the env's observation, ``OBS_DIM`` floats (``snipsnap_env.observation``).
- :meth:`SnipSnapState.resample_from_infostate` deals the cards a player has not seen to the other seats
  uniformly among the deals consistent with what it saw (hand sizes, the cards played, the ranks each seat
  showed it lacks by passing), which is what OpenSpiel's ISMCTS samples its worlds with.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from .cards import NUM_CARDS, deal_pack, deck, rank_of
from .engine import NUM_ACTIONS, PASS, IllegalActionError, Match, action_name
from .events import EventKind
from .observation import OBS_DIM, encode
from .rules import check_num_players, check_rules_spec, check_table, make_rules

NAME = "python_snipsnap"
DEFAULTS = {"players": 4, "rules": "scarne"}
MAX_LOSS_PER_CARD = 6  # chips a card can cost a player at most: a penalty of 3, a pass fee, a card left at settle


_GAME_TYPE = pyspiel.GameType(
    short_name=NAME,
    long_name="Snip Snap Snorem (snipsnap)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=8,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULTS,
)


class SnipSnapGame(pyspiel.Game):
    """One deal of Snip Snap Snorem at a table of ``players`` (3..8) under a rules preset."""

    def __init__(self, params=None):
        params = {**DEFAULTS, **(params or {})}
        self.num_players_ = check_num_players(params["players"])
        self.rules = make_rules(check_rules_spec(params["rules"]))
        check_table(self.rules, self.num_players_)
        self.deck = deck(self.rules.ranks)
        bound = float(MAX_LOSS_PER_CARD * len(self.deck)) if self.rules.chips else 1.0
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=self.num_players_,
            min_utility=-bound,
            max_utility=bound * (self.num_players_ - 1),
            utility_sum=0.0,
            max_game_length=len(self.deck) * self.num_players_,  # every card led or followed, each seat passing on it
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self):
        return SnipSnapState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return SnipSnapObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class SnipSnapState(pyspiel.State):
    """The chance phase (dealer, then the pack), then the engine's deal."""

    def __init__(self, game: SnipSnapGame):
        super().__init__(game)
        self._rules = game.rules
        self._n = game.num_players_
        self._deck = game.deck
        self.dealer: int | None = None
        self.pack: list[int] = []
        self.match: Match | None = None  # the engine, once the pack is dealt
        self.dealt: list[list[int]] = []  # each seat's hand as dealt
        self.moves: list[int] = []  # the players' actions, in order
        self._start: list[float] = []

    # ---- whose turn, what is legal ------------------------------------------------------------------------
    def current_player(self):
        if self.match is None:
            return pyspiel.PlayerId.CHANCE
        if self.match.over:
            return pyspiel.PlayerId.TERMINAL
        return self.match.deal.to_act

    def _legal_actions(self, player):
        return list(self.match.deal.legal_actions())

    def chance_outcomes(self):
        if self.dealer is None:
            return [(seat, 1.0 / self._n) for seat in range(self._n)]
        left = sorted(set(self._deck) - set(self.pack))
        return [(card, 1.0 / len(left)) for card in left]

    def apply_action(self, action):
        """OpenSpiel's, except that a negative action (OpenSpiel's kInvalidAction is −1, refused by its C++ before
        the game sees it) is our IllegalActionError, like every other action the game does not allow."""
        if int(action) < 0:
            kind = "chance outcome" if self.is_chance_node() else "action"
            raise IllegalActionError(f"{kind} {action!r} is negative; legal: {self.legal_actions()}")
        super().apply_action(action)

    def _apply_action(self, action):
        if self.match is not None:
            self.match.apply(int(action))
            self.moves.append(int(action))
            return
        if int(action) not in (outcome for outcome, _ in self.chance_outcomes()):  # a dealer or card not there to draw
            kind = "dealer" if self.dealer is None else "card"
            raise IllegalActionError(f"chance outcome {kind} {action!r} is not one of chance_outcomes()")
        if self.dealer is None:
            self.dealer = int(action)
        else:
            self.pack.append(int(action))
            if len(self.pack) == len(self._deck):
                self._start_deal()

    def _start_deal(self) -> None:
        self.dealt = deal_pack(self.pack, self._n, self.dealer)
        self.match = Match(self._rules, self._n, num_deals=1)
        before = float(self._rules.starting_chips if self._rules.chips else 0)  # the ante is part of the deal
        self.match.start(np.random.default_rng(0), hands=[list(hand) for hand in self.dealt], dealer=self.dealer)
        self._start = [before] * self._n

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return f"dealer {action}" if self.dealer is None else f"card {action}"
        return "pass" if action == PASS else f"play {action_name(action)}"

    # ---- the end ----------------------------------------------------------------------------------------
    def is_terminal(self):
        return self.match is not None and self.match.over

    def returns(self):
        """Chips won or lost in the deal (deal points with chips off), one per player: 0 until it ends, as the
        terminal reward model says (the chips moved so far are in ``state.match.chips``)."""
        if not self.is_terminal():
            return [0.0] * self._n
        return [float(score) - start for score, start in zip(self.match.score, self._start)]

    def __str__(self):
        if self.match is None:
            return f"dealing: dealer {self.dealer}, {len(self.pack)} cards dealt"
        deal = self.match.deal
        hands = " | ".join(" ".join(map(str, deal.hand(seat))) for seat in range(self._n))
        return f"dealer {self.dealer}; to act {deal.to_act}; chips {self.match.chips}; hands {hands}"

    # ---- what a player does not know ---------------------------------------------------------------------
    def resample_from_infostate(self, player_id, probability_sampler):
        """A state ``player_id`` cannot tell from this one, drawn uniformly: the other seats' unseen cards
        dealt anew within what the play so far showed, then the same actions replayed."""
        if self.match is None:
            return self.clone()
        rng = np.random.default_rng(int(probability_sampler() * 2**63))
        deal = self.match.deal
        played_by = [[] for _ in range(self._n)]
        lacks = [set() for _ in range(self._n)]
        open_rank = None
        for seat in _skipped_for_the_opening(deal.events, self._rules, self.dealer, self._n):
            lacks[seat].add(self._rules.opening_rank)  # passed over for the opening lead: held no card of its rank
        for event in deal.events:
            if event.kind is EventKind.LEAD:
                open_rank = rank_of(event.card)
            if event.kind in (EventKind.LEAD, EventKind.PLAY):
                played_by[event.seat].append(event.card)
                if self._rules.multi_play:  # whoever plays a rank plays all they hold of it
                    lacks[event.seat].add(rank_of(event.card))
            elif event.kind is EventKind.PASS:  # a pass shows the seat holds none of the open rank
                lacks[event.seat].add(open_rank)
        others = [seat for seat in range(self._n) if seat != player_id]
        unseen = sorted(set(self._deck) - set(deal.hand(player_id)) - {c for cards in played_by for c in cards})
        sizes = {seat: deal.hand_size[seat] for seat in others}
        held = _deal_within(unseen, sizes, {seat: lacks[seat] for seat in others}, rng)
        dealt = [
            list(self.dealt[seat]) if seat == player_id else held[seat] + played_by[seat] for seat in range(self._n)
        ]
        state = self.get_game().new_initial_state()
        state.apply_action(self.dealer)
        for card in pack_for(dealt, self.dealer):
            state.apply_action(card)
        for action in self.moves:
            state.apply_action(action)
        return state


def _skipped_for_the_opening(events, rules, dealer: int, num_players: int) -> list[int]:
    """The seats from the dealer's left up to the first leader, when the first lead must be of the opening rank
    (RULES.md §4, ``opening``): each was passed over because it held no card of that rank."""
    if rules.opening_rank is None:
        return []
    leader = next((event.seat for event in events if event.kind is EventKind.LEAD), None)
    if leader is None:
        return []
    seats, seat = [], (dealer + 1) % num_players
    while seat != leader:
        seats.append(seat)
        seat = (seat + 1) % num_players
    return seats


def _deal_within(cards: list[int], sizes: dict, lacks: dict, rng: np.random.Generator) -> dict:
    """``cards`` dealt to the seats of ``sizes`` (that many each), no seat getting a rank it ``lacks``; uniform
    over such deals by rejection (the constraints bite only on the open set's rank), else built greedily."""
    seats = [seat for seat, size in sizes.items() for _ in range(size)]
    for _ in range(1000):
        order = rng.permutation(len(cards))
        if all(rank_of(cards[i]) not in lacks[seat] for i, seat in zip(order, seats)):
            break
    else:  # a rank few seats may hold: place its cards first, among the seats that may hold them
        order, free = [], list(range(len(seats)))
        for i in sorted(range(len(cards)), key=lambda i: -sum(rank_of(cards[i]) in lacks[s] for s in sizes)):
            allowed = [slot for slot in free if rank_of(cards[i]) not in lacks[seats[slot]]]
            slot = allowed[rng.integers(len(allowed))]
            free.remove(slot)
            order.append((slot, i))
        order = [i for _, i in sorted(order)]
    held = {seat: [] for seat in sizes}
    for i, seat in zip(order, seats):
        held[seat].append(cards[i])
    return held


def pack_for(hands: list[list[int]], dealer: int) -> list[int]:
    """The pack order that :func:`deal_pack` deals into ``hands`` from ``dealer``."""
    n = len(hands)
    queues = [list(hand) for hand in hands]
    return [queues[(dealer + 1 + i) % n].pop(0) for i in range(sum(map(len, hands)))]


class SnipSnapObserver:
    """OpenSpiel's observer: the env's observation tensor; strings for the observation and the info state."""

    def __init__(self, iig_obs_type, params):
        if params:
            raise ValueError(f"the snipsnap observer takes no parameters; got {params}")
        self.perfect_recall = iig_obs_type.perfect_recall
        self.tensor = np.zeros(0 if self.perfect_recall else OBS_DIM, np.float32)
        self.dict = {} if self.perfect_recall else {"observation": self.tensor}

    def set_from(self, state: SnipSnapState, player: int) -> None:
        if self.perfect_recall:
            return
        self.tensor[:] = 0.0 if state.match is None else encode(state.match, player)

    def string_from(self, state: SnipSnapState, player: int) -> str:
        if state.match is None:
            return f"seat {player}; dealing"
        if self.perfect_recall:
            hand = " ".join(map(str, sorted(state.dealt[player])))
            return f"seat {player}; dealer {state.dealer}; dealt {hand}; moves {' '.join(map(str, state.moves))}"
        deal = state.match.deal
        return (
            f"seat {player}; hand {' '.join(map(str, deal.hand(player)))}; played {deal.played}; "
            f"open {deal.open_rank}; sizes {deal.hand_size}; to act {deal.to_act}; chips {state.match.chips}"
        )


pyspiel.register_game(_GAME_TYPE, SnipSnapGame)
