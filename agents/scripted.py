"""Scripted baselines. In the base rules only the lead is a real choice (RULES.md §6): a follow has exactly
one legal action, which every policy takes.
"""

from __future__ import annotations

import numpy as np

from snipsnap_env.cards import CARDS_PER_RANK, NUM_RANKS
from snipsnap_env.engine import NUM_ACTIONS
from snipsnap_env.observation import MAX_HAND, SLICES

from .base import Policy, argmax_legal, check_masks


def hand_counts(obs: np.ndarray) -> np.ndarray:
    """Own cards of each rank, (B, 13), from the observation."""
    return np.rint(obs[:, SLICES["hand"]] * CARDS_PER_RANK)


def _pad_pass(scores: np.ndarray) -> np.ndarray:
    """Append a score column for the pass action (never legal on a lead, the only choice elsewhere)."""
    return np.concatenate([scores, np.zeros((scores.shape[0], NUM_ACTIONS - NUM_RANKS))], axis=1)


class RandomPolicy(Policy):
    """Uniform over the legal actions."""

    name = "random"

    def act_batch(self, obs, mask):
        return argmax_legal(np.zeros(np.shape(mask)), mask, self.rng)


class RandomCard(Policy):
    """Lead a card drawn uniformly from the hand: a rank with probability proportional to its copies.

    The "random lead" of RULES.md §6's reference figures; ``random`` draws ranks uniformly instead.
    """

    name = "random_card"

    def act_batch(self, obs, mask):
        mask = check_masks(mask)
        weights = np.where(mask, np.maximum(_pad_pass(hand_counts(obs)), 1.0), 0.0)  # a pass or follow: weight 1
        cumulative = weights.cumsum(axis=1)
        draws = self.rng.random((len(weights), 1)) * cumulative[:, -1:]
        return (cumulative <= draws).sum(axis=1)


class MostCopies(Policy):
    """Lead the rank you hold most copies of (ties at random)."""

    name = "most_copies"

    def act_batch(self, obs, mask):
        return argmax_legal(_pad_pass(hand_counts(obs)), mask, self.rng)


class FewestCopies(Policy):
    """Lead the rank you hold fewest copies of: singletons first (ties at random)."""

    name = "fewest_copies"

    def act_batch(self, obs, mask):
        return argmax_legal(_pad_pass(-hand_counts(obs)), mask, self.rng)


class Control(Policy):
    """Keep control of the lead and avoid being snipped.

    Score of leading rank r with c copies in hand: c (cards shed, and the fewer copies out, the likelier
    you close the set and lead again) + 1 if you hold all four (you are sure to lead again) − the
    probability that the player on your left holds a copy and snips you, from its hand size and the
    cards you cannot see. A lead that empties your hand wins at once and scores highest.
    """

    name = "control"

    def act_batch(self, obs, mask):
        mask = check_masks(mask)
        copies = hand_counts(obs)
        unseen = np.rint(obs[:, SLICES["unseen"]] * CARDS_PER_RANK)
        left_hand = np.rint(obs[:, SLICES["hand_size"].start + 1] * MAX_HAND)[:, None]
        total_unseen = np.maximum(unseen.sum(axis=1, keepdims=True), 1)
        # P(left holds none of the u unseen copies) ≈ (1 - left_hand/total_unseen)^u
        p_snipped = 1 - np.clip(1 - left_hand / total_unseen, 0, 1) ** unseen
        my_cards = copies.sum(axis=1, keepdims=True)
        wins_now = (copies == my_cards) & (copies > 0)
        scores = copies + (copies == CARDS_PER_RANK) - p_snipped + 100 * wins_now
        return argmax_legal(_pad_pass(scores), mask, self.rng)
