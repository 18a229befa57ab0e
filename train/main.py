"""The main job: train a MaskablePPO agent with the default settings, then measure how much its learned lead
choice is worth against random lead choice, the scripted heuristics and the search player, on paired deals.

    python -m train.main                      # 5–10 minutes of distillation, then the benchmark tables
    python -m train.main --deals 100000       # a tighter closing benchmark

A finished run in ``runs/<run-name>`` is reused and an interrupted one resumed, so nothing is lost.
Training options (``--total-timesteps``, ``--opponents``, …) are those of ``python -m train.train_ppo``.
"""

from __future__ import annotations

import argparse

from . import evaluate, train_ppo
from .cli import add_dataclass_flags, add_flag, from_namespace, new_parser


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__)
    benchmark = job.add_argument_group("the closing benchmark")
    add_flag(benchmark, "deals", help="paired deals in the closing benchmark")
    add_flag(benchmark, "out", help="folder for the benchmark's table and chart")
    add_dataclass_flags(train_ppo.Args, job.add_argument_group("training (as python -m train.train_ppo)"))
    return job


def main(argv=None) -> list:
    job = parser()
    flags = job.parse_args(argv)
    args = from_namespace(train_ppo.Args, flags, job)
    try:
        run_dir = train_ppo.train_or_reuse(args)
    except ValueError as error:  # a run with other settings in the folder
        job.error(str(error))
    model = run_dir / "best_model.zip"
    candidates = ["random", "random_card", "most_copies", "fewest_copies", "control", "pimc:128", f"ppo:{model}"]
    return evaluate.evaluate(
        candidates,
        list(args.opponents),
        args.num_players,
        args.rules,
        flags.deals,
        seed=0,
        compare_to=("most_copies",),
        out_dir=flags.out,
    )


if __name__ == "__main__":
    main()
