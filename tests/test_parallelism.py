"""Every compiled loop over games gives the same numbers serially, in parallel on numba's threads, and in chunks
on plain threads (snipsnap_env.parallelism): which one runs is chosen by the work, never by the result."""

import numpy as np
import pytest

import agents
from snipsnap_env import batch_kernels, parallelism
from snipsnap_env.batch import BatchEnv, play_deals


@pytest.fixture
def threshold(monkeypatch):
    """Set the work from which calls go parallel (0: always; huge: never)."""
    return lambda value: monkeypatch.setattr(parallelism, "PARALLEL_MIN_WORK", value)


def test_small_calls_run_serially_and_large_ones_in_parallel():
    kernel = batch_kernels.step_games
    assert kernel.choose(256) is kernel.serial
    assert kernel.choose(parallelism.PARALLEL_MIN_WORK) in (kernel.parallel, kernel.serial)  # serial on one thread


def test_whole_deals_are_the_same_serially_and_in_parallel(threshold):
    threshold(10**12)
    serial = play_deals(3000, 5, "scarne", ["random", "most_copies", "random", "fewest_copies", "random"], seed=4)
    threshold(0)
    parallel = play_deals(3000, 5, "scarne", ["random", "most_copies", "random", "fewest_copies", "random"], seed=4)
    np.testing.assert_array_equal(serial, parallel)


@pytest.mark.slow
def test_batched_steps_are_the_same_serially_and_in_parallel(threshold):
    results = []
    for value in (10**12, 0):
        threshold(value)
        env, policy = BatchEnv(300, 4, seed=2), agents.make("random", seed=2)
        obs, mask = env.reset()
        total = np.zeros((300, 4))
        for _ in range(40):
            obs, mask, rewards, *_ = env.step(policy.act_batch(obs, mask))
            total += rewards
        results.append((obs, total))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_lead_values_in_chunks_on_threads_are_those_of_one_call(monkeypatch):
    pytest.importorskip("stable_baselines3")
    from snipsnap_env.vec_env import SnipSnapVecEnv

    values = []
    for chunked in (10**12, 0):
        monkeypatch.setattr(parallelism, "CHUNKED_MIN_WORK", chunked)
        env = SnipSnapVecEnv(64, 5, opponents=[agents.make("most_copies")], seed=9, lead_values=4)
        env.reset()
        values.append(env.values_of_leads())
    np.testing.assert_array_equal(values[0], values[1])
    assert np.isfinite(values[0]).any()


def test_on_threads_returns_every_result_in_order_on_threads_and_on_one_core(monkeypatch):
    import threading

    calls = [lambda i=i: (i, threading.current_thread().name) for i in range(5)]
    on_pool = parallelism.on_threads(calls)
    assert [i for i, _ in on_pool] == list(range(5))
    monkeypatch.setattr(parallelism, "cores", lambda: 1)
    alone = parallelism.on_threads(calls)
    assert alone == [(i, threading.current_thread().name) for i in range(5)]  # one after another, here


def test_tables_stepped_while_the_critic_of_the_others_runs_see_what_tables_stepped_alone_see():
    """TablesVecEnv begins each table's lead-value rollouts on the pool and steps the next table meanwhile: the
    observations (lead values included), rewards and ends are those of each table stepped on its own."""
    pytest.importorskip("stable_baselines3")
    from snipsnap_env.vec_env import SnipSnapVecEnv, TablesVecEnv

    def tables():
        return [SnipSnapVecEnv(48, n, opponents=[agents.make("most_copies")], seed=n, lead_values=4) for n in (3, 5)]

    together, alone = TablesVecEnv(tables()), tables()
    first = together.reset(), np.concatenate([table.reset() for table in alone])
    np.testing.assert_array_equal(*first)
    rng = np.random.default_rng(0)
    for _ in range(12):
        mask = together.action_masks()
        actions = np.where(mask, rng.random(mask.shape), -1).argmax(axis=1)
        together.step_async(actions)
        got = together.step_wait()
        parts = []
        for table, start in zip(alone, (0, 48)):
            table.step_async(actions[start : start + 48])
            parts.append(table.step_wait())
        for i in range(3):
            np.testing.assert_array_equal(got[i], np.concatenate([part[i] for part in parts]))
    assert np.abs(got[0][:, -13:]).sum() > 0  # the lead values are there
