"""Benchmark where a training run's time goes: lead choices per second by phase of train_ppo's default recipe
(or any settings of it), beside what each phase could reach on this machine.

The phases of one PPO iteration: the learner's rollouts (the VecEnv stepping every table, the opponents, the
learner's network choosing in torch), the critic's rollouts of the true deal (each candidate lead's value from
``--critic-rollouts`` rollouts, inside the VecEnv's step: the part of them the other tables' steps do not hide),
and the PPO update (``--n-epochs`` passes of forward and backward over the rollout). The limits: the batched
engine alone (4,096 tables, random leads, no learning), and one forward and backward pass of the policy on a
minibatch of real observations, in the shards and on the threads the update uses, both on this machine in the
same run.

    python -m train.bench_training                             # the default recipe, 3 PPO iterations: ~1 minute
    python -m train.bench_training --iterations 5 --critic-rollouts 16 --json phases.json
"""

from __future__ import annotations

import argparse
import time
from contextlib import contextmanager
from functools import partial, reduce

from .learn.args import Args
from .measure.speed import batch_speed, check_json, save_json
from .runner.cli import add_dataclass_flags, between, from_namespace, new_parser, require
from .runner.job import Job, Plan

MAX_ITERATIONS = 1000


@contextmanager
def timed(owner, name: str, totals: dict, key: str):
    """Add the wall time of every call of ``owner.name`` to ``totals[key]`` while the block runs."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[key] += time.perf_counter() - began

    setattr(owner, name, wrapper)
    try:
        yield
    finally:
        setattr(owner, name, original)


def phases(args: Args, iterations: int) -> dict:
    """Seconds per phase over ``iterations`` PPO iterations after one to warm up (compilation, first rollout)."""
    from sb3_contrib import MaskablePPO

    from agents.threads import set_torch_threads
    from snipsnap_env.vec_env import SnipSnapVecEnv

    from .learn.pool import seat_the_learner
    from .learn.run import new_model
    from .learn.vec_envs import make_vec_env

    set_torch_threads(args.threads)
    env = make_vec_env(args, args.seed)
    model = new_model(args, env)
    seat_the_learner(env, model)
    per_iteration = env.num_envs * args.n_steps
    model.learn(per_iteration)  # warm up
    totals = {"collect": 0.0, "critic": 0.0, "update": 0.0}
    with (
        timed(MaskablePPO, "collect_rollouts", totals, "collect"),
        timed(SnipSnapVecEnv, "begin_values_of_leads", totals, "critic"),
        timed(SnipSnapVecEnv, "_wait_for_values", totals, "critic"),
        timed(type(model), "train", totals, "update"),
    ):
        began = time.perf_counter()
        model.learn(per_iteration * iterations, reset_num_timesteps=False)
        wall = time.perf_counter() - began
    steps = per_iteration * iterations
    return {
        "steps": steps,
        "wall": wall,
        "learner_rollouts": totals["collect"] - totals["critic"],
        "critic_rollouts": totals["critic"],
        "ppo_update": totals["update"],
    }


def update_limit(args: Args, seconds: float = 3.0) -> float:
    """Samples per second of one forward and backward pass of the policy (minibatches of real observations; the
    all-leads update's in its shards on the cores, as it runs)."""
    import numpy as np
    import torch

    from agents.threads import on_torch_threads

    from .learn.rollout_critic import UPDATE_SHARDS, AllActionPPO, action_log_probs
    from .learn.run import new_model
    from .learn.vec_envs import make_vec_env

    env = make_vec_env(args, args.seed)
    model = new_model(args, env)
    obs = torch.as_tensor(env.reset())
    masks = np.asarray(env.env_method("action_masks"))
    rows = torch.arange(args.batch_size) % len(obs)
    x, m = obs[rows], masks[rows.numpy()]
    actions = torch.as_tensor(np.where(m[:, :13], np.random.default_rng(0).random((len(m), 13)), -1).argmax(axis=1))
    policy = model.policy
    policy.set_training_mode(True)
    actor_only = isinstance(model, AllActionPPO)  # its update evaluates the actor alone (no value network)
    parameters = list(policy.action_net.parameters() if actor_only else policy.parameters())

    inputs = policy.action_net.inputs(x.float())
    illegal, taken = torch.as_tensor(~m), actions.unsqueeze(1)

    def gradient(rows: torch.Tensor) -> tuple:
        if actor_only:  # as its update does: the head alone (SB3's distribution object is one per policy)
            log_prob = action_log_probs(policy.action_net, inputs, illegal, rows).gather(1, taken[rows])
        else:
            _, log_prob, _ = policy.evaluate_actions(x[rows], actions[rows], action_masks=m[rows.numpy()])
        return torch.autograd.grad(-log_prob.sum() / len(x), parameters)

    # the all-leads update's minibatch in its shards, each on a core (train.learn.rollout_critic.UPDATE_SHARDS)
    shards = torch.arange(len(x)).chunk(UPDATE_SHARDS if actor_only else 1)
    count, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        parts = on_torch_threads([partial(gradient, rows) for rows in shards])
        for parameter, *gradients in zip(parameters, *parts):
            parameter.grad = reduce(torch.add, gradients)
        policy.optimizer.step()
        policy.optimizer.zero_grad()
        count += len(x)
    return count / (time.perf_counter() - began)


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    job.add_argument("--iterations", type=between(1, MAX_ITERATIONS), default=3, help="PPO iterations timed")
    job.add_argument("--json", default=None, metavar="FILE", help="also write the figures to this JSON file")
    add_dataclass_flags(Args, job.add_argument_group("training settings (as python -m train.train_ppo)"))
    return job


def work(flags) -> dict:
    args = from_namespace(Args, flags)  # nothing is written: no run folder, only the figures
    figures = phases(args, flags.iterations)
    steps = figures["steps"]
    update = update_limit(args)
    kernel = batch_speed(4096, 6, 3.0)["decisions_per_s"]
    epochs = args.n_epochs
    print(f"{steps:,} lead choices in {figures['wall']:.1f} s: {steps / figures['wall']:,.0f} a second in all")
    print(f"{'phase':<34}{'seconds':>9}{'share':>8}{'choices/s':>12}{'limit/s':>12}")
    rows = [
        ("the learner's rollouts", figures["learner_rollouts"], kernel),
        (f"the critic's ({args.critic_rollouts} a lead)", figures["critic_rollouts"], None),
        (f"the PPO update ({epochs} epochs)", figures["ppo_update"], update / epochs),
    ]
    for name, seconds, limit in rows:
        rate = steps / seconds if seconds else float("inf")
        shown = f"{limit:>12,.0f}" if limit else f"{'':>12}"
        print(f"{name:<34}{seconds:>9.2f}{seconds / figures['wall']:>8.0%}{rate:>12,.0f}{shown}")
    print(f"limits: the batched engine alone, random leads ({kernel:,.0f} lead choices/s); forward+backward "
          f"{update:,.0f} samples/s, so {update / epochs:,.0f} lead choices/s at {epochs} epochs")  # fmt: skip
    return save_json(figures | {"update_samples_per_s": update, "engine_leads_per_s": kernel}, flags.json,
                     "bench_training", flags.command)  # fmt: skip


def check(flags) -> Plan:
    """The training extra there, the settings checked as train_ppo checks them, the --json file new."""
    from .learn.run import TRAINING_MODULES

    require("train", *TRAINING_MODULES)
    check_json(flags.json, flags.overwrite, "bench_training")
    from_namespace(Args, flags)
    return Plan(lambda _: work(flags))


JOB = Job(
    parser,
    check,
    example=("--iterations", "1", "--ppo-players", "3", "--num-envs", "8", "--n-steps", "8", "--batch-size", "32",
             "--critic-rollouts", "2", "--threads", "1"),
    writes=("json",), agents=("opponents", "teacher_opponents", "rollout_policy"),
)  # fmt: skip
main = JOB.main

if __name__ == "__main__":
    main()
