"""Fork-safe by design (snipsnap_env.parallelism): after the engine's parallel loops, the pool of plain threads or
a training, a forked child works and gives the parent's results — ``os.fork``, a fork ``multiprocessing.Pool``,
SB3's ``SubprocVecEnv(start_method="fork")`` and torch ``DataLoader`` workers. Each case runs in a process of its
own with a timeout, so that a hang fails the test instead of stopping the suite."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: the parent's work before it forks: numba's parallel loop (32,768 deals) and the pool's threads
WARM = """
import os
import numpy as np
from snipsnap_env.batch import play_deals
from snipsnap_env.parallelism import on_threads

def deals(seed=1):
    return play_deals(32_768, 6, "scarne", ["most_copies", "random"] * 3, seed=seed)

parent = deals()
assert on_threads([lambda: 1, lambda: 2]) == [1, 2]
"""


def run_case(body: str, timeout: float = 240) -> str:
    """``WARM`` then ``body`` in a fresh interpreter; its stdout (a failure or a hang fails the test)."""
    code = WARM + textwrap.dedent(body)
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung for {timeout} s:\n{body}")
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_a_forked_child_plays_the_parents_deals_and_uses_the_pool():
    out = run_case("""
        pid = os.fork()
        if pid == 0:
            ok = np.array_equal(deals(), parent) and on_threads([lambda: 3, lambda: 4]) == [3, 4]
            os._exit(0 if ok else 1)
        print("child", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """)
    assert "child 0" in out, out


@pytest.mark.slow
def test_a_fork_multiprocessing_pool_returns_the_parents_numbers():
    out = run_case("""
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map(deals, [1, 2])
        print("same", np.array_equal(results[0], parent), not np.array_equal(results[1], parent))
    """)
    assert "same True True" in out, out


@pytest.mark.slow
@pytest.mark.training
def test_sb3_subproc_vec_env_forks_after_a_training():
    pytest.importorskip("stable_baselines3")
    out = run_case("""
        import tempfile
        from pathlib import Path
        from stable_baselines3.common.vec_env import SubprocVecEnv
        from snipsnap_env.single_agent import SingleSeatEnv
        from train.learn.run import train_tiny

        with tempfile.TemporaryDirectory() as folder:
            train_tiny(Path(folder), "before_fork")  # the update's shards ran on the pool's threads
        envs = SubprocVecEnv([lambda: SingleSeatEnv(num_players=4) for _ in range(2)], start_method="fork")
        envs.seed(3)
        envs.reset()
        for _ in range(20):
            masks = np.array(envs.env_method("action_masks"))
            envs.step(masks.argmax(axis=1))
        envs.close()
        with tempfile.TemporaryDirectory() as folder:
            pid = os.fork()
            if pid == 0:  # a child that trains again, as the report saw hang
                train_tiny(Path(folder), "in_child")
                os._exit(0)
            print("child", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """)
    assert "child 0" in out, out


@pytest.mark.slow
def test_torch_data_loader_workers_fork_and_play():
    pytest.importorskip("torch")
    out = run_case("""
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Deals(Dataset):
            def __len__(self):
                return 2
            def __getitem__(self, i):
                return torch.from_numpy(deals(1 + i).sum(axis=0))

        loader = DataLoader(Deals(), batch_size=1, num_workers=2, multiprocessing_context="fork")
        first = next(iter(loader))[0].numpy()
        print("same", np.array_equal(first, parent.sum(axis=0)))
    """)
    assert "same True" in out, out
