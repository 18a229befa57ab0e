"""A recipe's result over training seeds, with interval estimates: each seed a training run (the flags of
``python -m train.train_ppo``), every final model played on the same held-out paired deals at each table size, and
per recipe and size each seed's gain over most_copies, their mean, range, and interquartile mean (IQM) with its
stratified-bootstrap 95% interval; between recipes, the probability that a run of one beats a run of the other
(rliable's estimators, train.measure.over_seeds). Several recipes, or budgets of each (``--budgets 1 4 16``: that
many times its PPO steps), side by side.

    python -m train.seeds                                         # the default recipe, seeds 0 1 2, at 3 4 6 players
    python -m train.seeds --seeds 0 1 2 3 4 --players 6 --deals 20000       # the main job's benchmark, five seeds
    python -m train.seeds --budgets 1 4 16 --deals 100000 --references random ppo
    python -m train.seeds --recipe default "wide=--rank-head 64 128" --workers 2   # two recipes, two processes
    python -m train.seeds --rules scarne:ranks=4 --players 3 --optimum      # beside the exact best lead policy
    python -m train.seeds --rules scarne:ranks=4 --players 3 --exact        # every model valued exactly
    python -m train.seeds --ray ADDRESS                                     # the units as tasks of a Ray cluster

A unit is one seed's training and evaluation, a reference's evaluation at one size, or the exact optimum at one
size (``--optimum``: the best response to the opponents' table, train.measure.exact_walk). Units run here one after
another, in ``--workers`` processes of this machine, or as Ray tasks (``--ray``). Each seed trains in
``<runs>/seeds_<recipe>_s<seed>_<key>``, the key a hash of its settings (its budget too) and of the code that trains
it: a finished run is reused (by any study that names it), an interrupted one resumed, and code that changed trains
anew beside it. Finished units are kept in
``--out/units``: the same command after an interrupt resumes from them. A result never depends on where a unit
ran; training is byte-reproducible on one machine, not across CPUs (docs/results.md: what holds where).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from .learn.args import Args
from .learn.recipes import OWNED, Arm, Recipe, recipe
from .learn.run import TINY_RUN
from .measure.candidates import made, make_candidate, model_files
from .measure.paired import PairedDeals, play_candidates, summarise
from .measure.seeds_report import save_report
from .runner.cli import (
    add_flag,
    add_job_flags,
    between,
    new_parser,
    players,
    refuse_repeats,
    require,
    seed_value,
)
from .runner.job import Job, Plan
from .runner.parts_bar import Part, PartsBar
from .runner.results_folder import kept, refuse_foreign
from .runner.run_folder import refuse_if_busy
from .runner.units import add_ray_flags, require_ray, start_runner

REFERENCE = "most_copies"
MAX_BUDGET = 1024


@dataclass(frozen=True)
class Evaluation:
    """The held-out paired deals every model and reference plays."""

    players: tuple[int, ...]
    opponents: tuple[str, ...]
    rules: str
    deals: int
    seed: int
    exact: bool = False  # every model and reference valued exactly over the small deck's deals, not on sampled ones

    def record(self) -> dict:
        """As the settings hold it (``exact`` only where set: the folders of sampled evaluations keep their keys)."""
        return {key: value for key, value in dataclasses.asdict(self).items() if key != "exact" or value}


def gains(policies: dict, evaluation: Evaluation, players: int) -> dict:
    """Each policy's gain over most_copies (and chips) on the evaluation's deals at ``players``, with 95% CIs; with
    ``evaluation.exact``, the exact values over every deal of the small deck (CIs 0)."""
    if evaluation.exact:
        from .measure.exact_tree import exact_agent_values

        others = {name: policy for name, policy in policies.items() if name != REFERENCE}
        values, _ = exact_agent_values(others | {REFERENCE: policies[REFERENCE]}, evaluation.opponents[0], players,
                                       evaluation.rules)  # fmt: skip
        return {name: {"gain": values[name] - values[REFERENCE], "gain_ci95": 0.0, "chips": values[name],
                       "chips_ci95": 0.0} for name in policies}  # fmt: skip
    pool = list(evaluation.opponents)
    paired = PairedDeals.draw(evaluation.deals, players, len(pool), evaluation.seed, evaluation.rules)
    chips = play_candidates(policies, pool, paired, evaluation.rules, evaluation.seed)
    rows = summarise(chips, REFERENCE)
    return {
        row.name: {"gain": row.diff_vs_reference, "gain_ci95": row.diff_ci95, "chips": row.chips_per_deal,
                   "chips_ci95": row.ci95}
        for row in rows
    }  # fmt: skip


def train_seed(arm: str, seed: int, args: Args, evaluation: Evaluation) -> dict:
    """A unit: train (or reuse, or resume) one seed of an arm with the settings the check built and keyed, then play
    its final model at every size."""
    from .learn.checkpoints import read_eval_rows
    from .learn.run import train_or_reuse
    from .runner.manifest import sha256

    run = train_or_reuse(args)
    model = run / "final_model.zip"
    by_size = {}
    for n in evaluation.players:
        policies = {
            REFERENCE: make_candidate(REFERENCE, evaluation.seed),
            "model": make_candidate(f"ppo:{model}", evaluation.seed, evaluation.opponents),
        }
        by_size[str(n)] = gains(policies, evaluation, n)["model"]
    curve = read_eval_rows(run / "eval.csv")
    return {
        "arm": arm,
        "seed": seed,
        "run": run.name,
        "model_sha256": sha256(model),
        "ppo_timesteps": int(float(curve[-1][0])) if curve else 0,
        "gains": by_size,
        "model": model.read_bytes(),
    }


def play_references(names: tuple[str, ...], evaluation: Evaluation, players: int, trust_model: bool) -> dict:
    """A unit: the reference agents on the same deals at one size."""
    policies = {REFERENCE: make_candidate(REFERENCE, evaluation.seed)}
    pool = tuple(evaluation.opponents)
    policies |= {name: make_candidate(name, evaluation.seed, pool, trust_model) for name in names if name != REFERENCE}
    return {"players": players, "gains": gains(policies, evaluation, players)}


def optimum(evaluation: Evaluation, players: int) -> dict:
    """A unit: the exact values at one size of the best lead policy against the opponents' table, and of the
    scripted references (train.measure.exact_walk)."""
    from .measure.exact_walk import exact_values

    return {"players": players, **exact_values(evaluation.opponents[0], players, evaluation.rules)}


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    job.add_argument(
        "--recipe",
        nargs="+",
        type=recipe,
        default=[Recipe("default")],
        metavar="NAME[=FLAGS]",
        help="recipes: a name, and the python -m train.train_ppo flags that make it (none: its defaults)",
    )
    job.add_argument(
        "--budgets",
        nargs="+",
        type=between(1, MAX_BUDGET),
        default=[1],
        help="each recipe at these multiples of its PPO steps (--total-timesteps)",
    )
    job.add_argument("--seeds", nargs="+", type=seed_value, default=[0, 1, 2], help="training seeds of every recipe")
    add_flag(job, "players", type=players, nargs="+", default=[3, 4, 6], help="table sizes every model plays at")
    add_flag(job, "rules")
    add_flag(job, "opponents", help="the evaluation's opponents' pool, one drawn per seat per deal")
    add_flag(job, "deals", default=100_000, help="held-out paired deals at each size")
    add_flag(job, "seed", default=21, help="seed of the held-out deals (not a training seed)")
    job.add_argument(
        "--references",
        nargs="*",
        default=["random", "ppo"],
        help="agents played on the same deals beside the recipes (most_copies is the reference of every gain)",
    )
    job.add_argument(
        "--optimum",
        action="store_true",
        help="add the exact best lead policy against the opponents' table (a small deck: --rules <preset>:ranks=K)",
    )
    job.add_argument(
        "--exact",
        action="store_true",
        help="value every model and reference exactly over every deal of the small deck (train.measure.exact_tree) "
        "instead of on --deals sampled ones; implies --optimum",
    )
    job.add_argument("--bootstrap-seed", type=seed_value, default=0, help="seed of the bootstrap's resamples")
    add_flag(job, "runs")
    add_ray_flags(job)
    add_job_flags(job, "results.md/.csv/.json, seeds.png, budgets.png, the models and the finished units")
    return job


def check(flags) -> Plan:
    """Every recipe's settings built and checked at every budget, the references made, the optimum computable, Ray
    there with --ray; the results keyed by the code and by every model file."""
    require("train", "torch", "stable_baselines3", "sb3_contrib", "rliable")
    for name in ("players", "seeds", "budgets", "references"):
        refuse_repeats(name, getattr(flags, name))
    refuse_repeats("recipe", [r.name for r in flags.recipe])
    budgets = sorted(flags.budgets)
    arms = [Arm(r, b, r.name if budgets == [1] else f"{r.name}_x{b}") for r in flags.recipe for b in budgets]
    runs = str(Path(flags.runs).resolve())  # the same folder for a unit in another process or on a Ray worker
    # each seed's training settings, built and checked once: the units train exactly what the settings key
    trainings = {(arm.name, s): arm.args(flags.rules, s, runs) for arm in arms for s in flags.seeds}
    for args in trainings.values():  # a run another job trains now: refused before any folder, not mid-work
        refuse_if_busy(Path(runs) / args.run_name, "training run", "--runs")
    flags.optimum = flags.optimum or flags.exact
    evaluation = Evaluation(tuple(flags.players), tuple(flags.opponents), flags.rules, flags.deals, flags.seed,
                            flags.exact)  # fmt: skip
    references = tuple(name for name in flags.references if name != REFERENCE)
    tables = [(flags.rules, n) for n in flags.players]
    models = made([*references, *flags.opponents], flags.trust_model, tables)
    if flags.optimum:
        from .measure.exact_tree import check_has_exact_value
        from .measure.exact_walk import check_exact

        for n in flags.players:
            check_exact(flags.opponents, n, flags.rules)
            for name in references if flags.exact else ():
                check_has_exact_value(models[name], name, n, flags.rules)
    require_ray(flags)
    settings = {
        "arms": {a.name: {"flags": list(a.recipe.flags), "budget": a.budget,
                          "runs": [trainings[a.name, s].run_name for s in flags.seeds]} for a in arms},
        "seeds": list(flags.seeds),
        "evaluation": evaluation.record(),
        "references": list(references),
        "optimum": flags.optimum,
        "bootstrap_seed": flags.bootstrap_seed,
        "models": model_files(models),
    }
    runner = start_runner(flags)

    def work(folder) -> dict:
        return run_units(trainings, flags, evaluation, references, folder, runner, settings)

    kept_text = f"finished units are kept in {{folder}}/units and each seed's run in {runs}; the same command resumes"
    return Plan(work, settings, flags.out, flags.overwrite, kept_text, close=runner.close)


def run_units(trainings, flags, evaluation, references, folder, runner, settings) -> dict:
    """Every unit (finished ones read back from ``units/``), then the report."""
    refuse_foreign(folder, "units")
    units = [(f"{arm}_s{seed}", "train", (train_seed, arm, seed, args, evaluation))
             for (arm, seed), args in trainings.items()]  # fmt: skip
    units += [(f"references_{n}p", "references", (play_references, references, evaluation, n, flags.trust_model))
              for n in flags.players if references]  # fmt: skip
    units += [(f"optimum_{n}p", "optimum", (optimum, evaluation, n)) for n in flags.players if flags.optimum]
    done = {name: _read_unit(folder, name) for name, _, _ in units}
    pending, parts = {}, {}
    for name, kind, (function, *args) in units:
        if done[name] is None:
            handle = runner.submit(function, *args)
            pending[handle] = name
            parts[handle] = Part(name, kind, 1)
    with PartsBar(list(parts.values()), "seeds", disable=not flags.progress) as bar:
        for handle, result in runner.results(list(pending)):
            bar.finished(parts[handle])
            name = pending[handle]
            model = result.pop("model", None)
            if model is not None:  # the seed's final model beside its numbers
                folder.write(folder.path / "models" / f"{name}.zip", lambda p, data=model: p.write_bytes(data))
            folder.write(_unit_path(folder, name), lambda p, r=result: p.write_text(json.dumps(r, indent=1)))
            done[name] = result
    folder.timings.update({"training_seconds": {f"{arm}_s{seed}": training_seconds(args)
                                                for (arm, seed), args in trainings.items()}})
    return save_report(settings, done, folder, flags.bootstrap_seed)


def training_seconds(args: Args) -> float | None:
    """The seconds a seed's run trained, from the run's own record (its eval.csv): wall time, so it goes to
    provenance.json, never into a unit's result (the same command from a fresh --runs writes the same units)."""
    from .learn.checkpoints import read_eval_rows

    curve = read_eval_rows(Path(args.out_dir) / args.run_name / "eval.csv")
    return float(curve[-1][-1]) if curve else None


def _unit_path(folder, name: str) -> Path:
    return folder.path / "units" / f"{name}.json"


def _read_unit(folder, name: str):
    def check_unit(value):
        if not isinstance(value, dict) or not ("gains" in value or "optimum" in value):
            raise ValueError("not a unit's result")

    return kept(folder, _unit_path(folder, name), check_unit, f"running unit {name} again")


TINY = "tiny=" + shlex.join(word for word in TINY_RUN if word not in OWNED)  # a recipe of seconds, for the tests
JOB = Job(
    parser,
    check,
    example=("--recipe", TINY, "--seeds", "0", "1", "--players", "3", "--deals", "40", "--references", "random"),
    writes=("runs",),
    agents=("opponents", "references"),
)
main = JOB.main


if __name__ == "__main__":
    main()
