"""A deliberately weakened copy of a learned agent: its policy's weights with Gaussian noise added.

    pip install -e ".[train]"
    python examples/weakened_model.py --model ppo --noise 0.5 --out results/ppo_weakened.zip
    python -m train.exploit --target ppo:results/ppo_weakened.zip ppo --players 4 --best-response learned

A best response that finds nothing to take from a learned agent is evidence of one of two things: the agent
concedes little, or the best response is weak. A copy of the agent made worse on purpose tells them apart: a
best response that is strong enough takes chips from the copy that it cannot take from the original. Each of the
actor's tensors (``action_net``: what chooses the lead; the critic is left alone, it never plays) gets noise of
``--noise`` times that tensor's own standard deviation, from ``--seed``: the copy keeps the agent's shape and
plays legal leads, only less well. The file records where it came from (``weakened_from``: the model's file and
SHA-256, the noise and seed).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import torch

import agents
from agents.model_file import load_policy, save_policy
from train.runner.cli import seed_value
from train.runner.manifest import sha256
from train.runner.single_file import FileTaken, check_new_file, write_new_file

ACTOR = "action_net."  # the parameters that choose the lead (the rest is the critic's)


def model_path(model: str) -> Path | None:
    """The file behind ``model`` (a file, or a learned agent's name); None for anything else."""
    if Path(model).is_file():
        return Path(model)
    return getattr(agents.make(model), "path", None) if model in agents.names() else None


def weaken(source: Path, noise: float, seed: int, out: Path, overwrite: bool = False) -> Path:
    """The model in ``source`` with noise on its actor's weights, saved to ``out`` (a new file, or by ``overwrite``
    an untracked one: train.runner.single_file)."""
    network, meta = load_policy(source)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in network.named_parameters():
            if name.startswith(ACTOR) and tensor.numel() > 1:  # a lone bias has no spread to scale by
                tensor.add_(noise * tensor.std() * torch.randn(tensor.shape, generator=generator))
    record = {"model": str(source), "sha256": sha256(source), "noise": noise, "seed": seed}
    extra = {key: meta[key] for key in ("trained_on", "num_timesteps", "training") if key in meta}
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_new_file(out, "--out", lambda path: save_policy(network, path, extra | {"weakened_from": record}),
                          overwrite)  # fmt: skip


def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="ppo", help="a learned agent's name or a model file (default: ppo)")
    parser.add_argument("--noise", type=float, default=0.5, help="noise per tensor, in its standard deviations")
    parser.add_argument("--seed", type=seed_value, default=0, help="the noise's seed")
    parser.add_argument("--out", type=Path, required=True, help="the weakened model's file (a new one)")
    parser.add_argument("--overwrite", action="store_true", help="--out may replace a file (never a tracked one)")
    args = parser.parse_args(argv)
    if not (args.noise > 0 and math.isfinite(args.noise)):  # inf or nan noise: a file whose weights cannot play
        parser.error(f"--noise got {args.noise}; allowed: a finite number above 0")
    try:
        check_new_file(args.out, "--out", args.overwrite)
    except FileTaken as error:
        parser.error(str(error))
    source = model_path(args.model)
    if source is None:
        parser.error(f"--model got {args.model!r}: a learned agent's name or a model file")
    try:
        path = weaken(source, args.noise, args.seed, args.out, args.overwrite)
    except ValueError as error:  # not a model file of this project
        parser.error(f"--model {args.model}: {error}")
    print(f"weakened copy of {args.model} written to {path}")
    return path


if __name__ == "__main__":
    main()
