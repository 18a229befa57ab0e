"""PPO whose critic plays the whole deal out: ``train_ppo --critic rollouts`` (needs the training extras).

The learner's observations carry, after the observation's columns, the value of each legal lead in the
*true* deal (:mod:`snipsnap_env.lead_values`: every hidden hand as it is, rolled out with common random
numbers). An action's advantage is then its lead's value minus the policy's expected value over the legal
leads, ``A(a) = Q(a) - sum_b pi(b) Q(b)``, instead of a GAE estimate from the episode's chips, whose spread
is ten times the differences between leads. The PPO update itself (clipped ratio, entropy bonus, minibatch
advantage normalisation) is MaskablePPO's. The value network learns the expected value; nothing reads it.

The actor reads the observation only (:class:`agents.rank_policy.RankSharedHead`), so the model plays from
what its seat sees; the true deal shapes only its training signal.
"""

from __future__ import annotations

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from snipsnap_env.cards import NUM_RANKS
from snipsnap_env.observation import CHIP_SCALE, OBS_DIM
from snipsnap_env.state import LEAD_VALUES_DIM


def lead_value_advantages(policy, observations: np.ndarray, masks: np.ndarray, actions: np.ndarray):
    """(advantages in chips, expected values / CHIP_SCALE) of flat rows of observations that end with the
    lead values: ``A = Q(a) - E_pi[Q]``; 0 where the action is no lead (a forced follow or a pass)."""
    values = observations[:, OBS_DIM : OBS_DIM + LEAD_VALUES_DIM] * CHIP_SCALE
    masks = masks.astype(bool)
    with torch.no_grad():
        probs = np.concatenate(
            [
                policy.get_distribution(torch.as_tensor(observations[i : i + 8192]), action_masks=masks[i : i + 8192])
                .distribution.probs.cpu()
                .numpy()
                for i in range(0, len(observations), 8192)
            ]
        )
    expected = (probs[:, :NUM_RANKS] * values).sum(axis=1)
    leads = actions < NUM_RANKS
    taken = np.where(leads, values[np.arange(len(actions)), np.minimum(actions, NUM_RANKS - 1)], expected)
    return taken - expected, expected / CHIP_SCALE


class RolloutCriticPPO(MaskablePPO):
    """MaskablePPO with :func:`lead_value_advantages` in place of GAE (see the module's docstring)."""

    def train(self) -> None:
        buffer = self.rollout_buffer
        shape = buffer.advantages.shape  # (n_steps, n_envs)
        observations = buffer.observations.reshape(-1, buffer.observations.shape[-1])
        if observations.shape[1] != OBS_DIM + LEAD_VALUES_DIM:
            raise ValueError("RolloutCriticPPO needs observations followed by the lead values (lead_values > 0)")
        masks = buffer.action_masks.reshape(len(observations), -1)
        actions = buffer.actions.reshape(-1).astype(np.int64)
        advantages, expected = lead_value_advantages(self.policy, observations, masks, actions)
        buffer.advantages[:] = advantages.reshape(shape)
        buffer.returns[:] = expected.reshape(shape)  # what the value network fits: chips / CHIP_SCALE
        self.logger.record("train/lead_advantage_std", float(advantages.std()))
        super().train()
