"""A learned best response (Timbers et al., *Approximate Exploitability: Learning a Best Response*, IJCAI 2022):
PPO in one seat at tables of N-1 frozen copies of a target, with the rollout critic (each lead's value in the true
deal, the target's kernel twin in every other seat and the learner's own network for its later leads), started
from scratch or from the target's own weights. Used by ``python -m train.exploit --best-response learned``.

A run is a train_ppo run in ``<runs>/br_<target>_<N>p_<key>``, the key a hash of everything it depends on — the
target's name and model file's SHA-256, the table size, rules, budget, start and seed — so a finished run is
reused, an interrupted one resumed from its last checkpoint, and a changed target file trains a new one.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..runner.manifest import sha256
from .args import Args

STARTS = ("target", "scratch")  # the response's first weights: the target's (where it has any) or fresh ones
DEFAULT_STEPS = 1_000_000


def model_file(policy) -> Path | None:
    """The model file a policy plays from (a learned agent), or None (a scripted one)."""
    path = getattr(policy, "path", None)
    return Path(path) if path is not None else None


def response_args(target: str, target_policy, players: int, rules: str, steps: int, start: str, seed: int,
                  runs: str, progress: bool = True) -> Args:  # fmt: skip
    """The train_ppo settings of the best response to ``target`` at ``players``-player tables."""
    if start not in STARTS:
        raise ValueError(f"start got {start!r}; allowed: {', '.join(STARTS)}")
    file = model_file(target_policy)
    init_from = str(file) if start == "target" and file is not None else ""  # a scripted target has no weights
    key = {"target": target, "target_sha256": sha256(file) if file else None, "players": players, "rules": rules,
           "steps": steps, "start": "target" if init_from else "scratch", "seed": seed}  # fmt: skip
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_]+", "_", target)[:24]
    return Args(
        num_players=players, rules=rules, opponents=(target,), ppo_players=(players,), total_timesteps=steps,
        seed=seed, init_from=init_from, rollout_policy="self", eval_every=max(steps // 4, 1), eval_deals=4000,
        checkpoint_every=max(steps // 8, 1), out_dir=runs, run_name=f"br_{name}_{players}p_{digest}",
        progress=progress,
    )  # fmt: skip


def train_response(args: Args) -> Path:
    """The best response's model file, trained as far as needed (reused when finished, resumed if interrupted)."""
    from .. import train_ppo

    return train_ppo.train_or_reuse(args) / "final_model.zip"
