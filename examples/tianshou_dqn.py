"""Masked DQN in Tianshou on snipsnap, through Tianshou's own ``PettingZooEnv``: no adapter of ours.

    pip install -e ".[train,recipes]"
    python examples/tianshou_dqn.py                           # 4 players, 30,000 env steps: 4-10 minutes here
    python examples/tianshou_dqn.py --reward lead_advantage   # the same on the project's training signal
    python examples/tianshou_dqn.py --steps 3000              # a smoke run

Tianshou's multi-agent algorithm gives each agent an algorithm; here one DQN plays every seat (parameter
sharing, so every seat's choices train it). PettingZooEnv hands the action mask to the policy as ``obs.mask``,
so it never picks an illegal action. The env pays the chips (discount 1: a deal is some ten real choices, and
the one-step TD targets carry the value of the rest of the deal). Unlike the PPO recipes, this one learns more
from the chips than from ``reward="lead_advantage"`` (snipsnap_env.training_signal, each lead's advantage over
most_copies' at the step that chose, discount 0): over three seeds (docs/recipes.md) the chips beat most_copies
and the signal stayed below it, because the signal scores every later lead as most_copies' would be.
``auto_forced=True`` plays the turns with one legal action, so every env step is a real choice.

It ends as every recipe does: the learned Q-network, greedy, against most_copies on the project's paired deals.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import snipsnap_env
from agents.base import FunctionPolicy
from snipsnap_env.training_signal import REWARDS
from train.measure.evaluation import evaluate_policy
from train.runner.cli import seed_value
from train.runner.recipes import add_recipe_flags, keep

LEARNER = 0  # the learner's seat


def make_env(players: int, reward: str = "chips", rules: str = "scarne"):
    # auto_forced: the turns with one legal action are played for everyone, so every step is a real choice
    return PettingZooEnv(snipsnap_env.env(num_players=players, reward=reward, rules=rules, auto_forced=True))


def train(players: int, steps: int, envs: int, seed: int, reward: str = "chips", rules: str = "scarne") -> Net:
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = make_env(players, reward, rules)
    net = Net(state_shape=snipsnap_env.OBS_DIM, action_shape=snipsnap_env.NUM_ACTIONS, hidden_sizes=[128, 128])
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0),
        optim=AdamOptimizerFactory(lr=1e-3),
        # the lead advantage is paid at the step that chose: discount 0 (Q is the expected advantage itself);
        # the chips come at the deal's end: discount 1
        gamma=0.0 if reward == "lead_advantage" else 1.0,
        n_step_return_horizon=1,
        target_update_freq=200,
    )
    # one DQN in every seat (parameter sharing): each seat's choices are its samples, four times the data of one
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner] * players, env=env)
    training_envs = DummyVectorEnv([lambda: make_env(players, reward, rules) for _ in range(envs)])
    test_envs = DummyVectorEnv([lambda: make_env(players, reward, rules) for _ in range(envs)])
    training_envs.seed(seed)
    test_envs.seed(seed + 1)
    buffer = VectorReplayBuffer(20_000, len(training_envs))
    training_collector = Collector[CollectStats](algorithm, training_envs, buffer, exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=False)
    training_collector.reset()
    training_collector.collect(n_step=64 * envs)  # a first batch of experience before any update
    epochs = max(1, steps // 1000)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=training_collector,
            test_collector=test_collector,
            max_epochs=epochs,
            epoch_num_steps=min(steps, 1000),
            collection_step_num_env_steps=10,
            test_step_num_episodes=2,
            batch_size=256,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            multi_agent_return_reduction=lambda returns: returns[:, LEARNER],
        )
    )
    print(f"trained {epochs} epochs; best test return of seat {LEARNER}: {result.best_reward:+.2f} (what the env pays)")
    return net


def greedy(net: Net) -> FunctionPolicy:
    """The learned Q-network as the project's evaluation plays it: the legal action of the highest value."""

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            values, _ = net(torch.from_numpy(obs))
        return values.masked_fill(~torch.from_numpy(mask), -torch.inf).argmax(dim=1).numpy()

    return FunctionPolicy(act, name="tianshou_dqn")


def main(argv=None):
    job = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    job.add_argument("--players", type=int, default=4)
    job.add_argument("--steps", type=int, default=30_000, help="env steps to train for (each a seat's real choice)")
    job.add_argument("--reward", choices=REWARDS, default="chips",
                     help="what the env pays: the chips (default: DQN learned more from them, three seeds), or each "
                          "lead's advantage over most_copies' in the true deal")  # fmt: skip
    job.add_argument("--envs", type=int, default=8, help="games played side by side")
    job.add_argument("--eval-deals", type=int, default=20_000, help="paired deals against most_copies")
    job.add_argument("--seed", type=seed_value, default=0)
    add_recipe_flags(job)
    args = job.parse_args(argv)
    net = train(args.players, args.steps, args.envs, args.seed, args.reward, args.rules)
    keep(args, "examples/tianshou_dqn.py", net)
    return evaluate_policy(greedy(net), num_players=args.players, deals=args.eval_deals, rules=args.rules)


if __name__ == "__main__":
    main()
