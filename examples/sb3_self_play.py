"""Self-play with Stable-Baselines3's MaskablePPO (sb3-contrib) on the training signal: one policy plays the seats.

    pip install -e ".[train]"
    python examples/sb3_self_play.py                  # 4 players, 1,000,000 choices: about 2½ minutes here
    python examples/sb3_self_play.py --reward chips   # the same on the chips (learns nothing in that time)
    python examples/sb3_self_play.py --steps 2000     # a smoke run

The env pays ``reward="lead_advantage"`` (snipsnap_env.training_signal): each real lead's advantage over
most_copies' lead in the true deal, at the step that chose — so a discount of 0 loses nothing. By default the
tables are SB3 VecEnvs over the batched engine (``SnipSnapVecEnv``) whose seats draw, each deal, the learner
itself or most_copies: the learner holds several seats of a table, every one of their choices a step. With
``--pool self`` every seat is the learner's (pure self-play): it then never meets the heuristic's tells and
lands near most_copies' level against it in this budget (docs/recipes.md).

``--env aec`` trains on PettingZoo's own tutorial pattern ("SB3: Action Masked PPO for Chess", its
``SB3ActionMaskWrapper``, written out below): the AEC env seen by SB3 as one single-agent env whose "next
observation" is the next seat's. With the chips that pattern joins two seats' views in one transition; with
the signal and a discount of 0 it does not matter, but the Python tables are some ten times slower.

It ends as every recipe does: the trained policy, greedy, against most_copies on the project's paired deals.
"""

from __future__ import annotations

import argparse
import warnings

import gymnasium
import numpy as np
import pettingzoo.utils
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.wrappers import ActionMasker
from stable_baselines3.common.vec_env import DummyVecEnv

import agents
import snipsnap_env
from agents.base import FunctionPolicy
from snipsnap_env.training_signal import REWARDS
from snipsnap_env.vec_env import SELF, SnipSnapVecEnv
from train.measure.evaluation import evaluate_policy
from train.runner.cli import seed_value
from train.runner.recipes import add_recipe_flags, keep


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


def tutorial_tables(players: int, reward: str, seed: int, tables: int, rules: str = "scarne") -> DummyVecEnv:
    """``--env aec``: the tutorial's wrapper around the AEC env, ``tables`` of them in SB3's DummyVecEnv.
    ``auto_forced=True`` plays the turns with one legal action for everyone, so every step is a real choice."""

    def table(index: int):
        env = SB3ActionMaskWrapper(snipsnap_env.env(num_players=players, reward=reward, rules=rules, auto_forced=True))
        env.reset(seed=seed + index)
        return ActionMasker(env, lambda env: env.action_mask())

    return DummyVecEnv([lambda index=index: table(index) for index in range(tables)])


def batched_tables(players: int, reward: str, seed: int, tables: int, pool: str = "self+most_copies",
                   rules: str = "scarne"):  # fmt: skip
    """``--env batched`` (the default): self-play as an SB3 VecEnv over the batched engine, some ten times faster
    than the Python tables above. Each seat of each table draws, each deal, the learner itself (``SELF``: every
    such seat's real choices are its steps, each paid to the chooser) or, with ``--pool self+most_copies`` (the
    default), the most_copies heuristic. With the chips the learner holds one seat among most_copies players:
    the chips of several learner seats of one table would be credited to each other's decisions."""
    heuristic = agents.make("most_copies", seed=seed)
    if reward == "chips":
        if pool == "self":
            raise SystemExit("--reward chips with --pool self: several learner seats would share their chips; "
                             "use --env aec (the tutorial's pattern) for self-play on the chips")  # fmt: skip
        return SnipSnapVecEnv(tables, players, opponents=[heuristic], seed=seed, reward=reward, rules=rules)
    if pool == "random":  # the learner in one seat among random-lead players: the table the exact regret is of
        return SnipSnapVecEnv(tables, players, opponents=[agents.make("random", seed=seed)], seed=seed, reward=reward,
                              rules=rules)  # fmt: skip
    members = [SELF] + ([heuristic] if pool == "self+most_copies" else [])
    return SnipSnapVecEnv(tables, players, opponents=members, seed=seed, reward=reward, rules=rules)


def make_model(players: int, seed: int, reward: str = "lead_advantage", env: str = "batched",
               pool: str = "self+most_copies", tables: int = 64, rules: str = "scarne") -> MaskablePPO:  # fmt: skip
    if env == "batched":
        vec_env = batched_tables(players, reward, seed, tables, pool, rules)
    else:
        vec_env = tutorial_tables(players, reward, seed, tables, rules)
    # the lead advantage is paid at the step that chose, so a discount of 0 loses nothing (and the tutorial's
    # joined views of two seats no longer matter); the chips come at the deal's end: discount 1
    gamma = 0.0 if reward == "lead_advantage" else 1.0
    return MaskablePPO(
        MaskableActorCriticPolicy, vec_env, gamma=gamma, n_steps=64, batch_size=1024, n_epochs=4, ent_coef=0.01,
        policy_kwargs={"net_arch": [128, 128]}, seed=seed, verbose=0,
    )  # fmt: skip


def train(players: int, steps: int, seed: int, reward: str = "lead_advantage", env: str = "batched",
          pool: str = "self+most_copies", rules: str = "scarne") -> MaskablePPO:  # fmt: skip
    model = make_model(players, seed, reward, env, pool, rules=rules)
    with warnings.catch_warnings():  # SB3's bar is tqdm's rich one, which calls itself experimental on every run
        warnings.filterwarnings("ignore", "rich is experimental", category=Warning)
        model.learn(total_timesteps=steps, progress_bar=True)
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
    job.add_argument("--steps", type=int, default=1_000_000, help="real choices to train for (any seat's)")
    job.add_argument("--reward", choices=REWARDS, default="lead_advantage",
                     help="what the env pays: each lead's advantage over most_copies' in the true deal (default), "
                          "or the chips")  # fmt: skip
    job.add_argument("--env", choices=("batched", "aec"), default="batched",
                     help="self-play tables on the batched engine (default), or the tutorial's AEC wrapper")
    job.add_argument("--pool", choices=("self+most_copies", "self", "random"), default="self+most_copies",
                     help="who sits at the batched tables: the learner and most_copies (default), the learner only, "
                          "or the learner in one seat among random-lead players")  # fmt: skip
    job.add_argument("--eval-deals", type=int, default=20_000, help="paired deals against most_copies")
    job.add_argument("--seed", type=seed_value, default=0)
    add_recipe_flags(job)
    args = job.parse_args(argv)
    torch.set_num_threads(1)  # small networks: threads cost more than they give
    model = train(args.players, args.steps, args.seed, args.reward, args.env, args.pool, args.rules)
    keep(args, "examples/sb3_self_play.py", model.policy.mlp_extractor.policy_net, model.policy.action_net)
    return evaluate_policy(greedy(model), num_players=args.players, deals=args.eval_deals, rules=args.rules)


if __name__ == "__main__":
    main()
