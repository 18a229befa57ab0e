"""The policy interface: observations (+ masks) in, legal actions out, for one game or a batch.

Every policy implements ``act_batch(obs, mask)`` on arrays of shape (B, OBS_DIM) and (B, 14) — the layout of
``snipsnap_env.observation`` — so the same object plays the AEC env (one observation dict at a time,
through ``__call__``) and the batched engine (thousands of games per call). Randomness comes from the
policy's own ``numpy.random.Generator``, seeded at construction; no policy touches global random state.
"""

from __future__ import annotations

import numpy as np

from snipsnap_env.engine import NUM_ACTIONS


class Policy:
    """Base class: subclasses implement :meth:`act_batch`."""

    name = "policy"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the policy's random stream from ``seed``."""
        self.rng = np.random.default_rng(seed)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One legal action per row of ``obs`` (B, OBS_DIM) given ``mask`` (B, 14)."""
        raise NotImplementedError

    def lead_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
        """(B, 14): the distribution :meth:`act_batch` draws each row's action from, where it is known exactly
        (the evaluation's control variates use it, :mod:`train.measure.variance`); None where it is not (a search, whose
        draws are its own). A deterministic policy may answer None too: its choices need no correction."""
        return None

    def __call__(self, observation: dict) -> int:
        """The action for one AEC observation dict ``{"observation": ..., "action_mask": ...}``."""
        obs = np.asarray(observation["observation"], dtype=np.float32)[None, :]
        mask = np.asarray(observation["action_mask"])[None, :]
        return int(self.act_batch(obs, mask)[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def check_masks(mask: np.ndarray) -> np.ndarray:
    """``mask`` as a bool array of shape (B, 14), with a clear error for a row with no legal action."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS:
        raise ValueError(f"action masks must have shape (batch, {NUM_ACTIONS}), got {mask.shape}")
    playable = mask.any(axis=1)
    if not playable.all():
        empty = np.flatnonzero(~playable)
        raise ValueError(f"rows {empty[:10].tolist()} of the action mask allow no action; nobody is to act there")
    return mask


def argmax_legal(scores: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the legal action with the highest score; ties are broken uniformly at random."""
    mask = check_masks(mask)
    noisy = scores + rng.random(scores.shape) * 1e-3  # scores differ by far more than the noise where they differ
    return np.where(mask, noisy, -np.inf).argmax(axis=1)


def uniform_over_best(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(B, 14): what :func:`argmax_legal` draws from when equal scores are exactly equal (whole numbers): each
    legal action of the row's highest score equally likely."""
    mask = check_masks(mask)
    masked = np.where(mask, scores, -np.inf)
    best = masked == masked.max(axis=1, keepdims=True)
    return best / best.sum(axis=1, keepdims=True)


def first_illegal(actions: np.ndarray, mask: np.ndarray) -> int | None:
    """The first row whose action is not one ``mask`` (B, 14) allows, or None: every action checked the same way
    (:class:`FunctionPolicy`, :class:`agents.spec.UserAgent`)."""
    inside = (actions >= 0) & (actions < NUM_ACTIONS)
    legal = inside & mask[np.arange(len(mask)), np.clip(actions, 0, NUM_ACTIONS - 1)]
    return None if legal.all() else int(np.flatnonzero(~legal)[0])


class FunctionPolicy(Policy):
    """A policy made of any function of a batch, ``act(obs, mask) -> actions`` with ``obs`` (B, OBS_DIM) float32,
    ``mask`` (B, 14) bool and one action per row: how a network another RL library trained plays the project's
    evaluation (``train.measure.evaluation.evaluate_policy``, examples/). An illegal action is refused, naming the
    row."""

    def __init__(self, act, name: str = "function"):
        super().__init__()
        self._act = act
        self.name = name

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        mask = check_masks(mask)
        actions = np.asarray(self._act(np.asarray(obs, dtype=np.float32), mask)).reshape(-1)
        if actions.shape != (len(mask),) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"{self.name} must return one whole-number action per row: got {actions.shape} "
                             f"{actions.dtype} for {len(mask)} rows")  # fmt: skip
        row = first_illegal(actions, mask)
        if row is not None:
            raise ValueError(f"{self.name} chose action {int(actions[row])} in row {row}, where the legal actions "
                             f"are {np.flatnonzero(mask[row]).tolist()}")  # fmt: skip
        return actions.astype(np.int64)

    def __repr__(self) -> str:
        return f"FunctionPolicy({self.name!r})"
