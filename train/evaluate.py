"""Evaluate policies on paired deals: chips per deal with 95% confidence intervals, and each policy's
paired difference to a reference.

Every candidate plays the same deals — identical hands and dealers, the same seat (rotated over the
deals), the same opponents with identically seeded random streams — so the luck of the cards cancels in
the differences. Runs on the batched engine.

    python -m train.evaluate --candidates random most_copies fewest_copies control ppo --deals 20000
"""

from __future__ import annotations

import argparse

from .measure.candidates import add_variance_flag
from .measure.evaluation import Row, measure_into, prepare
from .runner.cli import add_flag, add_job_flags, add_table_flags, new_parser
from .runner.job import Job, Plan


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__, __name__)
    job.add_argument(
        "--candidates",
        nargs="+",
        default=["random", "most_copies", "fewest_copies", "control", "pimc", "ppo"],
        help="agent names; 'ppo' is the shipped model, 'ppo:path.zip' another one; 'pimc:512' sets the samples",
    )
    add_flag(job, "opponents")
    add_table_flags(job)
    add_flag(job, "deals")
    job.add_argument("--reference", default="random", help="the candidate every difference is taken to")
    job.add_argument("--compare-to", nargs="*", default=[], help="more references, each with its own table")
    add_variance_flag(job)
    add_job_flags(job, "results.md/.csv/.json/.png")
    return job


def check(args) -> Plan:
    """Every candidate and opponent made (names, model files), the settings keyed by their models."""
    references = (args.reference, *args.compare_to)
    policies, settings = prepare(
        args.candidates, args.opponents, args.players, args.rules, args.deals, args.seed, references,
        args.trust_model, args.variance_reduction,
    )  # fmt: skip
    measure = dict(chunk=8192, quiet=False, variance_reduction=args.variance_reduction, progress=args.progress,
                   trust_model=args.trust_model)

    def work(folder) -> list[Row]:
        return measure_into(
            folder, policies, args.opponents, args.players, args.rules, args.deals, args.seed, references, **measure
        )

    return Plan(work, settings, args.out, args.overwrite)


JOB = Job(
    parser,
    check,
    example=("--candidates", "random", "most_copies", "--players", "3", "--deals", "40"),
    agents=("candidates", "opponents", "reference", "compare_to"),
)
main = JOB.main


if __name__ == "__main__":
    main()
