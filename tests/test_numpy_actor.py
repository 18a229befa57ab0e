"""The numpy twin of a policy network's actor gives the torch network's logits (agents.numpy_actor)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402

import agents  # noqa: E402
from agents.numpy_actor import NumpyActor  # noqa: E402
from snipsnap_env.batch import BatchEnv  # noqa: E402
from snipsnap_env.observation import HIGH, LOW  # noqa: E402


def torch_logits(network, obs):
    with torch.inference_mode():
        x = torch.as_tensor(obs)
        return network.action_net(network.mlp_extractor.forward_actor(x)).numpy()


def positions(num_players, count, seed):
    env = BatchEnv(count, num_players, rules="parlett", seed=seed)
    obs, mask = env.reset()
    for _ in range(3):  # later leads too: cards played, lead records, scores
        obs, mask, *_ = env.step(np.where(mask > 0, np.random.default_rng(seed).random(mask.shape), -1).argmax(axis=1))
    return obs, mask


@pytest.mark.parametrize("rows", [1, 5, 8, 9, 300])
def test_the_shipped_models_actor_in_numpy_gives_torchs_logits(rows):
    policy = agents.make("ppo")
    for n in (3, 6, 8):
        obs, mask = positions(n, rows, seed=n)
        expected = torch_logits(policy.network, obs)
        np.testing.assert_allclose(policy.logits(obs), expected, atol=2e-5)  # float32 rounding
        both = np.where(mask > 0, expected, -np.inf), np.where(mask > 0, policy.logits(obs), -np.inf)
        close = np.sort(both[0], axis=1)[:, -2] > both[0].max(axis=1) - 1e-4  # near-ties may flip
        assert (both[0].argmax(axis=1) == both[1].argmax(axis=1))[~close].all()


def test_an_mlp_actor_in_numpy_gives_torchs_logits():
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    torch.manual_seed(0)
    network = MaskableActorCriticPolicy(spaces.Box(LOW, HIGH), spaces.Discrete(14), lambda _: 1e-3, net_arch=[32, 16])
    obs, _ = positions(5, 64, seed=1)
    np.testing.assert_allclose(NumpyActor(network).logits(obs), torch_logits(network, obs), atol=2e-5)
