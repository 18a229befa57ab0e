"""Convert a Stable-Baselines3 MaskablePPO zip into snipsnap's model format (agents.model_file), once.

Loading an SB3 zip unpickles Python objects from it, which can run any code its author put there; do this
only for a file whose source you trust. The converted file holds tensors and JSON only, and loads anywhere
(``agents.make("ppo", path=...)``, ``--candidates ppo:<file>``) without trust.

    python -m train.convert_model old_sb3_model.zip converted.zip --trust-model
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from .runner.cli import new_parser, require
from .runner.job import Job, Plan, Refusal
from .runner.run_folder import write_atomically


def parser():
    job = new_parser(__doc__, __name__)
    job.add_argument("source", help="the Stable-Baselines3 MaskablePPO zip")
    job.add_argument("target", help="the file to write in snipsnap's model format")
    job.add_argument(
        "--trust-model", action="store_true", help="I trust the source file (loading it runs its pickled code)"
    )
    return job


def check(args) -> Plan:
    """The trust given, the source a readable SB3 zip (loaded here: converting is loading), the target new."""
    if not args.trust_model:
        raise Refusal("converting loads the SB3 zip, which runs its pickled code: add --trust-model if you trust it")
    source, target = Path(args.source), Path(args.target)
    if not source.is_file():  # before SB3, which would look for <source>.zip and name that instead
        raise Refusal(f"no model file at {source}")
    if os.path.lexists(target):
        raise Refusal(f"{target} exists; choose another target (nothing is overwritten)")
    if not target.parent.is_dir():
        raise Refusal(f"{target.parent} is not a folder; choose another target")
    require("train", "torch", "stable_baselines3", "sb3_contrib", "safetensors")
    from agents.model_file import is_policy_file, save_policy
    from agents.ppo import load_trusted_sb3

    if is_policy_file(source):
        raise Refusal(f"{source} is in snipsnap's model format already: it loads as it is, with nothing to convert")
    if not zipfile.is_zipfile(source):
        raise Refusal(f"{source} is not a zip archive: not a Stable-Baselines3 model")
    try:
        network, meta = load_trusted_sb3(source)
    except (OSError, ValueError):
        raise
    except Exception as error:  # a damaged or foreign zip fails in many ways inside SB3 and torch
        raise Refusal(f"{source} is not a readable MaskablePPO model ({type(error).__name__}: {error})") from None
    kept = {key: meta[key] for key in ("trained_on", "num_timesteps") if key in meta}

    def work(_) -> Path:
        write_atomically(target, lambda path: save_policy(network, path, kept))
        print(f"wrote {target}")
        return target

    return Plan(work)


def example(folder: Path) -> list[str]:
    """A tiny run's SB3 checkpoint, and the command that converts it (for the tests of every job)."""
    from .learn.run import train_tiny

    train_tiny(folder, "tiny")
    checkpoint = sorted((folder / "tiny" / "checkpoints").glob("ppo_*_steps.zip"))[-1]
    return [str(checkpoint), str(folder / "converted.zip"), "--trust-model"]


JOB = Job(parser, check, example=example, writes=("target",))
main = JOB.main


if __name__ == "__main__":
    main()
