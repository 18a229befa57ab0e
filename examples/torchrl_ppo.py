"""Masked PPO in TorchRL on snipsnap, through TorchRL's own ``PettingZooWrapper``: no adapter of ours.

    pip install -e ".[train,recipes]"
    python examples/torchrl_ppo.py                 # 4 players, 45,000 frames: about 4½ minutes here
    python examples/torchrl_ppo.py --reward chips  # the same on the chips
    python examples/torchrl_ppo.py --frames 4000   # a smoke run

One network plays every seat (parameter sharing, full self-play). TorchRL groups the agents into one group,
``"agents"``; in this turn-based game only one of them acts at a step (``("agents", "mask")``), and TorchRL
gives the others an all-true action mask. Their sampled actions are not played, so the policy gradient is
kept to the acting agent: its advantage, everyone else's set to 0. The env pays ``reward="lead_advantage"``
(snipsnap_env.training_signal): each real lead's advantage over most_copies' in the true deal, to the seat that
led, at that step — so the discount is 0 and ten epochs over each batch use its few frames hard.
``auto_forced=True`` plays the turns with one legal action, so every frame is a real choice.

It ends as every recipe does: the trained policy, greedy, against most_copies on the project's paired deals.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MaskedCategorical, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators

import snipsnap_env
from agents.base import FunctionPolicy
from snipsnap_env.training_signal import REWARDS
from train.measure.evaluation import evaluate_policy
from train.runner.cli import seed_value
from train.runner.recipes import add_recipe_flags, keep

GROUP = "agents"
OBS = (GROUP, "observation", "observation")


def make_env(players: int, seed: int, reward: str = "lead_advantage", rules: str = "scarne") -> PettingZooWrapper:
    # auto_forced: the turns with one legal action are played for everyone, so every frame is a real choice
    with warnings.catch_warnings():  # TorchRL names the one PettingZoo it was tested with; this recipe is tested here
        warnings.filterwarnings("ignore", "PettingZoo in TorchRL is tested using version", UserWarning)
        return PettingZooWrapper(
            env=snipsnap_env.env(num_players=players, reward=reward, rules=rules, auto_forced=True),
            use_mask=True,  # compulsory for an AEC env: who acts at each step
            categorical_actions=True,
            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
            seed=seed,
        )


def mlp(out: int) -> nn.Module:
    width = 128
    return nn.Sequential(
        nn.Linear(snipsnap_env.OBS_DIM, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, out)
    )


def train(
    players: int, frames: int, frames_per_batch: int, seed: int, reward: str = "lead_advantage", rules: str = "scarne"
) -> nn.Module:
    torch.manual_seed(seed)
    env = make_env(players, seed, reward, rules)
    logits_net = mlp(snipsnap_env.NUM_ACTIONS)
    actor = ProbabilisticActor(
        TensorDictModule(logits_net, in_keys=[OBS], out_keys=[(GROUP, "logits")]),
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(GROUP, "sample_log_prob"),
    )
    critic = TensorDictModule(mlp(1), in_keys=[OBS], out_keys=[(GROUP, "state_value")])
    loss = ClipPPOLoss(actor_network=actor, critic_network=critic, clip_epsilon=0.2, entropy_coeff=0.01)
    loss.set_keys(
        action=(GROUP, "action"),
        sample_log_prob=(GROUP, "sample_log_prob"),
        value=(GROUP, "state_value"),
        reward=(GROUP, "reward"),
        done=(GROUP, "done"),
        terminated=(GROUP, "terminated"),
    )
    # the lead advantage is paid at the step that chose: discount 0 loses nothing; the chips come at the deal's end
    gamma = 0.0 if reward == "lead_advantage" else 1.0
    loss.make_value_estimator(ValueEstimators.GAE, gamma=gamma, lmbda=0.95)
    optimiser = torch.optim.Adam(loss.parameters(), lr=1e-3)
    collector = Collector(
        env, actor, frames_per_batch=frames_per_batch, total_frames=frames, auto_register_policy_transforms=False
    )
    for batch, data in enumerate(collector):
        with torch.no_grad():
            loss.value_estimator(
                data, params=loss.critic_network_params, target_params=loss.target_critic_network_params
            )
        acting = data.get((GROUP, "mask")).unsqueeze(-1)
        data.set("advantage", data.get("advantage") * acting)  # only the acting seat's choice was played
        flat = data.reshape(-1)
        for _ in range(10):  # epochs over the batch, in minibatches of 256 steps: few frames, used hard
            for index in torch.randperm(len(flat)).split(256):
                parts = loss(flat[index])
                total = parts["loss_objective"] + parts["loss_critic"] + parts["loss_entropy"]
                optimiser.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
                optimiser.step()
        entropy = parts["entropy"].mean() if "entropy" in parts.keys() else float("nan")
        print(f"batch {batch + 1}: {(batch + 1) * len(flat):,} frames, critic loss {parts['loss_critic'].item():.2f}, "
              f"policy entropy {entropy:.2f}")  # fmt: skip
    collector.shutdown()
    return logits_net


def greedy(logits_net: nn.Module) -> FunctionPolicy:
    """The trained policy as the project's evaluation plays it: the most likely legal action."""

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = logits_net(torch.from_numpy(obs)).masked_fill(~torch.from_numpy(mask), -torch.inf)
        return logits.argmax(dim=1).numpy()

    return FunctionPolicy(act, name="torchrl_ppo")


def main(argv=None):
    job = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    job.add_argument("--players", type=int, default=4)
    job.add_argument("--frames", type=int, default=45_000, help="env steps to train for (each a seat's real choice)")
    job.add_argument("--reward", choices=REWARDS, default="lead_advantage",
                     help="what the env pays: each lead's advantage over most_copies' in the true deal (default), "
                          "or the chips")  # fmt: skip
    job.add_argument("--frames-per-batch", type=int, default=2_000)
    job.add_argument("--eval-deals", type=int, default=20_000, help="paired deals against most_copies")
    job.add_argument("--seed", type=seed_value, default=0)
    add_recipe_flags(job)
    args = job.parse_args(argv)
    logits_net = train(args.players, args.frames, args.frames_per_batch, args.seed, args.reward, args.rules)
    keep(args, "examples/torchrl_ppo.py", logits_net)
    return evaluate_policy(greedy(logits_net), num_players=args.players, deals=args.eval_deals, rules=args.rules)


if __name__ == "__main__":
    main()
