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
        actions, _ = self.model.predict(obs, action_masks=np.asarray(mask, bool), deterministic=True)
        return np.asarray(actions, np.int64)
