"""The AEC environment's own promises: rewards, given deals, auto_forced, infos, errors."""

from __future__ import annotations

import numpy as np
import pytest

import snipsnap_env
from snipsnap_env.cards import hands_from_names
from snipsnap_env.engine import PASS, IllegalActionError
from snipsnap_env.events import EventKind
from snipsnap_env.observation import OBS_DIM, SLICES
from snipsnap_env.rules import PRESETS


def play(env, seed: int, policy_rng=None) -> dict:
    """Play to the end with random legal actions; return each agent's summed rewards."""
    rng = policy_rng or np.random.default_rng(seed)
    totals = {agent: 0.0 for agent in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if not (term or trunc):
            assert obs["action_mask"].sum() >= 1
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("num_deals", [1, 3])
def test_rewards_sum_to_each_agents_chip_change(preset, num_deals):
    for seed in range(10):
        env = snipsnap_env.env(num_players=3 + seed % 6, rules=preset, num_deals=num_deals)
        env.reset(seed=seed)
        totals = play(env, seed)
        match = env.unwrapped.match
        for seat, agent in enumerate(env.possible_agents):
            if match.rules.chips:
                assert totals[agent] == match.chips[seat] - match.rules.starting_chips
            else:
                assert totals[agent] == pytest.approx(match.points[seat])
        assert sum(totals.values()) == pytest.approx(0.0)


def test_chips_off_rewards_are_plus_one_and_minus_a_share():
    env = snipsnap_env.env(num_players=5, rules="kids")
    env.reset(seed=4)
    totals = play(env, 4)
    winner = env.unwrapped.match.deal.winner
    for seat, agent in enumerate(env.possible_agents):
        assert totals[agent] == pytest.approx(1.0 if seat == winner else -0.25)


def test_given_hands_and_dealer_are_played():
    hands = hands_from_names(3, {0: "AC AS 2C", 1: "AD 3C", 2: "AH"}, rest=2)
    env = snipsnap_env.env(num_players=3)
    env.reset(seed=0, options={"hands": hands, "dealer": 2})
    assert env.agent_selection == "player_0"
    obs = env.observe("player_0")
    assert obs["action_mask"].tolist() == [1, 1] + [0] * 12
    assert obs["observation"][SLICES["hand"]].tolist() == [0.5, 0.25] + [0.0] * 11
    for action in [0, 0, 0, 0, 1]:
        env.step(action)
    assert all(env.terminations.values())
    assert env.unwrapped.match.chips == [152, 97, 51]
    assert [env.infos[agent]["chips"] for agent in env.agents] == [152, 97, 51]
    assert {info["deals_played"] for info in env.infos.values()} == {1}
    assert env.unwrapped.last_events[-1].kind is EventKind.SETTLE


def test_the_events_of_the_last_step_are_kept_and_in_infos_on_request():
    hands = hands_from_names(3, {0: "AC AS 2C", 1: "AD 3C", 2: "AH"}, rest=2)
    env = snipsnap_env.env(num_players=3, info_events=True)
    env.reset(options={"hands": hands, "dealer": 2})
    env.step(0)
    env.step(0)
    expected = ["player_1 plays AD: Snip!", "player_0 is snipped: pays 1 chip into the pot"]
    assert [str(e) for e in env.unwrapped.last_events] == expected
    assert [str(e) for e in env.infos["player_0"]["events"]] == expected
    _, reward, *_ = env.last()  # player_2's turn; it paid nothing yet
    assert reward == 0
    assert env.rewards["player_0"] == -1


@pytest.mark.parametrize("preset", ["scarne", "pairs", "bicycle"])
def test_auto_forced_shows_agents_only_real_choices(preset):
    for seed in range(10):
        env = snipsnap_env.env(num_players=6, rules=preset, auto_forced=True)
        env.reset(seed=seed)
        decisions = 0
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            assert obs["action_mask"].sum() >= 2 and obs["observation"][SLICES["is_lead"]][0] == 1
            decisions += 1
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        assert decisions >= 1


def test_auto_forced_gives_the_same_chips_as_playing_forced_turns_by_hand():
    for seed in range(10):
        choose = lambda mask: int(np.flatnonzero(mask)[-1])  # noqa: E731 - the same policy for both
        results = []
        for auto in (False, True):
            env = snipsnap_env.env(num_players=4, rules="parlett", auto_forced=auto)
            env.reset(seed=seed)
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                env.step(None if term or trunc else choose(obs["action_mask"]))
            results.append(env.unwrapped.match.chips)
        assert results[0] == results[1]


def test_auto_forced_never_starts_a_match_that_is_already_over():
    """On 4 ranks at 4 players (four cards each) some deals hold no real choice: auto_forced deals the next one, so
    after reset an agent acts (TorchRL's and Tianshou's adapters step the selected agent, dead or not)."""
    env = snipsnap_env.env(num_players=4, rules="scarne:ranks=4", auto_forced=True)
    plain = snipsnap_env.env(num_players=4, rules="scarne:ranks=4", auto_forced=True)
    skipped = 0
    for seed in range(300):
        env.reset(seed=seed)
        assert env.agents and not any(env.terminations.values())
        assert env.observe(env.agent_selection)["action_mask"].sum() >= 2
        plain.unwrapped.match.start(np.random.default_rng(seed))  # the seed's first deal, played out as it falls
        plain.unwrapped._play_forced()
        skipped += plain.unwrapped.match.over
    assert skipped > 0  # the deck makes such deals: the test sees the case it is about


def test_auto_forced_can_play_a_whole_given_deal_at_reset():
    hands = hands_from_names(3, {0: "AC", 1: "2C"}, rest=2)  # seat 0 leads its only card and is out
    env = snipsnap_env.env(num_players=3, auto_forced=True)
    env.reset(options={"hands": hands, "dealer": 2})
    assert all(env.terminations.values())
    totals = {}
    for agent in env.agent_iter():
        totals[agent] = env.last()[1]
        env.step(None)
    assert totals == {"player_0": 51.0, "player_1": -1.0, "player_2": -50.0}


def test_ante_reaches_agents_as_reward():
    env = snipsnap_env.env(num_players=3, rules="bicycle")
    env.reset(seed=1)
    first = env.agent_selection
    env.step(int(np.flatnonzero(env.observe(first)["action_mask"])[0]))
    assert all(r <= -1 for r in env.rewards.values())  # every seat's ante arrives with the first step


def test_observation_has_a_fixed_size_and_fits_its_space():
    for n in range(3, 9):
        env = snipsnap_env.env(num_players=n)
        env.reset(seed=n)
        for agent in env.possible_agents:
            obs = env.observe(agent)
            assert obs["observation"].shape == (OBS_DIM,) and obs["observation"].dtype == np.float32
            assert env.observation_space(agent).contains(obs)
        seat_present = env.observe("player_0")["observation"][SLICES["seat_present"]]
        assert seat_present.tolist() == [1.0] * n + [0.0] * (8 - n)


def test_observation_is_relative_to_the_observer():
    env = snipsnap_env.env(num_players=6)
    env.reset(seed=0, options={"dealer": 3})  # seat 4 leads
    for seat in range(6):
        obs = env.observe(f"player_{seat}")["observation"]
        to_act = obs[SLICES["to_act"]]
        assert to_act[(4 - seat) % 6] == 1 and to_act.sum() == 1


# ---- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"num_players": 2}, "num_players got 2; allowed: an integer from 3 to 8"),
        ({"num_players": 9}, "num_players got 9"),
        ({"num_players": "6"}, "num_players got '6'"),
        ({"rules": "snap"}, "unknown rules preset 'snap'; known presets: scarne"),
        ({"rules": 3}, "rules must be a preset name or a Rules value"),
        ({"num_deals": 0}, "num_deals got 0"),
        ({"render_mode": "rgb"}, "render_mode got 'rgb'; allowed: None, 'human', 'ansi', 'rgb_array'"),
        ({"viewer": 6}, "viewer got 6; allowed: None or a seat from 0 to 5"),
        ({"viewer": True}, "viewer got True"),
    ],
)
def test_bad_construction_is_a_clear_error(kwargs, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        snipsnap_env.env(**kwargs)


def test_bad_rules_options_are_clear_errors():
    with pytest.raises(ValueError, match="unknown rules option 'antes'; known options: chips"):
        snipsnap_env.make_rules("scarne", antes=1)
    with pytest.raises(
        ValueError, match="rules option 'pass_fee' got 'to_me'; allowed: 'none', 'to_pot', 'to_previous'"
    ):
        snipsnap_env.Rules(pass_fee="to_me")
    with pytest.raises(ValueError, match="rules option 'ante' got 2; allowed: 0, 1"):
        snipsnap_env.Rules(ante=2)
    with pytest.raises(ValueError, match="rules option 'chips' got 1"):
        snipsnap_env.Rules(chips=1)
    with pytest.raises(ValueError, match="rules option 'ranks' got a number of 5,000 digits"):
        snipsnap_env.make_rules("scarne:ranks=" + "1" * 5000)  # not int()'s own message, which names no option


def test_one_table_has_one_spelling_so_one_key_and_one_folder():
    from snipsnap_env.rules import canonical_spec
    from train.runner.results_folder import default_out

    spellings = ["scarne:ranks=3", "scarne:ranks=03", "scarne:ranks=+3", "scarne: ranks = 3 "]
    assert {canonical_spec(s) for s in spellings} == {"scarne:ranks=3"}
    assert canonical_spec("scarne:ranks=13") == "scarne"  # the preset's own value: the preset
    assert canonical_spec("scarne:ranks=4,multi_play=TRUE") == canonical_spec("scarne:multi_play=true,ranks=4")
    assert snipsnap_env.make_rules(canonical_spec("scarne:ranks=4,multi_play=true")) == snipsnap_env.make_rules(
        "scarne:ranks=4,multi_play=true"
    )
    from train.evaluate import JOB

    folders = {default_out("evaluate", vars(JOB.parser().parse_args(["--rules", s]))) for s in spellings}
    assert len(folders) == 1, folders


@pytest.mark.parametrize(
    "hands, words",
    [
        ([list(range(26)), list(range(26, 52))], "hands must be a list of 3 hands"),
        ([list(range(20)), list(range(20, 40)), list(range(40, 51)) + [0]], r"repeated: \[0\], missing: \[51\]"),
        ([list(range(20)), list(range(20, 40)), list(range(40, 51)) + [52]], r"not in the deck: \[52\]"),
        ([list(range(52)), [], []], r"hands\[1\] is empty"),
        ([list(range(50)), ["x"], [51]], r"hands\[1\] holds \['x'\]: card ids are whole numbers"),
        ([list(range(50)), [50.0], [51]], r"hands\[1\] holds \[50.0\]: card ids are whole numbers"),
        ([list(range(50)), [True], [51]], r"not floats or bools"),
    ],
)
def test_bad_hands_option_is_a_clear_error(hands, words):
    env = snipsnap_env.env(num_players=3)
    with pytest.raises(ValueError, match=words):
        env.reset(options={"hands": hands})


@pytest.mark.parametrize("dealer", [-1, 3, 1.5, "0"])
def test_dealer_outside_the_table_is_a_clear_error(dealer):
    env = snipsnap_env.env(num_players=3)
    with pytest.raises(ValueError, match=f"dealer got {dealer!r}; allowed: a seat from 0 to 2"):
        env.reset(options={"dealer": dealer})


def test_raw_env_raises_on_an_illegal_action():
    env = snipsnap_env.raw_env(num_players=3)
    env.reset(options={"hands": hands_from_names(3, {0: "AC 2C", 1: "3C"}, rest=2), "dealer": 2})
    with pytest.raises(
        IllegalActionError, match=r"player_0 cannot take action 13 \(pass\) now; legal: 0 \(play A\), 1"
    ):
        env.step(PASS)
    with pytest.raises(IllegalActionError, match="cannot take action 5"):
        env.step(5)


def test_wrapped_env_ends_the_game_on_an_illegal_action(caplog):
    env = snipsnap_env.env(num_players=3)
    env.reset(options={"hands": hands_from_names(3, {0: "AC 2C", 1: "3C"}, rest=2), "dealer": 2})
    env.step(PASS)
    assert "Illegal move" in caplog.text  # PettingZoo logs it
    assert all(env.terminations.values())
    assert env.rewards["player_0"] == -1


@pytest.mark.parametrize("num_players", [3, 4, 8])
def test_infos_are_numbers_with_the_same_keys_every_step(num_players):
    """What TorchRL and Tianshou need: they turn every info value into a tensor of a fixed shape."""
    env = snipsnap_env.env(num_players=num_players)
    env.reset(seed=num_players)
    keys = None
    for agent in env.agent_iter():
        for info in env.infos.values():
            assert all(type(value) is int for value in info.values()), info
            keys = keys or set(info)
            assert set(info) == keys == {"chips", "deals_played"}
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(np.flatnonzero(obs["action_mask"])[0]))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_infos_follow_the_match_at_every_step(preset):
    """The infos are rebuilt only when chips move or a deal ends: at every step they still say the match's
    chips and deals, for every preset (chips off too) over matches of several deals."""
    for seed in range(6):
        env = snipsnap_env.env(num_players=3 + seed, rules=preset, num_deals=3)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        match = env.unwrapped.match
        for agent in env.agent_iter():
            for live, info in env.infos.items():
                seat = env.unwrapped.agent_name_mapping[live]
                assert info == {"chips": match.chips[seat], "deals_played": match.deals_played}
            obs, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_the_action_mask_is_in_infos_on_request():
    """AgileRL's convention: the mask in the info, beside the observation's."""
    env = snipsnap_env.env(num_players=4, info_action_mask=True)
    env.reset(seed=3)
    for agent in env.agents:
        np.testing.assert_array_equal(env.infos[agent]["action_mask"], env.observe(agent)["action_mask"])
    with pytest.raises(ValueError, match="info_action_mask got 1"):
        snipsnap_env.env(info_action_mask=1)
