"""Train every library recipe of examples/ on the leaderboard's small decks, seeds 0, 1, 2, and keep each final
greedy policy (``--save``: a .npz of layers and an agent file), for ``python -m train.leaderboard --entries``.

    pip install -e ".[train,recipes]"
    python examples/leaderboard_recipes.py --out docs/results/leaderboard_agents          # about 40 minutes on 2 cores
    python -m train.leaderboard --entries docs/results/leaderboard_agents/entries.json \\
        --from-seeds docs/results/seeds_small_deck_r4 docs/results/seeds_small_deck_r5 --out results/leaderboard

Each run is the recipe's own command (its settings as printed in entries.json) with ``--players`` and
``--rules scarne:ranks=K`` of its deck, in a process of its own (one torch thread; ``--workers`` at a time); its
wall time is its training time (with the recipe's closing evaluation, a few seconds). ``entries.json`` holds, per
recipe, its agents by deck, its settings and its runs' seconds; the agents' files are beside it. A run whose agent
file is already there is not run again (delete it to retrain), so an interrupted job goes on where it stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

from train.runner.results_folder import commit

EXAMPLES = Path(__file__).resolve().parent
#: each recipe at the budget and table the leaderboard trains it with: the learner among random-lead players where
#: the recipe seats fixed opponents (cleanrl, sb3); torchrl and tianshou share one network over every seat
RECIPES = {
    "cleanrl_ppo": ["--total-timesteps", "500000", "--opponents", "random"],
    "sb3_maskable_ppo": ["--steps", "500000", "--pool", "random"],
    "torchrl_ppo": ["--frames", "45000"],
    "tianshou_dqn": ["--steps", "30000"],
}
FILES = {"sb3_maskable_ppo": "sb3_self_play"}  # an entry's name where it is not its file's
DECKS = ("4x3", "5x3", "4x4")


def runs(out: Path, recipes, decks, seeds):
    for name in recipes:
        for deck in decks:
            for seed in seeds:
                yield name, deck, seed, out / name / f"{deck}_s{seed}"


def train(name: str, deck: str, seed: int, stem: Path) -> float:
    """One recipe run; its wall seconds (kept beside its agent, so a rerun reads them back)."""
    seconds_file = stem.with_suffix(".seconds")
    if stem.with_suffix(".py").is_file() and seconds_file.is_file():
        return float(seconds_file.read_text())
    ranks, players = deck.split("x")
    deck_flags = ["--players", players, "--rules", f"scarne:ranks={ranks}", "--seed", str(seed)]
    command = [sys.executable, str(EXAMPLES / f"{FILES.get(name, name)}.py"), *RECIPES[name], *deck_flags,
               "--eval-deals", "2000", "--save", str(stem)]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(command, env=os.environ | {"OMP_NUM_THREADS": "1"}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    seconds = round(time.monotonic() - started, 1)
    seconds_file.write_text(f"{seconds}\n")
    print(f"{name} {deck} seed {seed}: {seconds} s", flush=True)
    return seconds


def main(argv=None):
    job = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    job.add_argument("--out", type=Path, required=True, help="where the agents and entries.json go")
    job.add_argument("--recipes", nargs="+", choices=list(RECIPES), default=list(RECIPES))
    job.add_argument("--decks", nargs="+", choices=DECKS, default=list(DECKS))
    job.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    job.add_argument("--workers", type=int, default=2, help="runs at a time (each one process, one thread)")
    args = job.parse_args(argv)
    planned = list(runs(args.out, args.recipes, args.decks, args.seeds))
    for _, _, _, stem in planned:
        stem.parent.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(args.workers) as pool:
        seconds = list(pool.map(lambda run: train(*run), planned))
    entries = {}
    for (name, deck, _, stem), spent in zip(planned, seconds):
        settings = f"examples/{FILES.get(name, name)}.py {shlex.join(RECIPES[name])}"
        entry = entries.setdefault(name, {"agents": {}, "training_seconds": [], "settings": settings})
        entry["agents"].setdefault(deck, []).append(f"{stem.with_suffix('.py')}:agent")
        entry["training_seconds"].append(spent)
    (args.out / "entries.json").write_text(json.dumps(entries, indent=2) + "\n")
    command = shlex.join(["python", "examples/leaderboard_recipes.py", *(sys.argv[1:] if argv is None else argv)])
    made = {"command": command, "commit": commit(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    (args.out / "provenance.json").write_text(json.dumps(made, indent=1) + "\n")
    print(f"entries written to {args.out / 'entries.json'}")


if __name__ == "__main__":
    main()
