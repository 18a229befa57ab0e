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
