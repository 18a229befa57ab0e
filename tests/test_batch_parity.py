"""Parity: the compiled kernel (through BatchEnv, play_deals and rollouts) and the reference engine, given
the same hands, dealers and lead choices, produce the same chips, winners, turn counts and observations —
over every preset and random combinations of every rules option, at every table size, from the deal's
start, from mid-deal positions, and from the kernel's own seeded dealing."""

from __future__ import annotations

import copy
import dataclasses

import kernel_mirror as mirror
import numba
import numpy as np
import pytest

import snipsnap_env
from snipsnap_env import batch_kernels, kernel
from snipsnap_env.batch import BatchEnv, Games, owners_from_hands, play_deals, play_given_deals
from snipsnap_env.cards import deal_pack, shuffled_pack
from snipsnap_env.engine import NUM_ACTIONS, Deal, Match
from snipsnap_env.observation import OBS_DIM, encode, table_template
from snipsnap_env.rules import CHOICES, PRESETS, Rules, make_rules

GAMES = 40
MAX_DECISIONS = 64
TABLES = range(3, 9)


def random_rules(rng: np.random.Generator) -> Rules:
    """A random combination of every rules option."""
    return Rules(**{name: allowed[rng.integers(len(allowed))] for name, allowed in CHOICES.items()})


def rule_sets(num_players: int) -> list[Rules]:
    """Every preset and six random option combinations (a different draw for each table size)."""
    rng = np.random.default_rng(1000 + num_players)
    return list(PRESETS.values()) + [random_rules(rng) for _ in range(6)]


def random_deals(num_players: int, seed: int, games: int = GAMES, ranks: int = 13):
    rng = np.random.default_rng(seed)
    dealers = rng.integers(num_players, size=games)
    hands = [deal_pack(shuffled_pack(rng, ranks), num_players, int(d)) for d in dealers]
    choices = rng.random((games, MAX_DECISIONS))  # the i-th real choice of game b picks by choices[b, i]
    return hands, dealers, choices


def pick(legal: list[int], u: float) -> int:
    return legal[int(u * len(legal))]


def play_single(rules, num_players, hands, dealer, choices):
    match = Match(rules, num_players)
    match.start(np.random.default_rng(0), hands=hands, dealer=int(dealer))
    decisions, observations = 0, []
    while not match.over:
        legal = match.deal.legal_actions()
        if len(legal) == 1:
            match.apply(legal[0])
            continue
        observations.append((encode(match, match.deal.to_act), match.deal.legal_mask()))
        match.apply(pick(legal, choices[decisions]))
        decisions += 1
    start = rules.starting_chips if rules.chips else 0
    return np.array(match.score, float) - start, match.deal.winner, match.deal.turns, observations


def play_batch(rules, num_players, hands, dealers, choices):
    games = len(hands)
    env = BatchEnv(games, num_players, rules=rules)
    obs, mask = env.reset(owners=np.stack([owners_from_hands(h) for h in hands]), dealers=np.asarray(dealers))
    finished = np.zeros(games, bool)
    decisions = np.zeros(games, int)
    scores, winners, turns = np.zeros((games, num_players)), np.zeros(games, int), np.zeros(games, int)
    observations = [[] for _ in range(games)]
    while not finished.all():
        actions = np.zeros(games, np.int64)
        for b in np.flatnonzero(~finished):
            if mask[b].sum() > 1:  # a real choice (a small deck's deal can end before any: the pass is its no-op)
                observations[b].append((obs[b].copy(), mask[b].copy()))
            actions[b] = pick(list(np.flatnonzero(mask[b])), choices[b, decisions[b]])
            decisions[b] += 1
        obs, mask, _, dones, infos = env.step(actions, active=~finished)
        for b in np.flatnonzero(dones & ~finished):
            scores[b], winners[b], turns[b] = infos["deal_score"][b], infos["winner"][b], infos["turns"][b]
        finished |= dones
    return scores, winners, turns, observations


def test_every_rules_option_is_read_by_the_kernel_or_named_as_not():
    fields = {field.name for field in dataclasses.fields(Rules)}
    assert fields == set(kernel.RULE_CODES) | set(kernel.NOT_IN_KERNEL)
    # the options an observation's rules block encodes; not the balance, not the research deck (its missing
    # ranks show in the played column)
    assert fields - {"starting_chips", "ranks"} == set(CHOICES)


@pytest.mark.parametrize("num_players", TABLES)
@pytest.mark.slow
def test_batch_matches_engine_over_random_rule_combinations(num_players):
    for index, rules in enumerate(rule_sets(num_players)):
        hands, dealers, choices = random_deals(num_players, seed=num_players * 1000 + index)
        assert_same_play(rules, num_players, hands, dealers, choices)


def assert_same_play(rules, num_players, hands, dealers, choices):
    """The batch and the engine play the same deals alike: results, and every real choice's observation and mask."""
    scores, winners, turns, observations = play_batch(rules, num_players, hands, dealers, choices)
    for b in range(len(hands)):
        score, winner, turn_count, single = play_single(rules, num_players, hands[b], dealers[b], choices[b])
        where = f"{rules}, game {b}"
        assert (winners[b], turns[b]) == (winner, turn_count), where
        np.testing.assert_allclose(scores[b], score, err_msg=where)
        assert len(observations[b]) == len(single), where
        for (batch_obs, batch_mask), (single_obs, single_mask) in zip(observations[b], single):
            np.testing.assert_allclose(batch_obs, single_obs, rtol=1e-6, atol=1e-7, err_msg=where)
            np.testing.assert_array_equal(batch_mask, single_mask, err_msg=where)


@pytest.mark.parametrize("num_players", TABLES)
def test_batch_matches_engine_on_small_decks(num_players):
    """The research deck (``Rules.ranks``): every deck that gives each seat a card, under random rule options."""
    rng = np.random.default_rng(num_players)
    for ranks in range(-(-num_players // 4), 13):
        rules = random_rules(rng)
        rules = rules.replace(ranks=ranks, opening=rules.opening if ranks > 5 else "any")
        hands, dealers, choices = random_deals(num_players, seed=ranks, games=8, ranks=ranks)
        assert_same_play(rules, num_players, hands, dealers, choices)


def observe_in_kernel(match: Match, seat: int):
    start = match.rules.starting_chips if match.rules.chips else 0
    games = Games.from_deals([match.deal])
    games.deal_score[0] = np.array(match.score, float) - start
    obs, mask = np.zeros((1, OBS_DIM), np.float32), np.zeros((1, NUM_ACTIONS), np.int8)
    template = table_template(match.rules, match.num_players)
    batch_kernels.observe_games(1, np.array([seat]), template, kernel.rule_codes(match.rules), games.state, obs, mask)
    return obs[0], mask[0]


@pytest.mark.parametrize("num_players", TABLES)
@pytest.mark.slow
def test_kernel_observes_every_position_like_the_encoder(num_players):
    """Every turn of random games — leads, follows mid-set, passes, the end — for every seat."""
    for index, rules in enumerate(rule_sets(num_players)):
        hands, dealers, choices = random_deals(num_players, seed=7 + index, games=2)
        for b in range(2):
            match = Match(rules, num_players)
            match.start(np.random.default_rng(0), hands=hands[b], dealer=int(dealers[b]))
            step = 0
            while True:
                for seat in range(num_players):
                    obs, mask = observe_in_kernel(match, seat)
                    np.testing.assert_allclose(obs, encode(match, seat), rtol=1e-6, atol=1e-7, err_msg=str(rules))
                    acting = seat == match.deal.to_act and not match.deal.over
                    expected = match.deal.legal_mask() if acting else np.zeros(NUM_ACTIONS, np.int8)
                    np.testing.assert_array_equal(mask, expected, err_msg=str(rules))
                if match.over:
                    break
                match.apply(pick(match.deal.legal_actions(), choices[b, step % MAX_DECISIONS]))
                step += 1


@pytest.mark.parametrize("num_players", TABLES)
@pytest.mark.parametrize("rules_name", sorted(PRESETS))
def test_rollouts_from_mid_deal_positions_match_engine(rules_name, num_players):
    """Stop random engine deals at a random turn (often mid-set, after passes), play the rest in the kernel
    with scripted policies, and in the engine with the same draws: the same chips and winner."""
    rules = make_rules(rules_name)
    rng = np.random.default_rng(num_players * 31 + len(rules_name))
    hands, dealers, choices = random_deals(num_players, seed=int(rng.integers(2**31)), games=30)
    positions = []
    for b in range(30):
        deal = Deal(rules, hands[b], int(dealers[b]), [0] * num_players)
        stop = int(rng.integers(1, 40))
        for turn in range(stop):
            if deal.over:
                break
            deal.apply(pick(deal.legal_actions(), choices[b, turn % MAX_DECISIONS]))
        if not deal.over:
            positions.append(deal)
    policies = np.array([[kernel.POLICIES[(b + s) % 4] for s in range(num_players)] for b in range(len(positions))])
    games = Games.from_deals(positions, seed=int(rng.integers(2**31)))
    streams = [[mirror.Stream(int(x)) for x in row] for row in games.rng]
    batch_kernels.play_out_games(
        len(policies),
        kernel.policy_codes(policies.ravel().tolist()).reshape(policies.shape),
        kernel.rule_codes(rules),
        games.state,
    )
    assert any(not deal.is_lead for deal in positions)  # mid-set positions are covered
    for b, deal in enumerate(positions):
        before = list(deal.chips)
        mirror.play_out(deal, list(policies[b]), streams[b])
        change = np.array(deal.chips, float) - before
        if not rules.chips:
            change = np.full(num_players, -1.0 / (num_players - 1))
            change[deal.winner] = 1.0
        np.testing.assert_allclose(games.deal_score[b], change, err_msg=f"{rules_name}, position {b}")
        assert games.public[b, kernel.WINNER] == deal.winner


@pytest.mark.parametrize("rules_name", sorted(PRESETS))
def test_seeded_dealing_matches_engine(rules_name):
    """BatchEnv's own dealing (dealer, shuffle, first leader, ante) against the engine fed the same draws."""
    num_players = 3 + len(rules_name) % 6
    rules = make_rules(rules_name)
    env = BatchEnv(64, num_players, rules=rules, seed=len(rules_name))
    streams = [mirror.Stream(int(x)) for x in env.games.rng[:, 0]]
    obs, mask = env.reset()
    for b in range(64):
        hands, dealer = mirror.deal_from_stream(streams[b], num_players)
        match = Match(rules, num_players)
        match.start(np.random.default_rng(0), hands=hands, dealer=dealer)
        while len(match.deal.legal_actions()) == 1 and not match.over:
            match.apply(match.deal.legal_actions()[0])
        assert env.dealer[b] == dealer
        if match.over:  # a deal over before any real choice: the env has already dealt the next one
            continue
        assert env.to_act[b] == match.deal.to_act, f"game {b}"
        np.testing.assert_allclose(obs[b], encode(match, match.deal.to_act), rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(mask[b], match.deal.legal_mask())


@pytest.mark.parametrize("rules_name", ["scarne", "parlett", "pairs", "earl_of_coventry", "kids"])
@pytest.mark.slow
def test_play_deals_matches_the_aec_env_deal_for_deal(rules_name):
    num_players = 3 + len(rules_name) % 6
    policies = [kernel.POLICIES[s % 4] for s in range(num_players)]
    chips, dealers, turns = play_deals(60, num_players, rules_name, policies, seed=5, with_details=True)
    stream = kernel.seed_streams(5, 1)[0]
    rules = make_rules(rules_name)
    for d in range(60):
        streams = mirror.deal_streams(stream, d, num_players)
        hands, dealer = mirror.deal_from_stream(streams[0], num_players)
        assert dealers[d] == dealer
        env = snipsnap_env.env(num_players=num_players, rules=rules_name)
        env.reset(options={"hands": hands, "dealer": dealer})
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            totals[agent] += reward
            if term or trunc:
                env.step(None)
                continue
            deal = env.unwrapped.match.deal
            legal = deal.legal_actions()
            env.step(
                legal[0]
                if len(legal) == 1
                else mirror.choose_lead(policies[deal.to_act], deal, streams[1 + deal.to_act])
            )
        np.testing.assert_allclose(chips[d], list(totals.values()), err_msg=f"deal {d}")
        assert turns[d] == env.unwrapped.match.deal.turns
    if rules.chips:
        assert np.allclose(chips.sum(axis=1), 0)


def test_play_given_deals_pairs_seat_streams():
    """Seat streams are the seat's own: changing one seat's policy leaves another random seat's draws alone,
    and the same deals replay exactly."""
    hands, dealers, _ = random_deals(6, seed=4, games=200)
    owners = np.stack([owners_from_hands(h) for h in hands])
    a = play_given_deals(owners, dealers, [["random"] * 6] * 200, "scarne", seed=1)
    b = play_given_deals(owners, dealers, [["random"] * 6] * 200, "scarne", seed=1)
    np.testing.assert_array_equal(a, b)
    assert np.allclose(a.sum(axis=1), 0)


def test_results_do_not_depend_on_threads():
    policies = ["random", "random_card", "most_copies", "fewest_copies", "random"]
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = play_deals(3000, 5, "bicycle", policies, seed=3)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(one, play_deals(3000, 5, "bicycle", policies, seed=3))


def test_rewards_add_up_to_each_deals_score():
    env = BatchEnv(256, 5, rules="bicycle", seed=3)
    obs, mask = env.reset()
    policy_rng = np.random.default_rng(3)
    paid = np.zeros((256, 5))
    finished_deals = 0
    for _ in range(200):
        actions = np.where(mask, policy_rng.random(mask.shape), -1).argmax(axis=1)
        obs, mask, rewards, dones, infos = env.step(actions)
        paid += rewards
        for b in np.flatnonzero(dones):
            np.testing.assert_allclose(paid[b], infos["deal_score"][b])
            assert infos["deal_score"][b].sum() == pytest.approx(0.0)
            paid[b] = 0.0
            finished_deals += 1
        assert mask.sum(axis=1).min() >= 2  # every game waits at a real choice
    assert finished_deals > 500


def test_same_seed_same_games_and_reseeding():
    def trace(env):
        obs, mask = env.reset()
        out = [obs.copy()]
        for _ in range(30):
            obs, mask, rewards, dones, _ = env.step(mask[:, :13].argmax(axis=1))
            out += [obs.copy(), rewards.copy(), dones.copy()]
        return out

    first, second = trace(BatchEnv(64, 6, seed=9)), trace(BatchEnv(64, 6, seed=9))
    other = BatchEnv(64, 6, seed=1)
    other.seed(9)
    for x, y, z in zip(first, second, trace(other)):
        assert np.array_equal(x, y) and np.array_equal(x, z)
    assert not np.array_equal(first[0], trace(BatchEnv(64, 6, seed=10))[0])


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="num_games got 0"):
        BatchEnv(0, 6)
    with pytest.raises(ValueError, match="num_players got 9"):
        BatchEnv(4, 9)
    env = BatchEnv(4, 6, seed=0)
    obs, mask = env.reset()
    with pytest.raises(ValueError, match="actions must be integers of shape"):
        env.step(np.zeros(3, int))
    with pytest.raises(ValueError, match="actions must be integers"):
        env.step(mask[:, :13].argmax(axis=1) + 0.7)
    with pytest.raises(ValueError, match="active must be a bool mask"):
        env.step(mask[:, :13].argmax(axis=1), active=[0, 1])
    with pytest.raises(ValueError, match="active must be a bool mask"):
        env.step(mask[:, :13].argmax(axis=1), active=np.ones(3, bool))
    illegal = np.where(mask[:, :13] == 0, 1, 0).argmax(axis=1)  # a rank the leader does not hold
    with pytest.raises(ValueError, match="illegal actions .* in games"):
        env.step(illegal)
    with pytest.raises(ValueError, match="owners must have shape"):
        env.reset(owners=np.zeros((4, 51), int), dealers=np.zeros(4, int))
    owners = np.tile(np.arange(52) % 6, (4, 1))
    for dealers, message in [(np.zeros(3, int), "dealers must be integers of shape"), (np.full(4, 6), "seats from 0")]:
        with pytest.raises(ValueError, match=message):
            env.reset(owners=owners, dealers=dealers)
    with pytest.raises(ValueError, match="together"):
        env.reset(owners=owners)
    with pytest.raises(ValueError, match="not played by the kernel"):
        play_deals(10, 3, "scarne", ["random", "control", "random"])
    with pytest.raises(ValueError, match="one policy per seat"):
        play_deals(10, 3, "scarne", ["random"])


def test_engine_copy_is_independent():
    deal = Deal(make_rules("scarne"), deal_pack(list(range(52)), 4, 0), 0, [0] * 4)
    twin = copy.deepcopy(deal)
    deal.apply(deal.legal_actions()[0])
    assert twin.turns == 0 and deal.turns == 1
