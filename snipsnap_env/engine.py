"""The game itself: one deal, and a match of several deals (RULES.md §1–3).

Pure Python, no gymnasium or pettingzoo: environments translate this state, they never re-implement it.
Actions are ``0..12`` (play a card of that rank, A..K; the lowest suit held is played) and ``PASS``.

>>> from snipsnap_env.rules import make_rules
>>> hands = [[0, 13], [26, 1, 2], [39, 3, 4] + list(range(5, 13)) + list(range(14, 26))
...          + list(range(27, 39)) + list(range(40, 52))]
>>> deal = Deal(make_rules("scarne"), hands, dealer=2, chips=[100, 100, 100])
>>> [str(e) for e in deal.apply(0)]            # player_0 leads the ace of clubs
['player_0 leads AC']
>>> [str(e) for e in deal.apply(0)]            # player_1 must follow: Snip! and player_0 is snipped
['player_1 plays AH: Snip!', 'player_0 is snipped: pays 1 chip into the pot']
"""

from __future__ import annotations

import numpy as np

from .cards import (
    CARDS_PER_RANK,
    NUM_RANKS,
    RANK_NAMES,
    card_id,
    check_hands,
    deal_pack,
    rank_of,
    shuffled_pack,
    suit_of,
)
from .events import Event, EventKind, call_for
from .rules import Rules, check_num_players, check_table

PASS = NUM_RANKS  #: the pass action; 0..12 play a card of that rank
NUM_ACTIONS = NUM_RANKS + 1
NO_RANK = -1  #: ``open_rank`` when no set is open (the next play is a lead)
_ONE_ACTION = np.eye(NUM_ACTIONS, dtype=np.int8)


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this position."""


class EnvOrderError(RuntimeError):
    """An environment call out of order: before ``reset()``, or a step after every agent has finished."""


def action_name(action: int) -> str:
    """``'pass'`` or ``'play <rank>'`` for an action id."""
    return "pass" if action == PASS else f"play {RANK_NAMES[action]}"


def as_action(action) -> int:
    """``action`` as an int, if it is a whole number: an int, a numpy integer or a 0-d integer array (what
    ``action_space.sample()`` and array-returning policies give). A bool would pass for 0 or 1 and a float for
    the rank it rounds to, so both are refused by name, like any other type."""
    if type(action) is int or type(action) is np.int64:  # the common cases first: twice a turn in env()
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        kind = "bool" if isinstance(action, (bool, np.bool_)) else type(action).__name__
        raise IllegalActionError(f"action {action!r} is a {kind}; actions are whole numbers 0..{NUM_ACTIONS - 1}")
    return int(action)


def check_optional_seat(name: str, seat, num_players: int) -> int | None:
    """``seat`` if it is None or a seat at this table (an int: True is no seat), else a ValueError naming ``name``."""
    if seat is not None and (type(seat) is not int or not 0 <= seat < num_players):
        raise ValueError(f"{name} got {seat!r}; allowed: None or a seat from 0 to {num_players - 1}")
    return seat


def check_dealer(dealer, num_players: int) -> int:
    """Return ``dealer`` if it is a seat at this table, else raise a clear error."""
    if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < num_players:
        raise ValueError(f"dealer got {dealer!r}; allowed: a seat from 0 to {num_players - 1}")
    return int(dealer)


class Deal:
    """One deal, from the ante to the settlement.

    ``chips`` is the match's ledger, one balance per seat; the deal moves chips in it in place.
    Public state: ``to_act``, ``open_rank``, ``played`` (cards of each rank played), ``last_player``
    (player of the most recent card of the open set), ``previous_turn_played``, ``hand_size``, ``pot``,
    ``winner`` (None until the deal ends) and ``events``.
    """

    def __init__(self, rules: Rules, hands: list[list[int]], dealer: int, chips: list[int]):
        self.num_players = n = check_num_players(len(hands))
        self.rules = rules
        self.dealer = check_dealer(dealer, n)
        hands = check_hands(hands, n, rules.ranks)
        # holding[seat][rank] = suits held, ascending, so the lowest suit is played first.
        self.holding = [[[] for _ in range(NUM_RANKS)] for _ in range(n)]
        for seat, hand in enumerate(hands):
            for card in sorted(hand):
                self.holding[seat][rank_of(card)].append(suit_of(card))
        self.hand_size = [len(hand) for hand in hands]
        self.chips = chips
        self.pot = 0
        # a small research deck's missing ranks count as played out (rules.Rules.ranks)
        self.played = [0 if rank < rules.ranks else CARDS_PER_RANK for rank in range(NUM_RANKS)]
        self.open_rank = NO_RANK
        self.last_player: int | None = None
        self.previous_turn_played = False
        self.to_act = self.first_to_lead()
        self.winner: int | None = None
        self.turns = 0
        self._legal: tuple[int, ...] | None = None  # the legal actions of the current position, once known
        # The lead record: what each seat showed it held when it chose a rank to lead (a lead with more than
        # one legal rank) — public once the set closes, since every copy of the rank is then played.
        self.set_leader: int | None = None  # the seat that chose the open set's rank
        self.leader_cards = 0  # the cards it has played into that set so far
        self.leads = [0] * n  # sets each seat chose to lead, closed
        self.copies_led = [0] * n  # its cards in those sets, summed
        self.fewest_led: list[int | None] = [None] * n  # the fewest in one of them
        self.sets_recorded = 0  # sets in the record, all seats: the record's version
        self.lead_record_view = None  # (version, per-seat figures) the encoder worked out last
        self.events: list[Event] = [Event(EventKind.DEAL, dealer)]
        if rules.chips and rules.ante:
            self._collect_ante()

    # ---- the table --------------------------------------------------------------------------------
    def left_of(self, seat: int) -> int:
        """The seat on ``seat``'s left: the next to play."""
        return (seat + 1) % self.num_players

    def count(self, seat: int, rank: int) -> int:
        """How many cards of ``rank`` ``seat`` holds."""
        return len(self.holding[seat][rank])

    def hand(self, seat: int) -> list[int]:
        """The card ids in ``seat``'s hand by rank (A..K), each rank's suits ascending: as a hand is shown."""
        return [card_id(s, r) for r in range(NUM_RANKS) for s in self.holding[seat][r]]

    @property
    def is_lead(self) -> bool:
        """True when no set is open: the player to act leads any card."""
        return self.open_rank == NO_RANK

    @property
    def over(self) -> bool:
        """True once a player's hand is empty."""
        return self.winner is not None

    def first_to_lead(self) -> int:
        """The dealer's left leads; with ``opening="six"``, the first holder of a 6 from the dealer's left (§2.5)."""
        seat = self.left_of(self.dealer)
        opening = self.rules.opening_rank
        if opening is not None:
            while not self.holding[seat][opening]:  # the whole deck is dealt, 6s in it: somebody holds a 6
                seat = self.left_of(seat)
        return seat

    @property
    def is_first_lead(self) -> bool:
        """True before any card of the deal is played."""
        return not any(self.played[: self.rules.ranks])

    # ---- legality: the one source of truth --------------------------------------------------------
    def may_lead(self, seat: int, rank: int) -> bool:
        """A lead is any card held — except the deal's first lead with ``opening="six"``, which is a 6 (§4)."""
        opening = self.rules.opening_rank
        if opening is not None and self.is_first_lead and rank != opening:
            return False
        return bool(self.holding[seat][rank])

    def must_follow(self, seat: int) -> bool:
        """A player holding the open rank must play it (RULES.md §2.6)."""
        return self.open_rank != NO_RANK and self.count(seat, self.open_rank) > 0

    def legal_actions(self) -> list[int]:
        """The actions the player to act may take (none once the deal is over)."""
        if self._legal is None:  # worked out once per position: the env, its wrappers and apply all ask
            self._legal = self._work_out_legal_actions()
        return list(self._legal)

    def _work_out_legal_actions(self) -> tuple[int, ...]:
        if self.over:
            return ()
        seat = self.to_act
        if self.is_lead:  # never a pass
            return tuple(r for r in range(NUM_RANKS) if self.may_lead(seat, r))
        return (self.open_rank,) if self.must_follow(seat) else (PASS,)

    def legal_mask(self) -> np.ndarray:
        """The legal actions as an int8 vector of length 14 (all zero once the deal is over)."""
        if self.over or self.is_lead:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
            mask[self.legal_actions()] = 1
            return mask
        return _ONE_ACTION[self.legal_actions()[0]].copy()  # a follow or a pass: one legal action

    # ---- a turn -----------------------------------------------------------------------------------
    def apply(self, action: int) -> list[Event]:
        """Play ``action`` for the player to act; return the events it caused."""
        if self.over:
            raise IllegalActionError(f"the deal is over (player_{self.winner} went out); no more actions")
        action = as_action(action)
        legal = self.legal_actions()
        if action not in legal:
            allowed = ", ".join(f"{a} ({action_name(a)})" for a in legal)
            shown = action_name(action) if isinstance(action, (int, np.integer)) and 0 <= action <= PASS else "?"
            raise IllegalActionError(
                f"player_{self.to_act} cannot take action {action!r} ({shown}) now; legal: {allowed}"
            )
        first_new = len(self.events)
        chosen = self.is_lead and len(legal) > 1
        self._legal = None
        self.turns += 1
        if action == PASS:
            self._pass(self.to_act)
        else:
            self._play(self.to_act, int(action), chosen)
        return self.events[first_new:]

    def _play(self, seat: int, rank: int, chosen: bool) -> None:
        # A batch (multi_play) is judged on its first card only: whoever played the card before it pays.
        penalised = None if self.is_lead or not self.is_penalised() else self.last_player
        if self.is_lead:
            self.open_rank = rank
            self.set_leader, self.leader_cards = (seat if chosen else None), 0
        # multi_play: every card of the rank at once, each its own Snip/Snap/Snorem
        count = self.count(seat, rank) if self.rules.multi_play else 1
        if seat == self.set_leader:
            self.leader_cards += count
        for _ in range(count):
            suit = self.holding[seat][rank].pop(0)
            self.hand_size[seat] -= 1
            self.played[rank] += 1
            position = self.played[rank]
            kind = EventKind.LEAD if position == 1 else EventKind.PLAY
            self.events.append(
                Event(kind, seat, card_id(suit, rank), position, call_for(self.rules.calls, position, rank))
            )
            if penalised is not None:
                self._penalise(penalised, position - 1)
                penalised = None
        self.last_player = seat
        self.previous_turn_played = True
        if self.played[rank] == CARDS_PER_RANK and self.set_leader is not None:
            self._record_lead(self.set_leader, self.leader_cards)
        if self.hand_size[seat] == 0:
            self._go_out(seat)
        elif self.played[rank] == CARDS_PER_RANK:  # set closed: its last player leads next
            self.open_rank = NO_RANK
            self.to_act = seat
        else:
            self.to_act = self.left_of(seat)

    def _record_lead(self, seat: int, cards: int) -> None:
        """A set ``seat`` chose to lead has closed: it held ``cards`` of the rank when it led."""
        self.leads[seat] += 1
        self.copies_led[seat] += cards
        self.fewest_led[seat] = cards if self.fewest_led[seat] is None else min(self.fewest_led[seat], cards)
        self.set_leader = None
        self.sets_recorded += 1

    def is_penalised(self) -> bool:
        """Would a follow now penalise the previous card's player? (RULES.md §3.12)

        Only when the previous turn was a play of this set, with no pass in between; that turn was always
        the right-hand neighbour's, so a batch never penalises its own player.
        """
        return self.rules.chips and self.rules.penalties and not self.is_lead and self.previous_turn_played

    def _penalise(self, seat: int, position: int) -> None:
        """The player of card ``position`` (1..3) is snipped, snapped or snoremed: ``position`` chips."""
        self.chips[seat] -= position
        self.pot += position
        self.events.append(Event(EventKind.PENALTY, seat, position=position, amount=position))

    def _pass(self, seat: int) -> None:
        self.events.append(Event(EventKind.PASS, seat))
        fee = self.rules.pass_fee if self.rules.chips else "none"
        if fee == "to_pot":
            self._pay(seat, None, 1, EventKind.PASS_FEE)
        elif fee == "to_previous":  # never the passer: the rest of the rank is in some hand
            self._pay(seat, self.last_player, 1, EventKind.PASS_FEE)
        self.previous_turn_played = False
        self.to_act = self.left_of(seat)

    # ---- chips --------------------------------------------------------------------------------------
    def _pay(self, seat: int, to_seat: int | None, amount: int, kind: EventKind) -> None:
        self.chips[seat] -= amount
        if to_seat is None:
            self.pot += amount
        else:
            self.chips[to_seat] += amount
        self.events.append(Event(kind, seat, amount=amount, to_seat=to_seat))

    def _collect_ante(self) -> None:
        """Each player antes 1, and 1 more if dealt fewer cards than the longest hand (Bicycle rules)."""
        longest = max(self.hand_size)
        for seat in range(self.num_players):
            self._pay(seat, None, self.rules.ante + (self.hand_size[seat] < longest), EventKind.ANTE)

    def _go_out(self, seat: int) -> None:
        self.winner = seat
        self.events.append(Event(EventKind.OUT, seat))
        if self.rules.chips:
            self.settle(seat)

    def settle(self, winner: int) -> None:
        """The winner takes the pot, and from each other player so many chips per card left (§3.13)."""
        if self.pot:
            self.chips[winner] += self.pot
            self.events.append(Event(EventKind.POT, winner, amount=self.pot))
            self.pot = 0
        for i in range(1, self.num_players):
            loser = (winner + i) % self.num_players
            owed = self.rules.settle_per_card * self.hand_size[loser]
            if owed:
                self._pay(loser, winner, owed, EventKind.SETTLE)


class Match:
    """A fixed number of deals; the dealer moves one seat left each deal and chips carry over (§1.3, §3.14).

    ``score`` is what rewards are the change of: the chip balances, or with chips off the deal points
    (+1 for the winner, −1/(N−1) for each other player, summed over the deals).
    """

    def __init__(self, rules: Rules, num_players: int, num_deals: int = 1):
        self.rules = rules
        self.num_players = check_table(rules, num_players)
        if isinstance(num_deals, bool) or not isinstance(num_deals, int) or num_deals < 1:
            raise ValueError(f"num_deals got {num_deals!r}; allowed: an integer of at least 1")
        self.num_deals = num_deals
        self.chips = [rules.starting_chips] * num_players
        self.points = [0.0] * num_players
        self.deals_played = 0
        self.deal: Deal | None = None
        self.rng: np.random.Generator | None = None
        self.observation_template: list[float] | None = None  # the encoder's fixed fields, filled on first use

    def start(self, rng: np.random.Generator, hands=None, dealer=None) -> list[Event]:
        """Start the match; the first deal uses ``hands``/``dealer`` if given, else draws them from ``rng``."""
        self.rng = rng
        self.chips = [self.rules.starting_chips] * self.num_players
        self.points = [0.0] * self.num_players
        self.deals_played = 0
        if dealer is None:
            dealer = int(rng.integers(self.num_players))
        return self._start_deal(check_dealer(dealer, self.num_players), hands)

    def _start_deal(self, dealer: int, hands=None) -> list[Event]:
        if hands is None:
            hands = deal_pack(shuffled_pack(self.rng, self.rules.ranks), self.num_players, dealer)
        else:
            hands = check_hands(hands, self.num_players, self.rules.ranks)
        self.deal = Deal(self.rules, hands, dealer, self.chips)
        return list(self.deal.events)

    @property
    def over(self) -> bool:
        """True once the last deal has ended."""
        return self.deals_played == self.num_deals

    @property
    def score(self) -> list:
        """Chip balances, or deal points with chips off."""
        return self.chips if self.rules.chips else self.points

    def apply(self, action: int) -> list[Event]:
        """Apply ``action`` in the current deal; when it ends, score it and deal the next one."""
        events = self.deal.apply(action)
        if self.deal.over:
            self.deals_played += 1
            if not self.rules.chips:
                share = 1.0 / (self.num_players - 1)
                for seat in range(self.num_players):
                    self.points[seat] += 1.0 if seat == self.deal.winner else -share
            if not self.over:
                events = events + self._start_deal(self.deal.left_of(self.deal.dealer))
        return events
