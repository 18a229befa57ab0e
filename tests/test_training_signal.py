"""The training signal (``reward="lead_advantage"``, snipsnap_env.training_signal) and the default it leaves alone.

- ``reward="chips"`` (the default) pays byte for byte what the envs paid before the signal existed: the digests
  below were made by the same helpers at commit 8f62d9c.
- The advantage has mean zero under its reference (most_copies) on thousands of leads for every preset and
  table size, and not for another lead choice; its rollout values agree with the readable engine's.
- Same seed, same rewards; the observations and deals do not depend on the reward; bad options are refused.
"""

from __future__ import annotations

import copy
import hashlib

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test

import agents
import snipsnap_env
from snipsnap_env import PRESETS, make_rules
from snipsnap_env.batch import BatchEnv
from snipsnap_env.cards import NUM_RANKS
from snipsnap_env.training_signal import LeadAdvantage

# made at commit 8f62d9c (before the signal) by aec_digest / single_seat_digest / vec_digest below
BEFORE = {
    "aec bicycle 3": "8d61876aa27ba8b4",
    "aec bicycle 4": "cda0c46d19af09b4",
    "aec bicycle 5": "51466cd95340e2d6",
    "aec bicycle 6": "10669e47e2457217",
    "aec bicycle 7": "a2af9ef098274459",
    "aec bicycle 8": "4926e2c28a67f9e9",
    "aec earl_of_coventry 3": "c203d52193080be1",
    "aec earl_of_coventry 4": "70b6268f8269f8af",
    "aec earl_of_coventry 5": "d140a36481c62e20",
    "aec earl_of_coventry 6": "a2b6deea17da03aa",
    "aec earl_of_coventry 7": "05b775b831ff51e0",
    "aec earl_of_coventry 8": "bc72f6d667ed3e8b",
    "aec kids 3": "2193b64161662c78",
    "aec kids 4": "e060ebcd13ce004b",
    "aec kids 5": "fe8fd75bdadd2eab",
    "aec kids 6": "4a0b74ff53a00192",
    "aec kids 7": "ae072d69a31cc0ba",
    "aec kids 8": "a7f40f2fe75967d9",
    "aec kids_settle 3": "db7d91aee5a7c496",
    "aec kids_settle 4": "ac64611368cf7cb5",
    "aec kids_settle 5": "45f00cd83c5ebd97",
    "aec kids_settle 6": "a53571aa18eb7d76",
    "aec kids_settle 7": "fc174938266c77bf",
    "aec kids_settle 8": "9e4a9755c9cf5cac",
    "aec pairs 3": "7ee85f9b01573e61",
    "aec pairs 4": "ee67f1fbbc2946ed",
    "aec pairs 5": "96f440152dc6202f",
    "aec pairs 6": "d4cfb5c39f4d3ac4",
    "aec pairs 7": "c17cae9c4d54eb83",
    "aec pairs 8": "2ea11f3371453502",
    "aec parlett 3": "9ca32a877291d888",
    "aec parlett 4": "15e7e922a9cf6cd0",
    "aec parlett 5": "d9f651d8398efe7e",
    "aec parlett 6": "f40a671953487ef4",
    "aec parlett 7": "d3f128aead022f82",
    "aec parlett 8": "eadbbdd704c98fe1",
    "aec scarne 3": "ce45bbb61ec3fa62",
    "aec scarne 4": "9f27dca25e6e700a",
    "aec scarne 5": "eaac72e367c5097d",
    "aec scarne 6": "c4bb4519c3f0885c",
    "aec scarne 7": "fb87e90b2a1c57af",
    "aec scarne 8": "fc2e9c0dfb5ea4f5",
    "aec wiswell 3": "e7d44486261c3e6e",
    "aec wiswell 4": "e37636b33259b1f5",
    "aec wiswell 5": "49bdc8034a675b7e",
    "aec wiswell 6": "693ca82bf984624e",
    "aec wiswell 7": "e51a5f4cadabfd66",
    "aec wiswell 8": "644c1cbc871867ea",
    "single_seat 3": "b00087aa8be81808",
    "vec 3": "4ea3b7a3a433a0e9",
    "single_seat 4": "66a0cbc70edc57fa",
    "vec 4": "a5d82a177f7ade0d",
    "single_seat 5": "1922a2523780d773",
    "vec 5": "5bc3f24ee5f872cd",
    "single_seat 6": "55305ecfe59d4c5d",
    "vec 6": "cf18c4bdbf5fede8",
    "single_seat 7": "c7ba2efd39e1f17b",
    "vec 7": "484f7b5a7427234d",
    "single_seat 8": "986ffe90e7d1c54d",
    "vec 8": "23372b132bc385f8",
}


def random_actions(seed: int):
    rng = np.random.default_rng(seed)
    return lambda mask: int(rng.choice(np.flatnonzero(mask)))


def aec_rewards(preset: str, players: int, deals: int = 20, **kwargs) -> list[float]:
    env = snipsnap_env.env(num_players=players, rules=preset, **kwargs)
    pick, paid = random_actions(players), []
    for seed in range(deals):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            paid.append(reward)
            env.step(None if term or trunc else pick(obs["action_mask"]))
    return paid


def aec_digest(preset: str, players: int, **kwargs) -> str:
    return digest(np.float64(aec_rewards(preset, players, **kwargs)).tobytes())


def single_seat_digest(players: int, episodes: int = 50, **kwargs) -> str:
    env, pick, paid = snipsnap_env.SingleSeatEnv(num_players=players, **kwargs), random_actions(players), []
    for seed in range(episodes):
        env.reset(seed=seed)
        done = False
        while not done:
            _, reward, done, _, _ = env.step(pick(env.action_masks()))
            paid.append(reward)
    return digest(np.float64(paid).tobytes())


def vec_digest(players: int, steps: int = 200, python_others: bool = False, **kwargs) -> str:
    from snipsnap_env.vec_env import SnipSnapVecEnv

    env = SnipSnapVecEnv(16, players, seed=players, **kwargs)
    if python_others:  # the other seats one Python step per turn, as before they played in one compiled call
        env._scripted_codes = None
    env.reset()
    rng, parts = np.random.default_rng(players), []
    for _ in range(steps):
        masks = env.action_masks()
        _, rewards, dones, _ = env.step(np.where(masks, rng.random(masks.shape), -1).argmax(axis=1))
        parts += [rewards.astype(np.float64).tobytes(), dones.tobytes()]
    return digest(b"".join(parts))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


# ---- the default is what it was ----------------------------------------------------------------------------
@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.slow
def test_chips_are_paid_byte_for_byte_as_before_the_signal(preset):
    for players in range(3, 9):
        assert aec_digest(preset, players) == BEFORE[f"aec {preset} {players}"], (preset, players)
        assert aec_digest(preset, players, reward="chips") == BEFORE[f"aec {preset} {players}"], (preset, players)


def test_the_training_envs_pay_chips_byte_for_byte_as_before_the_signal():
    for players in range(3, 9):
        assert single_seat_digest(players) == BEFORE[f"single_seat {players}"], players
        # the digests were taken when the other seats played in Python; the compiled path draws from the seats'
        # own streams instead (the same game in distribution: tests/test_play_others.py)
        assert vec_digest(players, python_others=True) == BEFORE[f"vec {players}"], players


# ---- what the signal is ------------------------------------------------------------------------------------
def leads_of(policy: str, preset: str, players: int, games: int, seed: int):
    """Advantages of ``policy``'s real leads over ``games`` tables of it, by the signal (8 rollouts a lead)."""
    env = BatchEnv(games, players, rules=preset, seed=seed)
    signal = LeadAdvantage(make_rules(preset), players, seed=seed)
    chooser = agents.make(policy, seed=seed)
    obs, mask = env.reset()
    paid = []
    for _ in range(12):
        actions = chooser.act_batch(obs, mask)
        choice = mask[:, :NUM_RANKS].sum(axis=1) > 1
        paid.append(signal.of(env.games.state, np.arange(games), mask, actions)[choice])
        obs, mask, *_ = env.step(actions)
    return np.concatenate(paid)


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.slow
def test_the_advantage_has_mean_zero_under_its_reference(preset):
    for players in range(3, 9):
        paid = leads_of("most_copies", preset, players, games=512, seed=players)
        assert len(paid) > 2000
        error = paid.std() / np.sqrt(len(paid))
        assert abs(paid.mean()) < 4 * error + 1e-9, (preset, players, paid.mean(), error)


def test_the_advantage_tells_a_worse_lead_choice_from_the_reference():
    """The zero-mean test could not pass by paying 0: fewest_copies' leads are worse than most_copies' here."""
    paid = leads_of("fewest_copies", "scarne", 4, games=2048, seed=3)
    assert paid.mean() + 4 * paid.std() / np.sqrt(len(paid)) < 0


def engine_value(deal, lead: int, seat: int, rng) -> float:
    """What ``seat`` makes from here after ``lead``, everyone then leading as most_copies (ties at random), played
    out in the readable engine: an independent check of the kernel's rollouts."""
    deal = copy.deepcopy(deal)
    chips_before = deal.chips[seat]
    deal.apply(lead)
    while not deal.over:
        legal = deal.legal_actions()
        if len(legal) > 1:
            counts = np.array([deal.count(deal.to_act, rank) for rank in legal])
            legal = [rank for rank, count in zip(legal, counts) if count == counts.max()]
        deal.apply(legal[rng.integers(len(legal))])
    if deal.rules.chips:
        return deal.chips[seat] - chips_before
    return 1.0 if deal.winner == seat else -1.0 / (deal.num_players - 1)


@pytest.mark.parametrize("preset", ["scarne", "parlett"])
@pytest.mark.slow
def test_the_rollout_values_agree_with_the_engine(preset):
    env = snipsnap_env.raw_env(num_players=4, rules=preset, reward="lead_advantage", reward_rollouts=256)
    rng, checked, draws_each = np.random.default_rng(5), 0, 128
    for seed in range(40):
        if checked == 8:
            break
        env.reset(seed=seed)
        deal = env.match.deal
        legal = deal.legal_actions()
        if deal.is_lead and len(legal) > 2:
            seat = deal.to_act
            most = max(deal.count(seat, rank) for rank in legal)
            reference = [rank for rank in legal if deal.count(seat, rank) == most]
            lead = min(legal, key=lambda rank: deal.count(seat, rank))
            ranks = [lead] * draws_each + reference * (draws_each // len(reference))
            draws = [engine_value(deal, rank, seat, rng) for rank in ranks]
            taken, ref = np.array(draws[:draws_each]), np.array(draws[draws_each:])
            expected = taken.mean() - ref.mean()
            error = np.sqrt(taken.var() / len(taken) + ref.var() / len(ref))
            env.step(lead)
            paid = env.rewards[f"player_{seat}"]
            # the kernel's own error at 256 rollouts adds about half the engine's at 128
            assert abs(paid - expected) < 4 * 1.25 * error + 1e-9, (seed, paid, expected, error)
            checked += 1
    assert checked == 8


def test_the_env_pays_the_leader_its_advantage_and_nobody_else():
    env = snipsnap_env.env(num_players=5, reward="lead_advantage")
    pick = random_actions(1)
    paid_leads = 0
    for seed in range(30):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            deal = env.unwrapped.match.deal
            real_lead = deal.is_lead and obs["action_mask"][:NUM_RANKS].sum() > 1
            env.step(pick(obs["action_mask"]))
            others = [reward for other, reward in env.unwrapped.rewards.items() if other != agent]
            assert others == [0.0] * len(others)
            if not real_lead:
                assert env.unwrapped.rewards[agent] == 0.0
            paid_leads += real_lead and env.unwrapped.rewards[agent] != 0.0
    assert paid_leads > 100


# ---- seeds, observations, conformance, bad input -------------------------------------------------------------
def test_same_seed_same_rewards_and_the_reward_changes_no_observation():
    signal = aec_rewards("scarne", 4, deals=10, reward="lead_advantage")
    assert signal == aec_rewards("scarne", 4, deals=10, reward="lead_advantage")
    assert any(signal)

    def observations(**kwargs):
        env, pick, seen = snipsnap_env.env(num_players=4, **kwargs), random_actions(4), []
        for seed in range(10):
            env.reset(seed=seed)
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                seen.append(obs["observation"].tobytes())
                env.step(None if term or trunc else pick(obs["action_mask"]))
        return seen

    assert observations() == observations(reward="lead_advantage")


def test_the_training_envs_repeat_their_signal_for_a_seed():
    assert single_seat_digest(4, episodes=20, reward="lead_advantage") == single_seat_digest(
        4, episodes=20, reward="lead_advantage"
    )
    assert vec_digest(4, steps=50, reward="lead_advantage") == vec_digest(4, steps=50, reward="lead_advantage")
    assert vec_digest(4, steps=50, reward="lead_advantage") != vec_digest(4, steps=50)


def test_the_gymnasium_vector_env_is_the_batched_single_seat_env():
    opponents = [agents.make("most_copies", seed=0)]

    def run(**kwargs):
        envs = gymnasium.make_vec(
            "snipsnap/SingleSeat-v0", num_envs=8, vectorization_mode="vector_entry_point", num_players=4,
            opponents=opponents, **kwargs,
        )  # fmt: skip
        obs, _ = envs.reset(seed=3)
        rng, paid, scores = np.random.default_rng(0), [], 0
        for _ in range(100):
            masks = envs.action_masks()
            assert masks.shape == (8, snipsnap_env.NUM_ACTIONS) and masks.any(axis=1).all()
            obs, rewards, terminated, truncated, infos = envs.step(
                np.where(masks, rng.random(masks.shape), -1).argmax(axis=1)
            )
            assert obs.shape == (8, snipsnap_env.OBS_DIM) and not truncated.any()
            paid.append(rewards)
            if terminated.any():
                assert (infos["_deal_score"] == terminated).all()
                scores += 1
        assert scores > 0
        return np.concatenate(paid)

    assert (run(reward="lead_advantage") == run(reward="lead_advantage")).all()
    assert not (run(reward="lead_advantage") == run()).all()


@pytest.mark.parametrize("players", [3, 8])
def test_the_signal_env_passes_pettingzoo_api_test(players):
    api_test(snipsnap_env.env(num_players=players, reward="lead_advantage"), num_cycles=300)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"reward": "advantage"}, "reward got 'advantage'"),
        ({"reward": None}, "reward got None"),
        ({"reward": "lead_advantage", "reward_rollouts": 0}, "reward_rollouts got 0"),
        ({"reward": "lead_advantage", "reward_rollouts": True}, "reward_rollouts got True"),
        ({"reward": "lead_advantage", "reward_rollouts": 2.5}, "reward_rollouts got 2.5"),
    ],
)
def test_bad_reward_options_are_refused_by_name(kwargs, words):
    from snipsnap_env.vec_env import SnipSnapVecEnv

    for make in (snipsnap_env.env, snipsnap_env.SingleSeatEnv, lambda **k: SnipSnapVecEnv(2, 4, **k)):
        with pytest.raises(ValueError, match=words):
            make(**kwargs)
