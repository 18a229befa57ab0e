"""A candidate's gain over a reference policy in its seat, estimated along the candidate's own play: the
performance difference lemma (Kakade and Langford, ICML 2002),

    J(candidate) - J(reference) = E over the candidate's deals of  sum over its leads of  A_ref(s, a),

where ``A_ref(s, a) = Q_ref(s, a) - sum over b of ref(b | s) Q_ref(s, b)`` and ``Q_ref(s, a)`` is what the seat
makes from ``s`` on after leading ``a`` when it plays the reference from there on (the other seats as they
sit). The state ``s`` is the true deal, which the evaluator knows; the kernel rolls it out (common random
numbers across the leads, :func:`snipsnap_env.lead_values.values_for`), so the reference must be a policy the
kernel plays (a scripted player, a greedy network) and so must the other seats.

Why: a best response that leads differently from its target at one lead plays out a different deal from
there, so the plain paired difference of the two (the target in the seat, the response in the seat) spreads
as much as two unrelated deals (about 24 chips at 3 players: ±0.75 at 4,000 deals). Each advantage here is
a difference of two rollouts of the *same* position, and it is exactly 0 wherever the candidate leads as the
reference would. Both estimates are unbiased; this one is the narrower.
"""

from __future__ import annotations

import numpy as np

from agents.kernel_seats import NOT_PLAYED, kernel_codes
from snipsnap_env.observation import table_template

from .variance import lead_advantages


def kernel_plays(policies: list) -> bool:
    """Whether the kernel plays every one of ``policies`` itself (what the rollouts here need)."""
    return bool((kernel_codes(policies)[0] != NOT_PLAYED).all())


class AdvantageSums:
    """Per deal, the sum of the reference's advantages of the candidate's leads: an ``on_lead`` hook of
    :func:`train.measure.paired.play_paired` (the candidate's play is not changed by it: it draws from streams of its
    own). ``reference``: a copy of the reference policy for this hook alone (it may draw its lead, where its
    odds are not known); ``table``: the other seats' policies, as play_paired seats them."""

    def __init__(self, reference, table: list, opponent_index: np.ndarray, rollouts: int, seed: int):
        codes, self.nets = kernel_codes([reference, *table])
        if (codes == NOT_PLAYED).any():
            raise ValueError("the performance difference needs a reference and a table the kernel plays itself")
        self.reference_code, self.table_codes = codes[0], codes[1:]
        self.reference, self.opponent_index, self.rollouts = reference, opponent_index, rollouts
        self.sums = np.zeros(len(opponent_index))
        self.leads = np.zeros(len(opponent_index), np.int64)  # the candidate's leads with a choice, per deal
        self.rng = np.random.default_rng([seed, 0x9D1FF])

    def __call__(self, env, rows, obs, mask, actions, deals) -> None:
        choice = mask.sum(axis=1) > 1
        if not choice.any():
            return
        rows, obs, mask, actions, deals = rows[choice], obs[choice], mask[choice], actions[choice], deals[choice]
        odds = self.reference.lead_probabilities(obs, mask)
        if odds is None:  # a deterministic reference, or odds it does not state: one draw of its lead, unbiased
            odds = np.zeros(mask.shape)
            odds[np.arange(len(obs)), self.reference.act_batch(obs, mask)] = 1.0
        seats = env.to_act[rows]
        policies = self.table_codes[self.opponent_index[deals]]  # (rows, N): every seat as it sits ...
        policies[np.arange(len(rows)), seats] = self.reference_code  # ... the candidate's as the reference
        seeds = self.rng.integers(0, 2**63, size=len(rows), dtype=np.uint64)
        template = table_template(env.rules, env.num_players).astype(np.float32)
        advantage = lead_advantages(
            env, rows, seats, odds, actions, policies, self.rollouts, seeds, self.nets, template
        )
        np.add.at(self.sums, deals, advantage)
        np.add.at(self.leads, deals, 1)
