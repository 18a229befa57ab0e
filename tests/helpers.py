"""Helpers shared by several test files (imported as ``helpers``: pytest puts this folder on sys.path)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import snipsnap_env

#: the files of a results folder that hold wall time (provenance.json), its hashes (manifest.json) or a PID (.lock):
#: every other file of a seeded job is the same bytes every run
HELD_APART = ("provenance.json", "manifest.json", ".lock")

ROOT = Path(__file__).resolve().parent.parent


def play_aec_game(policy, num_players: int, rules: str, seed: int):
    """Play one game of the wrapped AEC env with ``policy`` in every seat, checking each action is legal."""
    env = snipsnap_env.env(num_players=num_players, rules=rules)
    env.reset(seed=seed)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else policy(obs)
        if action is not None:
            assert obs["action_mask"][action] == 1, (agent, action, obs["action_mask"])
        env.step(action)
    assert all(env.terminations.values())
    assert env.unwrapped.match.deal.winner is not None  # the deal was played out, not ended by an illegal move
    return env


def build_wheel(tmp_path: Path) -> Path:
    """This project's wheel, built from a copy of the sources (so the clone gets no build/ or egg-info)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for package in ("snipsnap_env", "agents", "train"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels)]
    subprocess.run([*build, str(source)], check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("snipsnap-*.whl")
    return wheel


def wheel_venv(tmp_path: Path, wheel: Path, extra: str | None = None, torch: bool = False) -> Path:
    """A fresh venv (no system packages) holding ``wheel`` with ``extra`` (None: the core only); its python.
    ``torch``: the README's pinned CPU build first, as the README's commands install it."""
    folder = tmp_path / f"venv_{extra or 'core'}"
    venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    steps = [["torch==2.13.0"]] if torch else []
    steps.append([f"{wheel}[{extra}]" if extra else str(wheel)])
    for packages in steps:
        install = subprocess.run([python, "-m", "pip", "install", "-q", *packages], capture_output=True, text=True,
                                 timeout=1800)  # fmt: skip
        if install.returncode != 0:
            pytest.fail(f"pip install {' '.join(packages)} failed in a fresh venv:\n{install.stderr[-3000:]}")
    return python
