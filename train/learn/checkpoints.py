"""A run's checkpoints and logs, without Stable-Baselines3 imports: where they are, how one is written (atomically,
with its reward-normalisation stats and resume point), and the rows of its CSV logs."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..runner.run_folder import RunFolder, checkpoints
from . import resume_point


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the most timesteps in ``run_dir/checkpoints`` (readable or not)."""
    found = checkpoints(run_dir)
    return found[0] if found else None


def vecnormalize_path(checkpoint: Path) -> Path:
    return checkpoint.with_name(checkpoint.name.replace("ppo_", "ppo_vecnormalize_").replace(".zip", ".pkl"))


@dataclass
class RunState:
    """Where the run stands: the latest resume point (train.resume_point), taken where each rollout starts."""

    point: object = None


def save_checkpoint(model, folder: RunFolder, point=None) -> Path:
    """``checkpoints/ppo_<steps>_steps.zip``, its reward-normalisation stats and its resume point, each
    written to a temporary file, renamed and hashed in the run's manifest; the zip last, so a checkpoint that
    exists has the others. (These are SB3 and pickle files: a resume loads them only if the hashes match.)"""
    path = folder.path / "checkpoints" / f"ppo_{model.num_timesteps}_steps.zip"
    env = model.get_env()
    if env is not None and hasattr(env, "save"):
        folder.write(vecnormalize_path(path), lambda p: env.save(str(p)))
    if point is not None:
        folder.write(resume_point.path_for(path), lambda p: resume_point.save(point, p))
    folder.write(path, lambda p: model.save(p))
    return path


def read_rows(path: Path) -> list[list[str]]:
    """The rows of a CSV file ([] when there is none)."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.reader(f))


#: eval.csv's columns (its header row; runs of versions before 2026-12-04 have none): one row per evaluation
EVAL_COLUMNS = (
    "timesteps",
    "chips_per_deal",
    "diff_vs_random",
    "ci95",
    "gain_over_most_copies",
    "gain_ci95",
    "seconds",
)


def read_eval_rows(path: Path) -> list[list[str]]:
    """The evaluations in a run's eval.csv, without its header row ([] when there is none)."""
    rows = read_rows(path)
    return rows[1:] if rows and rows[0][:1] == [EVAL_COLUMNS[0]] else rows


def append_eval_row(path: Path, row: list) -> None:
    """One evaluation appended to eval.csv, the header first in a new file."""
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="") as f:
        writer = csv.writer(f)
        if new:
            writer.writerow(EVAL_COLUMNS)
        writer.writerow(row)
