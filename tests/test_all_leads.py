"""PPO's surrogate summed over every legal lead (train_ppo --surrogate all_leads, the default with the rollouts
critic): one update improves the policy on the positions it learned from, and stays in PPO's trust region."""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

import agents  # noqa: E402
from snipsnap_env.cards import NUM_RANKS  # noqa: E402
from snipsnap_env.observation import CHIP_SCALE, OBS_DIM  # noqa: E402
from train.learn.args import Args  # noqa: E402
from train.learn.pool import seat_the_learner  # noqa: E402
from train.learn.rollout_critic import AllActionPPO, RolloutCriticPPO  # noqa: E402
from train.learn.run import new_model  # noqa: E402
from train.learn.vec_envs import make_vec_env  # noqa: E402


def collected(tmp_path, **settings):
    args = Args(out_dir=str(tmp_path), progress=False, ppo_players=(4,), num_envs=128, n_steps=4, batch_size=32,
                critic_rollouts=4, **settings)  # fmt: skip
    env = make_vec_env(args, 0)
    model = new_model(args, env)
    seat_the_learner(env, model)
    model.train = lambda: None  # collect one rollout, no update
    model.learn(args.num_envs * args.n_steps)
    del model.train
    return model


def expected_lead_value(model) -> float:
    buffer = model.rollout_buffer
    obs = buffer.observations.reshape(-1, buffer.observations.shape[-1])
    masks = buffer.action_masks.reshape(len(obs), -1).astype(bool)
    with torch.no_grad():
        probs = model.policy.get_distribution(torch.as_tensor(obs), masks).distribution.probs.numpy()
    return float((probs[:, :NUM_RANKS] * obs[:, OBS_DIM:] * CHIP_SCALE).sum(axis=1).mean())


def test_the_default_learner_is_the_all_leads_one_and_sampled_keeps_maskableppo_s(tmp_path):
    assert type(collected(tmp_path)) is AllActionPPO
    assert type(collected(tmp_path, surrogate="sampled")) is RolloutCriticPPO
    with pytest.raises(ValueError, match="needs every lead's value"):
        Args(out_dir=str(tmp_path), critic="observation", policy="mlp", surrogate="all_leads")
    assert Args(out_dir=str(tmp_path), critic="observation", policy="mlp").surrogate == "auto"  # sampled there


def test_one_update_raises_the_policys_expected_lead_value_within_the_clip(tmp_path):
    model = collected(tmp_path, init_from=str(agents.make("ppo").path))  # a policy that leads by the table
    before = expected_lead_value(model)
    value_net = [p.detach().clone() for p in model.policy.value_net.parameters()]
    model.train()
    after = expected_lead_value(model)
    assert after > before + 0.02  # chips a lead, on the very positions it learned from
    kl = model.logger.name_to_value["train/approx_kl"]
    assert 0 < kl < 0.2  # the clipped surrogate keeps the step near the policy that collected the rollout
    assert all(torch.equal(a, b) for a, b in zip(value_net, model.policy.value_net.parameters()))  # not fitted
