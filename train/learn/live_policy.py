"""The model being trained, as a policy: how training evaluates it and how distillation's DAgger rounds let
it choose (shared by train_ppo and distill, which therefore need not import each other)."""

from __future__ import annotations

import numpy as np

import agents
from agents.numpy_actor import NumpyActor, greedy_actions


class LivePolicy(agents.Policy):
    """The model being trained, as a greedy policy (for evaluation during training): the choices a model file
    saved now would make, ties between ranks the observation cannot tell apart broken at random
    (:func:`agents.numpy_actor.greedy_actions`)."""

    def __init__(self, model, seed: int | None = None):
        super().__init__(seed)
        self.model = model

    def act_batch(self, obs, mask):
        """Greedy actions from the actor, which reads the observation only (a critic that sees the hidden
        hands has a wider observation space than the (B, OBS_DIM) observations played here)."""
        import torch

        obs = np.asarray(obs, np.float32)
        legal = np.asarray(mask, bool)
        network = self.model.policy
        actor = NumpyActor(network)  # the weights as they are now: the model changes between calls

        def exact_logits(rows):
            with torch.no_grad():
                x = torch.as_tensor(obs[rows], device=self.model.device)
                return network.get_distribution(x, action_masks=legal[rows]).distribution.logits.cpu().numpy()

        return greedy_actions(actor.logits(obs), legal, self.rng, exact_logits)
