"""The OpenSpiel game (snipsnap_env.openspiel_game) against the PettingZoo env: the same deals played with
the same actions give the same turns, legal actions, events and chips; OpenSpiel's own checks pass; a
resampled world is one the player cannot tell from the real one."""

from __future__ import annotations

import json

import numpy as np
import pytest

import snipsnap_env
from snipsnap_env.cards import deal_pack
from snipsnap_env.engine import IllegalActionError

pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is not installed: pip install -e '.[recipes]'")
from snipsnap_env import openspiel_game  # noqa: E402  (registers python_snipsnap)

PRESETS = ["scarne", "kids", "wiswell", "parlett", "bicycle", "pairs", "earl_of_coventry"]


def dealt_state(game, pack, dealer):
    state = game.new_initial_state()
    state.apply_action(dealer)
    for card in pack:
        state.apply_action(int(card))
    return state


@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7, 8])
@pytest.mark.slow
def test_the_game_plays_every_deal_as_the_env_does(num_players):
    rng = np.random.default_rng(num_players)
    for deal in range(340):  # 2,040 deals over the table sizes, every preset
        preset = PRESETS[deal % len(PRESETS)]
        game = pyspiel.load_game("python_snipsnap", {"players": num_players, "rules": preset})
        pack, dealer = rng.permutation(52), int(rng.integers(num_players))
        state = dealt_state(game, pack, dealer)
        env = snipsnap_env.env(num_players=num_players, rules=preset)
        env.reset(options={"hands": deal_pack(pack.tolist(), num_players, dealer), "dealer": dealer})
        chips = {agent: 0.0 for agent in env.agents}
        while not state.is_terminal():
            agent = env.agent_selection
            assert state.current_player() == env.unwrapped.agent_name_mapping[agent]
            legal = state.legal_actions()
            assert legal == np.flatnonzero(env.observe(agent)["action_mask"]).tolist()
            np.testing.assert_array_equal(state.observation_tensor(), env.observe(agent)["observation"])
            action = int(rng.choice(legal))
            state.apply_action(action)
            env.step(action)
            for name, reward in env.rewards.items():
                chips[name] += reward
        assert all(env.terminations.values()), "the env goes on where the game ended"
        assert [str(e) for e in state.match.deal.events] == [str(e) for e in env.unwrapped.match.deal.events]
        assert state.returns() == pytest.approx(list(chips.values()))
        assert sum(state.returns()) == pytest.approx(0.0)


@pytest.mark.parametrize("num_players", [3, 5, 8])
@pytest.mark.slow
def test_openspiels_own_random_simulation_checks_pass(num_players):
    game = pyspiel.load_game("python_snipsnap", {"players": num_players, "rules": "parlett"})
    pyspiel.random_sim_test(game, num_sims=10, serialize=False, verbose=False)


def test_a_resampled_world_keeps_what_the_player_knows_and_changes_what_it_does_not():
    game = pyspiel.load_game("python_snipsnap", {"players": 5})
    rng = np.random.default_rng(0)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    changed = cases = 0
    for deal in range(40):
        state = dealt_state(game, rng.permutation(52), int(rng.integers(5)))
        for _ in range(int(rng.integers(0, 120))):
            if state.is_terminal():
                break
            state.apply_action(int(rng.choice(state.legal_actions())))
        if state.is_terminal():
            continue
        player, cases = state.current_player(), cases + 1
        world = state.resample_from_infostate(player, sampler)
        assert world.information_state_string(player) == state.information_state_string(player)
        assert world.observation_tensor(player) == state.observation_tensor(player)
        assert world.legal_actions() == state.legal_actions() and world.match.chips == state.match.chips
        deal_now, world_deal = state.match.deal, world.match.deal
        assert world_deal.hand_size == deal_now.hand_size and world_deal.played == deal_now.played
        for event in (e for e in world_deal.events if e.kind.value == "pass"):  # a pass: none of the open rank
            led = [e for e in world_deal.events[: world_deal.events.index(event)] if e.kind.value == "lead"][-1]
            assert world_deal.count(event.seat, led.card % 13) == 0
        changed += any(sorted(world_deal.hand(s)) != sorted(deal_now.hand(s)) for s in range(5) if s != player)
    assert changed >= 0.8 * cases and cases >= 15


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(Exception, match="unknown rules preset 'scrane'"):
        pyspiel.load_game("python_snipsnap", {"players": 4, "rules": "scrane"})
    with pytest.raises(Exception, match="num_players"):
        pyspiel.load_game("python_snipsnap", {"players": 9})
    assert openspiel_game.NAME == "python_snipsnap"


def test_openspiels_ismcts_bot_plays_paired_deals_in_the_measuring_job(tmp_path):
    from train import ismcts

    records = ismcts.main(
        ["--players", "3", "--deals", "4", "--simulations", "4", "--candidates", "ismcts", "ismcts_mc", "pimc:8"]
        + ["--out", str(tmp_path / "out"), "--no-progress"]
    )
    assert [r["name"] for r in records] == ["most_copies", "ismcts", "ismcts_mc", "pimc:8"]
    assert all(r["deals"] == 4 for r in records)
    assert records[0]["diff_vs_reference"] == 0
    assert "| 3 | ismcts |" in (tmp_path / "out" / "ismcts.md").read_text()
    timings = json.loads((tmp_path / "out" / "provenance.json").read_text())["timings"]  # wall time: kept there
    assert all(timings[f"{name}, 3 players: seconds per choice"] >= 0 for name in ("ismcts", "ismcts_mc", "pimc:8"))


def public(state) -> list[tuple]:
    """What everyone saw of the deal: each event's kind, seat, rank (suits are the engine's choice, and hidden),
    position and chips."""
    return [
        (e.kind, e.seat, None if e.card is None else e.card % 13, e.position, e.amount, e.to_seat)
        for e in state.match.deal.events
    ]


@pytest.mark.parametrize("preset", ["scarne", "pairs", "earl_of_coventry", "parlett"])
@pytest.mark.slow
def test_every_resampled_world_is_one_the_player_cannot_tell_from_the_real_one(preset):
    """Under every preset: with ``pairs`` a player who plays a rank holds no more of it, with ``earl_of_coventry``
    the seats passed over for the opening 6 hold none. A world that breaks either replays differently (or not at
    all); here every world replays the same history and shows the player the same observation."""
    rng = np.random.default_rng(1)
    worlds = 0
    for num_players in (3, 4, 6):
        game = pyspiel.load_game("python_snipsnap", {"players": num_players, "rules": preset})
        sampler = np.random.RandomState(2).uniform
        for _ in range(40):
            state = dealt_state(game, rng.permutation(52), int(rng.integers(num_players)))
            for _ in range(int(rng.integers(0, 30))):  # early: most of the cards are still hidden
                if state.is_terminal():
                    break
                state.apply_action(int(rng.choice(state.legal_actions())))
            if state.is_terminal():
                continue
            player = state.current_player()
            for _ in range(8):
                world = state.resample_from_infostate(player, sampler)
                assert world.observation_tensor(player) == state.observation_tensor(player)
                assert public(world) == public(state)
                worlds += 1
    assert worlds >= 300


def test_chance_outcomes_that_are_not_offered_are_refused():
    game = pyspiel.load_game("python_snipsnap", {"players": 4})
    state = game.new_initial_state()
    with pytest.raises(Exception, match="dealer 7"):
        state.apply_action(7)
    with pytest.raises(IllegalActionError, match="chance outcome -1 is negative"):  # not OpenSpiel's SpielError
        state.apply_action(-1)
    state.apply_action(1)
    state.apply_action(10)
    for card in (60, 10):
        with pytest.raises(Exception, match=f"card {card}"):
            state.apply_action(card)


def test_the_measuring_job_knows_its_bots_by_their_names_only(tmp_path, capsys):
    from train import ismcts

    with pytest.raises(SystemExit) as refused:
        ismcts.main(["--players", "3", "--candidates", "ismcts_foo", "--out", str(tmp_path / "out")])
    assert refused.value.code == 2 and "ismcts_foo" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
