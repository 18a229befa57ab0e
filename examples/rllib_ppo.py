"""Masked PPO in RLlib (Ray 2.60, the new API stack) on snipsnap: RLlib's own ``PettingZooEnv`` and its
action-masking RLModule, joined by the one adapter the project ships (``snipsnap_env.rllib``: the observation
keys that module reads). Runs here or on a Ray cluster.

    pip install -e ".[train,rllib]"   # in a venv of its own: RLlib pins an older gymnasium than the rest
    python examples/rllib_ppo.py                    # 4 players, 15 iterations of 4,000 steps: about 4 minutes here
    python examples/rllib_ppo.py --reward chips     # the same on the chips
    python examples/rllib_ppo.py --iterations 1     # a smoke run
    python examples/rllib_ppo.py --address 10.0.0.1:6379 --env-runners 8   # on a Ray cluster (docs/recipes.md)

Every seat maps to one shared policy (parameter sharing: full self-play). The env pays
``reward="lead_advantage"`` (snipsnap_env.training_signal): each real lead's advantage over most_copies' in the
true deal. RLlib's PettingZooEnv reports each agent's rewards since it last acted when its turn comes, so the
advantage is credited to the lead that earned it; it is paid at that step, so the discount is 0.
``auto_forced=True`` plays the turns with one legal action, so every env step is a real choice.

It ends as every recipe does: the trained policy, greedy, against most_copies on the project's paired deals.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

import snipsnap_env.rllib
from agents.base import FunctionPolicy
from snipsnap_env.training_signal import REWARDS
from train.measure.evaluation import evaluate_policy
from train.runner.cli import seed_value

POLICY = "shared"


def train(players: int, iterations: int, batch: int, seed: int, reward: str = "lead_advantage", env_runners: int = 0):
    register_env("snipsnap", lambda config: snipsnap_env.rllib.env(**config))
    # auto_forced: the turns with one legal action are played for everyone, so every env step is a real choice;
    # the lead advantage is paid at the step that chose (discount 0 loses nothing), the chips at the deal's end
    gamma = 0.0 if reward == "lead_advantage" else 1.0
    # with the signal an episode is a match of 20 deals: RLlib's bookkeeping per episode costs more than a
    # short deal, and a reward paid at its step does not care how long the episode is; with the chips, one deal
    deals = 20 if reward == "lead_advantage" else 1
    env_config = {"num_players": players, "reward": reward, "auto_forced": True, "num_deals": deals}
    config = (
        PPOConfig()
        .environment("snipsnap", env_config=env_config)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *args, **kwargs: POLICY)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    POLICY: RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule, model_config={"head_fcnet_hiddens": [128, 128]}
                    )
                }
            )
        )
        # 0: sample in the driver (on 2 cores, workers cost more than they give); more on a cluster
        .env_runners(num_env_runners=env_runners)
        # few steps a minute through RLlib's PettingZooEnv: ten epochs over each batch use them hard
        .training(train_batch_size_per_learner=batch, minibatch_size=256, num_epochs=10, gamma=gamma, lr=1e-3)
        .debugging(seed=seed)
    )
    algorithm = config.build_algo()
    started = time.perf_counter()
    for iteration in range(1, iterations + 1):
        result = algorithm.train()
        runners = result.get("env_runners", {})
        steps, episodes = runners.get("num_env_steps_sampled_lifetime", 0), runners.get("num_episodes_lifetime", 0)
        rate = steps / (time.perf_counter() - started)
        print(f"iteration {iteration}/{iterations}: {steps:,.0f} env steps, {episodes:,.0f} episodes, "
              f"{rate:,.0f} steps a second")  # fmt: skip
    return algorithm


def runner_nodes(algorithm) -> list[str]:
    """The Ray node each remote env runner samples on (where the work went, on a cluster)."""
    return algorithm.env_runner_group.foreach_env_runner(
        lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False
    )


def greedy(algorithm) -> FunctionPolicy:
    """The trained module as the project's evaluation plays it: the most likely legal action."""
    module = algorithm.get_module(POLICY)

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch = {
            "obs": {"observations": torch.from_numpy(obs), "action_mask": torch.from_numpy(mask.astype(np.float32))}
        }
        with torch.no_grad():
            logits = module.forward_inference(batch)["action_dist_inputs"]
        return logits.masked_fill(~torch.from_numpy(mask), -torch.inf).argmax(dim=1).numpy()

    return FunctionPolicy(act, name="rllib_ppo")


def main(argv=None):
    job = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    job.add_argument("--players", type=int, default=4)
    job.add_argument("--iterations", type=int, default=15)
    job.add_argument("--batch", type=int, default=4_000, help="env steps per iteration (each a seat's real choice)")
    job.add_argument("--reward", choices=REWARDS, default="lead_advantage",
                     help="what the env pays: each lead's advantage over most_copies' in the true deal (default), "
                          "or the chips")  # fmt: skip
    job.add_argument("--address", default=None,
                     help="a Ray cluster to join (ray start --head prints it: 10.0.0.1:6379); default: Ray here")
    job.add_argument("--env-runners", type=int, default=0,
                     help="Ray actors that sample the env (0: the driver samples; on a cluster, about one a CPU)")
    job.add_argument("--eval-deals", type=int, default=20_000, help="paired deals against most_copies")
    job.add_argument("--seed", type=seed_value, default=0)
    args = job.parse_args(argv)
    if args.env_runners < 0:
        job.error(f"--env-runners got {args.env_runners}; allowed: 0 or more")
    if args.address is None:
        ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    else:  # the cluster's own resources; the workers import snipsnap_env as the driver does (installed there too)
        ray.init(address=args.address, ignore_reinit_error=True, log_to_driver=False)
    try:
        algorithm = train(args.players, args.iterations, args.batch, args.seed, args.reward, args.env_runners)
        policy = greedy(algorithm)
        row = evaluate_policy(policy, num_players=args.players, deals=args.eval_deals)
        algorithm.stop()
    finally:
        ray.shutdown()
    return row


if __name__ == "__main__":
    main()
