"""The main job: train a MaskablePPO agent with the default settings, then measure how much its learned lead
choice is worth against random lead choice and the scripted heuristics, on paired deals.

    python -m train.main                      # about 15 minutes of training, then the benchmark table
    python -m train.main --eval-deals 100000  # a tighter benchmark

A finished run in ``runs/<run-name>`` is reused and an interrupted one resumed, so nothing is lost.
Training options (``--total-timesteps``, ``--opponents``, …) are those of ``python -m train.train_ppo``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import evaluate, train_ppo
from .cli import parse


def main(argv=None) -> list:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument(
        "--eval-deals-final", dest="final_deals", type=int, default=20_000, help="paired deals in the closing benchmark"
    )
    extra.add_argument("--results", default="results", help="folder for the benchmark's table and chart")
    own, rest = extra.parse_known_args(argv)
    if "-h" in rest or "--help" in rest:
        extra.print_help()
        print("\ntraining options:")
    args = parse(train_ppo.Args, rest, description=__doc__)
    run_dir = Path(args.out_dir) / args.run_name
    if (run_dir / "final_model.zip").exists():
        print(f"reusing the finished run in {run_dir} (choose another --run-name to train again)")
    else:
        args.resume = train_ppo.latest_checkpoint(run_dir) is not None
        train_ppo.train(args)
    model = run_dir / "best_model.zip"
    candidates = ["random", "random_card", "most_copies", "fewest_copies", "control", f"ppo:{model}"]
    return evaluate.evaluate(
        candidates,
        list(args.opponents),
        args.num_players,
        args.rules,
        own.final_deals,
        seed=0,
        compare_to=("most_copies",),
        out_dir=own.results,
    )


if __name__ == "__main__":
    main()
