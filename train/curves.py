"""Learning curves: gain over most_copies (paired deals, 95% CIs) against timesteps and against training time,
for one run or several in one plot, read from the runs' ``eval.csv`` (train_ppo's ``EVAL_COLUMNS``).

    python -m train.curves runs/ppo3_state runs/ppo3_observation      # with and without the state critic
"""

from __future__ import annotations

from pathlib import Path

from .learn.curves import curve, label, plot_runs  # noqa: F401 (label: the tests read it here)
from .runner.cli import add_job_flags, new_parser, require
from .runner.job import Job, Plan
from .runner.manifest import sha256


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
