"""Recipes and budgets: a named set of ``python -m train.train_ppo`` flags, read and refused by name, and the
training settings of one seed of it at a budget (a multiple of its PPO steps), its run folder named by a key of
what it learns and the code that trains it (``python -m train.seeds``)."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import shlex
from dataclasses import dataclass

from ..runner.cli import add_dataclass_flags, from_namespace
from .args import Args, run_settings

#: train_ppo flags the job sets for every unit: a recipe that sets them is refused
OWNED = ("--seed", "--rules", "--runs", "--run-name", "--resume", "--overwrite", "--progress", "--no-progress")
#: Args fields that say where and how a run is kept, not what it learns: left out of its key
LOCAL = ("out_dir", "run_name", "resume", "overwrite", "progress", "threads")


@dataclass(frozen=True)
class Recipe:
    """A name and the train_ppo flags that make the recipe (none: train_ppo's defaults)."""

    name: str
    flags: tuple[str, ...] = ()


def recipe(text: str) -> Recipe:
    """An argparse type: ``NAME`` (train_ppo's defaults) or ``NAME=FLAGS`` (its flags, as on a command line)."""
    name, _, flags = text.partition("=")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}", name):
        raise argparse.ArgumentTypeError(
            f"recipe {text!r}: a name of letters, digits and _.+- (at most 40) first, then =FLAGS, e.g. "
            "'wide=--rank-head 64 128'"
        )
    try:
        words = shlex.split(flags)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"recipe {name}: its flags do not parse as a command line ({error})") from None
    owned = [word for word in words if word.split("=")[0] in OWNED]
    if owned:
        raise argparse.ArgumentTypeError(
            f"recipe {name}: {' '.join(owned)} is the job's to set ({', '.join(OWNED)}); a recipe names what is learnt"
        )
    return Recipe(name, tuple(words))


@dataclass(frozen=True)
class Arm:
    """A recipe at a budget (a multiple of its PPO steps): what the seeds repeat."""

    recipe: Recipe
    budget: int
    name: str

    def args(self, rules: str, seed: int, runs: str) -> Args:
        """The unit's training settings, its run folder named by their key."""
        parser = _RecipeParser(self.recipe.name)
        add_dataclass_flags(Args, parser)
        flags = parser.parse_args([*self.recipe.flags, "--rules", rules, "--seed", str(seed), "--no-progress"])
        flags.total_timesteps *= self.budget
        args = from_namespace(Args, flags)
        # named by the recipe and the key (its budget is in the key): one run, whichever study trains it
        return dataclasses.replace(args, out_dir=runs, run_name=f"seeds_{self.recipe.name}_s{seed}_{run_key(args)}")


class _RecipeParser(argparse.ArgumentParser):
    """train_ppo's flags, whose errors are a refusal that names the recipe (not an exit)."""

    def __init__(self, name: str):
        super().__init__(prog=f"--recipe {name}", add_help=False)
        self.recipe = name

    def error(self, message: str):
        raise ValueError(f"--recipe {self.recipe}: {message}")


def run_key(args: Args) -> str:
    """8 hex of what a run learns and the code and model files that make it (train.learn.args.run_settings)."""
    settings = {k: v for k, v in run_settings(args).items() if k not in LOCAL}
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:8]
