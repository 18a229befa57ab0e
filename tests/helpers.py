"""Helpers shared by several test files (imported as ``helpers``: pytest puts this folder on sys.path)."""

from __future__ import annotations

import snipsnap_env


def play_aec_game(policy, num_players: int, rules: str, seed: int):
    """Play one game of the wrapped AEC env with ``policy`` in every seat, checking each action is legal."""
    env = snipsnap_env.env(num_players=num_players, rules=rules)
    env.reset(seed=seed)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else policy(obs)
        if action is not None:
            assert obs["action_mask"][action] == 1, (agent, action, obs["action_mask"])
        env.step(action)
    assert all(env.terminations.values())
    assert env.unwrapped.match.deal.winner is not None  # the deal was played out, not ended by an illegal move
    return env
