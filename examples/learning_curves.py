"""Learning curves of the CleanRL and SB3 recipes with the training signal and with the chips, at the same budget.

    pip install -e ".[train]"
    python examples/learning_curves.py                     # both recipes, both rewards: about 15 minutes here
    python examples/learning_curves.py --steps 20000 --points 2 --eval-deals 500 --out /tmp/curves  # a smoke run

Each run trains a recipe at its defaults and, at ``--points`` checkpoints, plays its greedy policy on paired deals
at 4-player tables of most_copies players (``train.measure.evaluation.evaluate_policy``, seed 2028). The minutes are
training time only (the checkpoints' evaluations are not counted). Writes ``curves.csv`` (one row a checkpoint)
and ``curves.png`` (gain over most_copies against decisions and against minutes, 95% CIs) into ``--out``, with
``provenance.json`` (the command, commit and date).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import torch
from stable_baselines3.common.callbacks import BaseCallback

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the recipes, run from anywhere
import cleanrl_ppo  # noqa: E402
import sb3_self_play  # noqa: E402

from train.measure.evaluation import evaluate_policy  # noqa: E402
from train.runner.results_folder import provenance  # noqa: E402

FIELDS = ("recipe", "reward", "decisions", "minutes", "gain", "ci95")


class Checkpoints:
    """Evaluate at ``points`` evenly spaced decision counts; the time spent evaluating is kept off the clock."""

    def __init__(self, recipe: str, reward: str, steps: int, points: int, deals: int, rows: list):
        self.recipe, self.reward, self.deals, self.rows = recipe, reward, deals, rows
        self.marks = [round(steps * (k + 1) / points) for k in range(points)]
        self.evaluating = 0.0

    def __call__(self, policy, decisions: int, seconds: float) -> None:
        if not self.marks or decisions < 0.99 * self.marks[0]:  # the last batch may stop just short
            return
        while self.marks and decisions >= 0.99 * self.marks[0]:
            self.marks.pop(0)
        started = time.perf_counter()
        row = evaluate_policy(policy, num_players=4, deals=self.deals, quiet=True)
        self.rows.append(
            {"recipe": self.recipe, "reward": self.reward, "decisions": decisions,
             "minutes": round((seconds - self.evaluating) / 60, 3), "gain": round(float(row.diff_vs_reference), 3),
             "ci95": round(float(row.diff_ci95), 3)}
        )  # fmt: skip
        print(self.rows[-1], flush=True)
        self.evaluating += time.perf_counter() - started


class SB3Checkpoints(BaseCallback):
    def __init__(self, checkpoints: Checkpoints):
        super().__init__()
        self.checkpoints, self.started = checkpoints, time.time()

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        policy = sb3_self_play.greedy(self.model)
        self.checkpoints(policy, self.num_timesteps, time.time() - self.started)


def run_cleanrl(reward: str, steps: int, checkpoints: Checkpoints) -> None:
    args = cleanrl_ppo.parse(["--reward", reward, "--total-timesteps", str(steps)])
    def evaluate(agent, decisions: int, seconds: float) -> None:
        checkpoints(cleanrl_ppo.greedy(agent), decisions, seconds)

    cleanrl_ppo.train(args, evaluate)


def run_sb3(reward: str, steps: int, checkpoints: Checkpoints) -> None:
    model = sb3_self_play.make_model(4, 0, reward)
    model.learn(total_timesteps=steps, callback=SB3Checkpoints(checkpoints))


def plot(rows: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for (recipe, reward), style in zip(
        [("cleanrl_ppo", "lead_advantage"), ("cleanrl_ppo", "chips"), ("sb3_self_play", "lead_advantage"),
         ("sb3_self_play", "chips")],
        [("C0", "-"), ("C0", ":"), ("C1", "-"), ("C1", ":")],
    ):  # fmt: skip
        points = [row for row in rows if row["recipe"] == recipe and row["reward"] == reward]
        if not points:
            continue
        gain = [row["gain"] for row in points]
        low = [row["gain"] - row["ci95"] for row in points]
        high = [row["gain"] + row["ci95"] for row in points]
        for axis, key in zip(axes, ("decisions", "minutes")):
            x = [row[key] for row in points]
            axis.plot(x, gain, color=style[0], linestyle=style[1], marker="o", label=f"{recipe}, {reward}")
            axis.fill_between(x, low, high, color=style[0], alpha=0.12)
    for axis, label in zip(axes, ("decisions trained on", "minutes of training (2 cores)")):
        axis.axhline(0.0, color="grey", linewidth=0.8)
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("gain over most_copies, chips a deal")
    axes[0].legend(fontsize=8)
    figure.suptitle("Recipes at 4-player most_copies tables: the training signal against the chips (95% CIs)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv=None) -> list:
    job = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    job.add_argument("--steps", type=int, default=1_000_000, help="decisions a run trains for (the recipes' default)")
    job.add_argument("--points", type=int, default=8, help="checkpoints a run")
    job.add_argument("--eval-deals", type=int, default=10_000, help="paired deals a checkpoint")
    job.add_argument("--out", type=Path, default=Path("docs/results/recipe_curves"))
    args = job.parse_args(argv)
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list = []
    for recipe, run in (("cleanrl_ppo", run_cleanrl), ("sb3_self_play", run_sb3)):
        for reward in ("lead_advantage", "chips"):
            run(reward, args.steps, Checkpoints(recipe, reward, args.steps, args.points, args.eval_deals, rows))
    with open(args.out / "curves.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, args.out / "curves.png")
    record = provenance("learning_curves", argv if argv is not None else sys.argv[1:])
    command = record["command"].replace("python -m train.learning_curves", "python examples/learning_curves.py")
    record["command"] = command
    (args.out / "provenance.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {args.out / 'curves.csv'} and {args.out / 'curves.png'}")
    return rows


if __name__ == "__main__":
    main()
