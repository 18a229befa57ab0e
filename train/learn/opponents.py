"""A training opponent by its spec: an agent's name or ``ppo:<model file>`` (shared by the run's settings, the
pool and distillation)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import agents
from agents.model_file import is_policy_file

MODEL_FILE = "ppo:"  # in --opponents and --teacher-opponents: ppo:<model file>, a learned agent by its file


def make_opponent(spec: str, seed: int = 0, also: tuple[str, ...] = ()):
    """A training opponent: an agent's name or ``ppo:<model file>`` (a model in the project's format), or a
    ValueError naming what is wrong with ``spec`` (``also``: the pool's other words, for the message)."""
    name, colon, path = spec.partition(":")
    if not colon and name not in agents.names():
        raise ValueError(f"unknown opponent {spec!r}; known: {', '.join([*agents.names(), *also])} or ppo:<model file>")
    if colon and (name + colon != MODEL_FILE or not path):
        raise ValueError(f"opponent {spec!r}: an agent's name or ppo:<model file> (e.g. ppo:runs/a/final_model.zip)")
    if colon and Path(path).is_file() and zipfile.is_zipfile(path) and not is_policy_file(path):
        raise ValueError(  # never unpickled inside training, --trust-model or not
            f"opponent {spec!r}: training plays only model files in snipsnap's format; convert a Stable-Baselines3 "
            f"zip once with python -m train.convert_model {path} <converted.zip> --trust-model"
        )
    try:
        return agents.make("ppo", path=path, seed=seed) if colon else agents.make(name, seed=seed)
    except (ValueError, FileNotFoundError) as error:  # a missing or unreadable file, said with its path
        raise ValueError(f"opponent {spec!r}: {error}") from None
