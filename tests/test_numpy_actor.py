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
        expected = torch_logits(policy.network, policy._own_columns(obs))  # in the columns it was trained on
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


def test_greedy_rows_picks_the_lowest_of_equal_best_legal_logits_and_flags_near_ties():
    from agents.numpy_actor import greedy_rows

    logits = np.array([[1.0, 3.0, 3.0, 5.0], [2.0, 2.0 + 5e-5, 0.0, 9.0], [0.5, 0.5, 0.1, 0.0]], np.float32)
    legal = np.array([[True, True, True, False], [True, True, True, False], [False, True, True, True]])
    actions, close = greedy_rows(logits, legal, 1e-4)
    assert actions.tolist() == [1, 1, 1]  # 5.0 and 9.0 are illegal; ties go to the lowest action
    assert close.tolist() == [False, True, False]  # an exact tie is no near-tie


def test_the_shipped_models_greedy_choice_is_torchs_where_ranks_differ():
    # torch may round two ranks with equal features (equal by construction) a few ulps apart, even in one row;
    # the twin keeps them equal and draws among them. Every other choice is torch's own, near-ties included.
    policy = agents.make("ppo", seed=0)
    columns = policy._actor.rank_columns
    for n in (3, 6, 8):
        obs, mask = positions(n, 150, seed=10 + n)
        logits = np.concatenate([torch_logits(policy.network, policy._own_columns(o[None])) for o in obs])
        features = obs[:, columns]  # (B, 13, 4)
        first_same = (features[:, :, None] == features[:, None]).all(axis=-1).argmax(axis=2)
        logits[:, :13] = np.take_along_axis(logits[:, :13], first_same, axis=1)
        legal_logits = np.where(mask > 0, logits, -np.inf)
        best = legal_logits == legal_logits.max(axis=1, keepdims=True)
        single = [policy({"observation": o, "action_mask": m}) for o, m in zip(obs, mask)]
        for actions in (policy.greedy(obs, mask), single):
            assert best[np.arange(len(obs)), actions].all()
        unique = best.sum(axis=1) == 1
        assert unique.any() and (~unique).any()
        np.testing.assert_array_equal(policy.greedy(obs, mask)[unique], legal_logits.argmax(axis=1)[unique])


def test_greedy_actions_draw_uniformly_among_equal_best_logits_and_repeat_with_the_seed():
    from agents.numpy_actor import greedy_actions

    logits = np.tile(np.array([[3.0, 1.0, 3.0, 3.0, 2.0]], np.float32), (6000, 1))
    legal = np.tile(np.array([[True, True, True, True, False]]), (6000, 1))
    legal[:3000, 3] = False  # half the rows tie two actions, half three
    actions = greedy_actions(logits, legal, np.random.default_rng(1))
    for rows, tied in ((slice(0, 3000), [0, 2]), (slice(3000, None), [0, 2, 3])):
        counts = np.array([(actions[rows] == a).sum() for a in tied])
        assert counts.sum() == 3000 and np.all(np.abs(counts / 3000 - 1 / len(tied)) < 0.04), counts
    np.testing.assert_array_equal(actions, greedy_actions(logits, legal, np.random.default_rng(1)))
    near = np.array([[1.0, 1.0 + 5e-5, 0.0]], np.float32)  # a near-tie: the exact logits decide, no draw
    exact = lambda rows: np.array([[2.0, 1.0, 0.0]])  # noqa: E731
    assert greedy_actions(near, np.ones((1, 3), bool), np.random.default_rng(0), exact) == [0]


@pytest.mark.parametrize("name", ["ppo", "ppo_distilled", "ppo_scratch"])
def test_one_aec_decision_in_one_compiled_call_makes_act_batchs_choices_and_draws(name):
    """PPOPolicy.__call__'s fast path (agents.numpy_actor._decide_one) against act_batch one row at a time, from
    the same seed: the same actions and the generator left in the same state, over ties and all table sizes."""
    fast, general = agents.make(name, seed=4), agents.make(name, seed=4)
    assert fast._single_fast
    start, drifted = fast.rng.bit_generator.state, 0
    for n in (3, 5, 8):
        obs, mask = positions(n, 400, seed=n)
        for row in range(len(obs)):
            chosen = fast({"observation": obs[row], "action_mask": mask[row]})
            assert chosen == general.act_batch(obs[row : row + 1], mask[row : row + 1])[0]
            drifted += fast.rng.bit_generator.state != general.rng.bit_generator.state
    assert drifted == 0 and fast.rng.bit_generator.state != start  # ties were drawn, in step
