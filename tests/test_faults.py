"""Fault injection on training runs: kill them at random points (SIGINT, SIGTERM, SIGKILL), corrupt their
files, run two at once in one folder — a run never loses more than the steps since its last checkpoint,
never mixes with another run, and says clearly what is wrong."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from agents.model_file import load_policy  # noqa: E402
from train import train_ppo
from train.learn import run as training
from train.measure import evaluation  # noqa: E402
from train.runner.run_folder import RunFolderBusy, checkpoints  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.training

FAST = [
    "--players",
    "3",
    "--ppo-players",
    "3",
    "--num-envs",
    "16",
    "--n-steps",
    "16",
    "--batch-size",
    "64",
    "--eval-every",
    "100000",
]
FAST += ["--eval-deals", "200", "--checkpoint-every", "256", "--no-progress", "--threads", "1", "--teacher", ""]


def run_args(runs: Path, steps: int, *extra: str) -> list[str]:
    return FAST + ["--total-timesteps", str(steps), "--runs", str(runs), "--run-name", "r", *extra]


def start_training(runs: Path, steps: int = 10_000_000) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "train.train_ppo", *run_args(runs, steps)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=default_sigint,
    )


def default_sigint() -> None:
    """A child's preexec_fn: Ctrl-C reaches the run even when the tests run as a background job (a shell's `&`
    ignores SIGINT, and Python then installs no KeyboardInterrupt handler in the child)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_checkpoints(run: Path, count: int, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while len(checkpoints(run)) < count:
        assert process.poll() is None, process.stdout.read()
        assert time.time() < deadline, "no checkpoint in time"
        time.sleep(0.2)


def refusal(capsys, argv: list[str]) -> str:
    """The one-line refusal ``train_ppo`` prints for ``argv`` (it exits with status 2 before any work)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        train_ppo.main(argv)
    assert exit_.value.code == 2
    message = capsys.readouterr().err
    assert "Traceback" not in message
    return message


def progress_rows(run: Path) -> int:
    with open(run / "progress.csv") as f:
        return sum(1 for _ in csv.reader(f)) - 1


@pytest.mark.parametrize("signal_", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
@pytest.mark.slow
def test_a_killed_run_resumes_from_its_last_checkpoint_and_keeps_its_logs(tmp_path, signal_):
    process = start_training(tmp_path)
    run = tmp_path / "r"
    wait_for_checkpoints(run, 2, process)
    before = training.latest_checkpoint(run)
    time.sleep(0.3 + (hash(signal_) % 5) / 10)  # somewhere between checkpoints
    process.send_signal(signal_)
    output = process.communicate(timeout=60)[0]
    if signal_ != signal.SIGKILL:  # Ctrl-C and SIGTERM save where they are
        assert "interrupted: saved" in output, output
    saved = training.latest_checkpoint(run)
    steps_saved = int(saved.name.split("_")[1])
    assert steps_saved >= int(before.name.split("_")[1])
    assert not list(run.glob("checkpoints/*.partial*")) or signal_ == signal.SIGKILL
    rows = progress_rows(run)
    train_ppo.main(run_args(tmp_path, steps_saved + 512, "--resume"))
    assert progress_rows(run) > rows  # appended, not rewritten
    assert load_policy(run / "final_model.zip")[1]["num_timesteps"] >= steps_saved + 512


@pytest.mark.slow
def test_a_second_run_in_the_same_folder_is_refused_while_the_first_trains(tmp_path, capsys):
    process = start_training(tmp_path)
    try:
        wait_for_checkpoints(tmp_path / "r", 1, process)
        assert f"in use by another training run (pid {process.pid})" in refusal(
            capsys, run_args(tmp_path, 512, "--resume")
        )
        assert "in use by another training run" in refusal(capsys, run_args(tmp_path, 512, "--overwrite"))
        with pytest.raises(RunFolderBusy):
            training.train(
                training.Args(
                    num_players=3, teacher="", total_timesteps=512, out_dir=str(tmp_path), run_name="r", resume=True
                )
            )
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)


def test_starting_over_needs_overwrite_and_resuming_needs_the_same_settings(tmp_path, capsys):
    train_ppo.main(run_args(tmp_path, 512))
    assert "continue it with --resume, start it over with --overwrite" in refusal(capsys, run_args(tmp_path, 512))
    assert "other settings (num_players: 3 -> 4" in refusal(
        capsys, run_args(tmp_path, 1024, "--resume") + ["--players", "4"]
    )
    assert "rules: 'scarne' -> 'parlett'" in refusal(capsys, run_args(tmp_path, 1024, "--resume", "--rules", "parlett"))
    train_ppo.main(run_args(tmp_path, 512, "--overwrite"))
    assert not [p for p in checkpoints(tmp_path / "r") if int(p.name.split("_")[1]) > 512]  # nothing old left


def test_a_corrupt_newest_checkpoint_falls_back_to_the_one_before(tmp_path):
    train_ppo.main(run_args(tmp_path, 1024))
    run = tmp_path / "r"
    newest, previous = checkpoints(run)[:2]
    newest.write_bytes(newest.read_bytes()[:200])  # a half-written file, as a crash could leave one
    (run / "final_model.zip").unlink()
    with pytest.warns(UserWarning, match=f"skipping unreadable checkpoint {newest.name}"):
        train_ppo.main(run_args(tmp_path, 1536, "--resume"))
    assert (run / "final_model.zip").exists()


def test_evaluate_checks_its_output_folder_before_the_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    started = time.perf_counter()
    with pytest.raises(ValueError, match="cannot write results to"):
        evaluation.evaluate(["most_copies"], ["random"], deals=5 * 10**6, out_dir=str(blocker / "out"), quiet=True)
    assert time.perf_counter() - started < 5


def test_the_vec_env_takes_a_seed_for_every_stream_opponents_included():
    import agents
    from snipsnap_env.vec_env import SnipSnapVecEnv

    env = SnipSnapVecEnv(8, 4, opponents=[agents.make("random", seed=0), agents.make("most_copies", seed=1)], seed=0)

    def rollout(seed, steps=60):
        env.seed(seed)
        learner = np.random.default_rng(0)
        frames = [env.reset()]
        for _ in range(steps):
            mask = env.action_masks()
            actions = np.where(mask, learner.random(mask.shape), -1).argmax(axis=1)
            obs, rewards, dones, _ = env.step(actions)
            frames += [obs, rewards, dones]
        return frames

    first, again, other = rollout(7), rollout(7), rollout(8)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))  # the whole rollout, not only the start
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_a_runs_random_streams_are_derived_not_offset():
    from train.learn.args import STREAMS, stream_seed

    seeds = {stream_seed(seed, name, *index) for seed in (0, 1) for name in STREAMS for index in ((), (0,), (1,))}
    assert len(seeds) == 2 * len(STREAMS) * 3  # no two streams of two runs coincide
    # and a stream is a function of the seed, the name and the index alone: known values, so a change of
    # derivation (which would change every seeded result) shows here
    assert [stream_seed(0, "env"), stream_seed(3, "opponents", 2)] == [3964924996, 2799881139]


def test_a_run_interrupted_during_distillation_leaves_no_checkpoint_to_resume(tmp_path, monkeypatch, capsys):
    from train.learn import distill

    def interrupted(model, args, log=print):
        raise KeyboardInterrupt

    monkeypatch.setattr(distill, "distill", interrupted)
    argv = FAST[:-2] + ["--teacher", "pimc:8", "--total-timesteps", "512", "--runs", str(tmp_path), "--run-name", "r"]
    with pytest.raises(SystemExit) as exit_:  # Ctrl-C: exit status 130, no traceback
        train_ppo.main(argv)
    assert exit_.value.code == 130
    assert checkpoints(tmp_path / "r") == []  # a half-distilled policy must not pass for a finished one
    assert "interrupted during distillation" in capsys.readouterr().out
    assert "no readable checkpoint" in refusal(capsys, argv + ["--resume"])


# Runs ``train.train_ppo`` with the given flags and sends the process ``signal`` when the run reaches a
# chosen point: ``rollout`` (the first env step at or after timestep ``at``) or ``update`` (the ``at``-th
# optimizer step, inside a PPO update). A hook, not a timer, so the test fails or passes the same every time.
KILLED_AT = """
import os, signal, sys
import torch
from stable_baselines3.common.callbacks import BaseCallback
from train import train_ppo
from train.learn import run as training
point, at, sig = sys.argv[1], int(sys.argv[2]), getattr(signal, sys.argv[3])
if point == "rollout":
    class Kill(BaseCallback):
        def _on_step(self):
            if self.num_timesteps >= at:
                os.kill(os.getpid(), sig)
            return True
    real = training.make_callbacks
    training.make_callbacks = lambda *a: real(*a) + [Kill()]
else:
    real_step, steps = torch.optim.Adam.step, []
    def step(self, *args, **kwargs):
        steps.append(1)
        if len(steps) == at:
            os.kill(os.getpid(), sig)
        return real_step(self, *args, **kwargs)
    torch.optim.Adam.step = step
train_ppo.main(sys.argv[4:])
"""


def run_killed_at(point: str, at: int, signal_name: str, argv: list[str]) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", KILLED_AT, point, str(at), signal_name, *argv]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=default_sigint)


def killed_and_resumed(tmp_path: Path, point: str, at: int, signal_name: str, *extra: str):
    """An uninterrupted run of 2,048 steps in a fresh process, and one killed there at ``point``/``at`` and
    resumed in this one: the stdout of the killed part, and both final networks' state dicts."""
    steps = 2048
    whole = subprocess.run(
        [sys.executable, "-m", "train.train_ppo", *run_args(tmp_path / "whole", steps, *extra)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert whole.returncode == 0, whole.stdout + whole.stderr
    cut = run_killed_at(point, at, signal_name, run_args(tmp_path / "cut", steps, *extra))
    assert cut.returncode != 0 and "trained" not in cut.stdout, "the run ended before it was killed"
    train_ppo.main(run_args(tmp_path / "cut", steps, *extra, "--resume"))
    whole = load_policy(tmp_path / "whole" / "r" / "final_model.zip")[0].state_dict()
    resumed = load_policy(tmp_path / "cut" / "r" / "final_model.zip")[0].state_dict()
    return cut, whole, resumed


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGKILL"])
@pytest.mark.parametrize("point, at", [("rollout", 900), ("update", 97)])  # 40 optimizer steps an update
@pytest.mark.slow
def test_a_killed_and_resumed_run_ends_exactly_as_the_uninterrupted_one(tmp_path, signal_name, point, at):
    """The uninterrupted run and the first part of the killed one run in fresh processes, the resume in this
    one, where compiled kernels have already run: every process must do the same arithmetic (this caught
    numba's thread pool resetting torch's thread count, agents.threads)."""
    import numba
    import torch

    numba.get_num_threads()  # this process has started numba's threads, as one that ran kernels has
    cut, whole, resumed = killed_and_resumed(tmp_path, point, at, signal_name)
    assert ("interrupted: saved" in cut.stdout) == (signal_name == "SIGINT"), cut.stdout + cut.stderr
    assert whole.keys() == resumed.keys()
    assert all(torch.equal(whole[name], resumed[name]) for name in whole), "the resumed run went another way"


LEAGUE = ["--opponents", "most_copies", "self", "snapshot", "--snapshot-every", "300", "--pfsp", "1"]
LEAGUE += ["--pure-tables", "0.5", "--rollout-policy", "self", "--critic-rollouts", "2"]


@pytest.mark.slow
def test_a_killed_and_resumed_league_run_ends_exactly_as_the_uninterrupted_one(tmp_path):
    """The league's state lives where a resume point keeps it: the snapshots taken and when the next is due,
    and prioritised self-play's running gains (a resume had added a snapshot and forgotten the gains)."""
    import torch

    _, whole, resumed = killed_and_resumed(tmp_path, "rollout", 1100, "SIGKILL", *LEAGUE)
    assert all(torch.equal(whole[name], resumed[name]) for name in whole), "the resumed league run went another way"


def test_a_folder_locked_between_the_check_and_the_lock_is_refused_naming_its_owner(tmp_path, monkeypatch):
    """Another process may take the lock after the first check (refuse_if_busy) and before this one takes it: the
    same one-line refusal, with that process's pid."""
    import fcntl

    from train.runner import run_folder

    folder = tmp_path / "run"
    folder.mkdir()
    with open(folder / ".lock", "w") as lock:
        lock.write("4343")
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX)
        monkeypatch.setattr(run_folder, "refuse_if_busy", lambda *args: None)  # the race: the check saw it free
        with pytest.raises(run_folder.RunFolderBusy, match=r"in use by another training run \(pid 4343\)"):
            run_folder.RunFolder(folder, {"run_name": "run"}, resume=False, overwrite=False).__enter__()
