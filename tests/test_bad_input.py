"""Bad input at every public entry point gets a clear error that names the problem; nothing is coerced;
copies of a game in progress carry the game."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import snipsnap_env
from snipsnap_env import IllegalActionError, Rules
from snipsnap_env.engine import EnvOrderError
from snipsnap_env.single_agent import SingleSeatEnv


def started(make=snipsnap_env.env, turns=5, **kwargs):
    env = make(num_players=4, **kwargs)
    env.reset(seed=3)
    for _ in range(turns):
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    return env


def rest_of_game(env) -> list:
    rewards = []
    for _ in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        rewards.append(reward)
        env.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[-1]))
    return rewards


@pytest.mark.parametrize("make", [snipsnap_env.raw_env, snipsnap_env.env])
def test_copies_and_pickles_carry_the_game_in_progress(make):
    env = started(make)
    twin, thawed = copy.deepcopy(env), pickle.loads(pickle.dumps(env))
    assert twin.unwrapped.match.deal.turns == env.unwrapped.match.deal.turns == 5
    assert rest_of_game(env) == rest_of_game(twin) == rest_of_game(thawed)


def test_env_arguments_are_checked():
    with pytest.raises(ValueError, match="auto_forced got 'no'"):
        snipsnap_env.raw_env(num_players=4, auto_forced="no")
    with pytest.raises(ValueError, match="starting_chips"):  # beyond 2**40 a chip would be lost in float rewards
        Rules(starting_chips=10**17)


def test_reset_options_must_be_a_dict():
    env = snipsnap_env.env(num_players=4)
    with pytest.raises(ValueError, match="reset options must be a dict"):
        env.reset(options="x")
    single = SingleSeatEnv(4)
    with pytest.raises(ValueError, match="reset options must be a dict"):
        single.reset(options="x")
    with pytest.raises(ValueError, match="learner_seat"):
        single.reset(options={"learner_seat": 9})
    single.reset(seed=0, options={"learner_seat": 2})
    assert single.learner_seat == 2


@pytest.mark.parametrize("action", [True, np.True_, False])
def test_a_bool_is_not_an_action(action):
    env = started()
    with pytest.raises(IllegalActionError, match="is a bool"):
        env.step(action)


def test_an_illegal_action_caught_leaves_the_rewards_alone():
    env = started(snipsnap_env.raw_env, turns=0, rules="bicycle")  # the ante is pending as reward
    agent = env.agent_selection
    pending = dict(env._cumulative_rewards)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step(illegal)
    assert env._cumulative_rewards == pending and env.agent_selection == agent
    rewards = {a: 0.0 for a in env.possible_agents}
    for a in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        rewards[a] += reward
        env.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))
    chips = env.unwrapped.match.chips
    assert all(rewards[a] == pytest.approx(chips[s] - 100) for s, a in enumerate(env.possible_agents))


@pytest.mark.parametrize("make", [snipsnap_env.env, snipsnap_env.raw_env])
@pytest.mark.parametrize("action", [0.0, np.float64(0.0), np.float32(1.0), "1"])
def test_a_float_or_a_string_is_not_an_action_in_either_env(make, action):
    env = started(make)
    with pytest.raises(IllegalActionError, match=f"is a {type(action).__name__}; actions are whole numbers"):
        env.step(action)


@pytest.mark.parametrize("make", [snipsnap_env.env, snipsnap_env.raw_env])
def test_calls_out_of_order_say_so_in_either_env(make):
    from snipsnap_env.engine import EnvOrderError

    env = make(num_players=np.int64(4))  # numpy integers are whole numbers, as for dealer and num_deals
    assert env.unwrapped.num_players == 4 and type(env.unwrapped.num_players) is int
    with pytest.raises(EnvOrderError, match=r"reset\(\) must be called before observe\(\)"):
        env.observe("player_0")
    with pytest.raises(EnvOrderError, match=r"reset\(\) must be called before step\(\)"):
        env.step(0)
    env.reset(seed=3)
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))
    with pytest.raises(EnvOrderError, match=r"the game is over.*call reset\(\)"):
        env.step(0)


@pytest.mark.parametrize("make", [snipsnap_env.env, snipsnap_env.raw_env])
def test_a_zero_dimensional_integer_array_is_a_whole_number(make):
    """What ``action_space.sample()``-style and array-returning policies give is an action, as before."""
    env = started(make, turns=0)
    obs, *_ = env.last()
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    env.step(np.array(legal))
    assert env.unwrapped.match.deal.turns >= 1


@pytest.mark.parametrize("make", [snipsnap_env.env, snipsnap_env.raw_env])
def test_state_before_reset_and_odd_seeds_say_what_is_wrong(make):
    env = make(num_players=4)
    with pytest.raises(EnvOrderError, match="before state"):
        env.state()
    for seed in (1.5, -1, True, "7"):
        with pytest.raises(ValueError, match=f"seed={seed!r}; allowed: a whole number of at least 0"):
            env.reset(seed=seed)
    env.reset(seed=np.int64(3))  # numpy's whole numbers are seeds too


def test_the_single_seat_env_takes_the_same_seeds_and_seats_as_the_aec_env():
    """True is neither a seed nor a seat, though Python counts it as 1; a negative seed is our ValueError."""
    env = SingleSeatEnv(num_players=4)
    for seed in (1.5, -1, True, "7"):
        with pytest.raises(ValueError, match=f"seed={seed!r}; allowed: a whole number of at least 0"):
            env.reset(seed=seed)
    env.reset(seed=np.int64(3))
    with pytest.raises(ValueError, match="learner_seat got True"):
        SingleSeatEnv(num_players=4, learner_seat=True)
    pytest.importorskip("stable_baselines3")
    from snipsnap_env.vec_env import SnipSnapVecEnv

    with pytest.raises(ValueError, match="learner_seat got True"):
        SnipSnapVecEnv(4, 4, learner_seat=True)


def test_render_before_reset_says_so():
    env = snipsnap_env.raw_env(num_players=3, render_mode="ansi")
    with pytest.raises(EnvOrderError, match="reset"):
        env.render()


def test_the_single_seat_env_refuses_a_bool_as_an_action():
    env = SingleSeatEnv(num_players=3)
    env.reset(seed=1)
    with pytest.raises(IllegalActionError, match="bool"):
        env.step(True)


def test_the_vec_env_refuses_fractions_bools_and_a_bad_lead_values():
    pytest.importorskip("stable_baselines3")
    from snipsnap_env.vec_env import SnipSnapVecEnv

    env = SnipSnapVecEnv(2, 3, seed=0)
    env.reset()
    for actions in (np.array([2.5, 1.0]), np.array([True, False]), np.array([np.nan, 1.0])):
        with pytest.raises(IllegalActionError, match="whole number"):
            env.step_async(actions)
    env.step_async(np.array([2.0, 1.0]))  # whole numbers as floats are whole numbers
    for bad in (-3, 0.5, 2.5, True):
        with pytest.raises(ValueError, match="lead_values"):
            SnipSnapVecEnv(2, 3, seed=0, lead_values=bad)


def test_the_vector_env_says_what_is_wrong_before_reset_with_an_illegal_action_and_with_too_many_tables():
    pytest.importorskip("stable_baselines3")
    import gymnasium

    from snipsnap_env.gym_vector import SingleSeatVectorEnv

    envs = SingleSeatVectorEnv(num_envs=4, num_players=4)
    with pytest.raises(EnvOrderError, match="before reset"):
        envs.step(np.zeros(4, int))
    envs.reset(seed=0)
    masks = envs.action_masks()
    illegal = np.array([int(np.flatnonzero(~row)[0]) for row in masks])
    with pytest.raises(ValueError, match="illegal actions"):
        envs.step(illegal)
    assert (envs.action_masks() == masks).all()  # nothing stepped
    for seed in (1.5, True, -1, "7"):  # refused by name, as the AEC env refuses them
        with pytest.raises(ValueError, match=f"reset got seed={seed!r}; allowed: a whole number"):
            envs.reset(seed=seed)
    with pytest.raises(ValueError, match="num_games got 1000000000000; allowed: an integer from 1 to 1,048,576"):
        gymnasium.make_vec("snipsnap/SingleSeat-v0", num_envs=10**12, vectorization_mode="vector_entry_point")
