"""Networks the kernel plays (snipsnap_env.kernel_network): the same choices as the model in the engine, the same
deals as play_out where no network sits, and a table of network seats in the training VecEnv."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import agents
from snipsnap_env import kernel
from snipsnap_env.batch import Games
from snipsnap_env.engine import Match
from snipsnap_env.kernel_network import NETWORK, network_actions, no_networks, play_out_observed, stack
from snipsnap_env.lead_values import values_for
from snipsnap_env.observation import OBS_DIM, encode, table_template
from snipsnap_env.rules import make_rules

pytest.importorskip("torch")


def scratch(n):
    return np.empty(OBS_DIM, np.float32), np.empty(14, np.int8), np.empty(14, np.float32)


@pytest.mark.parametrize("preset, n", [("scarne", 4), ("parlett", 5), ("pairs", 3)])
def test_a_table_without_networks_plays_the_same_deal_as_play_out(preset, n):
    rules = make_rules(preset)
    codes = kernel.rule_codes(rules)
    template = table_template(rules, n).astype(np.float32)
    policies = np.array([kernel.POLICIES.index(p) for p in ("random", "most_copies", "fewest_copies")] * 3)[:n]
    for seed in range(40):
        fast = kernel.new_game(n)
        fast[5][:] = kernel.seed_streams(seed, 1 + n)
        kernel.deal_from_stream(*fast[:5], fast[5][:1], codes, np.zeros(52, np.int8))
        slow = tuple(a.copy() for a in fast)
        kernel.play_out(*fast[:5], policies, fast[5], codes)
        play_out_observed(*slow[:5], policies, slow[5], codes, no_networks(), template, *scratch(n))
        assert np.array_equal(fast[4], slow[4]) and fast[3][kernel.WINNER] == slow[3][kernel.WINNER], seed


def first_real_lead(n, seed):
    """A deal of the engine at its first lead with a choice (dealt from ``seed``)."""
    rules = make_rules("scarne")
    rng = np.random.default_rng(seed)
    match = Match(rules, n)
    match.start(rng)
    while len(match.deal.legal_actions()) < 2:  # forced turns: any legal action is the only one
        match.apply(match.deal.legal_actions()[0])
    return rules, match


def engine_outcomes(model, match, lead, replays):
    """The seat's chips after ``lead`` in ``replays`` plays of the rest of the deal in the engine, every seat the
    model, greedy (its draws among tied ranks reseeded each time)."""
    seat, outcomes = match.deal.to_act, []
    for k in range(replays):
        model.reseed(k)
        replay = copy.deepcopy(match)
        replay.apply(lead)
        while not replay.deal.over:
            legal = replay.deal.legal_mask()
            replay.apply(int(model.greedy(encode(replay, replay.deal.to_act)[None], legal[None])[0]))
        outcomes.append(replay.chips[seat] - match.chips[seat])
    return np.array(outcomes, float)


@pytest.mark.parametrize("n", [3, 6])
@pytest.mark.slow
def test_a_network_seats_rollout_is_the_models_own_play_in_the_engine(n):
    """Every seat the shipped model, greedy, drawing among tied ranks: each lead's mean value over the kernel's
    rollouts is the mean of the model's own play of the deal in the engine (observation, lead record and tie
    rule as the engine's: a seat that saw another view, or broke ties otherwise, would drift by chips)."""
    model = agents.make("ppo", seed=0)
    nets = model.networks()
    replays, samples = 150, 600
    for seed in range(2):
        rules, match = first_real_lead(n, seed)
        seat = match.deal.to_act
        games = Games.from_deals([match.deal])
        values = np.empty((1, 13))
        wanted = np.ones((1, 13), bool)
        values_for(
            1,
            games.holding, games.hand_size, games.played, games.public, games.deal_score, np.array([seat]), wanted,
            np.full((1, n), NETWORK), samples, np.array([seed], np.uint64), kernel.rule_codes(rules), values, nets,
            table_template(rules, n).astype(np.float32),
        )  # fmt: skip
        for lead in match.deal.legal_actions():
            outcomes = engine_outcomes(model, match, lead, replays)
            error = np.sqrt(outcomes.var() * (1 / replays + 1 / samples)) + 1e-9
            assert abs(values[0, lead] - outcomes.mean()) < 4.5 * error, (seed, lead, values[0, lead], outcomes.mean())


def test_network_actions_are_the_models_greedy_choices_and_draw_among_ties():
    model, scratch_model = agents.make("ppo"), agents.make("ppo_scratch")
    nets = stack([model.networks(), scratch_model.networks()])
    from snipsnap_env.batch import BatchEnv

    env = BatchEnv(256, 4, seed=3)
    obs, mask = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        which = np.arange(len(obs)) % 2
        actions = network_actions(obs, mask, which, nets, rng.random(len(obs)))
        either = np.where((which == 0)[:, None], model.logits(obs), scratch_model.logits(obs))
        logits = np.where(mask > 0, either, -np.inf)
        best = logits[np.arange(len(obs)), actions] == logits.max(axis=1)
        assert best.mean() > 0.999  # near-ties within float32 rounding go to torch in the models
        obs, mask, *_ = env.step(actions)
    # a tie of four equally held ranks: each drawn about a quarter of the time, as the draws say
    obs, mask = BatchEnv(1, 4, seed=3).reset()
    obs, mask = np.repeat(obs, 4000, axis=0), np.repeat(mask, 4000, axis=0)
    logits = np.where(mask[0] > 0, model.logits(obs[:1])[0], -np.inf)
    ties = np.flatnonzero(logits == logits.max())
    assert len(ties) > 1, "this deal's first lead should hold equally held ranks"
    actions = network_actions(obs, mask, np.zeros(len(obs), np.int64), nets, rng.random(len(obs)))
    counts = np.array([(actions == a).sum() for a in ties])
    assert counts.sum() == len(actions)
    assert np.all(np.abs(counts / len(actions) - 1 / len(ties)) < 0.04), counts


def test_the_vec_env_seats_network_members_and_rolls_them_out_as_they_play():
    pytest.importorskip("stable_baselines3")
    from snipsnap_env.vec_env import SELF, SnipSnapVecEnv

    model = agents.make("ppo")
    env = SnipSnapVecEnv(64, 4, opponents=[model, SELF], seed=1, lead_values=2, rollout_policy=SELF)
    with pytest.raises(RuntimeError, match="set_learner"):
        env.reset()
    env.set_learner(agents.make("ppo_scratch").networks())
    obs = env.reset()
    codes = env.seat_codes()
    assert ((codes == NETWORK) == env._learns).all()  # the learner's seats play network 0
    assert (codes[~env._learns] == NETWORK + 1).all()  # the model's seats its own network
    for _ in range(10):
        obs, *_ = env.step(env.action_masks()[:, :13].argmax(axis=1))
    assert np.isfinite(obs).all()


def test_networks_of_other_head_sizes_share_a_stack_each_with_its_own_logits():
    # a learner with a narrower head than a shipped opponent's plays in the same compiled rollouts
    from snipsnap_env.batch import BatchEnv
    from snipsnap_env.kernel_network import logits_rows

    wide = agents.make("ppo").networks()  # 32 context units, 64 hidden
    narrow = wide._replace(  # a network of its own: 24 context units, 48 and 40 hidden
        ctx_w=wide.ctx_w[:, :, :24], ctx_b=wide.ctx_b[:, :24], first_rank=wide.first_rank[:, :, :48],
        first_context=wide.first_context[:, :24, :48], first_bias=wide.first_bias[:, :48],
        hidden_w=wide.hidden_w[:, :48, :40], hidden_b=wide.hidden_b[:, :40], score_w=wide.score_w[:, :40],
        pass_w=wide.pass_w[:, :24],
    )  # fmt: skip
    obs, _ = BatchEnv(512, 5, seed=11).reset()
    shared = stack([narrow, wide])
    for k, alone in enumerate((stack([narrow]), stack([wide]))):
        own, together = np.zeros((len(obs), 14), np.float32), np.zeros((len(obs), 14), np.float32)
        logits_rows(obs, 0, alone, own)
        logits_rows(obs, k, shared, together)
        np.testing.assert_allclose(together, own, rtol=1e-6, atol=1e-5)  # float32 rounding of reordered sums
        assert (together.argmax(axis=1) == own.argmax(axis=1)).mean() > 0.999
