"""Benchmark: turns/s and deals/s of the AEC environment (raw and wrapped) for 3..8 players.

PettingZoo's ``connect_four_v3`` is measured in the same run as the reference; the target is the wrapped
6-player env at ≥ 2× its turns/s. Every env is driven by the same loop: ``last()``, a uniformly random
legal action from the mask, ``step()``.

    python -m train.bench_aec            # about 80 s
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import numpy as np

from .cli import at_least, new_parser, positive_float


def measure(make_env, seconds: float, seed: int = 0) -> dict:
    """Play whole games with random legal actions for about ``seconds``; return turns/s and games/s."""
    env = make_env()
    rng = np.random.default_rng(seed)
    turns = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + games)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            turns += 1
        games += 1
    elapsed = time.perf_counter() - start
    env.close()
    return {"turns_per_s": turns / elapsed, "games_per_s": games / elapsed, "turns_per_game": turns / games}


def best_of(rounds: int, make_env, seconds: float) -> dict:
    """The fastest of ``rounds`` measurements: timing noise on a shared machine only ever slows a run."""
    return max((measure(make_env, seconds) for _ in range(rounds)), key=lambda figures: figures["turns_per_s"])


def save_json(results: dict, path: str | None) -> dict:
    """Write the figures to ``path`` (if given) and return them."""
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=2)
    return results


def aec_envs(player_counts) -> dict:
    """connect_four_v3 (the reference) and snipsnap's raw and wrapped env for each player count."""
    from pettingzoo.classic import connect_four_v3

    import snipsnap_env

    envs = {"connect_four_v3 env()": connect_four_v3.env}
    for num_players in player_counts:
        envs[f"snipsnap raw_env() N={num_players}"] = functools.partial(snipsnap_env.raw_env, num_players=num_players)
        envs[f"snipsnap env() N={num_players}"] = functools.partial(snipsnap_env.env, num_players=num_players)
    return envs


def measure_table(envs: dict, rounds: int, seconds: float) -> dict:
    """Measure each env (best of ``rounds``), printing a row as each finishes."""
    print(f"{'env':<28}{'turns/s':>12}{'games/s':>12}{'turns/game':>12}")
    results = {}
    for name, make_env in envs.items():
        results[name] = figures = best_of(rounds, make_env, seconds)
        print(
            f"{name:<28}{figures['turns_per_s']:>12,.0f}{figures['games_per_s']:>12,.1f}"
            f"{figures['turns_per_game']:>12.1f}",
            flush=True,
        )
    return results


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__)
    job.add_argument("--seconds", type=positive_float, default=2.0, help="time spent on each measurement")
    job.add_argument("--rounds", type=at_least(1), default=3, help="measurements per env; the best is reported")
    job.add_argument("--json", default=None, help="also write the figures to this JSON file")
    return job


def main(argv=None) -> dict:
    job = parser()
    args = job.parse_args(argv)

    results = measure_table(aec_envs(range(3, 9)), args.rounds, args.seconds)
    ratio = results["snipsnap env() N=6"]["turns_per_s"] / results["connect_four_v3 env()"]["turns_per_s"]
    results["wrapped_6p_vs_connect_four"] = ratio
    print(f"\nwrapped 6-player env / connect_four_v3 turns/s: {ratio:.2f}x (target >= 2x)")
    return save_json(results, args.json)


if __name__ == "__main__":
    main()
