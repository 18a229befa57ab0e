"""Rule options and named presets (RULES.md §4).

``Rules`` holds the variant options only; the number of players is a property of the table and is
checked by :func:`check_num_players`, so one ``Rules`` value serves every table size.

>>> make_rules("parlett").pass_fee
'to_previous'
>>> make_rules("scarne", ante=1).ante
1
>>> make_rules("scarne:ranks=3,multi_play=true").ranks
3
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from .cards import CARDS_PER_RANK

MIN_PLAYERS = 3
MAX_PLAYERS = 8

PASS_FEES = ("none", "to_pot", "to_previous")
CALL_STYLES = ("snip", "coventry")
OPENINGS = ("any", "six")
# Balances are exact integers in the engine but float32/float64 in observations and rewards: beyond 2**40
# a chip change of 1 would be lost in the float64 arithmetic of rewards.
MAX_STARTING_CHIPS = 2**40
SIX = 5  #: the rank index of the 6 (A = 0): the opening rank with ``opening="six"``
FULL_DECK_RANKS = 13  #: the ranks of the standard pack; ``Rules.ranks`` below it is the small-deck research variant


#: The values each option may take (the default first): the one list validation and the tests read.
CHOICES: dict[str, tuple] = {
    "chips": (True, False),
    "penalties": (True, False),
    "settle_per_card": (1, 0),
    "pass_fee": PASS_FEES,
    "ante": (0, 1),
    "multi_play": (False, True),
    "calls": CALL_STYLES,
    "opening": OPENINGS,
}


def _check_choice(name: str, value, allowed: tuple, bool_only: bool = False) -> None:
    ok = isinstance(value, bool) if bool_only else (value in allowed and type(value) is type(allowed[0]))
    if not ok:
        shown = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"rules option {name!r} got {value!r}; allowed: {shown}")


def _check_option_names(options: dict) -> None:
    known = [f.name for f in dataclasses.fields(Rules)]
    for name in options:
        if name not in known:
            raise ValueError(f"unknown rules option {name!r}; known options: {', '.join(known)}")


@dataclass(frozen=True)
class Rules:
    """Every variant option of RULES.md §4; the defaults are the base (``scarne``) rules.

    With ``chips`` off, the chip options (penalties, settlement, pass fee, ante) have no effect: the
    first player out wins the deal, scored +1 and −1/(N−1) for everyone else.
    """

    chips: bool = True  #: play for chips; off = first out wins, nothing else
    penalties: bool = True  #: snipped / snapped / snoremed pay 1 / 2 / 3 into the pot
    settle_per_card: int = 1  #: chips each loser pays the winner per card left in hand (0 or 1)
    pass_fee: str = "none"  #: "none", "to_pot" or "to_previous" (1 chip per pass)
    ante: int = 0  #: 0, or 1: each player antes 1 per deal, plus 1 more if dealt fewer cards
    multi_play: bool = False  #: a player plays every card of the rank they hold at once
    calls: str = "snip"  #: "snip" (Snip, Snap, Snorem) or "coventry" (Earl of Coventry rhymes)
    opening: str = "any"  #: "any", or "six": the deal's first lead is a 6, by its first holder from the dealer's left
    starting_chips: int = 100  #: every player's chips at the start of a match
    #: research variant, not in RULES.md (as Leduc is to hold'em): the deck holds the ranks A.. below ``ranks``,
    #: four suits each. The missing ranks count as played out before the deal, so every observer, search and
    #: kernel reads "no copies unseen" for them without knowing about the variant.
    ranks: int = FULL_DECK_RANKS

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):  # numpy's numbers are options too, stored as Python's (one hash)
            value = getattr(self, field.name)
            if isinstance(value, (np.integer, np.bool_)):
                object.__setattr__(self, field.name, value.item())
        for name, allowed in CHOICES.items():
            _check_choice(name, getattr(self, name), allowed, bool_only=isinstance(allowed[0], bool))
        if (
            isinstance(self.starting_chips, bool)
            or not isinstance(self.starting_chips, int)
            or abs(self.starting_chips) > MAX_STARTING_CHIPS
        ):
            raise ValueError(
                f"rules option 'starting_chips' got {self.starting_chips!r}; "
                f"allowed: an integer from {-MAX_STARTING_CHIPS} to {MAX_STARTING_CHIPS}"
            )
        if isinstance(self.ranks, bool) or not isinstance(self.ranks, int) or not 1 <= self.ranks <= FULL_DECK_RANKS:
            raise ValueError(
                f"rules option 'ranks' got {self.ranks!r}; allowed: an integer from 1 to {FULL_DECK_RANKS}"
            )
        if self.opening == "six" and self.ranks <= SIX:
            raise ValueError(
                f"opening 'six' needs a deck with the 6 in it: ranks of at least {SIX + 1}, got {self.ranks}"
            )

    @property
    def deck_size(self) -> int:
        """Cards in the deck: 52, or 4 per rank of a small research deck."""
        return CARDS_PER_RANK * self.ranks

    @property
    def opening_rank(self) -> int | None:
        """The rank the deal's first lead must be, or None when any card may open."""
        return SIX if self.opening == "six" else None

    def replace(self, **changes) -> "Rules":
        """A copy with some options changed; unknown option names are an error."""
        _check_option_names(changes)
        return dataclasses.replace(self, **changes)


PRESETS: dict[str, Rules] = {
    "scarne": Rules(),
    "kids": Rules(chips=False),
    "kids_settle": Rules(penalties=False),
    "wiswell": Rules(penalties=False, settle_per_card=0, pass_fee="to_pot"),
    "parlett": Rules(pass_fee="to_previous"),
    "bicycle": Rules(ante=1, pass_fee="to_pot"),
    "pairs": Rules(multi_play=True),
    # Foster: the first out "wins one counter from the others for every card they hold"; no penalties
    "earl_of_coventry": Rules(opening="six", calls="coventry", penalties=False),
}


MAX_OPTION_DIGITS = 18  # digits of a whole-number option, beyond any rule's bound (and int()'s own 4,300-digit limit)


def make_rules(rules: "str | Rules | None" = "scarne", **overrides) -> Rules:
    """A ``Rules`` from a preset name, a spec ``"<preset>:<option>=<value>,..."`` (as the jobs' ``--rules`` takes
    it: ``"scarne:ranks=3"``) or a ``Rules`` value, with optional option overrides."""
    if rules is None:
        rules = "scarne"
    if isinstance(rules, str):
        rules, colon, options = rules.partition(":")
        if rules not in PRESETS:
            raise ValueError(f"unknown rules preset {rules!r}; known presets: {', '.join(PRESETS)}")
        overrides = {**(_parse_options(options) if colon else {}), **overrides}
        rules = PRESETS[rules]
    elif not isinstance(rules, Rules):
        raise ValueError(f"rules must be a preset name or a Rules value, got {type(rules).__name__} {rules!r}")
    return rules.replace(**overrides) if overrides else rules


def _parse_options(text: str) -> dict:
    """``"ranks=3,multi_play=true"`` as option values of each option's type (the default's)."""
    defaults = {f.name: f.default for f in dataclasses.fields(Rules)}
    options: dict = {}
    for item in text.split(","):  # "scarne:" or "scarne:ranks=3," would be the same rules spelled (keyed) apart
        name, equals, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not item.strip():
            raise ValueError(f"rules options {text!r}: an empty option (nothing after ':' or ','); write ranks=3,...")
        if not equals:
            raise ValueError(f"rules option {item!r} has no value; write <option>=<value>, e.g. ranks=3")
        _check_option_names({name: None})
        if name in options:
            raise ValueError(f"rules option {name!r} is given twice in {text!r}")
        kind = type(defaults[name])
        if kind is bool:
            if value.lower() not in ("true", "false"):
                raise ValueError(f"rules option {name!r} got {value!r}; allowed: true, false")
            options[name] = value.lower() == "true"
        elif kind is int:
            if not re.fullmatch(r"[+-]?[0-9]+", value):  # int() also reads other scripts' digits: "١" is 1
                raise ValueError(f"rules option {name!r} got {value!r}; allowed: a whole number (digits 0-9)")
            if len(value.lstrip("+-").lstrip("0")) > MAX_OPTION_DIGITS:  # int() itself refuses 4,300 digits, unnamed
                raise ValueError(f"rules option {name!r} got a number of {len(value):,} digits; no rule takes one")
            options[name] = int(value)
        else:
            options[name] = value
    return options


def check_rules_spec(spec) -> str:
    """``spec`` in its one spelling (:func:`canonical_spec`) if it names rules :func:`make_rules` can make (a
    preset, optionally with options), else a ValueError that says what is wrong with it."""
    if not isinstance(spec, str):
        raise ValueError(
            f"rules got {spec!r}; allowed: a preset name ({', '.join(PRESETS)}), or <preset>:<option>=<value>"
        )
    return canonical_spec(spec)


def canonical_spec(spec: str) -> str:
    """The one spelling of the rules ``spec`` names: its preset, then the options that differ from the preset's, in
    the order ``Rules`` declares them, values as Python writes them (``scarne:ranks=03``, ``scarne:ranks=+3`` and
    ``scarne:ranks=3`` are one table, so one key and one folder; ``scarne:ranks=13`` is ``scarne``)."""
    rules = make_rules(spec)
    preset = spec.partition(":")[0]
    base = PRESETS[preset]
    values = {f.name: getattr(rules, f.name) for f in dataclasses.fields(Rules)}
    written = {name: str(value).lower() if isinstance(value, bool) else value for name, value in values.items()}
    changed = [f"{name}={written[name]}" for name, value in values.items() if value != getattr(base, name)]
    return preset + (":" + ",".join(changed) if changed else "")


def check_table(rules: Rules, num_players) -> int:
    """``num_players`` as :func:`check_num_players` checks it, and a deck that gives every seat a card."""
    num_players = check_num_players(num_players)
    if rules.deck_size < num_players:
        raise ValueError(
            f"a deck of {rules.ranks} ranks ({rules.deck_size} cards) cannot deal a card to each of "
            f"{num_players} players; use ranks of at least {-(-num_players // 4)}"
        )
    return num_players


def check_count(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int if it is a whole number (Python or numpy, not bool) of at least ``minimum``
    (and at most ``maximum``)."""
    whole = not isinstance(value, bool) and isinstance(value, (int, np.integer))
    if not whole or value < minimum or (maximum is not None and value > maximum):
        allowed = f"of at least {minimum}" if maximum is None else f"from {minimum:,} to {maximum:,}"
        raise ValueError(f"{name} got {value!r}; allowed: an integer {allowed}")
    return int(value)


def check_num_players(num_players) -> int:
    """Return ``num_players`` as an int if it is a whole number in 3..8 (numpy integers too), else raise a
    clear error."""
    if (
        isinstance(num_players, (bool, np.bool_))
        or not isinstance(num_players, (int, np.integer))
        or not (MIN_PLAYERS <= num_players <= MAX_PLAYERS)
    ):
        raise ValueError(f"num_players got {num_players!r}; allowed: an integer from {MIN_PLAYERS} to {MAX_PLAYERS}")
    return int(num_players)
