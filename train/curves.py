"""Learning curves: gain over most_copies (paired deals, 95% CIs) against timesteps and against training time,
for one run or several in one plot, read from the runs' ``eval.csv`` (train_ppo's ``EVAL_COLUMNS``).

    python -m train.curves runs/ppo3_state runs/ppo3_observation      # with and without the state critic
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .learn.checkpoints import read_eval_rows
from .runner.cli import add_job_flags, new_parser, require
from .runner.job import Job, Plan
from .runner.manifest import sha256
from .runner.results_folder import pyplot

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


def parser():
    job = new_parser(__doc__, __name__)
    job.add_argument("runs", nargs="+", help="run folders (<runs>/<run-name>) with an eval.csv each")
    add_job_flags(job, "curves.png", trust=False)
    return job


def check(args) -> Plan:
    """matplotlib there, every run's eval.csv readable; the results keyed by those files' contents."""
    require("train", "matplotlib")  # the plot is the job's one output
    runs = [Path(run) for run in args.runs]
    for run in runs:
        curve(run)  # every run readable before the folder is made
    settings = {"runs": [str(r) for r in runs], "inputs": {str(r): sha256(r / "eval.csv") for r in runs}}

    def work(folder) -> Path:
        path = folder.write(folder.path / "curves.png", lambda p: plot_runs(runs, p, "learning curves"))
        print(f"wrote {path}")
        return path

    return Plan(work, settings, args.out, args.overwrite)


def example(folder: Path) -> list[str]:
    """A run folder with a made-up eval.csv, and the command that plots it (for the tests of every job)."""
    run = folder / "a_run"
    run.mkdir()
    rows = [[steps, 0.0, 0.0, 1.0, steps / 1e4, 0.5, steps / 100] for steps in (128, 256, 384)]
    (run / "eval.csv").write_text("".join(",".join(map(str, row)) + "\n" for row in rows))
    return [str(run)]


JOB = Job(parser, check, example=example)
main = JOB.main


if __name__ == "__main__":
    main()
