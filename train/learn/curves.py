"""Learning curves from runs' ``eval.csv``: each run's gain over most_copies (95% CIs) against PPO steps and
against training time, several runs in one plot (a run's own ``learning_curve.png``; ``python -m train.curves``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..runner.results_folder import pyplot
from .checkpoints import read_eval_rows

GAIN, GAIN_CI, SECONDS = 4, 5, 6  # columns of eval.csv


def curve(run_dir: Path) -> dict[str, np.ndarray]:
    """A run's evaluations that carry the gain over most_copies: steps, gain, its CI, training seconds."""
    path = Path(run_dir) / "eval.csv"
    if not path.is_file():
        raise ValueError(f"{run_dir} has no eval.csv: a run with PPO steps writes one")
    rows = [row for row in read_eval_rows(path) if len(row) > SECONDS]  # older runs' rows lack the gain
    if not rows:
        raise ValueError(f"{path} holds no evaluation with a gain over most_copies (written by an older version)")
    table = np.array(rows, float)
    return {"steps": table[:, 0], "gain": table[:, GAIN], "ci": table[:, GAIN_CI], "seconds": table[:, SECONDS]}


def label(run_dir: Path) -> str:
    """The run's name and what its critic reads, from its recorded settings."""
    settings = Path(run_dir) / "args.json"
    critic = json.loads(settings.read_text()).get("critic", "observation") if settings.is_file() else "?"
    return f"{Path(run_dir).name} (critic: {critic})"


def plot_runs(run_dirs: list[Path], path: Path, title: str) -> Path | None:
    """Both panels (against timesteps, against minutes of training) with a line per run, saved to ``path``."""
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for run_dir in run_dirs:
        points = curve(run_dir)
        for ax, x in zip(axes, (points["steps"], points["seconds"] / 60)):
            ax.errorbar(x, points["gain"], yerr=points["ci"], marker="o", markersize=3, capsize=3, label=label(run_dir))
    for ax, name in zip(axes, ("timesteps (learner decisions)", "minutes of training")):
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel(name)
    axes[0].set_ylabel("gain over most_copies per deal (paired, 95% CI)")
    axes[1].legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return path
