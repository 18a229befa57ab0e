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
import json
from pathlib import Path

from .learn.args import Args, run_settings
from .learn.code_version import code_version
from .learn.run import TINY_RUN, TRAINING_MODULES, train_or_reuse
from .measure.evaluation import evaluate
from .measure.paired import Row
from .runner.cli import add_dataclass_flags, add_flag, from_namespace, new_parser, require, say
from .runner.job import Job, Plan
from .runner.manifest import sha256
from .runner.run_folder import MAY_CHANGE, Refused

CANDIDATES = ["random", "random_card", "most_copies", "fewest_copies", "control", "pimc:128"]
BENCHMARK_KEY = "benchmark_key.json"  # what the tables beside it measured: written after them


def benchmark_key(model: Path, deals: int) -> dict:
    """What the benchmark's tables depend on beyond the folder's settings: the model's bytes and the code that
    plays and measures (the sources behind training's code version, this job's own file, the libraries)."""
    return {
        "model_sha256": sha256(model),
        "code": code_version(CANDIDATES),
        "main": sha256(Path(__file__)),
        "deals": deals,
        "candidates": CANDIDATES,
    }


def kept_benchmark(folder, key: dict) -> list[Row] | None:
    """The rows of a finished benchmark in ``folder`` with the same key, every file as this job wrote it; None
    when there is none (then it is played)."""
    try:
        if json.loads(folder.verify(folder.path / BENCHMARK_KEY).read_text()) != key:
            return None
        records = json.loads(folder.verify(folder.path / "results.json").read_text())
        folder.verify(folder.path / "results.md")
    except (Refused, OSError, ValueError):
        return None
    return [Row(**record) for record in records if record["reference"] == records[0]["reference"]]  # the first table


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    benchmark = job.add_argument_group("the closing benchmark")
    add_flag(benchmark, "deals", help="paired deals in the closing benchmark")
    add_flag(
        benchmark, "out", help="folder for the benchmark's tables and chart (default: results/main/<settings hash>)"
    )
    add_dataclass_flags(Args, job.add_argument_group("training (as python -m train.train_ppo)"))
    return job


def check(flags) -> Plan:
    """What train_ppo checks, and the benchmark's folder keyed by the run's settings (the folder is opened, and
    refused, before any training)."""
    require("train", *TRAINING_MODULES)
    args = from_namespace(Args, flags)
    run = {key: value for key, value in run_settings(args).items() if key not in MAY_CHANGE}
    settings = {"run": run, "deals": flags.deals}
    run_dir = Path(args.out_dir) / args.run_name

    def work(folder) -> list:
        say(f"step 1 of 2: train PPO in {run_dir} (a finished run is reused, an interrupted one resumed)", flush=True)
        model = train_or_reuse(args) / "final_model.zip"
        key = benchmark_key(model, flags.deals)
        kept_rows = kept_benchmark(folder, key)
        if kept_rows is not None:
            say(f"step 2 of 2: the benchmark of this model by this code is in {folder.path}, shown again "
                "(--overwrite plays it anew):", flush=True)  # fmt: skip
            print((folder.path / "results.md").read_text())
            return kept_rows
        say(f"step 2 of 2: the benchmark, {len(CANDIDATES) + 1} policies at {args.num_players}-player tables on "
            f"{flags.deals:,} paired deals", flush=True)  # fmt: skip
        rows = evaluate(
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
        note = (
            f"These {flags.deals:,} deals are the benchmark's, the same for every run. The training's own "
            f"evaluations ({run_dir / 'eval.csv'}, the learning curve) play {args.eval_deals:,} other deals drawn "
            "from the run's seed: the same model's gain there differs, within the two intervals."
        )
        say(note)
        folder.write(folder.path / BENCHMARK_KEY, lambda p: p.write_text(json.dumps(key, indent=1) + "\n"))
        return rows

    kept = f"the run is kept in {run_dir} (its last checkpoint); the same command resumes it"
    return Plan(work, settings, flags.out, args.overwrite, kept)


JOB = Job(
    parser,
    check,
    example=(*TINY_RUN, "--deals", "20"),
    writes=("out_dir",),
    agents=("opponents", "teacher_opponents", "rollout_policy"),
)
main = JOB.main


if __name__ == "__main__":
    main()
