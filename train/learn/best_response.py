"""A learned best response (Timbers et al., *Approximate Exploitability: Learning a Best Response*, IJCAI 2022):
PPO in one seat at tables of N-1 frozen copies of a target, with the rollout critic (each lead's value in the true
deal, the target's kernel twin in every other seat and the learner's own network for its later leads). Used by
``python -m train.exploit --best-response learned``. Its first weights (``--start``):

- ``search`` (the default): distilled from the search best response first — the search player whose worlds seat
  the target (``pimc:<samples>:<target>`` where the kernel plays the target, else ``model_search:<samples>``),
  labelling positions at tables of the target with a DAgger round (:mod:`train.learn.distill`) — so PPO starts
  about as strong as the search and learns what the search cannot see (its worlds are sampled blind to how the
  target's past leads reveal its hand);
- ``target``: the target's own weights (a learned target; a scripted one has none: scratch);
- ``scratch``: fresh weights;
- the name of a learned agent (``ppo_distilled``…): that agent's weights.

A run is a train_ppo run in ``<runs>/br_<target>_<N>p_<key>``, the key a hash of everything it depends on — the
target's name and model file's SHA-256, the table size, rules, budget, start (and its model file's SHA-256), the
teacher and its positions, and seed — so a finished run is reused, an interrupted one resumed from its last
checkpoint, and a changed target or start file trains a new one.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import agents
from snipsnap_env.kernel import POLICIES

from ..measure.candidates import make_candidate
from ..runner.cli import require
from ..runner.manifest import sha256
from .args import Args

STARTS = ("search", "target", "scratch")  # or a learned agent's name: the response's first weights (above)
DEFAULT_STEPS = 1_000_000
TEACHER_POSITIONS = 300_000  # positions the search labels for --start search (two rounds: the second DAgger's)


def model_file(policy) -> Path | None:
    """The model file a policy plays from (a learned agent), or None (a scripted one)."""
    path = getattr(policy, "path", None)
    return Path(path) if path is not None else None


def start_file(start: str, target_policy) -> Path | None:
    """The model file the response starts from (None: fresh weights, or a teacher for ``search``), or a
    ValueError naming what is wrong with ``start``."""
    if start in ("search", "scratch"):
        return None
    if start == "target":
        return model_file(target_policy)  # a scripted target has no weights: scratch
    try:
        file = model_file(agents.make(start))
    except ValueError as error:
        raise ValueError(f"start got {start!r}: {', '.join(STARTS)} or a learned agent's name ({error})") from None
    if file is None:
        raise ValueError(f"start got {start!r}: a scripted agent has no weights to start from")
    return file


def teacher_of(target: str, samples: int) -> str:
    """The search best response as a teacher spec: the kernel's search where it plays the target."""
    return f"pimc:{samples}:{target}" if target in POLICIES else f"model_search:{samples}"


def response_args(target: str, target_policy, players: int, rules: str, steps: int, start: str, seed: int,
                  runs: str, progress: bool = True, samples: int = 128,
                  positions: int = TEACHER_POSITIONS) -> Args:  # fmt: skip
    """The train_ppo settings of the best response to ``target`` at ``players``-player tables (``samples`` and
    ``positions``: the teacher's worlds and labelled positions for ``start="search"``)."""
    file = model_file(target_policy)
    init = start_file(start, target_policy)
    teacher = teacher_of(target, samples) if start == "search" else ""
    begun = "search" if teacher else "scratch" if init is None else start
    key = {"target": target, "target_sha256": sha256(file) if file else None, "players": players, "rules": rules,
           "steps": steps, "start": begun, "start_sha256": sha256(init) if init else None, "teacher": teacher,
           "teacher_positions": positions if teacher else 0, "seed": seed}  # fmt: skip
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_]+", "_", target)[:24]
    return Args(
        num_players=players, rules=rules, opponents=(target,), ppo_players=(players,), total_timesteps=steps,
        seed=seed, init_from=str(init) if init else "", rollout_policy="self", eval_every=max(steps // 4, 1),
        eval_deals=4000, checkpoint_every=max(steps // 8, 1), out_dir=runs, run_name=f"br_{name}_{players}p_{digest}",
        progress=progress, teacher=teacher, teacher_positions=positions, teacher_players=(players,),
        teacher_opponents=(target,),
        # the recipe its exploitability figures (docs/evaluation.md) were measured with, before the default's
        # all-leads surrogate: a response is checked against exact values, so it changes only with a new check
        surrogate="sampled", critic_rollouts=32, num_envs=128, n_steps=32, learning_rate=2e-3,
        rank_head=() if init else (32, 64),  # from a model: its own head; else the head of that recipe's day
    )  # fmt: skip


def train_response(args: Args) -> Path:
    """The best response's model file, trained as far as needed (reused when finished, resumed if interrupted)."""
    from .run import train_or_reuse

    return train_or_reuse(args) / "final_model.zip"


def learned_response(
    target: str,
    players: int,
    rules: str,
    steps: int,
    start: str,
    seed: int,
    runs: str,
    progress: bool,
    samples: int,
    positions: int,
    trust_model: bool = False,
) -> str:
    """The learned best response to ``target`` at ``players``-player tables as a candidate (``ppo:<its file>``),
    trained as far as needed in ``runs`` (:mod:`train.learn.best_response`)."""
    policy = make_candidate(target, 0, (target,), trust_model)
    trained = response_args(target, policy, players, rules, steps, start, seed, runs, progress, samples, positions)
    return f"ppo:{train_response(trained)}"


def check_learned(
    targets,
    players,
    rules: str,
    steps: int,
    start: str,
    seed: int,
    runs: str,
    samples: int,
    positions: int,
    trust_model: bool = False,
) -> None:
    """Every learned best response's training settings (its start, its opponents' files), refused before any
    work, and the training extras installed."""
    from .run import TRAINING_MODULES

    require("train", *TRAINING_MODULES)
    for target in targets:
        policy = make_candidate(target, 0, (target,), trust_model)
        for n in players:
            response_args(target, policy, n, rules, steps, start, seed, runs, False, samples, positions)
