"""A training run from start to finish (``python -m train.train_ppo``'s work, and what other jobs train with):
its folder, a fresh or resumed MaskablePPO model, distillation, PPO with the pool's upkeep, checkpoints (one on a
crash, Ctrl-C or SIGTERM), paired evaluations, the final model and its learning curve; a finished run reused."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import time
from pathlib import Path

from agents.threads import set_torch_threads

from ..runner.cli import say
from ..runner.run_folder import (
    NothingToResume,
    OtherSettings,
    RunFolder,
    load_newest_readable,
    recorded_settings,
    settings_difference,
)
from . import resume_point
from .args import Args, run_settings, save_run_model, stream_seed
from .checkpoints import (
    EVAL_COLUMNS,
    RunState,
    latest_checkpoint,
    read_eval_rows,
    read_rows,
    save_checkpoint,
    vecnormalize_path,
)  # fmt: skip
from .critics import critic_named
from .pool import evaluation_opponents, pool_upkeep, seat_the_learner, training_pool
from .snapshots import first_snapshots
from .vec_envs import make_vec_env

#: the modules a training run needs (the training extra)
TRAINING_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "safetensors", "matplotlib", "tensorboard")


def train_tiny(folder: Path, name: str) -> Path:
    """:data:`TINY_RUN` trained in ``folder / name`` (a run for the tests and examples of other jobs)."""
    from ..runner.cli import add_dataclass_flags, from_namespace, new_parser

    argv = [*TINY_RUN, "--runs", str(folder), "--run-name", name]
    flags = add_dataclass_flags(Args, new_parser(None)).parse_args(argv)
    return train(from_namespace(Args, flags))


#: A run of a few hundred PPO steps at a small table, no teacher: seconds, for the tests of every job.
TINY_RUN = (
    "--players", "3", "--ppo-players", "3", "--num-envs", "8", "--n-steps", "16", "--batch-size", "64",
    "--total-timesteps", "256", "--eval-every", "128", "--eval-deals", "20", "--checkpoint-every", "128",
    "--teacher", "", "--critic-rollouts", "2", "--threads", "1", "--no-progress",
)  # fmt: skip


def make_callbacks(args: Args, folder: RunFolder, state: RunState, snapshots: list = ()) -> list:
    """The run's SB3 callbacks: the pool's upkeep (snapshots, the learner's network at the tables, PFSP),
    checkpoints and paired evaluations."""
    from .callbacks import AtomicCheckpoints, PairedEvaluation, TrainingBar

    upkeep = pool_upkeep(snapshots, args.snapshot_every, args.pfsp)
    callbacks = [upkeep, AtomicCheckpoints(args, folder, state), PairedEvaluation(args, folder)]
    if args.progress:
        details = f"PPO steps are the learner's lead choices; a paired evaluation every {args.eval_every:,} steps"
        callbacks.append(TrainingBar("PPO", details))
    return callbacks


def plot_learning_curve(folder: RunFolder, args: Args) -> Path | None:
    """learning_curve.png from eval.csv: gain over most_copies on paired deals (95% CIs) against timesteps and
    against training time (train.curves draws several runs in one plot), titled with what each point measures."""
    from .curves import plot_runs

    if not read_eval_rows(folder.path / "eval.csv"):
        return None
    title = (
        f"{folder.path.name}: the learner's gain over most_copies in its seat at {args.num_players}-player tables of "
        f"{'+'.join(evaluation_opponents(args))}, {args.rules}, {args.eval_deals:,} paired deals per point"
    )
    return folder.write(folder.path / "learning_curve.png", lambda p: plot_runs([folder.path], p, title))


def train(args: Args) -> Path:
    """Train (or resume) a run in its own folder; return the path of its final model."""
    return _train_in_folder(args, args.resume, args.overwrite)


def _train_in_folder(args: Args, resume: bool, overwrite: bool) -> Path:
    """:func:`train`, resumed or started over as decided here; the folder records the settings as given (a
    ``--overwrite`` nobody passed is not written into its args.json)."""
    run_dir = Path(args.out_dir) / args.run_name
    with RunFolder(run_dir, run_settings(args), resume=resume, overwrite=overwrite) as folder:
        return _train(dataclasses.replace(args, resume=resume, overwrite=overwrite), folder)


def train_or_reuse(args: Args) -> Path:
    """The run folder of ``args``, trained as far as needed: a finished run with these settings is reused, an
    interrupted one resumed, one stopped before its first checkpoint (or ``--overwrite``) trained from the
    start. A folder holding a run with other settings is an error unless ``--overwrite``."""
    run_dir = Path(args.out_dir) / args.run_name
    recorded = recorded_settings(run_dir)
    difference = [] if recorded is None else settings_difference(recorded, run_settings(args))
    if difference and not args.overwrite:
        raise OtherSettings(
            f"{run_dir} holds a run with other settings ({'; '.join(difference)}); "
            "choose another --run-name, or --overwrite to replace it"
        )
    if (run_dir / "final_model.zip").exists() and not args.overwrite:
        say(f"reusing the finished run in {run_dir} (choose another --run-name, or --overwrite, to train again)")
        return run_dir
    resume = not args.overwrite and latest_checkpoint(run_dir) is not None
    try:
        _train_in_folder(args, resume=resume, overwrite=not resume)
    except NothingToResume:  # killed while its first checkpoint was being written: no checkpoint to trust
        say(f"no readable checkpoint in {run_dir}: training it from the start")
        _train_in_folder(args, resume=False, overwrite=True)
    return run_dir


def open_logs(folder, run_dir: Path):
    """SB3's logger of the run: progress.csv and a TensorBoard file, each listed in the folder's manifest as the
    run's own. progress.csv is listed before it is made; the TensorBoard file is named by the library as it opens
    it, so one the manifest could not list (a full disk) is removed again: a write cut short leaves no file that
    would make the folder foreign to the rerun."""
    from stable_baselines3.common.logger import Logger, make_output_format

    folder.manifest.record_pending(run_dir / "progress.csv")
    try:
        tensorboard = make_output_format("tensorboard", str(run_dir))
        logger = Logger(str(run_dir), [ResumableCSV(str(run_dir / "progress.csv")), tensorboard])
        folder.record(run_dir / "progress.csv")
        for events in run_dir.glob("events.out.tfevents.*"):  # the file the TensorBoard output has just opened
            if not folder.manifest.owns(events):
                folder.record(events)
    except OSError:
        for events in run_dir.glob("events.out.tfevents.*"):
            if not folder.manifest.owns(events):
                events.unlink(missing_ok=True)
        raise
    return logger


def kernel_compiled() -> bool:
    """Whether the compiled modules training runs are already in numba's cache (then no compile note is printed)."""
    from snipsnap_env import batch_kernels, kernel_network, lead_values
    from snipsnap_env.jit_cache import is_compiled

    return all(is_compiled(module.__file__) for module in (batch_kernels, lead_values, kernel_network))


def _train(args: Args, folder: RunFolder) -> Path:
    import torch
    from stable_baselines3.common.vec_env import VecNormalize

    set_torch_threads(args.threads)
    run_dir = folder.path
    sizes = ", ".join(map(str, sorted(set(args.ppo_players))))
    compiling = "" if kernel_compiled() else " (the first use of the rules kernel compiles it: about a minute)"
    say(f"training {args.run_name}: {args.total_timesteps:,} PPO steps at tables of {sizes} players into {run_dir}"
        f"{compiling}", flush=True)  # fmt: skip
    env = make_vec_env(args, args.seed)
    model = checkpoint = point = None  # point: where the run stands, when known (train.resume_point)
    if args.resume:

        def load(path):  # SB3 zips and pickles: only the ones this run wrote, unchanged (the manifest's hashes)
            stats = vecnormalize_path(path)
            resumed_env = VecNormalize.load(str(folder.verify(stats)), env.venv) if stats.exists() else env
            point = resume_point.load(path, folder.verify)
            return critic_named(args.critic).model_class(args.surrogate).load(
                folder.verify(path), env=resumed_env, device="cpu"
            ), point

        checkpoint, loaded = load_newest_readable(run_dir, load)
        if loaded is None:
            raise NothingToResume(
                f"--resume: no readable checkpoint in {run_dir / 'checkpoints'}; start over with --overwrite"
            )
        model, point = loaded
        env = model.get_env()
        if point is not None and point.env is not None:  # exactly where the run was
            resume_point.restore(model, point)
        else:  # an older checkpoint: new deals, not the first ones again
            env.venv.seed(stream_seed(args.seed, "resume", model.num_timesteps))
            point = None
        drop_rows_after(folder, model.num_timesteps)
        say(f"resuming {run_dir} from {checkpoint.name} at {model.num_timesteps:,} timesteps")
    else:
        model = new_model(args, env)
    model.set_logger(open_logs(folder, run_dir))
    state = RunState(point)  # the latest resume point, then one taken where each rollout starts
    started = time.perf_counter()
    distilling = checkpoint is None and bool(args.teacher)
    try:
        if distilling:
            from .distill import distill

            torch.manual_seed(stream_seed(args.seed, "network"))
            report = distill(model, args)
            folder.write(run_dir / "distill.json", lambda p: p.write_text(json.dumps(report, indent=2)))
            folder.write(run_dir / "distilled_model.zip", lambda p: save_run_model(model, p, args))
            state.point = resume_point.capture(model)
            save_checkpoint(model, folder, state.point)  # step 0: a resume keeps the distillation
            distilling = False
        if state.point is None:
            state.point = resume_point.capture(model)
        remaining = args.total_timesteps - model.num_timesteps
        if remaining > 0:
            snapshots = first_snapshots(training_pool(model.get_env()), model, args.snapshot_every)
            seat_the_learner(model.get_env(), model)  # the rollouts may seat it from the first deal
            model.learn(
                remaining,
                callback=make_callbacks(args, folder, state, snapshots),
                reset_num_timesteps=checkpoint is None,
            )
    except BaseException:  # a crash, Ctrl-C or SIGTERM (the runner's Terminated) keeps what was learned
        if distilling:  # a half-fitted policy is no checkpoint: a resume would take it for a finished one
            say("\ninterrupted during distillation: nothing to resume; start again with --overwrite")
            raise
        if state.point is not None:  # back to where the current rollout started: nothing half-done
            resume_point.restore(model, state.point)
        path = save_checkpoint(model, folder, state.point)
        say(f"\ninterrupted: saved {path}; continue with --resume --run-name {args.run_name}")
        raise
    final = folder.write(run_dir / "final_model.zip", lambda p: save_run_model(model, p, args))
    if not (run_dir / "best_model.zip").exists():  # no evaluation ran (no PPO steps): the final model is the best
        folder.write(run_dir / "best_model.zip", lambda p: save_run_model(model, p, args))
    curve = plot_learning_curve(folder, args)
    minutes = (time.perf_counter() - started) / 60
    if model.num_timesteps == 0:  # distillation only: no PPO steps, no learning curve
        say(f"distilled a policy from {args.teacher} in {minutes:.1f} min; model: {final}")
    else:
        included = "the kernel's first compile and the evaluations" if compiling else "the evaluations"
        say(f"trained {model.num_timesteps:,} PPO timesteps in {minutes:.1f} min (wall time, with {included}); "
            f"model: {final}; curve: {curve}")  # fmt: skip
    return final


def new_model(args: Args, env):
    """A fresh MaskablePPO model with the run's settings."""
    policy, policy_kwargs = "MlpPolicy", {"net_arch": list(args.net_arch)}
    if args.policy == "rank_shared":
        from agents.rank_policy import RankSharedPolicy as policy

        policy_kwargs.update(rank_context=args.rank_head[0], rank_hidden=args.rank_head[1])
    model = critic_named(args.critic).model_class(args.surrogate)(
        policy,
        env,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        ent_coef=args.ent_coef,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        vf_coef=args.vf_coef,
        clip_range=args.clip_range,
        normalize_advantage=args.normalize_advantage,
        policy_kwargs=policy_kwargs,
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    if args.init_from:  # fine-tuning: the actor's weights from the file, the critic (another input size) fresh
        from agents.model_file import load_policy

        network, _ = load_policy(args.init_from)
        actor = {name: tensor for name, tensor in network.state_dict().items() if not _is_critic(name)}
        missing, unexpected = model.policy.load_state_dict(actor, strict=False)
        assert not unexpected and all(_is_critic(name) for name in missing), (missing, unexpected)
    return model


def _is_critic(name: str) -> bool:
    """Whether a policy parameter belongs to the value function (SB3's value MLP and value head)."""
    return name.startswith(("value_net.", "mlp_extractor.value_net.", "vf_features_extractor."))


def drop_rows_after(folder: RunFolder, steps: int) -> None:
    """Rows of progress.csv and eval.csv logged after ``steps`` (the point a resume restored) are gone from
    the run's history: drop them, so the learning curve never repeats timesteps or runs backwards."""
    for name, column in (("progress.csv", "time/total_timesteps"), ("eval.csv", EVAL_COLUMNS[0])):
        rows = read_rows(folder.path / name)
        header_rows = 1 if rows and column in rows[0] else 0  # eval.csv of older runs has no header
        header, body = rows[:header_rows], rows[header_rows:]
        if not body or (header and column not in header[0]):
            continue
        index = header[0].index(column) if header else 0
        kept = [row for row in body if not row[index] or float(row[index]) <= steps]
        if len(kept) < len(body):

            def write(path, rows=header + kept):
                with open(path, "w", newline="") as f:
                    csv.writer(f).writerows(rows)

            folder.write(folder.path / name, write, hashed=False)


def ResumableCSV(filename: str):
    """SB3's CSV log, continued rather than rewritten when the file exists (a resumed run keeps its rows)."""
    from stable_baselines3.common.logger import CSVOutputFormat

    if not os.path.exists(filename) or os.path.getsize(filename) == 0:
        return CSVOutputFormat(filename)
    log = CSVOutputFormat.__new__(CSVOutputFormat)
    log.file = open(filename, "r+")
    header = log.file.readline().rstrip("\n")
    log.keys = header.split(",") if header else []
    log.separator, log.quotechar = ",", '"'
    log.file.seek(0, os.SEEK_END)
    return log
