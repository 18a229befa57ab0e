"""When a compiled loop over games runs on numba's threads: only when the call holds enough work to pay for them.

Every loop over games (a step of B games, whole deals, rollouts of every candidate lead) is compiled twice from
one body, by :func:`by_work`: serially, and with ``numba.prange`` spread over numba's OpenMP threads. A call
names its work (games stepped, deals or rollouts played: a microsecond or two each) and runs in parallel only
from :data:`PARALLEL_MIN_WORK` on.

Why (measured, docs/speed.md): a region waits at its join for its slowest thread, and OpenMP's threads
spin-wait between regions. On a quiet machine that costs little even for a step of 256 games (~250 µs), but
beside another busy process every region waits for a time slice of a core the other holds, and the spinning
threads take the cores from it: two processes each stepping 256 games at once made 4–5 % of the decisions/s
of one alone; 4,096 games, 25 %; 16,384 games, 70 % of the serial loop's. Serially, two processes at once
each keep their speed alone. A call of ~30 ms or more (tens of thousands of deals) keeps its 2× on a quiet
machine and its fair share on a busy one. Which loop ran does not change a result: every game draws from its
own streams, so serial and parallel calls return the same numbers.

A process may fork, spawn or be a Ray worker (docs/environment.md, "Processes"). So what this module starts once
per process is rebuilt in a forked child, never inherited half-alive: the pool of plain threads is forgotten at
fork (its threads are not copied, its state would be) and made anew on first use; and numba's parallel loops run
on its ``workqueue`` threading layer, which a forked child starts afresh, instead of GNU OpenMP, which kills a
child that forked after a parallel region ("fork() called from a process already using GNU OpenMP"). The
workqueue takes one parallel region at a time, so a thread that finds one running runs its loop serially.
``NUMBA_THREADING_LAYER`` set by the user is left as it is.
"""

from __future__ import annotations

import os
import threading
import types
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

import numba

if "NUMBA_THREADING_LAYER" not in os.environ:  # before any parallel region: the layer is chosen at the first
    numba.config.THREADING_LAYER = "workqueue"

#: the work (in games stepped or rollouts played, each about a microsecond serially) from which a call runs on
#: numba's threads: ~30 ms, ten time slices of a busy scheduler, so that a thread descheduled for one costs little
PARALLEL_MIN_WORK = 32_768
#: the work from which :func:`in_chunks` splits a call over threads: ~2 ms, a hundred times a thread's hand-off
CHUNKED_MIN_WORK = 2048


class ByWork:
    """One compiled loop, serial and parallel; call it with the call's work first: ``kernel(work, *args)``."""

    def __init__(self, body):
        self.parallel = numba.njit(cache=True, nogil=True, parallel=True)(body)
        # a renamed copy of the body: numba's cache keys files by qualified name, so the two never collide
        twin = types.FunctionType(body.__code__, body.__globals__, f"{body.__name__}_serial", body.__defaults__)
        twin.__qualname__, twin.__module__, twin.__doc__ = f"{body.__qualname__}_serial", body.__module__, body.__doc__
        self.serial = numba.njit(cache=True, nogil=True)(twin)
        self.__doc__, self.__name__ = body.__doc__, body.__name__

    def __call__(self, work: int, *args):
        if self.choose(work) is self.serial or not _REGION.acquire(blocking=False):
            return self.serial(*args)  # a parallel region is running (another thread's): this one runs serially
        try:
            return self.parallel(*args)
        finally:
            _REGION.release()

    def choose(self, work: int):
        """The serial loop below :data:`PARALLEL_MIN_WORK` (or with one numba thread), else the parallel one."""
        if work < PARALLEL_MIN_WORK or numba.get_num_threads() == 1:
            return self.serial
        return self.parallel


def by_work(body) -> ByWork:
    """Decorator: compile ``body`` (a loop over ``numba.prange``) serially and in parallel (:class:`ByWork`)."""
    return ByWork(body)


_POOL: ThreadPoolExecutor | None = None
_REGION = threading.Lock()  # held while a parallel loop runs: numba's workqueue runs one region at a time


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked: forget the pool whose threads stayed in the parent, and a
    region lock another thread may have held there."""
    global _POOL, _REGION
    _POOL, _REGION = None, threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def in_chunks(serial, games: int, chunk_args, work: int) -> None:
    """Run ``serial(*chunk_args(lo, hi))`` over games ``lo:hi`` that split ``range(games)``: one call below
    :data:`CHUNKED_MIN_WORK`, else one chunk per core on a pool of plain threads (the kernels release the GIL).

    For loops of a few milliseconds called again and again (the training's rollouts of every lead, ~10 ms a
    call): too short for OpenMP on a busy machine, long enough for threads that sleep instead of spinning
    while they wait. Every game reads only its own row and seeds, so the chunks give the numbers one call gives.
    """
    start_in_chunks(serial, games, chunk_args, work)()


def start_in_chunks(serial, games: int, chunk_args, work: int) -> Callable[[], None]:
    """:func:`in_chunks` begun: the chunks run on the pool's threads while the caller goes on, and the function
    returned waits for them (and raises what they raised). One call, below :data:`CHUNKED_MIN_WORK` or on one
    core, runs at once."""
    count = _thread_count()
    if work < CHUNKED_MIN_WORK or count == 1 or games < 2:
        serial(*chunk_args(0, games))
        return lambda: None
    bounds = [games * i // count for i in range(count + 1)]
    futures = _submit([partial(serial, *chunk_args(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo])

    def wait() -> None:
        for future in futures:
            future.result()

    return wait


def on_threads(calls) -> list:
    """The results of ``calls`` (functions of no argument) in their order, run at once on a pool of plain threads,
    one per core (one after another on one core). For work that releases the GIL — compiled kernels, torch's
    operations — in pieces of milliseconds: the threads sleep while they wait, so a busy machine loses no core
    to spinning (the module's docstring). The results never depend on which ran where."""
    if _thread_count() == 1 or len(calls) < 2:
        return [call() for call in calls]
    return [future.result() for future in _submit(calls)]


def _submit(calls) -> list[Future]:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=_thread_count(), thread_name_prefix="snipsnap-kernel")
    return [_POOL.submit(call) for call in calls]


def _thread_count() -> int:
    return min(cores(), numba.config.NUMBA_NUM_THREADS)
