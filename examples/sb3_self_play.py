"""Self-play with Stable-Baselines3's MaskablePPO (sb3-contrib), in the pattern of PettingZoo's own tutorial
("SB3: Action Masked PPO for Chess", its ``SB3ActionMaskWrapper``): one policy plays every seat.

    pip install -e ".[train]"
    python examples/sb3_self_play.py                  # 4 players, 50,000 steps: about a minute here
    python examples/sb3_self_play.py --steps 2000     # a smoke run

The wrapper below is the tutorial's, written out so you can read it: the AEC env seen by SB3 as one
single-agent env whose "next observation" is the next seat's, and whose reward is what the seat that acted
has collected since it last acted. Each SB3 transition thus joins two different seats' views, which is
what the tutorial's pattern does and why it learns slowly; ``python -m train.train_ppo`` is the project's
own way (one learner seat, opponents played inside the env, every chip credited to the decision it follows).

It ends as every recipe does: the trained policy, greedy, against most_copies on the project's paired deals.
"""

from __future__ import annotations

import argparse

import gymnasium
import numpy as np
import pettingzoo.utils
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.wrappers import ActionMasker

import snipsnap_env
from agents.base import FunctionPolicy
from train.evaluate import evaluate_policy


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """PettingZoo's tutorial wrapper: the AEC env as a gymnasium env for one shared policy. It is a
    ``gymnasium.Env`` too, so that gymnasium 1.x's wrappers (sb3-contrib's ActionMasker) take it: the tutorial
    as published stops on gymnasium newer than 0.29.1."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        # the spaces SB3 asks for: every seat's are the same
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        acting = self.agent_selection
        super().step(action)
        reward = self._cumulative_rewards[acting]
        return self.observe(self.agent_selection), reward, self.terminations[acting], self.truncations[acting], {}

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"].astype(bool)


def train(players: int, steps: int, seed: int) -> MaskablePPO:
    env = SB3ActionMaskWrapper(snipsnap_env.env(num_players=players))
    env.reset(seed=seed)
    env = ActionMasker(env, lambda env: env.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, gamma=1.0, n_steps=1024, batch_size=256, seed=seed, verbose=0)
    model.learn(total_timesteps=steps, progress_bar=False)
    return model


def greedy(model: MaskablePPO) -> FunctionPolicy:
    """The trained policy as the project's evaluation plays it: the most likely legal action."""

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        actions, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return np.asarray(actions, dtype=np.int64)

    return FunctionPolicy(act, name="sb3_self_play")


def main(argv=None):
    job = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    job.add_argument("--players", type=int, default=4)
    job.add_argument("--steps", type=int, default=50_000, help="env steps to train for (every seat's turn is one)")
    job.add_argument("--eval-deals", type=int, default=20_000, help="paired deals against most_copies")
    job.add_argument("--seed", type=int, default=0)
    args = job.parse_args(argv)
    torch.set_num_threads(1)  # small networks: threads cost more than they give
    model = train(args.players, args.steps, args.seed)
    return evaluate_policy(greedy(model), num_players=args.players, deals=args.eval_deals)


if __name__ == "__main__":
    main()
