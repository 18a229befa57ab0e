"""The model being trained, as a policy: how training evaluates it and how distillation's DAgger rounds let
it choose (shared by train_ppo and distill, which therefore need not import each other)."""

from __future__ import annotations

import numpy as np

import agents


class LivePolicy(agents.Policy):
    """The model being trained, as a greedy policy (for evaluation during training)."""

    def __init__(self, model):
        super().__init__(None)
        self.model = model

    def act_batch(self, obs, mask):
        """Greedy actions from the actor, which reads the observation only (a critic that sees the hidden
        hands has a wider observation space than the (B, OBS_DIM) observations played here)."""
        import torch

        with torch.no_grad():
            obs_t = torch.as_tensor(np.asarray(obs, np.float32), device=self.model.device)
            distribution = self.model.policy.get_distribution(obs_t, action_masks=np.asarray(mask, bool))
            return distribution.distribution.probs.argmax(dim=1).cpu().numpy().astype(np.int64)
