"""Without the extras (``pip install snipsnap``: numpy, gymnasium, pettingzoo, numba, pillow, safetensors, tqdm,
rich) the shipped agents play, ``train.evaluate`` and ``train.play`` run, and every job that needs an extra says
which one to install, in the form that works for the install at hand, before any work.

Most tests hide the extras from a subprocess (fast, and they run in the full test environment too); one builds
the wheel and installs it into a fresh venv without extras, as a user of the package would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import build_wheel, wheel_venv

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("torch", "stable_baselines3", "sb3_contrib", "matplotlib", "tensorboard", "pygame", "flask", "ray")
SHIPPED = ("ppo", "ppo_distilled", "ppo_scratch")
WITHOUT_EXTRAS = f"""
import runpy, sys
for name in {EXTRAS!r}:
    sys.modules[name] = None  # import fails as if it were not installed
job, *sys.argv[1:] = sys.argv[1:]
runpy.run_module(job, run_name="__main__")
"""


def run_without_extras(job: str, *argv: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", WITHOUT_EXTRAS, job, *argv]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_evaluation_of_the_shipped_agents_runs_without_the_extras(tmp_path):
    done = run_without_extras(
        "train.evaluate", "--candidates", "random", "most_copies", *SHIPPED, "--players", "4", "--deals", "200",
        "--reference", "most_copies", "--out", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert all(f"| {name} |" in done.stdout for name in SHIPPED) and (tmp_path / "results.md").exists()
    assert 'no plot: matplotlib comes with the train extra, pip install -e ".[train]"' in done.stdout


def test_the_shipped_agents_choose_as_with_torch_installed():
    """The numpy twin alone (no torch to settle near-ties) makes the choices the full install makes."""
    script = """
import sys
if sys.argv[1] == "hide":
    for name in %r:
        sys.modules[name] = None
import agents
from snipsnap_env.batch import BatchEnv
obs, mask = BatchEnv(512, 5, rules="scarne", seed=3).reset()
for name in ("ppo", "ppo_distilled", "ppo_scratch"):
    print(name, agents.make(name, seed=1).act_batch(obs, mask).tolist())
print("torch imported:", "torch" in sys.modules and sys.modules["torch"] is not None)
""" % (EXTRAS,)
    runs = [subprocess.run([sys.executable, "-c", script, mode], cwd=ROOT, capture_output=True, text=True,
                           timeout=300) for mode in ("hide", "full")]  # fmt: skip
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    without, full = (run.stdout.splitlines() for run in runs)
    assert without[-1] == "torch imported: False"
    assert without[:3] == full[:3]


def test_watching_the_shipped_agents_play_runs_without_the_extras():
    done = run_without_extras("train.play", "--players", "3", "--opponents", *SHIPPED, "--seed", "4")
    assert done.returncode == 0, done.stderr
    assert "player_2" in done.stdout and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "job, argv, extra",
    [
        ("train.train_ppo", ["--teacher", "", "--total-timesteps", "10"], "train"),
        ("train.main", [], "train"),
        ("train.serve", [], "web"),
        ("train.curves", ["runs/x"], "train"),
        ("train.matrix", ["--players", "3", "--agents", "random", "--deals", "10", "--ray"], "ray"),
    ],
)
def test_a_job_that_needs_an_extra_names_it(job, argv, extra, tmp_path):
    done = run_without_extras(job, *argv, *(["--runs", str(tmp_path)] if job.endswith(("train_ppo", "main")) else []))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f'pip install -e ".[{extra}]"' in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())  # refused before any work


def _wheel_venv(tmp_path: Path) -> Path:
    """A fresh venv (no system packages) holding this project's wheel and its core dependencies only."""
    return wheel_venv(tmp_path, build_wheel(tmp_path))


@pytest.mark.install
@pytest.mark.slow
def test_the_wheel_without_extras_plays_the_shipped_agents(tmp_path):
    python = _wheel_venv(tmp_path)
    run = tmp_path / "elsewhere"  # not the clone: the installed package is the one imported
    run.mkdir()

    def call(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([python, *argv], cwd=run, capture_output=True, text=True, timeout=900)

    play = call("-c", """
import importlib.util, agents, snipsnap_env
assert importlib.util.find_spec("torch") is None and importlib.util.find_spec("stable_baselines3") is None
env = snipsnap_env.env(num_players=4)
env.reset(seed=2)
names = ("ppo", "ppo_distilled", "ppo_scratch", "most_copies")
players = {a: agents.make(n, seed=i) for i, (a, n) in enumerate(zip(env.agents, names))}
for agent in env.agent_iter():
    obs, reward, term, trunc, info = env.last()
    env.step(None if term or trunc else players[agent](obs))
print(agents.__file__)
""")  # fmt: skip
    assert play.returncode == 0, play.stderr
    assert "site-packages" in play.stdout  # the wheel's copy, not the clone's
    done = call("-m", "train.evaluate", "--candidates", "most_copies", *SHIPPED, "--players", "3", "--deals", "100",
                "--reference", "most_copies", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert all(f"| {name} |" in done.stdout for name in SHIPPED)
    watched = call("-m", "train.play", "--players", "3", "--opponents", *SHIPPED)
    assert watched.returncode == 0, watched.stderr
    refused = call("-m", "train.train_ppo", "--total-timesteps", "10")
    assert refused.returncode == 2 and 'pip install "snipsnap[train]"' in refused.stderr, refused.stderr


@pytest.mark.slow
def test_the_tests_run_the_gymnasium_and_pettingzoo_the_main_command_installs(tmp_path):
    """The README's main command installs ``.[train]``; an extra of the test venv must not move gymnasium or
    pettingzoo from what that resolves to (RLlib pins an older gymnasium: its tests have a venv of their own)."""
    import importlib.metadata
    import json

    report = tmp_path / "report.json"
    resolve = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report",
               str(report), "-e", ".[train]", "torch==2.13.0"]  # fmt: skip
    done = subprocess.run(resolve, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"pip could not resolve the main command's install here (no package index?): {done.stderr[-300:]}")
    installs = json.loads(report.read_text())["install"]
    fresh = {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in installs}
    for name in ("gymnasium", "pettingzoo"):
        assert importlib.metadata.version(name) == fresh[name], (
            f"the tests run {name} {importlib.metadata.version(name)}; the main command installs {fresh[name]}"
        )
