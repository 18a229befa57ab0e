"""Convert a Stable-Baselines3 MaskablePPO zip into snipsnap's model format (agents.model_file), once.

Loading an SB3 zip unpickles Python objects from it, which can run any code its author put there; do this
only for a file whose source you trust. The converted file holds tensors and JSON only, and loads anywhere
(``agents.make("ppo", path=...)``, ``--candidates ppo:<file>``) without trust.

    python -m train.convert_model old_sb3_model.zip converted.zip --trust-model
"""

from __future__ import annotations

from pathlib import Path

from ..cli import new_parser


def parser():
    job = new_parser(__doc__, __name__)
    job.add_argument("source", help="the Stable-Baselines3 MaskablePPO zip")
    job.add_argument("target", help="the file to write in snipsnap's model format")
    job.add_argument(
        "--trust-model", action="store_true", help="I trust the source file (loading it runs its pickled code)"
    )
    return job


def main(argv=None) -> Path:
    job = parser()
    args = job.parse_args(argv)
    if not args.trust_model:
        job.error("converting loads the SB3 zip, which runs its pickled code: add --trust-model if you trust it")
    target = Path(args.target)
    if target.exists():
        job.error(f"{target} exists; choose another target (nothing is overwritten)")
    try:
        from agents.model_file import save_policy
        from agents.ppo import load_trusted_sb3

        network, meta = load_trusted_sb3(Path(args.source))
        save_policy(network, target, {key: meta[key] for key in ("trained_on", "num_timesteps") if key in meta})
    except ImportError as error:
        job.error(f'{error.name} is missing: pip install -e ".[train]"')
    except (OSError, ValueError) as error:
        job.error(str(error))
    print(f"wrote {target}")
    return target


if __name__ == "__main__":
    main()
