"""Training is byte-reproducible wherever it runs: the same settings and seed write the same model bytes on a quiet
machine and beside busy processes (which take cores from numba's and torch's threads), and whether the kernels ran
serially, in parallel or in chunks, and the update's shards on threads or one after another
(snipsnap_env.parallelism), and whatever torch thread count the pool's threads met first (agents.threads)."""

import hashlib
import multiprocessing

import pytest
import torch

from snipsnap_env import parallelism
from train import train_ppo
from train.learn.run import TINY_RUN

pytestmark = pytest.mark.training

#: a tiny run with the critic's rollouts on threads: two table sizes, enough games to split into chunks
RUN = [*TINY_RUN, "--ppo-players", "3", "5", "--num-envs", "64", "--critic-rollouts", "16", "--threads", "2"]


def _spin(stop) -> None:
    while not stop.is_set():
        sum(range(100_000))


def trained_bytes(folder, name: str) -> str:
    train_ppo.main([*RUN, "--runs", str(folder), "--run-name", name])
    return hashlib.sha256((folder / name / "final_model.zip").read_bytes()).hexdigest()


@pytest.mark.slow
def test_the_same_run_writes_the_same_model_quiet_and_beside_busy_processes(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    quiet = trained_bytes(tmp_path, "quiet")
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    hogs = [context.Process(target=_spin, args=(stop,), daemon=True) for _ in range(2)]
    for hog in hogs:
        hog.start()
    try:
        busy = trained_bytes(tmp_path, "busy")
    finally:
        stop.set()
        for hog in hogs:
            hog.join(timeout=10)
    # a fresh pool whose threads first ran torch's work at one thread (as an earlier job in the process may have)
    monkeypatch.setattr(parallelism, "_POOL", None)
    torch.set_num_threads(1)
    square = torch.ones(256, 256)
    parallelism.on_threads([lambda: (square @ square).sum(), lambda: (square @ square).sum()])
    stale_pool = trained_bytes(tmp_path, "stale_pool")
    monkeypatch.setattr(parallelism, "CHUNKED_MIN_WORK", 10**12)  # the critic's rollouts in one serial call
    monkeypatch.setattr(parallelism, "PARALLEL_MIN_WORK", 0)  # and every other loop on numba's threads
    monkeypatch.setattr(parallelism, "cores", lambda: 1)  # the update's shards one after another (on_threads)
    other_loops = trained_bytes(tmp_path, "other_loops")
    assert quiet == busy == stale_pool == other_loops
