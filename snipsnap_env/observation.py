"""The observation: one fixed-size float32 vector per (state, observer), the same for 3..8 players.

Seats are written relative to the observer (slot 0 = the observer, slot 1 = their left, …); slots for
seats the table does not have stay 0 and ``seat_present`` says which exist. One policy serves every
table size.

=====  ================  ====  =======================================================================
index  name              size  meaning (scale)
=====  ================  ====  =======================================================================
0      hand              13    own cards of each rank, A..K (/4)
13     played            13    cards of each rank already played (/4)
26     unseen            13    cards of each rank in other players' hands (/4)
39     open_rank         13    one-hot rank of the open set; all 0 when the next play is a lead
52     is_lead           1     1 when no set is open
53     set_cards         1     cards of the open set played so far (/4)
54     would_penalise    1     1 if a follow now would penalise the player of the previous card
55     last_player       8     one-hot relative seat of the player of the open set's latest card
63     to_act            8     one-hot relative seat of the player to act (all 0 when the game is over)
71     hand_size         8     cards in each relative seat's hand (/18, the largest possible hand)
79     score             8     each relative seat's chips won or lost this match (/52); deal points with chips off
87     seat_present      8     1 for the relative seats the table has
95     leads             8     sets each relative seat chose to lead (a lead with more than one legal
                               rank) and that have closed, this deal (/13)
103    copies_led        8     the cards it played in those sets — the copies it held when it chose —
                               per set (/4; 0 before any)
111    fewest_led        8     the fewest it played in one of those sets (/4; 0 before any)
119    pot               1     chips in the pot (/52)
120    num_players       6     one-hot N, for N = 3..8
126    rules             9     chips, penalties, settle_per_card, pass_fee to_pot, pass_fee to_previous,
                               ante, multi_play, calls coventry, opening six
135    deals_left        1     deals still to play in the match, this one included (/num_deals)
=====  ================  ====  =======================================================================

Worked example: seat 2 of a 6-player table that holds two sevens sees ``obs[6] == 0.5``; if seat 4 leads
next, ``obs[63 + 2] == 1`` (seat 4 is two seats to the observer's left).
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
import struct

import numpy as np

from .cards import CARDS_PER_RANK, NUM_CARDS, NUM_RANKS, RANK_NAMES
from .rules import CHOICES, MAX_PLAYERS, MIN_PLAYERS, Rules

MAX_HAND = -(-NUM_CARDS // MIN_PLAYERS)  # 18: the largest hand dealt at a 3-player table
CHIP_SCALE = 52.0


# The rules block, derived from rules.CHOICES (each option's values, the default first), so that an option is
# declared once: a yes/no or 0/1 option is one feature (its value); an option of named values is one feature
# per value other than the default ("pass_fee to_pot"). The order is CHOICES' order.
def _rule_features() -> tuple[tuple[str, object], ...]:
    features = []
    for option, values in CHOICES.items():
        if isinstance(values[0], str):
            features += [
                (f"{option} {value}", lambda rules, o=option, v=value: getattr(rules, o) == v) for value in values[1:]
            ]
        else:
            features.append((option, lambda rules, o=option: getattr(rules, o)))
    return tuple(features)


RULE_FEATURES: tuple[tuple[str, object], ...] = _rule_features()

# (name, size, scale, unbounded); the order is the vector's order.
_FIELDS = (
    ("hand", NUM_RANKS, 1 / CARDS_PER_RANK, False),
    ("played", NUM_RANKS, 1 / CARDS_PER_RANK, False),
    ("unseen", NUM_RANKS, 1 / CARDS_PER_RANK, False),
    ("open_rank", NUM_RANKS, 1.0, False),
    ("is_lead", 1, 1.0, False),
    ("set_cards", 1, 1 / CARDS_PER_RANK, False),
    ("would_penalise", 1, 1.0, False),
    ("last_player", MAX_PLAYERS, 1.0, False),
    ("to_act", MAX_PLAYERS, 1.0, False),
    ("hand_size", MAX_PLAYERS, 1 / MAX_HAND, False),
    ("score", MAX_PLAYERS, 1 / CHIP_SCALE, True),
    ("seat_present", MAX_PLAYERS, 1.0, False),
    ("leads", MAX_PLAYERS, 1 / NUM_RANKS, False),
    ("copies_led", MAX_PLAYERS, 1 / CARDS_PER_RANK, False),
    ("fewest_led", MAX_PLAYERS, 1 / CARDS_PER_RANK, False),
    ("pot", 1, 1 / CHIP_SCALE, True),
    ("num_players", MAX_PLAYERS - MIN_PLAYERS + 1, 1.0, False),
    ("rules", len(RULE_FEATURES), 1.0, False),
    ("deals_left", 1, 1.0, False),
)

#: The fields a rank-shared policy reads per rank; they lead the layout in every version, so a model saved by an
#: earlier version finds them where it expects them.
PER_RANK = ("hand", "played", "unseen", "open_rank")
assert [name for name, *_ in _FIELDS[: len(PER_RANK)]] == list(PER_RANK)

SLICES: dict[str, slice] = {}
_offset = 0
for _name, _size, _, _ in _FIELDS:
    SLICES[_name] = slice(_offset, _offset + _size)
    _offset += _size
OBS_DIM = _offset  #: the sum of the fields' sizes (the docstring's table, held to it by a test)

#: The layout a model trained on these observations depends on: saved with every model file.
LAYOUT: tuple[tuple[str, int], ...] = tuple((name, size) for name, size, _, _ in _FIELDS) + tuple(
    (f"rules: {name}", 1) for name, _ in RULE_FEATURES
)

_V0_LAYOUT = "b6fb3422e35add7e04d807eea604bba5120ccedc8cdbef6cc0ac997f4a1ce172"

#: Every version of the env: the SHA-256 of its observation layout (``layout_digest``) and what changed. The
#: env's id is ``snipsnap_v<ENV_VERSION>``, the latest version here: a change to the observation or to the
#: infos adds a version (a test fails until the layout's does), so an id names one interface. Saved models keep
#: their layout and play on (below). docs/environment.md's version history repeats these lines.
VERSIONS = {
    0: (_V0_LAYOUT, "first release; infos held the step's Event records and every agent's chips as a dict"),
    1: (_V0_LAYOUT, "infos hold numbers only (the agent's chips, deals_played); events moved to last_events"),
}
LAYOUT_DIGESTS = {version: digest for version, (digest, _) in VERSIONS.items()}
ENV_VERSION = max(LAYOUT_DIGESTS)
ENV_NAME = f"snipsnap_v{ENV_VERSION}"


def layout_digest(layout=LAYOUT) -> str:
    """The SHA-256 of a layout's JSON: what :data:`LAYOUT_DIGESTS` records."""
    return hashlib.sha256(json.dumps([list(field) for field in layout]).encode()).hexdigest()


def columns(layout) -> list[str]:
    """The name of every column of an observation of ``layout`` ((name, size) fields, then the rules field's
    columns as ``("rules: <feature>", 1)`` entries, as :data:`LAYOUT`): ``"hand A"``, …, ``"hand K"``, …,
    ``"rules: chips"``, …: the per-rank fields' columns by rank name (A..K, as the docs' observation table and
    the actions name them), every other field's by its index."""
    fields = [(name, size) for name, size in layout if not name.startswith("rules: ")]
    rule_columns = [name for name, _ in layout if name.startswith("rules: ")]
    names = []
    for name, size in fields:
        if name == "rules" and size != len(rule_columns):
            raise ValueError(f"its rules field has {size} columns but names {len(rule_columns)}")
        if name == "rules":
            names += rule_columns
        elif name in PER_RANK and size == len(RANK_NAMES):
            names += [f"{name} {rank}" for rank in RANK_NAMES]
        else:
            names += [f"{name} {i}" for i in range(size)]
    return names


COLUMNS: tuple[str, ...] = tuple(columns(LAYOUT))


def column_map(saved_layout) -> tuple[np.ndarray | None, list[str]]:
    """How this version's observation feeds a model trained on ``saved_layout``: the index here of each of its
    columns (None when the layouts are the same), and the names of this version's columns the model never saw
    (a rule option added since). A model plays wherever those are 0 (the option at its default); a column the
    model reads that this version no longer makes is a ValueError."""
    saved = columns(saved_layout)
    if saved == list(COLUMNS):
        return None, []
    at = {name: i for i, name in enumerate(COLUMNS)}
    gone = [name for name in saved if name not in at]
    if gone:
        raise ValueError(f"it reads observation columns this version no longer makes ({', '.join(gone[:4])})")
    known = set(saved)
    unseen = [name for name in COLUMNS if name not in known]
    rule_columns = set(COLUMNS[SLICES["rules"]])
    missing = [name for name in unseen if name not in rule_columns]
    if missing:  # only a rule option's column may be new to a model: it is 0 wherever the option is at its default
        raise ValueError(f"it lacks observation columns that are no rule option ({', '.join(missing[:4])})")
    return np.array([at[name] for name in saved], np.int64), unseen


SCALE = np.concatenate([np.full(size, scale, np.float32) for _, size, scale, _ in _FIELDS])
LOW = np.concatenate([np.full(size, -np.inf if free else 0.0, np.float32) for _, size, _, free in _FIELDS])
HIGH = np.concatenate([np.full(size, np.inf if free else 1.0, np.float32) for _, size, _, free in _FIELDS])
LOW[SLICES["pot"]] = 0.0  # the pot is never negative, only unbounded above


@functools.lru_cache(maxsize=None)
def rules_features(rules: Rules) -> tuple[float, ...]:
    """The rule-option features of ``RULE_FEATURES``, in the order of the ``rules`` field."""
    return tuple(float(feature(rules)) for _, feature in RULE_FEATURES)


def rule_feature(obs: np.ndarray, name: str) -> np.ndarray:
    """Column ``name`` of ``RULE_FEATURES`` from a batch of observations (B, OBS_DIM), as (B, 1) bools."""
    index = [feature for feature, _ in RULE_FEATURES].index(name)
    return obs[:, SLICES["rules"].start + index, None] > 0.5


def rules_from_features(features) -> Rules:
    """The ``Rules`` an observation's rules block was made from (starting chips aside): the inverse of
    :func:`rules_features`, derived from the same ``CHOICES``."""
    on = dict(zip((name for name, _ in RULE_FEATURES), (bool(f > 0.5) for f in features)))
    options = {}
    for option, values in CHOICES.items():
        if isinstance(values[0], str):
            options[option] = next((value for value in values[1:] if on[f"{option} {value}"]), values[0])
        else:
            options[option] = type(values[0])(on[option])
    return Rules(**options)


def _at(name: str, index: int = 0) -> int:
    return SLICES[name].start + index


def encode(match, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` in ``match`` (an :class:`engine.Match`), laid out as above."""
    # Filled as a Python list and converted once: this runs on every observe(), and list writes are far
    # cheaper than numpy element writes.
    deal = match.deal
    n = match.num_players
    template = match.observation_template  # an attribute the match declares: a stray one slows every lookup
    if template is None:
        template = match.observation_template = _table_template(match.rules, n)
    raw = template.copy()
    hand = list(map(len, deal.holding[seat]))
    played = deal.played
    raw[_HAND] = hand
    raw[_PLAYED] = played
    raw[_UNSEEN] = map(operator.sub, _FULL_RANKS, map(operator.add, hand, played))
    if deal.is_lead:
        raw[_IS_LEAD] = 1.0
    else:
        raw[_OPEN_RANK + deal.open_rank] = 1.0
        raw[_SET_CARDS] = deal.played[deal.open_rank]
        raw[_WOULD_PENALISE] = float(deal.is_penalised())
        raw[_LAST_PLAYER + (deal.last_player - seat) % n] = 1.0
    if not deal.over:
        raw[_TO_ACT + (deal.to_act - seat) % n] = 1.0
    start = match.rules.starting_chips if match.rules.chips else 0
    in_seat_order = _IN_SEAT_ORDER[n][seat]  # the values of the relative slots, from the absolute seats
    raw[_HAND_SIZE : _HAND_SIZE + n] = in_seat_order(deal.hand_size)
    raw[_SCORE : _SCORE + n] = [value - start for value in in_seat_order(match.score)]
    if deal.sets_recorded:  # the lead record: nothing until a chosen lead's set has closed
        leads, copies_per_lead, fewest = _lead_record(deal)
        raw[_LEADS : _LEADS + n] = in_seat_order(leads)
        raw[_COPIES_LED : _COPIES_LED + n] = in_seat_order(copies_per_lead)
        raw[_FEWEST_LED : _FEWEST_LED + n] = in_seat_order(fewest)
    raw[_POT] = deal.pot
    raw[_DEALS_LEFT] = (match.num_deals - match.deals_played + deal.over) / match.num_deals
    # struct packs a list of floats into float32 bytes in one C call: faster than np.fromiter or np.array
    return np.frombuffer(_PACK(*raw), np.float32) * SCALE


def _lead_record(deal) -> tuple[list, list, list]:
    """Per seat: sets led, copies per set, fewest copies (0 before any) — worked out once per change of the
    record (a set closing), not at every observation."""
    cached = deal.lead_record_view  # an attribute the deal declares: a stray one would slow every lookup
    if cached is None or cached[0] != deal.sets_recorded:
        copies = [c / led if led else 0.0 for c, led in zip(deal.copies_led, deal.leads)]
        cached = (deal.sets_recorded, deal.leads.copy(), copies, [f or 0 for f in deal.fewest_led])
        deal.lead_record_view = cached
    return cached[1:]


def table_template(rules: Rules, n: int) -> np.ndarray:
    """The observation's fields fixed for one table, as a vector, for a one-deal match (deals_left 1)."""
    raw = _table_template(rules, n).copy()
    raw[_DEALS_LEFT] = 1.0
    return np.array(raw, np.float64) * SCALE


@functools.lru_cache(maxsize=None)
def _table_template(rules: Rules, n: int) -> list[float]:
    """The fields fixed for a table and its rules (seat_present, num_players, rules), the rest 0."""
    raw = [0.0] * OBS_DIM
    raw[_SEAT_PRESENT : _SEAT_PRESENT + n] = [1.0] * n
    raw[_NUM_PLAYERS + n - MIN_PLAYERS] = 1.0
    raw[_RULES] = rules_features(rules)
    return raw


_IN_SEAT_ORDER = {  # [n][seat](per_seat_list) -> the values for relative slots 0..n-1 (slot 0 = seat)
    n: [operator.itemgetter(*[(seat + i) % n for i in range(n)]) for seat in range(n)]
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
}
_FULL_RANKS = (CARDS_PER_RANK,) * NUM_RANKS
_PACK = struct.Struct(f"{OBS_DIM}f").pack
_HAND, _PLAYED, _UNSEEN, _RULES = SLICES["hand"], SLICES["played"], SLICES["unseen"], SLICES["rules"]
_OPEN_RANK, _IS_LEAD, _SET_CARDS, _WOULD_PENALISE = (
    _at("open_rank"),
    _at("is_lead"),
    _at("set_cards"),
    _at("would_penalise"),
)
_LAST_PLAYER, _TO_ACT, _HAND_SIZE, _SCORE = _at("last_player"), _at("to_act"), _at("hand_size"), _at("score")
_SEAT_PRESENT, _POT, _NUM_PLAYERS, _DEALS_LEFT = _at("seat_present"), _at("pot"), _at("num_players"), _at("deals_left")
_LEADS, _COPIES_LED, _FEWEST_LED = _at("leads"), _at("copies_led"), _at("fewest_led")
