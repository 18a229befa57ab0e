"""Where a job's work units run: here, one after another (:class:`InProcess`), in processes of this machine
(:class:`InProcesses`), or as Ray tasks on this machine's cores or a cluster (:class:`OnRay`); and the
``--ray``/``--workers`` flags that choose (the matrix's, the league's, the seeds'). A unit's result never depends
on where it ran: its seeds come with it.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal

from .cli import MAX_WORKERS, between, require
from .manifest import Refused

MAX_RETRIES = 3  # a task whose worker dies is run again (its result does not depend on the attempt)


def work_unit(function, *args):
    """A Ray task: ``function(*args)`` with the compiled loops on the CPUs Ray gave the task, not on every
    core of the node (two tasks on two cores would otherwise run four threads)."""
    import numba
    import ray

    cpus = int(ray.get_runtime_context().get_assigned_resources().get("CPU", 1))
    numba.set_num_threads(max(1, min(cpus, numba.config.NUMBA_NUM_THREADS)))
    return function(*args)


class InProcess:
    """Runs work units here, one after another, in the order they were submitted."""

    def submit(self, function, *args):
        done = []

        def result():  # run when its turn comes (or when a later unit needs it), once
            if not done:
                done.append(function(*[arg() if callable(arg) else arg for arg in args]))
            return done[0]

        return result

    def results(self, handles):
        """(handle, result) as units finish."""
        for handle in handles:
            yield handle, handle()

    def close(self):
        pass


_unit_running = False  # in a process of InProcesses: whether a unit is running (SIGTERM's meaning depends on it)
_stopped = False  # ... and whether the job stopped it (SIGTERM) during a unit: it then takes no other


def _worker_sigterm(signum, frame) -> None:
    """SIGTERM in a process of :class:`InProcesses`: inside a unit it raises as Ctrl-C does (a training unit then
    keeps its checkpoint, and the unit's end goes back to the job as its result); between units the process just
    ends, quietly (an idle worker stopped by the job's end has nothing to keep, and nothing to report)."""
    from .cli import on_sigterm

    global _stopped
    _stopped = True
    if _unit_running:
        on_sigterm(signum, frame)
    raise SystemExit(143)


ORPHANED = 137  # the exit status of a child whose parent died (as SIGKILL's: nobody is there to read it)


def end_with_parent() -> None:
    """In a child process that multiprocessing started: end it the moment its parent dies, however the parent dies
    (SIGKILL, the OOM killer): a thread waits on the parent's sentinel, a pipe only the parent holds open. An
    orphaned worker would otherwise live on, blocked sending its result to nobody (SIGTERM cannot end it there:
    the pool's worker loop catches the exit and tries to send that too), holding the job's folders locked. What a
    unit had kept stays (checkpoints are renamed into place whole); the rerun resumes from it."""
    import multiprocessing
    import threading
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(ORPHANED)

    threading.Thread(target=watch, name="ends with its parent", daemon=True).start()


def _worker_started(threads: int) -> None:
    """A process of :class:`InProcesses`, before its first unit: it ends with its parent (:func:`end_with_parent`),
    SIGTERM as :func:`_worker_sigterm` says, and the compiled loops on its share of the cores."""
    import numba

    end_with_parent()
    signal.signal(signal.SIGTERM, _worker_sigterm)
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))


def _run_unit(function, *args):
    """One unit in a process of :class:`InProcesses`, marked as running while it runs; none in a process the job
    stopped during an earlier one (the pool hands each process the next unit ahead of time: it would start training
    after the job was told to stop), which then ends."""
    global _unit_running
    if _stopped:
        os._exit(143)
    _unit_running = True
    try:
        return function(*args)
    finally:
        _unit_running = False


class InProcesses:
    """Runs work units in ``workers`` processes of this machine (``concurrent.futures``), started by spawning, so
    that no child inherits a parent's threads half-alive (a fork copies a thread pool's state, not its threads).
    A unit given another's handle waits for that result first."""

    def __init__(self, workers: int):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from snipsnap_env.parallelism import cores

        self.pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_started,
            initargs=(max(1, cores() // workers),),
        )

    def submit(self, function, *args):
        from concurrent.futures import Future

        done = [arg.result() if isinstance(arg, Future) else arg for arg in args]
        return self.pool.submit(_run_unit, function, *done)

    def results(self, handles):
        from concurrent.futures import FIRST_COMPLETED, wait

        waiting = set(handles)
        while waiting:
            done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
            for handle in done:
                yield handle, handle.result()

    def close(self):
        """Stop every unit still running (SIGTERM: a training unit saves its checkpoint) and wait for the
        processes; when every unit has finished, the processes are let go as the executor lets them, unsignalled."""
        processes = list((self.pool._processes or {}).values())  # the executor has no public way to stop its work
        if not self.pool._pending_work_items:
            self.pool.shutdown(wait=True)
            return
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=60)


class OnRay:
    """Runs work units as Ray tasks: locally on this machine's cores, or on the cluster at ``address``."""

    def __init__(self, address: str | None, workers: int | None = None):
        import ray

        self.ray, self._temporary, self._environment = ray, None, None
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        if address:
            ray.init(address=address)
        elif os.environ.get("RAY_ADDRESS"):
            ray.init()  # joins the cluster RAY_ADDRESS names
        else:
            self._temporary = ray_temporary_folder()
            # Ray turns token authentication on for a local Ray by setting RAY_AUTH_MODE in this process and saving
            # a token to ~/.ray/auth_token; a token of its own in the environment keeps it out of home, and both are
            # put back on close, or a later Ray of this process (a cluster's head) starts asking for the gone token
            self._environment = {key: os.environ.get(key) for key in RAY_AUTHENTICATION}
            if not {"RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"} & set(os.environ):
                os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
            try:
                ray.init(num_cpus=workers or os.cpu_count(), include_dashboard=False, _temp_dir=str(self._temporary))
            except BaseException:
                self.close()
                raise
        for sig, handler in handlers.items():  # Ray's driver takes SIGTERM; the runner owns the signals
            signal.signal(sig, handler)
        self._task = ray.remote(max_retries=MAX_RETRIES, num_cpus=1)(work_unit)

    def submit(self, function, *args):
        return self._task.remote(function, *args)  # results of other units are passed as ObjectRefs

    def results(self, handles):
        waiting = list(handles)
        while waiting:
            done, waiting = self.ray.wait(waiting, num_returns=1)
            yield done[0], self.ray.get(done[0])

    def close(self):
        self.ray.shutdown()
        if self._temporary is not None:  # the local Ray's session files: the job's own, gone with it
            import shutil

            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None
        if self._environment is not None:
            for key, value in self._environment.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            self._environment = None
            _forget_authentication()


def _forget_authentication() -> None:
    """Ray's own caches of this process's authentication (the token read once, the mode in its config) made to
    read the restored environment again: else the next local Ray of this process sends the last one's token."""
    try:
        from ray._raylet import AuthenticationTokenLoader, Config
    except ImportError:  # a Ray without them caches nothing to forget
        return
    AuthenticationTokenLoader.instance().reset_cache()
    Config.initialize("")


#: what a local Ray's authentication reads from (and, for the mode, writes into) this process's environment
RAY_AUTHENTICATION = ("RAY_AUTH_TOKEN", "RAY_AUTH_MODE")

#: the longest folder a local Ray's session may live in: its sockets' paths (``<folder>/session_<date>_<pid>/
#: sockets/plasma_store``) must fit the 107 bytes of a Unix socket's address
MAX_RAY_FOLDER = 40


def ray_temporary_folder():
    """A fresh folder for a local Ray's session files, in the temporary folder (or /tmp where that one's path is
    too long for Ray's sockets), removed when the runner closes: Ray's default, ``/tmp/ray/session_*`` with
    ``/tmp/ray/session_latest`` repointed, outlives the job and is shared by every job."""
    import tempfile
    from pathlib import Path

    base = tempfile.gettempdir()
    return Path(tempfile.mkdtemp(prefix="ray-", dir=base if len(base) <= MAX_RAY_FOLDER - 12 else "/tmp"))


def add_ray_flags(job: argparse.ArgumentParser) -> None:
    """``--ray [ADDRESS]`` and ``--workers``: a job's work units on Ray (the matrix's, the league's)."""
    job.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run the work units on Ray: a local Ray on this machine's cores, or the cluster at ADDRESS "
        "(or RAY_ADDRESS); 'auto' joins the cluster started on this machine with `ray start --head`",
    )
    job.add_argument(
        "--workers",
        type=between(1, MAX_WORKERS),
        help="with --ray, the CPUs of a local Ray (default: every core); without, run the work units in this many "
        "processes of this machine (default: one after another, here)",
    )


def require_ray(args) -> None:
    """With ``--ray``, a refusal (before any work) where Ray is not installed."""
    if args.ray is not None:
        require("ray", "ray")


def start_runner(args):
    """The work units' runner: in this process, or Ray (``--ray``) started or joined here, before any folder is
    made; a cluster that cannot be reached is a one-line refusal."""
    if args.ray is None:
        return InProcesses(args.workers) if (args.workers or 1) > 1 else InProcess()
    try:
        return OnRay(args.ray, args.workers)
    except Exception as error:  # ConnectionError, a bad address, a version mismatch: Ray says which
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        where = f"the Ray cluster at {args.ray}" if args.ray else "a local Ray"
        raise CannotStart(f"--ray: cannot start or join {where} ({reason})") from None


class CannotStart(Refused, RuntimeError):
    """The work units' runner cannot be started."""
