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

from functools import partial, reduce

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from agents.threads import on_torch_threads
from snipsnap_env.cards import NUM_RANKS
from snipsnap_env.observation import CHIP_SCALE, OBS_DIM
from snipsnap_env.state import LEAD_VALUES_DIM

#: each minibatch's gradient is summed from this many shards, in order: one per core on 2 cores, and the same
#: bytes on any number of cores (a shard count that followed the machine would change the sums' order)
UPDATE_SHARDS = 2


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


class AllActionPPO(RolloutCriticPPO):
    """RolloutCriticPPO whose clipped surrogate sums over every legal lead instead of the one taken.

    The critic knows every legal lead's value, so the expectation PPO estimates from the sampled action,
    ``E_{a~pi_old}[min(r_a A_a, clip(r_a) A_a)]``, can be taken exactly: ``sum_a pi_old(a) min(r_a A_a, ...)``
    with ``r_a = pi(a) / pi_old(a)`` — the same clipped objective, without the action-sampling noise (the
    "all-action" or mean actor-critic gradient). Each position then teaches as much as several sampled
    ones, which is what lets the default recipe train on half the positions (docs/speed.md). Only
    the actor is evaluated: the value network is read by nothing and not fitted. The rollouts, the buffer, the
    optimiser, the clipping schedule and the checkpoints are MaskablePPO's.
    """

    def _setup_model(self) -> None:
        super()._setup_model()
        self.policy.reads_values = False  # the rollouts' values: nothing reads them

    def train(self) -> None:
        buffer = self.rollout_buffer
        observations = buffer.observations.reshape(-1, buffer.observations.shape[-1])
        if observations.shape[1] != OBS_DIM + LEAD_VALUES_DIM:
            raise ValueError("AllActionPPO needs observations followed by the lead values (lead_values > 0)")
        masks = buffer.action_masks.reshape(len(observations), -1).astype(bool)
        self.policy.set_training_mode(True)  # the head scores the held ranks only, here as in the fit
        head = self.policy.action_net  # rank_shared (the rollouts critic needs it): its inputs once, not per epoch
        with torch.no_grad():
            inputs = head.inputs(torch.as_tensor(observations, dtype=torch.float32))
        illegal = torch.as_tensor(~masks)
        old_log_probs = self._log_probs(head, inputs, illegal)[:, :NUM_RANKS]
        legal = masks[:, :NUM_RANKS]
        old_probs = np.where(legal, np.exp(old_log_probs), 0.0)
        values = observations[:, OBS_DIM : OBS_DIM + LEAD_VALUES_DIM] * CHIP_SCALE
        advantages = np.where(legal, values - (old_probs * values).sum(axis=1, keepdims=True), 0.0)
        spread = float(np.sqrt((old_probs * advantages**2).sum() / max(old_probs.sum(), 1.0)))
        self.logger.record("train/lead_advantage_std", spread)
        if self.normalize_advantage:  # over the whole rollout: the sum over leads is already noiseless
            advantages /= spread + 1e-8
        self._fit(head, inputs, illegal, old_log_probs, old_probs, advantages)

    @staticmethod
    def _log_probs(head, inputs, illegal) -> np.ndarray:
        """Log-probabilities of every action under the policy that collected the rollout, computed as the fit
        computes them (about -1e8 where illegal, as SB3 masks); in pieces, on the cores."""

        pieces = torch.arange(len(illegal)).split(8192)
        calls = [partial(action_log_probs, head, inputs, illegal, rows) for rows in pieces]
        with torch.no_grad():
            return torch.cat(on_torch_threads(calls)).numpy()

    def _fit(self, head, inputs, illegal, old_log_probs, old_probs, advantages) -> None:
        self._update_learning_rate(self.policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)
        arrays = (old_log_probs, old_probs, advantages)
        old_log_probs, old_probs, advantages = (torch.as_tensor(a, dtype=torch.float32) for a in arrays)
        parameters = list(head.parameters())  # all the loss reads: the value network is not fitted

        def shard(rows: torch.Tensor, size: int) -> tuple:
            """This shard's part of the minibatch's loss (its rows' sum over ``size``), its gradient, and its
            KL(pi_old || pi) and share clipped summed over its rows."""
            log_probs = action_log_probs(head, inputs, illegal, rows)[:, :NUM_RANKS]
            weights, gains = old_probs[rows], advantages[rows]
            log_ratio = torch.where(weights > 0, log_probs - old_log_probs[rows], 0.0)
            ratio = log_ratio.exp()
            surrogate = torch.min(ratio * gains, ratio.clamp(1 - clip_range, 1 + clip_range) * gains)
            loss = -(weights * surrogate).sum() / size
            if self.ent_coef:  # the entropy over the legal actions
                entropy = -(log_probs.exp() * torch.where(weights > 0, log_probs, 0.0)).sum()
                loss = loss - self.ent_coef * entropy / size
            gradient = torch.autograd.grad(loss, parameters)
            with torch.no_grad():
                kl = float((weights * -log_ratio).sum())
                clipped = float((weights * ((ratio - 1).abs() > clip_range)).sum())
            return loss.item(), gradient, kl, clipped

        losses, clipped, kls = [], [], []
        for _ in range(self.n_epochs):
            order = torch.randperm(len(illegal))
            for rows in order.split(self.batch_size):
                # The same shards on any machine, so the same bytes; on 2 cores each on its own (torch's operations
                # release the GIL): the update runs 1.7x faster than on one thread (docs/speed.md)
                parts = on_torch_threads([partial(shard, part, len(rows)) for part in rows.chunk(UPDATE_SHARDS)])
                for parameter, *gradients in zip(parameters, *(part[1] for part in parts)):
                    parameter.grad = reduce(torch.add, gradients)
                torch.nn.utils.clip_grad_norm_(parameters, self.max_grad_norm)
                self.policy.optimizer.step()
                self.policy.optimizer.zero_grad()
                losses.append(sum(part[0] for part in parts))
                kls.append(sum(part[2] for part in parts) / len(rows))
                clipped.append(sum(part[3] for part in parts) / len(rows))
            self._n_updates += 1
        self.logger.record("train/policy_gradient_loss", np.mean(losses))
        self.logger.record("train/approx_kl", np.mean(kls))
        self.logger.record("train/clip_fraction", np.mean(clipped))
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)


def action_log_probs(head, inputs, illegal, rows: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of every action in ``rows`` from the head's :meth:`~agents.rank_policy.RankSharedHead.inputs`
    (illegal actions at about -1e8, as SB3 masks them)."""
    return torch.log_softmax(head.logits(*(x[rows] for x in inputs)).masked_fill(illegal[rows], -1e8), dim=1)
