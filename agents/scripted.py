"""Scripted baselines. In the base rules only the lead is a real choice (RULES.md §6): a follow has exactly
one legal action, which every policy takes.
"""

from __future__ import annotations

import numpy as np

from snipsnap_env.cards import CARDS_PER_RANK, NUM_RANKS
from snipsnap_env.engine import NUM_ACTIONS
from snipsnap_env.observation import MAX_HAND, SLICES, rule_feature

from .base import Policy, argmax_legal, check_masks, uniform_over_best


def hand_counts(obs: np.ndarray) -> np.ndarray:
    """Own cards of each rank, (B, 13), from the observation."""
    return np.rint(obs[:, SLICES["hand"]] * CARDS_PER_RANK)


def _pad_pass(scores: np.ndarray) -> np.ndarray:
    """Append a score column for the pass action (never legal on a lead, the only choice elsewhere)."""
    return np.concatenate([scores, np.zeros((scores.shape[0], NUM_ACTIONS - NUM_RANKS))], axis=1)


class RandomPolicy(Policy):
    """Uniform over the legal actions."""

    name = "random"
    kernel_policy = "random"  # the compiled kernel plays it (snipsnap_env.kernel_state.kernel_policy)

    def act_batch(self, obs, mask):
        mask = check_masks(mask)
        # the k-th legal action, k uniform: one random number per game
        k = (self.rng.random(len(mask)) * mask.sum(axis=1)).astype(np.int64)
        return (mask.cumsum(axis=1) > k[:, None]).argmax(axis=1)

    def lead_probabilities(self, obs, mask):
        mask = check_masks(mask)
        return mask / mask.sum(axis=1, keepdims=True)


class RandomCard(Policy):
    """Lead a card drawn uniformly from the hand: a rank with probability proportional to its copies.

    The "random lead" of RULES.md §6's reference figures; ``random`` draws ranks uniformly instead.
    """

    name = "random_card"
    kernel_policy = "random_card"  # the compiled kernel plays it (snipsnap_env.kernel_state.kernel_policy)

    def act_batch(self, obs, mask):
        cumulative = self._weights(obs, mask).cumsum(axis=1)
        draws = self.rng.random((len(cumulative), 1)) * cumulative[:, -1:]
        return (cumulative <= draws).sum(axis=1)

    def lead_probabilities(self, obs, mask):
        weights = self._weights(obs, mask)
        return weights / weights.sum(axis=1, keepdims=True)

    @staticmethod
    def _weights(obs, mask):
        mask = check_masks(mask)
        return np.where(mask, np.maximum(_pad_pass(hand_counts(obs)), 1.0), 0.0)  # a pass or follow: weight 1


class MostCopies(Policy):
    """Lead the rank you hold most copies of (ties at random)."""

    name = "most_copies"
    kernel_policy = "most_copies"  # the compiled kernel plays it (snipsnap_env.kernel_state.kernel_policy)

    def act_batch(self, obs, mask):
        return argmax_legal(_pad_pass(hand_counts(obs)), mask, self.rng)

    def lead_probabilities(self, obs, mask):
        return uniform_over_best(_pad_pass(hand_counts(obs)), mask)


class FewestCopies(Policy):
    """Lead the rank you hold fewest copies of: singletons first (ties at random)."""

    name = "fewest_copies"
    kernel_policy = "fewest_copies"  # the compiled kernel plays it (snipsnap_env.kernel_state.kernel_policy)

    def act_batch(self, obs, mask):
        return argmax_legal(_pad_pass(-hand_counts(obs)), mask, self.rng)

    def lead_probabilities(self, obs, mask):
        return uniform_over_best(_pad_pass(-hand_counts(obs)), mask)


class Control(Policy):
    """Keep control of the lead and avoid being snipped, reading the rules from the observation.

    Score of leading a rank held c times: c (cards shed) + 2 × the chance of closing the set, and so
    leading again, − the expected penalty when the player on your left holds a copy and follows at once
    (1 chip, or c with multi_play, where your whole batch goes down before it); a lead that empties your
    hand wins at once. Closing: every lap each holder plays one card, leader first, so the leader closes
    when nobody else holds as many copies — surely with 3 or 4, with 2 unless one player holds the other
    two, never with 1 (with multi_play, only with 4).

    At a lead every rank you hold is untouched (played ranks are finished), so no public fact tells two
    ranks held equally often apart: closing chance and snip risk depend on c and the hand sizes alone,
    and both improve as c grows. So this heuristic ranks leads exactly as ``most_copies`` does — measured
    identical over 100,000 paired deals under ``scarne`` and ``pairs``. It is kept as the readable form
    of the two ideas, and as a starting point for heuristics that weigh them differently.
    """

    name = "control"

    def act_batch(self, obs, mask):
        mask = check_masks(mask)
        copies = hand_counts(obs)
        chips, penalties = rule_feature(obs, "chips"), rule_feature(obs, "penalties")
        multi_play = rule_feature(obs, "multi_play")
        unseen = CARDS_PER_RANK - copies  # the held ranks are untouched: all other copies are in other hands
        others = np.rint(obs[:, SLICES["hand_size"]][:, 1:] * MAX_HAND)  # relative seats 1.. (left first)
        total = np.maximum(others.sum(axis=1, keepdims=True), 2)
        left = others[:, :1]
        p_left_holds = 1 - np.clip(1 - left / total, 0, 1) ** unseen
        p_one_holds_both = (others * (others - 1)).sum(axis=1, keepdims=True) / (total * (total - 1))
        closes = np.select([copies >= 3, copies == 2], [1.0, 1 - p_one_holds_both], 0.0)
        closes = np.where(multi_play, (copies == CARDS_PER_RANK).astype(float), closes)
        penalty = np.where(chips & penalties, np.where(multi_play, copies, 1.0) * p_left_holds, 0.0)
        wins_now = (copies == copies.sum(axis=1, keepdims=True)) & (copies > 0)
        scores = copies + 2 * closes - penalty + 100 * wins_now
        return argmax_legal(_pad_pass(scores), mask, self.rng)


#: every scripted agent, registered by its ``name`` in ``agents.make`` (and so offered by every job and the
#: browser table): a new one is its class here, and its kernel rule in snipsnap_env.kernel_leads if the kernel
#: plays it (docs/design.md, "Adding a scripted agent")
SCRIPTED = (RandomPolicy, RandomCard, MostCopies, FewestCopies, Control)
