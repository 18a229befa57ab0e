"""What the speed benchmarks share: timing PettingZoo AEC envs in interleaved rounds, one decision of each agent,
and their figures written as JSON with provenance (``--json``)."""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path

import numpy as np

import agents
from snipsnap_env.batch import BatchEnv

from ..runner.cli import add_flag
from ..runner.job import Refusal
from ..runner.results_folder import provenance
from ..runner.run_folder import write_atomically


def measure(make_env, seconds: float, seed: int = 0) -> dict:
    """The loop every PettingZoo tutorial uses, for about ``seconds``: ``last()``, a legal action drawn with
    ``rng.choice(np.flatnonzero(mask))``, ``step()``, a reset per game. Returns turns/s and games/s."""
    env = make_env()
    rng = np.random.default_rng(seed)
    turns = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + games)
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                action = rng.choice(np.flatnonzero(obs["action_mask"]))
                turns += 1
            env.step(action)
        games += 1
    elapsed = time.perf_counter() - start
    env.close()
    return {"turns_per_s": turns / elapsed, "games_per_s": games / elapsed, "turns_per_game": turns / games}


def interleaved(envs: dict, rounds: int, seconds: float) -> dict:
    """Measure every env once per round, the envs in turn within a round (so a slow spell of the machine
    hits all of them alike); per env the median and range over the rounds."""
    runs = {name: [] for name in envs}
    for round_ in range(rounds):
        for name, make_env in envs.items():
            runs[name].append(measure(make_env, seconds, seed=round_))
    summary = {}
    for name, figures in runs.items():
        turns = [f["turns_per_s"] for f in figures]
        summary[name] = {
            "turns_per_s": float(np.median(turns)),
            "turns_per_s_min": min(turns),
            "turns_per_s_max": max(turns),
            "games_per_s": float(np.median([f["games_per_s"] for f in figures])),
            "turns_per_game": float(np.mean([f["turns_per_game"] for f in figures])),
        }
    return summary


def add_json_flags(job: argparse.ArgumentParser) -> None:
    """``--json FILE`` (the figures, written as a file of their own) and ``--overwrite`` (replace such a file
    that this benchmark wrote before), shared by every benchmark."""
    job.add_argument("--json", default=None, metavar="FILE", help="also write the figures to this JSON file")
    add_flag(job, "overwrite", help="replace the --json file if this benchmark wrote it (never another file)")


def check_json(path: str | None, overwrite: bool, job: str) -> None:
    """Refuse, before any work, a ``--json`` that is a folder or a link, or an existing file unless it holds
    figures of this benchmark and ``overwrite`` is given."""
    if not path:
        return
    target = Path(path)
    if target.is_symlink() or target.is_dir():
        raise Refusal(f"--json {path} is a {'link' if target.is_symlink() else 'folder'}; name a new file")
    if not target.parent.is_dir():
        raise Refusal(f"--json {path}: {target.parent} is not a folder")
    if target.exists():
        try:
            ours = f"train.{job}" in json.loads(target.read_text())["provenance"]["command"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            ours = False
        if not ours:
            raise Refusal(f"--json {path} exists and holds no figures of {job}; name a new file (it stays as it is)")
        if not overwrite:
            raise Refusal(f"--json {path} exists; add --overwrite to replace it, or name a new file")


def save_json(results: dict, path: str | None, job: str, argv: list[str] | None) -> dict:
    """Write the figures to ``path`` (if given; checked by :func:`check_json`), atomically, with their
    provenance (the command, commit and date under ``"provenance"``), and return them."""
    if path:
        document = json.dumps({**results, "provenance": provenance(job, argv)}, indent=2)
        write_atomically(Path(path), lambda p: p.write_text(document))
    return results


def aec_envs(player_counts) -> dict:
    """connect_four_v3 (the reference) and snipsnap's raw and wrapped env for each player count (the wrapped one
    with the chips, the default, and with the training signal)."""
    from pettingzoo.classic import connect_four_v3

    import snipsnap_env

    envs = {"connect_four_v3 env()": connect_four_v3.env}
    for num_players in player_counts:
        envs[f"snipsnap raw_env() N={num_players}"] = functools.partial(snipsnap_env.raw_env, num_players=num_players)
        envs[f"snipsnap env() N={num_players}"] = functools.partial(snipsnap_env.env, num_players=num_players)
        envs[f"  reward=lead_advantage N={num_players}"] = functools.partial(
            snipsnap_env.env, num_players=num_players, reward="lead_advantage"
        )  # the training signal's price a turn
    return envs


def measure_table(envs: dict, rounds: int, seconds: float) -> dict:
    """Interleaved rounds over the envs; print the median (and range) per env."""
    results = interleaved(envs, rounds, seconds)
    print(f"{'env':<28}{'turns/s (median)':>18}{'range':>22}{'games/s':>10}{'turns/game':>12}")
    for name, figures in results.items():
        spread = f"{figures['turns_per_s_min']:,.0f}–{figures['turns_per_s_max']:,.0f}"
        print(
            f"{name:<28}{figures['turns_per_s']:>18,.0f}{spread:>22}{figures['games_per_s']:>10,.1f}"
            f"{figures['turns_per_game']:>12.1f}"
        )
    return results


def frame_times(player_counts, frames: int = 50) -> dict:
    """Milliseconds per ``render()`` in ``rgb_array`` mode (target ≤ 30), mid-deal, per table size."""
    import snipsnap_env

    times = {}
    for n in player_counts:
        env = snipsnap_env.raw_env(num_players=n, render_mode="rgb_array", viewer=0)
        env.reset(seed=n)
        for _ in range(3 * n):  # into the deal: an open set, calls, a pot
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        env.render()  # the font loads once
        start = time.perf_counter()
        for _ in range(frames):
            env.render()
        times[n] = (time.perf_counter() - start) / frames * 1000
    print("rgb_array frame, ms: " + ", ".join(f"{n} players {ms:.1f}" for n, ms in times.items()) + " (target <= 30)")
    return times


DECISION_AGENTS = ["random", "most_copies", "control", "pimc:128", "ppo", "ppo_scratch"]


def numba_threads() -> int:
    import numba

    return numba.get_num_threads()


def decision_times(names, seconds: float, num_players: int = 6, trust: bool = False) -> dict:
    """Microseconds per decision of each agent at ``num_players``-player leads: one AEC observation at a time
    (``policy(obs)``, the median over calls) and in a batch of 1,024 (``act_batch``)."""
    from snipsnap_env.batch import BatchEnv

    from .candidates import make_candidate

    obs, mask = BatchEnv(1024, num_players, seed=0).reset()
    results = {}
    for name in names:
        try:
            policy = make_candidate(name, seed=0, trust_model=trust)
        except (ModuleNotFoundError, FileNotFoundError) as missing:
            print(f"{name:>12}: skipped ({missing})")
            continue
        policy.act_batch(obs[:8], mask[:8])  # compile and warm up
        single, i, end = [], 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            row = {"observation": obs[i % len(obs)], "action_mask": mask[i % len(obs)]}
            start = time.perf_counter()
            policy(row)
            single.append(time.perf_counter() - start)
            i += 1
        start, batches = time.perf_counter(), 0
        while batches == 0 or time.perf_counter() - start < seconds:
            policy.act_batch(obs, mask)
            batches += 1
        batch_us = (time.perf_counter() - start) / (batches * len(obs)) * 1e6
        results[name] = {"act_us": float(np.median(single) * 1e6), "act_batch_us_per_decision": batch_us}
        print(f"{name:>12}: act {results[name]['act_us']:9.1f} us   act_batch {batch_us:8.2f} us per decision")
    return results


def batch_speed(num_games: int, num_players: int, seconds: float, seed: int = 0) -> dict:
    """Complete deals/s and decisions/s through BatchEnv.step with uniformly random legal leads."""
    env = BatchEnv(num_games, num_players, seed=seed)
    policy = agents.make("random", seed=seed)
    obs, mask = env.reset()
    obs, mask, *_ = env.step(policy.act_batch(obs, mask))  # compile / warm up
    deals = decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        obs, mask, _, dones, _ = env.step(policy.act_batch(obs, mask))
        deals += int(dones.sum())
        decisions += num_games
    elapsed = time.perf_counter() - start
    return {"deals_per_s": deals / elapsed, "decisions_per_s": decisions / elapsed}
