"""PettingZoo's own conformance tests for every preset, 3..8 players, plain and auto_forced."""

from __future__ import annotations

import functools
import importlib

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import snipsnap_env
from snipsnap_env.observation import ENV_NAME
from snipsnap_env.rules import PRESETS

PLAYER_COUNTS = range(3, 9)
# PettingZoo's state checks, as a module (pettingzoo.test exports a function of the same name; importing its
# test_* functions here would make pytest collect them as ours)
pettingzoo_state = importlib.import_module("pettingzoo.test.state_test")


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("auto_forced", [False, True])
def test_api(preset, num_players, auto_forced):
    api_test(snipsnap_env.env(num_players=num_players, rules=preset, auto_forced=auto_forced), num_cycles=300)


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_seed(preset, num_players):
    seed_test(functools.partial(snipsnap_env.env, num_players=num_players, rules=preset, num_deals=2), num_cycles=300)


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_render(preset, num_players, capsys):
    render_test(
        functools.partial(snipsnap_env.env, num_players=num_players, rules=preset),
        custom_tests={
            "ansi": lambda text: "Snip Snap Snorem" in text and "player_0" in text,
            "rgb_array": lambda image: image.shape == (660, 960, 3) and image.std() > 0,
        },
    )
    assert "Snip Snap Snorem" in capsys.readouterr().out  # human mode printed the table


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_state(preset, num_players):
    env = snipsnap_env.env(num_players=num_players, rules=preset)
    pettingzoo_state.test_state_space(env)  # its remarks on the unbounded score and pot: pyproject's filterwarnings
    pettingzoo_state.test_state(env, num_cycles=300)


def test_raw_env_passes_api_test_too():
    api_test(snipsnap_env.raw_env(num_players=6), num_cycles=300)


def _observation_stream(num_players: int, preset: str, seed: int) -> list:
    env = snipsnap_env.env(num_players=num_players, rules=preset)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    stream = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        stream.append((agent, obs["observation"].tobytes(), reward))
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    return stream


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_same_seed_same_game_over_many_seeds(preset):
    for seed in range(15):
        num_players = 3 + seed % 6
        assert _observation_stream(num_players, preset, seed) == _observation_stream(num_players, preset, seed)


def test_pettingzoo_registry_makes_the_env():
    import pettingzoo

    if not hasattr(pettingzoo, "make"):
        pytest.skip("this PettingZoo has no registry")
    env = pettingzoo.make("aec", f"snipsnap/{ENV_NAME}", num_players=4)
    env.reset(seed=0)
    assert env.possible_agents == [f"player_{i}" for i in range(4)]


@pytest.mark.parametrize("num_players", [3, 6])
def test_the_turn_based_parallel_conversion_passes_pettingzoos_parallel_api_test(num_players):
    """A turn-based game: aec_to_parallel refuses it (rightly); turn_based_aec_to_parallel is the conversion."""
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel

    parallel_api_test(turn_based_aec_to_parallel(snipsnap_env.env(num_players=num_players)), num_cycles=200)
    with pytest.raises(AssertionError):
        aec_to_parallel(snipsnap_env.env(num_players=num_players))
