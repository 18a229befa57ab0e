"""The pack: card ids, ranks, suits, names, shuffling and dealing (RULES.md §1).

Card id = ``suit * 13 + rank``; rank 0 = A … 12 = K; suit 0..3 = clubs, diamonds, hearts, spades.
Only the rank matters in play; suits just tell the four cards of a rank apart.

>>> card_name(card_id(suit=2, rank=9))
'10H'
"""

from __future__ import annotations

import numpy as np

NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = NUM_RANKS * NUM_SUITS
CARDS_PER_RANK = NUM_SUITS

RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_NAMES = ("C", "D", "H", "S")  # ASCII so the text table renders in every terminal


def card_id(suit: int, rank: int) -> int:
    """The id of the card of this suit and rank."""
    return suit * NUM_RANKS + rank


def rank_of(card: int) -> int:
    """The rank (0 = A … 12 = K) of a card id."""
    return card % NUM_RANKS


def suit_of(card: int) -> int:
    """The suit (0..3 = C, D, H, S) of a card id."""
    return card // NUM_RANKS


def card_name(card: int) -> str:
    """A card's short name, rank then suit: ``'AC'``, ``'10H'``, ``'KS'``."""
    return RANK_NAMES[rank_of(card)] + SUIT_NAMES[suit_of(card)]


def parse_card(name: str) -> int:
    """The id of a card written as ``card_name`` writes it (case-insensitive): ``'10h'`` → 35."""
    text = name.strip().upper()
    rank_text, suit_text = text[:-1], text[-1:]
    if rank_text not in RANK_NAMES or suit_text not in SUIT_NAMES:
        raise ValueError(f"card {name!r} is not a card name; write rank then suit, e.g. 'AC', '10H', 'KS'")
    return card_id(SUIT_NAMES.index(suit_text), RANK_NAMES.index(rank_text))


def deck(ranks: int = NUM_RANKS) -> list[int]:
    """The card ids of a deck of the ranks below ``ranks`` (the whole pack by default), ascending.

    >>> [card_name(card) for card in deck(2)]
    ['AC', '2C', 'AD', '2D', 'AH', '2H', 'AS', '2S']
    """
    return [card for card in range(NUM_CARDS) if rank_of(card) < ranks]


def shuffled_pack(rng: np.random.Generator, ranks: int = NUM_RANKS) -> list[int]:
    """The deck's card ids (all 52 by default) in a random order drawn from ``rng``."""
    cards = np.array(deck(ranks))
    return cards[rng.permutation(len(cards))].tolist()


def deal_pack(pack: list[int], num_players: int, dealer: int) -> list[list[int]]:
    """Deal the whole pack one card at a time clockwise, starting with the dealer's left (RULES.md §1.4).

    The first (deck size mod N) seats from the dealer's left get one card more: ``52 mod N`` with the pack.
    """
    hands: list[list[int]] = [[] for _ in range(num_players)]
    for i, card in enumerate(pack):
        hands[(dealer + 1 + i) % num_players].append(card)
    return hands


def check_hands(hands, num_players: int, ranks: int = NUM_RANKS) -> list[list[int]]:
    """Return ``hands`` as lists of ints if they are a whole deck (of ``ranks`` ranks: the pack by default)
    split over ``num_players`` non-empty hands."""
    if not isinstance(hands, (list, tuple)) or len(hands) != num_players:
        got = len(hands) if isinstance(hands, (list, tuple)) else type(hands).__name__
        raise ValueError(f"hands must be a list of {num_players} hands (one per seat), got {got}")
    checked: list[list[int]] = []
    for seat, hand in enumerate(hands):
        try:
            cards = [c if _is_card_id(c) else None for c in hand]
        except TypeError:
            raise ValueError(f"hands[{seat}] must be a list of card ids 0..51, got {hand!r}") from None
        if None in cards:
            bad = [c for c in hand if not _is_card_id(c)]
            raise ValueError(f"hands[{seat}] holds {bad[:5]}: card ids are whole numbers 0..51 (not floats or bools)")
        cards = [int(c) for c in cards]
        if not cards:
            raise ValueError(f"hands[{seat}] is empty; every seat must be dealt at least one card")
        checked.append(cards)
    every, cards = sorted(c for hand in checked for c in hand), deck(ranks)
    if every != cards:
        bad = sorted(set(every) - set(cards))
        seen: set[int] = set()
        repeated = sorted({c for c in every if c in seen or seen.add(c)})
        missing = sorted(set(cards) - set(every))
        whole = (
            "card id 0..51"
            if ranks == NUM_RANKS
            else f"card of the {ranks}-rank deck (ranks A..{RANK_NAMES[ranks - 1]})"
        )
        raise ValueError(
            f"hands must hold each {whole} exactly once; "
            f"not in the deck: {bad}, repeated: {repeated}, missing: {missing}"
        )
    return checked


def _is_card_id(card) -> bool:
    return isinstance(card, (int, np.integer)) and not isinstance(card, (bool, np.bool_))


def hands_from_names(num_players: int, explicit: dict[int, str], rest: int, ranks: int = NUM_RANKS) -> list[list[int]]:
    """Hands for a hand-built deal: card names per seat, every card of the deck not named goes to seat ``rest``.

    >>> hands = hands_from_names(3, {0: "AC 2C", 1: "KS"}, rest=2)
    >>> hands[0], hands[1], len(hands[2])
    ([0, 1], [51], 49)
    """
    hands = [[parse_card(name) for name in explicit.get(seat, "").split()] for seat in range(num_players)]
    used = {card for hand in hands for card in hand}
    hands[rest] += [card for card in deck(ranks) if card not in used]
    return hands
