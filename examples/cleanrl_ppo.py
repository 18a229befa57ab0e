"""Masked PPO in one file, in the manner of CleanRL's ppo.py: every step of the algorithm on one page, for teaching.

    pip install -e ".[train]"
    python examples/cleanrl_ppo.py                        # 4 players, 1,000,000 decisions: 2½ minutes here
    python examples/cleanrl_ppo.py --total-timesteps 4096 # a smoke run

The learner holds one seat of ``snipsnap/SingleSeat-v0`` (gymnasium): the other seats are most_copies
players stepped inside the env, turns with one legal action are played for everyone, so every step is a real
choice of the learner and every reward the chips it won or lost since its previous choice. The action mask
comes from ``env.action_masks()``; illegal actions get a logit of -inf, so they are never drawn and add
nothing to the entropy. What CleanRL's ppo.py does and this file keeps: vectorised envs, GAE, advantage
normalisation per minibatch, the clipped surrogate and value losses, an entropy bonus, gradient clipping
and annealing of the learning rate.

It ends as every recipe does: the trained policy, greedy, against most_copies on the project's paired deals.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import agents
import snipsnap_env
import snipsnap_env.training_signal
from agents.base import FunctionPolicy
from train.measure.evaluation import evaluate_policy
from train.runner.cli import seed_value
from train.runner.recipes import add_recipe_flags, keep


def parse(argv=None) -> argparse.Namespace:
    job = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    job.add_argument("--players", type=int, default=4)
    job.add_argument("--opponents", default="most_copies", help="the other seats: any name agents.make knows")
    job.add_argument("--reward", choices=snipsnap_env.training_signal.REWARDS, default="lead_advantage",
                     help="what the env pays: each lead's advantage over most_copies' in the true deal (default), "
                          "or the chips")  # fmt: skip
    job.add_argument("--total-timesteps", type=int, default=1_000_000, help="learner decisions to train for")
    job.add_argument("--num-envs", type=int, default=64, help="tables, stepped together on the batched engine")
    job.add_argument("--num-steps", type=int, default=64, help="decisions per env per rollout")
    job.add_argument("--gamma", type=float, default=None,
                     help="discount; default 0 with the lead advantage (paid at the step that chose), 1 with chips")
    job.add_argument("--learning-rate", type=float, default=3e-4)
    job.add_argument("--gae-lambda", type=float, default=0.95)
    job.add_argument("--num-minibatches", type=int, default=4)
    job.add_argument("--update-epochs", type=int, default=4)
    job.add_argument("--clip-coef", type=float, default=0.2)
    job.add_argument("--ent-coef", type=float, default=0.01)
    job.add_argument("--vf-coef", type=float, default=0.5)
    job.add_argument("--max-grad-norm", type=float, default=0.5)
    job.add_argument("--eval-deals", type=int, default=20_000, help="paired deals against most_copies")
    job.add_argument("--seed", type=seed_value, default=1)
    add_recipe_flags(job)
    return job.parse_args(argv)


def layer(inputs: int, outputs: int, std: float = np.sqrt(2)) -> nn.Linear:
    """CleanRL's orthogonal initialisation."""
    linear = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        obs, actions = snipsnap_env.OBS_DIM, snipsnap_env.NUM_ACTIONS
        self.critic = nn.Sequential(layer(obs, 128), nn.Tanh(), layer(128, 128), nn.Tanh(), layer(128, 1, std=1.0))
        self.actor = nn.Sequential(layer(obs, 128), nn.Tanh(), layer(128, 128), nn.Tanh(), layer(128, actions, 0.01))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def policy(self, obs: torch.Tensor, mask: torch.Tensor) -> Categorical:
        return Categorical(logits=self.actor(obs).masked_fill(~mask, -1e9))  # -1e9, not -inf: entropy stays finite


def vector_env(args: argparse.Namespace) -> gymnasium.vector.VectorEnv:
    """``--num-envs`` tables on the batched engine (``vectorization_mode="vector_entry_point"``). A table whose
    deal ends starts the next one in the same step (gymnasium's SAME_STEP autoreset), so no step without a
    choice in it is ever stored and learned from as a decision."""
    return gymnasium.make_vec(
        "snipsnap/SingleSeat-v0", num_envs=args.num_envs, vectorization_mode="vector_entry_point",
        num_players=args.players, opponents=[agents.make(args.opponents, seed=args.seed)], reward=args.reward,
        rules=args.rules, seed=args.seed,
    )  # fmt: skip


def train(args: argparse.Namespace, after_iteration=None) -> Agent:
    """PPO as CleanRL writes it; ``after_iteration(agent, decisions, seconds)``, if given, is called after each
    update with the training time so far (for learning curves: examples/learning_curves.py)."""
    torch.manual_seed(args.seed)
    envs = vector_env(args)
    agent = Agent()
    optimiser = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    shape = (args.num_steps, args.num_envs)
    obs = torch.zeros(shape + (snipsnap_env.OBS_DIM,))
    masks = torch.zeros(shape + (snipsnap_env.NUM_ACTIONS,), dtype=torch.bool)
    actions, logprobs, rewards, dones, values = (torch.zeros(shape) for _ in range(5))
    next_obs = torch.as_tensor(envs.reset(seed=args.seed)[0])
    next_done = torch.zeros(args.num_envs)
    batch_size = args.num_envs * args.num_steps
    iterations = max(1, args.total_timesteps // batch_size)
    gamma = args.gamma if args.gamma is not None else (0.0 if args.reward == "lead_advantage" else 1.0)
    started, paid = time.time(), []
    for iteration in range(1, iterations + 1):
        optimiser.param_groups[0]["lr"] = (1.0 - (iteration - 1) / iterations) * args.learning_rate
        for step in range(args.num_steps):  # the rollout
            obs[step], dones[step] = next_obs, next_done
            masks[step] = torch.as_tensor(envs.action_masks())
            with torch.no_grad():
                distribution = agent.policy(next_obs, masks[step])
                action = distribution.sample()
                values[step] = agent.value(next_obs)
            actions[step], logprobs[step] = action, distribution.log_prob(action)
            next_obs, reward, terminated, truncated, info = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs = torch.as_tensor(next_obs)
            next_done = torch.as_tensor(np.logical_or(terminated, truncated), dtype=torch.float32)
        paid.append(rewards.mean().item())  # what the env paid a decision, for the log
        with torch.no_grad():  # GAE with the discount that fits the reward
            advantages = torch.zeros(shape)
            last = torch.zeros(args.num_envs)
            next_value = agent.value(next_obs)
            for t in reversed(range(args.num_steps)):
                nonterminal = 1.0 - (next_done if t == args.num_steps - 1 else dones[t + 1])
                following = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + gamma * following * nonterminal - values[t]
                advantages[t] = last = delta + gamma * args.gae_lambda * nonterminal * last
            targets = advantages + values
        flat = lambda x: x.reshape((batch_size,) + x.shape[2:])  # noqa: E731
        b_obs, b_masks, b_actions, b_logprobs = flat(obs), flat(masks), flat(actions), flat(logprobs)
        b_advantages, b_targets = flat(advantages), flat(targets)
        for _ in range(args.update_epochs):  # the update
            for index in torch.randperm(batch_size).split(batch_size // args.num_minibatches):
                distribution = agent.policy(b_obs[index], b_masks[index])
                ratio = (distribution.log_prob(b_actions[index]) - b_logprobs[index]).exp()
                advantage = b_advantages[index]
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                clipped = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                policy_loss = torch.max(-advantage * ratio, -advantage * clipped).mean()
                value_loss = 0.5 * ((agent.value(b_obs[index]) - b_targets[index]) ** 2).mean()
                loss = policy_loss - args.ent_coef * distribution.entropy().mean() + args.vf_coef * value_loss
                optimiser.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimiser.step()
        if after_iteration is not None:
            after_iteration(agent, iteration * batch_size, time.time() - started)
        if iteration % max(1, iterations // 20) == 0 or iteration == iterations:
            print(f"iteration {iteration}/{iterations}: {iteration * batch_size:,} decisions, "
                  f"{iteration * batch_size / (time.time() - started):,.0f} a second, "
                  f"value loss {value_loss.item():.2f}, "
                  f"reward a decision (recent iterations) {np.mean(paid[-10:]):+.3f}")  # fmt: skip
    envs.close()
    return agent


def greedy(agent: Agent) -> FunctionPolicy:
    """The trained policy as the project's evaluation plays it: the most likely legal action."""

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return agent.policy(torch.from_numpy(obs), torch.from_numpy(mask)).logits.argmax(dim=1).numpy()

    return FunctionPolicy(act, name="cleanrl_ppo")


def main(argv=None):
    args = parse(argv)
    torch.set_num_threads(1)  # small networks: threads cost more than they give
    agent = train(args)
    keep(args, "examples/cleanrl_ppo.py", agent.actor)
    return evaluate_policy(greedy(agent), num_players=args.players, opponents=args.opponents, deals=args.eval_deals,
                           rules=args.rules)  # fmt: skip


if __name__ == "__main__":
    main()
