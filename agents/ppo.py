"""A trained MaskablePPO model as a policy (needs the training extras: torch, sb3-contrib).

With no path, the model shipped in ``agents/models/`` is loaded: ``scarne`` rules, every table size 3..8
(distilled from the search player); the README gives the command that produced it.
"""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import numpy as np

from snipsnap_env.engine import NUM_ACTIONS
from snipsnap_env.observation import LAYOUT, OBS_DIM, SLICES
from snipsnap_env.rules import MIN_PLAYERS

from .base import Policy, check_masks

SHIPPED_MODEL = Path(__file__).parent / "models" / "ppo_scarne.zip"
LAYOUT_FILE = "snipsnap_layout.json"  # inside a model's zip: the observation layout it was trained on
TRAINED_ON_FILE = "snipsnap_trained_on.json"  # inside a model's zip: the tables it was trained for


def save_model(model, path: str | Path, trained_on: dict | None = None) -> Path:
    """``model.save(path)``, plus the observation layout (and ``trained_on``: the table sizes and rules it
    learned), written atomically (a temporary file, then a rename)."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial.zip")
    model.save(partial)
    with zipfile.ZipFile(partial, "a") as archive:
        archive.writestr(LAYOUT_FILE, json.dumps([list(field) for field in LAYOUT]))
        if trained_on is not None:
            archive.writestr(TRAINED_ON_FILE, json.dumps(trained_on))
    partial.replace(path)
    return path


def layout_difference(saved: list) -> str:
    """What differs between a model's saved observation layout and this version's, in words ('' if none)."""
    saved = [tuple(field) for field in saved]
    if saved == list(LAYOUT):
        return ""
    gone = [name for name, _ in saved if name not in dict(LAYOUT)]
    new = [name for name, _ in LAYOUT if name not in dict(saved)]
    resized = [f"{name} {size}->{dict(LAYOUT)[name]}" for name, size in saved if dict(LAYOUT).get(name, size) != size]
    parts = [f"fields only in the model: {gone}" if gone else "", f"new fields: {new}" if new else ""]
    parts.append(f"resized: {resized}" if resized else "")
    return "; ".join(part for part in parts if part) or "the fields are in another order"


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
            with zipfile.ZipFile(self.path) as archive:
                names = archive.namelist()
                saved = json.loads(archive.read(LAYOUT_FILE)) if LAYOUT_FILE in names else None
                self.trained_on = json.loads(archive.read(TRAINED_ON_FILE)) if TRAINED_ON_FILE in names else {}
        except Exception as error:  # truncated, foreign or damaged files fail in many ways inside SB3 and torch
            raise ValueError(
                f"{self.path} is not a readable MaskablePPO model ({type(error).__name__}: {error}); "
                "expected a .zip saved by python -m train.train_ppo"
            ) from None
        self._warned_tables: set[int] = set()
        if saved is not None and layout_difference(saved):
            raise ValueError(
                f"{self.path} was trained on another observation layout than this version of snipsnap_env "
                f"makes ({layout_difference(saved)}): retrain the model"
            )
        shape = getattr(self.model.observation_space, "shape", None)
        if shape != (OBS_DIM,):
            raise ValueError(
                f"{self.path} was trained for observations of shape {shape}; this version of "
                f"snipsnap_env makes observations of shape ({OBS_DIM},): retrain the model"
            )
        if getattr(self.model.action_space, "n", None) != NUM_ACTIONS:
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
        self._warn_on_other_tables(obs)
        probs = self.probabilities(obs, mask)
        if self.deterministic:
            return probs.argmax(axis=1)
        # sample with the policy's own generator, never torch's global one
        draws = self.rng.random((len(probs), 1))
        actions = np.minimum((probs.cumsum(axis=1) < draws).sum(axis=1), probs.shape[1] - 1)
        rounded = probs[np.arange(len(probs)), actions] == 0  # a draw past a cumsum that rounds below 1
        actions[rounded] = probs[rounded].argmax(axis=1)
        return actions

    def _warn_on_other_tables(self, obs) -> None:
        """Say once per table size when the model plays a table it was not trained for."""
        trained = self.trained_on.get("players")
        if not trained:
            return
        sizes = MIN_PLAYERS + np.asarray(obs)[:, SLICES["num_players"]].argmax(axis=1)
        for n in set(sizes.tolist()) - set(trained) - self._warned_tables:
            self._warned_tables.add(n)
            warnings.warn(f"{self.path.name} was trained for {trained} players, not {n}: expect weaker play")

    def __repr__(self) -> str:
        return f"PPOPolicy({str(self.path)!r})"
