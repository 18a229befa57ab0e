"""Without the extras (``pip install -e .`` and pytest only) the scripted evaluation runs, and every job that
needs an extra says which one to install, in one line, before any work. The extras are hidden from a
subprocess here, so this runs in the full test environment too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("torch", "stable_baselines3", "sb3_contrib", "safetensors", "tqdm", "rich", "matplotlib", "flask", "ray")
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


def test_the_scripted_evaluation_runs_without_the_extras(tmp_path):
    done = run_without_extras(
        "train.evaluate", "--candidates", "random", "most_copies", "--deals", "200", "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert "| most_copies |" in done.stdout and (tmp_path / "results.md").exists()
    assert "no plot: matplotlib comes with the train extra" in done.stdout


@pytest.mark.parametrize(
    "job, argv, extra",
    [
        ("train.train_ppo", ["--teacher", "", "--total-timesteps", "10"], "train"),
        ("train.main", [], "train"),
        ("train.play", ["--players", "3"], "train"),
        ("train.serve", [], "web"),
        ("train.curves", ["runs/x"], "train"),
        ("train.evaluate", ["--candidates", "ppo", "--deals", "10"], "train"),
        ("train.matrix", ["--players", "3", "--agents", "random", "--deals", "10", "--ray"], "ray"),
    ],
)
def test_a_job_that_needs_an_extra_names_it(job, argv, extra, tmp_path):
    done = run_without_extras(job, *argv, *(["--runs", str(tmp_path)] if job.endswith(("train_ppo", "main")) else []))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f'pip install -e ".[{extra}]"' in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())  # refused before any work
