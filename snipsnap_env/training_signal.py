"""The rewards an environment can pay: the chips (the default), or a training signal read from the true deal.

``reward="chips"`` pays what the rules pay — each seat's chips as they move (deal points with chips off).

``reward="lead_advantage"`` pays, at each real lead (a lead with more than one legal rank), the **lead's
advantage in the true deal**: ``A(a) = Q(a) - sum_b ref(b) Q(b)``, where ``Q(b)`` is the mean of the chips the
leader makes from this point on when it leads ``b`` and then every seat plays the reference policy
(most_copies), from ``rollouts`` kernel rollouts of the *real* deal — every hidden hand as it is — with common
random numbers (every lead meets the same draws), and ``ref`` is the reference's own lead (uniform over the
legal ranks held most often). Every other step pays 0; the chips are not paid (infos still report them).

What it reads and what it optimises, said plainly:

- It reads the hidden hands, in training only: the observation never changes, so an actor still plays from
  what its seat sees (perfect-training-imperfect-execution, as PerfectDou). An actor that maximises it learns
  ``argmax_a E[Q(a) | what it sees]``: one step of policy improvement over most_copies — the lead the
  search player (:mod:`agents.pimc`) would pick with infinitely many worlds drawn from the true posterior.
- It is a one-step target, not the game's return: it ranks leads as the chips do *when every later lead is
  most_copies'*. It does not credit a lead for what it sets up for one's own later leads beyond that, and
  a deal's rewards do not sum to its chips. It has mean zero under the reference (a most_copies player is
  paid 0 on average), and positive mean for a lead choice better than most_copies'.
- Its variance is that of ``rollouts`` continuations of one known deal, not of the deal: a deal's chips
  spread by about 12 at 4 players while the leads of one position differ by about 2, so an advantage fitted
  to the chips has a signal-to-noise ratio near 0.05 and this one near 1 (docs/environment.md). It is
  immediate — paid at the step that chose — so a discount of 0 (a contextual bandit) loses nothing.

This is the signal ``train_ppo --critic rollouts`` feeds its own PPO (there the continuation is the learner's
network), given to every library through the one thing every library reads.
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_RANKS

# The compiled kernel (numba) loads only for an env that pays this signal: ``import snipsnap_env`` stays light.

REWARDS = ("chips", "lead_advantage")
#: rollouts of the true deal per candidate lead (most_copies breaks ties at random, so one is not enough)
DEFAULT_ROLLOUTS = 8
STREAM = 0x51_6E_41  # an env seeded with s seeds the signal's rollouts with (s, STREAM): its deals stay the same


def check_reward(reward, rollouts) -> tuple[str, int]:
    """``(reward, rollouts)`` checked, or a ValueError naming what is wrong."""
    if not isinstance(reward, str) or reward not in REWARDS:
        raise ValueError(f"reward got {reward!r}; allowed: {', '.join(map(repr, REWARDS))}")
    if isinstance(rollouts, bool) or not isinstance(rollouts, (int, np.integer)) or not 1 <= rollouts <= 4096:
        raise ValueError(f"reward_rollouts got {rollouts!r}; allowed: a whole number of rollouts from 1 to 4096")
    return reward, int(rollouts)


def signal_for(reward, rollouts, rules, num_players: int):
    """``(reward, signal)`` for an env's ``reward``/``reward_rollouts`` options, checked: ``signal`` is the
    :class:`LeadAdvantage` that pays ``"lead_advantage"``, or None for the chips."""
    reward, rollouts = check_reward(reward, rollouts)
    return reward, LeadAdvantage(rules, num_players, rollouts) if reward == "lead_advantage" else None


def lead_advantages(state, rule_codes, rows, viewers, odds, actions, policies, rollouts, seeds, nets, template):
    """``Q(taken) - sum_a odds(a) Q(a)`` at the leads of games ``rows`` of the stacked kernel ``state``
    (:data:`snipsnap_env.kernel.STATE`): ``Q(a)`` what seat ``viewers`` makes from there on after the lead
    ``a``, ``policies`` (rows, N) playing every seat in the kernel's rollouts
    (:func:`snipsnap_env.lead_values.values_for`, ``rollouts`` a lead, seeded by ``seeds``); ``odds``
    (rows, >= 13) a distribution over the leads, ``actions`` the leads taken."""
    from .lead_values import values_for

    state = [np.ascontiguousarray(array[rows]) for array in state[:5]]
    odds = odds[:, :NUM_RANKS]
    taken = np.zeros(odds.shape, bool)
    taken[np.arange(len(rows)), actions] = True
    values = np.empty((len(rows), NUM_RANKS))
    values_for(len(rows) * rollouts, *state, np.asarray(viewers, np.int64), (odds > 0) | taken,
               np.ascontiguousarray(policies), rollouts, seeds, rule_codes, values, nets, template)  # fmt: skip
    expected = np.where(odds > 0, odds * np.nan_to_num(values), 0.0).sum(axis=1)
    chosen = values[np.arange(len(rows)), actions]
    if np.isnan(chosen).any() or np.isnan(values[odds > 0]).any():
        raise RuntimeError(
            "a lead taken or with probability was not a legal lead in the kernel: policy and mask disagree"
        )
    return chosen - expected


class LeadAdvantage:
    """The ``lead_advantage`` reward of one table's games (see the module's docstring).

    ``of(state, rows, masks, actions)`` for games of a stacked kernel state standing at a lead of the seat
    to act; ``of_lead(at_lead(deal), action)`` for one engine deal. Rollout seeds come from ``rng`` (reseed it
    with the env), so the same seed gives the same rewards.
    """

    def __init__(self, rules, num_players: int, rollouts: int = DEFAULT_ROLLOUTS, seed=None):
        from .kernel import rule_codes
        from .kernel_network import no_networks
        from .observation import table_template

        self.rollouts = rollouts
        self.rule_codes = rule_codes(rules)
        self.template = table_template(rules, num_players).astype(np.float32)
        self.nets = no_networks()
        self.rng = np.random.default_rng(seed)

    def seed(self, seed) -> None:
        self.rng = np.random.default_rng(seed)

    def seed_with_env(self, seed: int | None) -> None:
        """Seed from the env's own seed (None: fresh entropy), on a stream of the signal's own."""
        self.seed(None if seed is None else (seed, STREAM))

    def of(self, state, rows: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """(len(rows),) the advantage of lead ``actions`` (legal ranks) in games ``rows`` of ``state``, whose seats
        to act hold the legal leads ``masks`` (len(rows), 14); 0 where there was one legal lead."""
        advantages = np.zeros(len(rows))
        choice = masks[:, :NUM_RANKS].sum(axis=1) > 1
        if not choice.any():
            return advantages
        games = [np.ascontiguousarray(array[rows[choice]]) for array in state[:5]]
        advantages[choice] = self._advantages(games, np.asarray(actions, np.int64)[choice])
        return advantages

    def _advantages(self, games, actions: np.ndarray) -> np.ndarray:
        """The compiled advantages of ``actions`` in the stacked ``games`` (each at a real lead)."""
        from .lead_values import most_copies_advantages

        out = np.empty(len(actions))
        seeds = self.rng.integers(0, 2**63, size=len(actions), dtype=np.uint64)
        work = len(actions) * self.rollouts
        most_copies_advantages(
            work, *games, actions, self.rollouts, seeds, self.rule_codes, self.nets, self.template, out
        )
        return out

    def at_lead(self, deal):
        """The kernel state of engine ``deal`` if it stands at a real lead (else None): take it before the lead
        is applied, and value the lead with :meth:`of_lead` once the engine has taken it as legal."""
        if deal.over or not deal.is_lead:
            return None
        mask = deal.legal_mask()
        if mask[:NUM_RANKS].sum() <= 1:
            return None
        from .batch import state_of

        return tuple(array[None] for array in state_of(deal))

    def of_lead(self, state, action: int) -> float:
        """The advantage of lead ``action`` at a position of :meth:`at_lead` (one game, at a real lead)."""
        return float(self._advantages(state, np.array([action], np.int64))[0])
