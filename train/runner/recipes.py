"""What every recipe in examples/ shares: the deck it trains on (``--rules``) and where it keeps its trained
network (``--save STEM``: the greedy policy as ``STEM.npz`` and an agent file ``STEM.py``, agents.exported), so
that any job — ``train.exact``, ``train.leaderboard``, ``train.evaluate`` — takes it by spec (``STEM.py:agent``)."""

from __future__ import annotations

import argparse

from .cli import rules_spec


def add_recipe_flags(job: argparse.ArgumentParser) -> None:
    """``--rules`` and ``--save``."""
    job.add_argument("--rules", type=rules_spec, default="scarne",
                     help="the rules preset to train and evaluate on, with options (e.g. scarne:ranks=4, a small "
                          "deck whose exact value train.exact gives)")  # fmt: skip
    job.add_argument("--save", metavar="STEM",
                     help="keep the greedy policy: STEM.npz (its layers, data only) and STEM.py, an agent file "
                          "every job takes as STEM.py:agent")  # fmt: skip


def keep(args: argparse.Namespace, recipe: str, *modules) -> str | None:
    """With ``--save``, the torch ``modules`` (applied one after another: the network the greedy policy takes the
    most likely legal action of) exported; the agent spec they are taken by, which is printed."""
    if not args.save:
        return None
    from agents.exported import save

    spec = f"{save(args.save, *modules, describe=f'{recipe} --rules {args.rules} --seed {args.seed}')}:agent"
    print(f"kept the greedy policy: {spec}")
    return spec
