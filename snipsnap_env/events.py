"""What happens at the table, as records a program can check and a person can read.

>>> str(Event(EventKind.PLAY, seat=3, card=35, position=2, call="Snip!"))
'player_3 plays 10H: Snip!'
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .cards import RANK_NAMES, card_name

SNIP_CALLS = {2: "Snip!", 3: "Snap!", 4: "Snorem!"}
COVENTRY_CALLS = {
    1: "There's as good as {rank} can be",
    2: "There's a {rank} as good as he",
    3: "There's the best of all the three",
    4: "And there's the Earl of Coventry",
}
PENALTY_WORDS = {1: "snipped", 2: "snapped", 3: "snoremed"}


def call_for(calls: str, position: int, rank: int) -> str:
    """The call that goes with the ``position``-th card (1..4) of a set of ``rank`` (RULES.md §2.7, §4)."""
    if calls == "coventry":
        return COVENTRY_CALLS[position].format(rank=RANK_NAMES[rank])
    return SNIP_CALLS.get(position, "")


class Tone(str, Enum):
    """How an event reads at a table, whatever its kind: every view (the terminal table, the browser table)
    styles tones, so a new kind of event needs its tone here and nothing in the views."""

    TABLE = "table"  #: the deal itself: who deals
    LEAD = "lead"  #: a set opens
    PLAY = "play"  #: a card follows
    QUIET = "quiet"  #: nothing is played
    COST = "cost"  #: a player pays
    WIN = "win"  #: a player wins or is paid


class EventKind(str, Enum):
    DEAL = "deal"  #: seat = dealer
    ANTE = "ante"  #: seat pays amount into the pot
    LEAD = "lead"  #: seat leads card (position 1)
    PLAY = "play"  #: seat follows with card, the position-th card of the set
    PASS = "pass"  #: seat holds none of the open rank
    PASS_FEE = "pass_fee"  #: seat pays amount, to the pot (to_seat None) or to to_seat
    PENALTY = "penalty"  #: seat is snipped/snapped/snoremed: pays amount into the pot
    OUT = "out"  #: seat's hand is empty: it wins the deal
    POT = "pot"  #: seat (the winner) takes amount from the pot
    SETTLE = "settle"  #: seat pays amount to to_seat for the cards left in its hand

    @property
    def tone(self) -> Tone:
        """How this kind of event reads (:class:`Tone`)."""
        return TONES[self]


#: Every kind's tone, declared with the kinds (a test holds it whole).
TONES = {
    EventKind.DEAL: Tone.TABLE,
    EventKind.ANTE: Tone.COST,
    EventKind.LEAD: Tone.LEAD,
    EventKind.PLAY: Tone.PLAY,
    EventKind.PASS: Tone.QUIET,
    EventKind.PASS_FEE: Tone.COST,
    EventKind.PENALTY: Tone.COST,
    EventKind.OUT: Tone.WIN,
    EventKind.POT: Tone.WIN,
    EventKind.SETTLE: Tone.WIN,
}


@dataclass(frozen=True)
class Event:
    """One thing that happened; ``str(event)`` is its sentence."""

    kind: EventKind
    seat: int
    card: int | None = None
    position: int = 0
    call: str = ""
    amount: int = 0
    to_seat: int | None = None

    def __str__(self) -> str:
        who = f"player_{self.seat}"
        kind = self.kind
        if kind is EventKind.DEAL:
            return f"{who} deals"
        if kind in (EventKind.LEAD, EventKind.PLAY):
            verb = "leads" if kind is EventKind.LEAD else "plays"
            return f"{who} {verb} {card_name(self.card)}" + (f": {self.call}" if self.call else "")
        if kind is EventKind.PASS:
            return f"{who} passes"
        if kind is EventKind.PENALTY:
            return f"{who} is {PENALTY_WORDS[self.position]}: pays {_chips(self.amount)} into the pot"
        if kind is EventKind.OUT:
            return f"{who} is out of cards and wins the deal"
        if kind is EventKind.POT:
            return f"{who} takes the pot of {_chips(self.amount)}"
        payee = "the pot" if self.to_seat is None else f"player_{self.to_seat}"
        reason = {EventKind.ANTE: "ante", EventKind.PASS_FEE: "pass fee", EventKind.SETTLE: "cards left"}[kind]
        return f"{who} pays {_chips(self.amount)} to {payee} ({reason})"


def _chips(amount: int) -> str:
    return f"{amount} chip" + ("" if amount == 1 else "s")
