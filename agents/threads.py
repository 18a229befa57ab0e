"""Torch's CPU thread count, set so that it stays set.

Numba's compiled kernels (the batched engine, the search player's rollouts) run on OpenMP, and the first
parallel kernel of a process starts numba's thread pool, which sets the process's OpenMP thread count to
numba's own (every core). Torch reads the same setting. So a ``torch.set_num_threads(1)`` made before the
first kernel silently becomes 2 on a 2-core machine, and one made after it stays 1: the same training run
then did its arithmetic with another number of threads depending on what ran earlier in the process, and a
resumed run went another way than the uninterrupted one (summation order differs in the last bits).
"""

from __future__ import annotations


def set_torch_threads(count: int) -> None:
    """Start numba's thread pool (if it has not started), then give torch ``count`` threads."""
    import numba
    import torch

    numba.get_num_threads()  # launches numba's pool now, so that it cannot reset torch's count later
    torch.set_num_threads(count)


def on_torch_threads(calls) -> list:
    """:func:`snipsnap_env.parallelism.on_threads` for torch's work: each call runs with the caller's grad mode
    and torch thread count. Torch keeps both per thread, and a pool thread keeps the count torch had when the
    thread first ran torch's work: a pool started while the count was 1 multiplied matrices on one thread ever
    after, and a training run beside such a pool wrote other bytes than in a fresh process (the last bits of a
    sum depend on the number of threads that shared it)."""
    from functools import partial

    import torch

    from snipsnap_env.parallelism import on_threads

    grad, count = torch.is_grad_enabled(), torch.get_num_threads()

    def run(call):
        if torch.get_num_threads() != count:  # this thread's own count: set it to the caller's
            torch.set_num_threads(count)
        with torch.set_grad_enabled(grad):
            return call()

    return on_threads([partial(run, call) for call in calls])
