"""Train a MaskablePPO policy for Snip Snap Snorem: by default PPO from scratch over every table size, with
advantages from rollouts of the true deal (``--critic rollouts``) and PPO's surrogate over every legal lead
(``--surrogate``, train.learn.rollout_critic); optionally
distilled from the search player first (``--teacher``, train.learn.distill).

PPO runs on the batched engine's VecEnv (``--vec batch``, ``--num-envs`` games at each ``--ppo-players``
size; ``--vec single`` uses SB3's DummyVecEnv over the gymnasium single-seat env, at one size). Writes to
``<runs>/<run-name>/`` (a folder the run owns): TensorBoard and CSV logs, checkpoints (and one on a crash,
Ctrl-C or SIGTERM), ``best_model.zip``, ``final_model.zip``, ``distill.json``, ``eval.csv`` and
``learning_curve.png``. ``--resume`` continues an interrupted run from its newest readable checkpoint;
``--overwrite`` starts over.

    python -m train.train_ppo                                  # PPO from scratch: about half a minute on 2 CPU cores
    python -m train.train_ppo --total-timesteps 3000000 --surrogate sampled --critic-rollouts 32 --num-envs 128 \
        --n-steps 32 --learning-rate 2e-3 --run-name ppo_scratch      # the shipped ppo_scratch's recipe
    python -m train.train_ppo --teacher pimc:256 --teacher-positions 1800000 --teacher-rounds 2 --teacher-epochs 6 \
        --teacher-learning-rate 1e-3 --total-timesteps 0 --run-name distill_pimc256_rank   # the shipped ppo_distilled
    python -m train.train_ppo --players 4 --ppo-players 4 --rules parlett --opponents random self snapshot
"""

from __future__ import annotations

from pathlib import Path

from .learn.args import Args
from .learn.checkpoints import latest_checkpoint
from .learn.run import TINY_RUN, TRAINING_MODULES, train
from .runner.cli import add_dataclass_flags, from_namespace, new_parser, require
from .runner.job import Job, Plan


def parser():
    return add_dataclass_flags(Args, new_parser(__doc__, __name__))


def check(namespace) -> Plan:
    """The training extra there, the settings checked (the dataclass's own rules), the opponents, teacher and
    starting model made (names, model files); the run's folder is checked as it opens, before any work."""
    require("train", *TRAINING_MODULES)
    args = from_namespace(Args, namespace)
    run_dir = Path(args.out_dir) / args.run_name

    def kept() -> str:
        checkpoint = latest_checkpoint(run_dir)
        if checkpoint is None:
            return f"{run_dir} holds no checkpoint yet; the same command with --overwrite starts it again"
        return f"the run is kept in {run_dir} (its last checkpoint, {checkpoint.name}); --resume continues it"

    return Plan(lambda _: train(args), kept=kept)


JOB = Job(
    parser, check, example=TINY_RUN, writes=("out_dir",), agents=("opponents", "teacher_opponents", "rollout_policy")
)
main = JOB.main


if __name__ == "__main__":
    main()
