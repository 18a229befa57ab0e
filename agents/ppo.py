"""A trained MaskablePPO model as a policy (needs the training extras: torch, sb3-contrib).

With no path, the pretrained 6-player ``scarne`` model shipped in ``agents/models/`` is loaded; the README
gives the command that produced it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from snipsnap_env.observation import OBS_DIM

from .base import Policy, check_masks

SHIPPED_MODEL = Path(__file__).parent / "models" / "ppo_scarne_6p.zip"


class PPOPolicy(Policy):
    """Greedy (``deterministic=True``) or sampled actions of a MaskablePPO model, always within the mask."""

    name = "ppo"

    def __init__(
        self, path: str | Path | None = None, deterministic: bool = True, seed: int | None = None, device: str = "cpu"
    ):
        super().__init__(seed)
        from sb3_contrib import MaskablePPO

        self.path = Path(path) if path is not None else SHIPPED_MODEL
        if not self.path.is_file():
            hint = " (the shipped model is missing from this install)" if path is None else ""
            raise FileNotFoundError(
                f"no PPO model file at {self.path}{hint}; expected a MaskablePPO .zip "
                "saved by python -m train.train_ppo"
            )
        try:
            self.model = MaskablePPO.load(self.path, device=device)
        except (zipfile.BadZipFile, KeyError, ValueError, EOFError, RuntimeError) as error:
            raise ValueError(
                f"{self.path} is not a readable MaskablePPO model ({type(error).__name__}: {error}); "
                "expected a .zip saved by python -m train.train_ppo"
            ) from None
        shape = getattr(self.model.observation_space, "shape", None)
        if shape != (OBS_DIM,):
            raise ValueError(
                f"{self.path} was trained for observations of shape {shape}; this version of "
                f"snipsnap_env makes observations of shape ({OBS_DIM},): retrain the model"
            )
        if getattr(self.model.action_space, "n", None) != 14:
            raise ValueError(f"{self.path} was trained for {self.model.action_space}; expected Discrete(14)")
        self.deterministic = deterministic
        self.model.policy.set_training_mode(False)

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, 14) action probabilities of the model, zero outside the mask."""
        import torch

        mask = check_masks(mask)
        with torch.no_grad():
            obs_tensor = torch.as_tensor(np.asarray(obs, np.float32), device=self.model.device)
            distribution = self.model.policy.get_distribution(obs_tensor, action_masks=mask)
            return distribution.distribution.probs.cpu().numpy()

    def act_batch(self, obs, mask):
        probs = self.probabilities(obs, mask)
        if self.deterministic:
            return probs.argmax(axis=1)
        # sample with the policy's own generator, never torch's global one
        draws = self.rng.random((len(probs), 1))
        actions = np.minimum((probs.cumsum(axis=1) < draws).sum(axis=1), probs.shape[1] - 1)
        rounded = probs[np.arange(len(probs)), actions] == 0  # a draw past a cumsum that rounds below 1
        actions[rounded] = probs[rounded].argmax(axis=1)
        return actions

    def __repr__(self) -> str:
        return f"PPOPolicy({str(self.path)!r})"
