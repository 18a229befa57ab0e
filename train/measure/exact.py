"""Exact best-response values on a small research deck (``Rules.ranks``), by enumerating every deal.

Only ranks matter in play, so a deal is a holdings matrix (seat × rank: copies held) with its probability,
the number of card deals that give it over all of them. A best response in one seat knows its own hand as
dealt and every action since (all play is public), so the worlds it cannot tell apart at any point are the
matrices with its row, reached by the same actions. :func:`best_response_value` walks the public game tree
once per hand of the responder, carrying those worlds (each an engine :class:`~snipsnap_env.engine.Match`
with its weight: chance × the target's probabilities of the actions so far) and takes, at each of its real
choices, the action with the most chips summed over them: an exact best response, as OpenSpiel's
``best_response`` computes it on the same game (``tests/test_exact.py`` checks that on a 2-rank deck).

A target's action probabilities must be known exactly: ``lead_probabilities`` (the scripted policies), or a
greedy network (its ties among ranks the observation cannot tell apart drawn uniformly); a search is refused.
"""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass

import numpy as np

from snipsnap_env.cards import CARDS_PER_RANK, card_id, deal_pack
from snipsnap_env.engine import Match
from snipsnap_env.observation import encode
from snipsnap_env.rules import check_table, make_rules

MAX_WORLDS = 20_000  #: holdings matrices at most (all dealers): beyond, the walk takes too long in Python


@dataclass(frozen=True)
class ExactValues:
    """Chips per deal in one seat, averaged over where the dealer sits (so over the seat's positions):
    the exact best response's and the target's own at a table of the target (both exact)."""

    best_response: float
    target: float
    by_position: tuple[float, ...]  # the best response's value by position, the dealer's left first
    target_by_position: tuple[float, ...]  # the target's own, likewise

    @property
    def exploitability(self) -> float:
        """The best response's gain over the target in its seat: what ``train.exploit`` estimates."""
        return self.best_response - self.target


def hand_sizes(num_players: int, deck_size: int, dealer: int) -> list[int]:
    """Cards dealt to each seat from ``dealer``'s left, one at a time (RULES.md §1.4, as ``deal_pack`` deals)."""
    return [len(hand) for hand in deal_pack(list(range(deck_size)), num_players, dealer)]


def holdings(sizes: list[int], ranks: int):
    """Every holdings matrix (seats × ranks) with these row sums and 4 copies of each rank, with the number of
    card deals that give it: ``(matrix, count)``."""
    splits = [c for c in itertools.product(range(CARDS_PER_RANK + 1), repeat=len(sizes)) if sum(c) == CARDS_PER_RANK]

    def extend(rank: int, left: tuple[int, ...]):
        if rank == ranks:
            if not any(left):
                yield ()
            return
        for split in splits:
            if all(k <= room for k, room in zip(split, left)):
                for rest in extend(rank + 1, tuple(room - k for room, k in zip(left, split))):
                    yield (split, *rest)

    for columns in extend(0, tuple(sizes)):
        count = math.prod(math.factorial(CARDS_PER_RANK) // math.prod(map(math.factorial, col)) for col in columns)
        yield np.array(columns, np.int64).T, count


def dealt(num_players: int, rules, dealer: int) -> list[tuple[np.ndarray, float]]:
    """Every holdings matrix a deal from ``dealer`` can give, with its probability."""
    sizes = hand_sizes(num_players, rules.deck_size, dealer)
    deals = math.factorial(rules.deck_size) // math.prod(map(math.factorial, sizes))
    return [(matrix, count / deals) for matrix, count in holdings(sizes, rules.ranks)]


MAX_RANKS = 6  #: a deck larger than this is never counted (its matrices number far past MAX_WORLDS)


def count_worlds(num_players: int, rules, limit: int = MAX_WORLDS) -> int:
    """The holdings matrices over every dealer: the size of the enumeration, counted up to one past ``limit`` (what a
    walk takes: this one's ``MAX_WORLDS`` by default); past ``MAX_RANKS`` not counted at all."""
    rules = make_rules(rules)
    if rules.ranks > MAX_RANKS:
        return limit + 1
    total = 0
    for dealer in range(num_players):  # stops one past the limit: a deck too large is refused in a moment
        left = limit + 1 - total
        dealt_here = holdings(hand_sizes(num_players, rules.deck_size, dealer), rules.ranks)
        total += sum(1 for _ in itertools.islice(dealt_here, left))
        if total > limit:
            return total
    return total


class NoExactAnswer(ValueError):
    """No exact best response here: the deck is too large, or the target's probabilities are unknown."""


class DeckTooLarge(NoExactAnswer):
    """More holdings matrices than ``MAX_WORLDS``."""


class UnknownProbabilities(NoExactAnswer):
    """The target's action probabilities are not known exactly (a search draws its own)."""


def action_probabilities(policy, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(B, 14): the target's exact distribution over actions, or a ValueError where it is not known."""
    probs = policy.lead_probabilities(obs, mask)
    if probs is not None:
        return np.asarray(probs, float)
    if getattr(policy, "deterministic", False) and hasattr(policy, "logits"):  # a greedy network: ties drawn
        logits = np.where(mask.astype(bool), np.asarray(policy.logits(obs), float), -np.inf)
        best = np.isclose(logits, logits.max(axis=1, keepdims=True), rtol=0, atol=1e-6)
        return best / best.sum(axis=1, keepdims=True)
    raise UnknownProbabilities(
        f"an exact best response needs the target's action probabilities: {type(policy).__name__} gives none "
        "(a search draws its own); use a scripted policy or a greedy network"
    )


def _deal(rules, matrix: np.ndarray, dealer: int) -> Match:
    """A match dealt the matrix's hands (the suits of each rank handed out in seat order: they never matter)."""
    before = np.vstack([np.zeros(matrix.shape[1], np.int64), matrix.cumsum(axis=0)])
    hands = [
        [card_id(suit, r) for r in range(rules.ranks) for suit in range(before[s, r], before[s + 1, r])]
        for s in range(len(matrix))
    ]
    match = Match(rules, len(matrix))
    match.start(np.random.default_rng(0), hands=hands, dealer=dealer)
    return match


class _Walk:
    """The public game tree below a set of worlds the responder cannot tell apart."""

    def __init__(self, policy, seat: int, best: bool):
        self.policy, self.seat, self.best = policy, seat, best

    def value(self, worlds: list[tuple[float, Match]]) -> float:
        """Chips of ``seat`` summed over the worlds, weighted, with its best (or the target's) play from here."""
        while True:
            first = worlds[0][1]
            if first.over:
                start = first.rules.starting_chips if first.rules.chips else 0
                return sum(w * (m.score[self.seat] - start) for w, m in worlds)
            to_act = first.deal.to_act  # the same in every world: who acts next follows from public play
            if to_act == self.seat and self.best:
                legal = first.deal.legal_actions()  # its own hand: the same in every world
                if len(legal) == 1:
                    for _, match in worlds:
                        match.apply(legal[0])
                    continue
                return max(self.value(_branch(worlds, [(1.0, i) for i in range(len(worlds))], a)) for a in legal)
            groups = self._by_action(worlds, to_act)
            if len(groups) == 1:
                ((action, members),) = groups.items()
                worlds = [(worlds[i][0] * p, worlds[i][1]) for p, i in members]
                for _, match in worlds:
                    match.apply(action)
                continue
            return sum(self.value(_branch(worlds, members, action)) for action, members in groups.items())

    def _by_action(self, worlds, seat: int) -> dict[int, list[tuple[float, int]]]:
        """Each action the seat to act takes in some world, with (probability, world index) pairs."""
        groups: dict[int, list[tuple[float, int]]] = {}
        choosing = []
        for i, (_, match) in enumerate(worlds):
            legal = match.deal.legal_actions()
            if len(legal) == 1:
                groups.setdefault(legal[0], []).append((1.0, i))
            else:
                choosing.append(i)
        if choosing:
            obs = np.stack([encode(worlds[i][1], seat) for i in choosing])
            mask = np.stack([worlds[i][1].deal.legal_mask() for i in choosing])
            probs = action_probabilities(self.policy, obs, mask)
            for row, i in enumerate(choosing):
                for action in np.flatnonzero(probs[row] > 0):
                    groups.setdefault(int(action), []).append((float(probs[row, action]), i))
        return groups


def _branch(worlds, members, action: int) -> list[tuple[float, Match]]:
    """Copies of the member worlds, weighted by the action's probability in each, with ``action`` applied."""
    branch = []
    for p, i in members:
        match = copy.deepcopy(worlds[i][1])
        match.apply(action)
        branch.append((worlds[i][0] * p, match))
    return branch


def values_over_deals(policy, rules, seat: int, dealer: int, deals) -> tuple[float, float]:
    """The best response's and the target's chips in ``seat``, summed over ``deals``, ``(matrix, probability)``
    pairs from ``dealer`` (every holdings matrix, or any subset: a deal partly known)."""
    rules = make_rules(rules)
    by_row: dict[tuple, list[tuple[float, Match]]] = {}  # the worlds of each hand the responder may be dealt
    for matrix, probability in deals:
        by_row.setdefault(tuple(matrix[seat]), []).append((probability, _deal(rules, matrix, dealer)))
    best = sum(_Walk(policy, seat, True).value(copy.deepcopy(worlds)) for worlds in by_row.values())
    own = sum(_Walk(policy, seat, False).value(worlds) for worlds in by_row.values())
    return best, own


def best_response_value(policy, num_players: int, rules="scarne:ranks=3", seat: int = 0) -> ExactValues:
    """The exact values of a best response and of the target in ``seat`` at a table of ``num_players - 1``
    copies of the target ``policy``, the dealer uniform over the seats (so averaged over the seat's
    positions); :class:`DeckTooLarge` if the deck is too large to enumerate (``MAX_WORLDS`` matrices)."""
    rules = make_rules(rules)
    check_table(rules, num_players)
    if count_worlds(num_players, rules) > MAX_WORLDS:
        raise DeckTooLarge(
            f"over {MAX_WORLDS:,} holdings matrices at {num_players} players with a deck of {rules.ranks} ranks: more "
            f"than the {MAX_WORLDS:,} an exact best response enumerates; use a smaller deck (rules <preset>:ranks=<k>)"
        )
    best_values, target_values = [], []
    for dealer in range(num_players):
        best, own = values_over_deals(policy, rules, seat, dealer, dealt(num_players, rules, dealer))
        best_values.append(best)
        target_values.append(own)

    def by_position(values):  # position k (the dealer's left: 0) is the seat's when the dealer sits k + 1 to its right
        return tuple(float(values[(seat - 1 - k) % num_players]) for k in range(num_players))

    return ExactValues(
        float(np.mean(best_values)), float(np.mean(target_values)), by_position(best_values), by_position(target_values)
    )
