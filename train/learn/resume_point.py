"""Resume points: everything a PPO run's future depends on, taken where a rollout starts, so that a resumed
run continues exactly as the uninterrupted one would have (same numbers, bit for bit).

At the start of a rollout the network has just been updated and the rollout buffer is empty; what else
decides the rest of the run is the environment's full state (deals in progress, random streams, learner
seats, the opponents' generators), reward normalisation's running statistics and open returns, the last
observation SB3 holds, and the torch, numpy and Python random generators (SB3 reseeds them on load, and
draws minibatches from numpy's). A checkpoint is the model zip plus that state, pickled next to it
(``ppo_<steps>_steps.resume.pkl``), hashed in the run's manifest and read back only if the hash matches.
On Ctrl-C, SIGTERM or a crash mid-rollout, the last point is the one saved: the steps since then are lost,
as promised, and nothing half-done is kept.
"""

from __future__ import annotations

import copy
import pickle
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass
class ResumePoint:
    num_timesteps: int
    policy: dict  # the network's and the optimizer's state
    optimizer: dict
    env: bytes | None  # the innermost VecEnv, pickled (None if it cannot be)
    normalisation: dict  # VecNormalize's running statistics and open returns
    last: dict  # SB3's _last_obs, _last_episode_starts, _last_original_obs
    generators: dict  # torch, numpy (global) and Python random states


def capture(model) -> ResumePoint:
    """The state of ``model`` and its env now (call it where a rollout starts, or before learning)."""
    import torch

    norm = model.get_env()
    return ResumePoint(
        num_timesteps=model.num_timesteps,
        policy=copy.deepcopy(model.policy.state_dict()),
        optimizer=copy.deepcopy(model.policy.optimizer.state_dict()),
        env=_pickled(norm.venv.venv),  # the game env, inside VecNormalize(VecMonitor(...))
        normalisation=copy.deepcopy({name: vars(norm)[name] for name in _NORMALISATION if name in vars(norm)}),
        last=copy.deepcopy({name: getattr(model, name, None) for name in _LAST}),
        generators={"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()},
    )


def restore(model, point: ResumePoint) -> None:
    """Put ``model`` (loaded from the point's checkpoint, or the running one) and its env back at ``point``."""
    import torch

    model.policy.load_state_dict(point.policy)
    model.policy.optimizer.load_state_dict(point.optimizer)
    model.num_timesteps = point.num_timesteps
    norm = model.get_env()
    if point.env is not None:
        norm.venv.venv = pickle.loads(point.env)  # inside VecNormalize(VecMonitor(...))
    for name, value in copy.deepcopy(point.normalisation).items():
        setattr(norm, name, value)
    for name, value in copy.deepcopy(point.last).items():
        setattr(model, name, value)
    torch.set_rng_state(point.generators["torch"])
    np.random.set_state(point.generators["numpy"])
    random.setstate(point.generators["python"])


def _pickled(env) -> bytes | None:
    try:
        return pickle.dumps(env)
    except Exception:  # an opponent that cannot be pickled: the resumed run draws new deals instead
        return None


def path_for(checkpoint: Path) -> Path:
    return checkpoint.with_name(checkpoint.name.replace(".zip", ".resume.pkl"))


def save(point: ResumePoint, path: Path) -> None:
    """Write ``point`` to ``path`` (a pickle: a resume reads it only after checking its hash)."""
    Path(path).write_bytes(pickle.dumps(point))


def load(checkpoint: Path, verify) -> ResumePoint | None:
    """The point saved with ``checkpoint`` (None for checkpoints written before resume points existed);
    ``verify(path)`` must pass first: unpickling runs code, so only the run's own unchanged file is read."""
    path = path_for(checkpoint)
    return pickle.loads(verify(path).read_bytes()) if path.exists() else None


_NORMALISATION = ("obs_rms", "ret_rms", "returns")  # obs_rms only when observations are normalised
_LAST = ("_last_obs", "_last_episode_starts", "_last_original_obs")
