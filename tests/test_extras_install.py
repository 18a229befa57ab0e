"""Every extra the README and the docs tell users to install works **alone**: a fresh venv per extra holding the
wheel with that extra only (torch pinned first where the extra trains, as the README's commands do), each module
the extra serves imported and a tiny command of each run. A venv with every extra hides what one extra alone
breaks (rliable beside pandas 3 in the ``train`` extra did: tianshou, of the ``recipes`` extra, pins pandas<3)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import tomllib
from helpers import ROOT, build_wheel, wheel_venv

TRAIN_SEEDS = ("-m", "train.seeds", "--recipe", "tiny=--ppo-players 3 --num-envs 8 --n-steps 16 --batch-size 64 "
               "--total-timesteps 256 --eval-every 128 --eval-deals 20 --checkpoint-every 128 --teacher '' "
               "--critic-rollouts 2 --threads 1", "--seeds", "0", "--players", "3", "--deals", "40",
               "--references", "random", "--runs", "runs", "--out", "seeds", "--no-progress")  # fmt: skip
SERVE = """
from train.serve import create_app
client = create_app().test_client()
game = client.post("/api/games", json={"players": 3, "opponents": ["ppo", "random"], "seed": 1})
assert game.status_code == 201, game.get_json()
print("legal", game.get_json()["legal"])
"""
OPENSPIEL = """
import pyspiel, snipsnap_env.openspiel_game
game = pyspiel.load_game("python_snipsnap")
state = game.new_initial_state()
while not state.is_terminal():
    state.apply_action(state.legal_actions()[0] if not state.is_chance_node() else state.chance_outcomes()[0][0])
print("returns", state.returns())
"""

RLLIB = "import ray.rllib, snipsnap_env.rllib\nsnipsnap_env.rllib.env(num_players=3).reset(seed=0)"

#: per extra: whether it needs torch (installed first, pinned), and the commands that must pass in its venv
EXTRAS = {
    "train": (True, [
        ("-c", "import rliable.library, stable_baselines3, sb3_contrib, matplotlib, tensorboard, pygame, "
               "train.learn.run, train.measure.over_seeds"),
        TRAIN_SEEDS,
    ]),
    "web": (False, [("-c", "import flask, waitress, train.serve"), ("-c", SERVE)]),
    "ray": (False, [
        ("-c", "import ray, train.runner.units"),
        ("-m", "train.matrix", "--players", "3", "--agents", "random", "most_copies", "--opponents", "random",
         "--deals", "40", "--ray", "--workers", "1", "--out", "matrix", "--no-progress"),
    ]),
    "recipes": (True, [
        ("-c", "import torchrl, tianshou, pyspiel, snipsnap_env.openspiel_game"),
        ("-c", OPENSPIEL),
        ("examples/tianshou_dqn.py", "--steps", "500", "--envs", "2", "--eval-deals", "100", "--players", "3"),
        ("examples/torchrl_ppo.py", "--frames", "500", "--frames-per-batch", "250", "--eval-deals", "100",
         "--players", "3"),
    ]),
    "rllib": (True, [("-c", RLLIB)]),
    "docs": (False, [("-m", "mkdocs", "build", "--strict", "--site-dir", "site")]),
    "dev": (False, [("-m", "pytest", "--version"), ("-m", "ruff", "--version"), ("-c", "import selenium, pyspiel")]),
}


def test_every_extra_of_the_project_has_its_alone_test():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS) == set(extras), set(EXTRAS) ^ set(extras)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.mark.install
@pytest.mark.slow
@pytest.mark.parametrize("extra", list(EXTRAS))
def test_the_extra_alone_installs_and_runs_what_it_serves(extra, wheel, tmp_path):
    needs_torch, commands = EXTRAS[extra]
    python = wheel_venv(tmp_path, wheel, extra, torch=needs_torch)
    work = tmp_path / "work"  # not the clone: the installed package is the one imported
    work.mkdir()
    shutil.copytree(ROOT / "examples", work / "examples")
    if extra == "docs":
        shutil.copytree(ROOT / "docs", work / "docs")
        shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
    for command in commands:
        done = subprocess.run([python, *command], cwd=work, capture_output=True, text=True, timeout=1200,
                              env={"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(tmp_path),
                                   "NO_MKDOCS_2_WARNING": "1"})  # fmt: skip
        said = f"{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        assert done.returncode == 0, f"{extra}: {' '.join(command)[:200]}\n{said}"
    if extra == "train":
        assert (work / "seeds" / "results.json").exists()
