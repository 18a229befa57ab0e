"""The main job: train a MaskablePPO agent with the default settings, then measure how much its learned lead
choice is worth against random lead choice, the scripted heuristics and the search player, on paired deals.

    python -m train.main                      # PPO from scratch over 3..8 players, then the benchmark tables
    python -m train.main --deals 100000       # a tighter closing benchmark

A finished run in ``runs/<run-name>`` is reused and an interrupted one resumed, so nothing is lost. The tables
go to ``--out`` (default ``results/main/<settings hash>``), which is checked before training starts;
``--overwrite`` starts the run and that folder over (removing only what a job of ours wrote there).
Training options (``--total-timesteps``, ``--opponents``, …) are those of ``python -m train.train_ppo``.
"""

from __future__ import annotations

import argparse
import dataclasses

from . import evaluate, train_ppo
from .runner.cli import add_dataclass_flags, add_flag, command_line, from_namespace, new_parser, require
from .runner.results_folder import results_folder
from .runner.run_folder import MAY_CHANGE

CANDIDATES = ["random", "random_card", "most_copies", "fewest_copies", "control", "pimc:128"]


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    benchmark = job.add_argument_group("the closing benchmark")
    add_flag(benchmark, "deals", help="paired deals in the closing benchmark")
    add_flag(
        benchmark, "out", help="folder for the benchmark's tables and chart (default: results/main/<settings hash>)"
    )
    add_dataclass_flags(train_ppo.Args, job.add_argument_group("training (as python -m train.train_ppo)"))
    return job


def main(argv=None) -> list:
    job = parser()
    flags = job.parse_args(argv)
    require(job, "train", *train_ppo.TRAINING_MODULES)
    args = from_namespace(train_ppo.Args, flags, job)
    run = {key: value for key, value in dataclasses.asdict(args).items() if key not in MAY_CHANGE}
    settings = {"run": run, "deals": flags.deals}
    argv = command_line(argv)
    with train_ppo.refusals_and_interrupts(job):
        with results_folder(flags.out, "main", settings, args.overwrite, argv) as folder:  # before any training
            run_dir = train_ppo.train_or_reuse(args)
            model = run_dir / "final_model.zip"
            rows = evaluate.evaluate(
                [*CANDIDATES, f"ppo:{model}"],
                list(args.opponents),
                args.num_players,
                args.rules,
                flags.deals,
                seed=0,
                compare_to=("most_copies",),
                folder=folder,
                progress=args.progress,
            )
            print(f"results written to {folder.path}")
            return rows


if __name__ == "__main__":
    main()
