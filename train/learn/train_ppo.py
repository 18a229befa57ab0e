"""Train a MaskablePPO policy for Snip Snap Snorem: by default PPO from scratch over every table size, with
advantages from rollouts of the true deal (``--critic rollouts``, train.learn.rollout_critic); optionally
distilled from the search player first (``--teacher``, train.learn.distill).

PPO runs on the batched engine's VecEnv (``--vec batch``, ``--num-envs`` games at each ``--ppo-players``
size; ``--vec single`` uses SB3's DummyVecEnv over the gymnasium single-seat env, at one size). Writes to
``<runs>/<run-name>/`` (a folder the run owns): TensorBoard and CSV logs, checkpoints (and one on a crash,
Ctrl-C or SIGTERM), ``best_model.zip``, ``final_model.zip``, ``distill.json``, ``eval.csv`` and
``learning_curve.png``. ``--resume`` continues an interrupted run from its newest readable checkpoint;
``--overwrite`` starts over.

    python -m train.train_ppo                                  # PPO from scratch: about 7 minutes on 2 CPU cores
    python -m train.train_ppo --total-timesteps 3000000 --threads 1 --run-name ppo_scratch  # the shipped ppo_scratch
    python -m train.train_ppo --teacher pimc:256 --teacher-positions 1800000 --teacher-rounds 2 --teacher-epochs 6 \
        --teacher-learning-rate 1e-3 --total-timesteps 0 --run-name distill_pimc256_rank   # the shipped ppo
    python -m train.train_ppo --players 4 --ppo-players 4 --rules parlett --opponents random self snapshot
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import agents
from agents.ppo import save_model
from agents.threads import set_torch_threads
from snipsnap_env.kernel import POLICIES
from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS, check_num_players

from ..cli import (
    add_dataclass_flags,
    arg,
    at_least,
    check_fields,
    fraction,
    from_namespace,
    new_parser,
    non_negative_float,
    on_sigterm,
    positive_float,
    require,
    stops_cleanly,
)
from ..paired import PairedDeals, mean_ci, play_paired
from ..run_folder import (
    NothingToResume,
    OtherSettings,
    Refused,
    RunFolder,
    check_folder_name,
    checkpoints,
    load_newest_readable,
    recorded_settings,
    settings_difference,
)
from . import resume_point
from .live_policy import LivePolicy
from .snapshots import first_snapshots

CRITICS = ("observation", "state", "rollouts")
SELF = "self"  # in --opponents: a seat the learner holds too (the VecEnv's marker: snipsnap_env.vec_env.SELF)
SNAPSHOT = "snapshot"  # in --opponents: frozen copies of the learner (train.learn.snapshots)


@dataclass
class Args:
    num_players: int = arg(6, "players at the table, 3..8", flag="players")
    rules: str = arg("scarne", f"rules preset: {', '.join(PRESETS)}")
    opponents: tuple[str, ...] = arg(
        ("random",),
        "the opponents' pool, one drawn per seat per episode: agent names; 'self', a seat the learner holds too "
        "(self-play, with --critic rollouts); 'snapshot', frozen copies of the learner (--snapshot-every)",
    )
    snapshot_every: int = arg(200_000, "timesteps between snapshots of the learner for 'snapshot'", check=at_least(1))
    total_timesteps: int = arg(
        600_000, "PPO steps (learner decisions), after distillation if any; 0: distillation only", check=at_least(0)
    )
    seed: int = arg(0, "seed of the envs, the opponents and the network", check=at_least(0))
    num_envs: int = arg(128, "games played in parallel at each PPO table size", check=at_least(1))
    vec: str = arg("batch", "'batch' (the batched engine's VecEnv) or 'single' (DummyVecEnv of SingleSeatEnv)")
    n_steps: int = arg(32, "steps per game per PPO rollout", check=at_least(1))
    batch_size: int = arg(2048, "PPO minibatch size", check=at_least(2))
    n_epochs: int = arg(10, "PPO epochs per rollout", check=at_least(1))
    learning_rate: float = arg(2e-3, "Adam learning rate", check=positive_float)
    ent_coef: float = arg(0.0, "entropy bonus", check=non_negative_float)
    gamma: float = arg(1.0, "discount (a deal is short and its chips are what counts: 1)", check=fraction)
    gae_lambda: float = arg(0.95, "GAE lambda", check=fraction)
    vf_coef: float = arg(0.5, "value loss weight", check=non_negative_float)
    clip_range: float = arg(0.2, "PPO clip range", check=positive_float)
    normalize_advantage: bool = arg(True, "normalise advantages per minibatch")
    teacher: str = arg(
        "",
        "pretrain on a search player's choices first (train.distill), e.g. pimc:128; model_search:64 seats the "
        "--teacher-opponents (learned ones too) in its worlds as they sit; '' for none",
    )
    teacher_positions: int = arg(900_000, "positions the teacher labels in all", check=at_least(1))
    teacher_loss: str = arg("choice", "'choice' (the teacher's best copy count) or 'values' (its values)")
    teacher_players: tuple[int, ...] = arg((3, 4, 5, 6, 7, 8), "table sizes the teacher's positions come from")
    teacher_opponents: tuple[str, ...] = arg(
        ("random", "most_copies"),
        "the opponents at the teacher's tables, one drawn per seat per deal; the teacher models each as seated",
    )
    teacher_rounds: int = arg(
        1, "DAgger rounds after the first: label the positions the learned policy reaches", check=at_least(0)
    )
    teacher_epochs: int = arg(10, "supervised epochs over the labelled positions per round", check=at_least(1))
    teacher_learning_rate: float = arg(3e-3, "Adam learning rate of the supervised fit", check=positive_float)
    policy: str = arg(
        "rank_shared", "'mlp' (SB3's MLP) or 'rank_shared' (one network scores every rank: agents.rank_policy)"
    )
    init_from: str = arg(
        "",
        "start the actor from this model file (snipsnap's format, e.g. agents/models/ppo_scarne.zip) and "
        "fine-tune it: its kind and sizes must match --policy and --rank-head; the critic starts fresh",
    )
    critic: str = arg(
        "rollouts",
        "where PPO's advantages come from: 'observation' (GAE, a value network reading what the learner sees), "
        "'state' (GAE, a value network that also reads every hidden hand, snipsnap_env.state) or 'rollouts' "
        "(each lead's value in the true deal by --critic-rollouts rollouts, train.learn.rollout_critic); "
        "training only: the actor always reads the observation alone",
    )
    critic_rollouts: int = arg(32, "--critic rollouts: rollouts per candidate lead and position", check=at_least(1))
    rollout_policy: str = arg(
        "most_copies", "--critic rollouts: the learner's later leads in the rollouts (a kernel policy)"
    )
    ppo_players: tuple[int, ...] = arg(
        (3, 4, 5, 6, 7, 8), "table sizes PPO trains at, --num-envs games at each (the evaluation plays at --players)"
    )
    net_arch: tuple[int, ...] = arg(
        (256, 256), "hidden layer sizes of the value network (and of the MLP policy)", check=at_least(1)
    )
    rank_head: tuple[int, ...] = arg(
        (32, 64), "rank_shared policy: table summary size and hidden units of its rank scorer", check=at_least(1)
    )
    eval_every: int = arg(150_000, "timesteps between paired evaluations against random lead choice", check=at_least(1))
    eval_deals: int = arg(20_000, "paired deals per evaluation", check=at_least(2))
    checkpoint_every: int = arg(150_000, "timesteps between checkpoints", check=at_least(1))
    out_dir: str = arg("runs", "the folder runs are written to", flag="runs")
    run_name: str = arg("", "the run's folder name; default <teacher or ppo>_<preset>[_<N>p]_s<seed>")
    resume: bool = arg(False, "continue the run in <runs>/<run-name> from its newest readable checkpoint")
    overwrite: bool = arg(False, "start over in <runs>/<run-name>, deleting the run there")
    progress: bool = arg(True, "show a progress bar")
    threads: int = arg(2, "torch CPU threads", check=at_least(1))

    def __post_init__(self):
        check_fields(self)  # every number, before any work
        check_num_players(self.num_players)
        if self.rules not in PRESETS:
            raise ValueError(f"unknown rules preset {self.rules!r}; known presets: {', '.join(PRESETS)}")
        for name in self.teacher_opponents:
            if name not in agents.names():
                raise ValueError(f"unknown opponent {name!r}; known agents: {', '.join(agents.names())}")
        for name in self.opponents:
            if name not in (*agents.names(), SELF, SNAPSHOT):
                known = ", ".join([*agents.names(), SELF, SNAPSHOT])
                raise ValueError(f"unknown opponent {name!r}; known: {known}")
        learners = {SELF, SNAPSHOT} & set(self.opponents)
        if learners and self.vec != "batch":
            raise ValueError(f"--opponents {' '.join(sorted(learners))} needs --vec batch")
        if SELF in self.opponents and self.critic != "rollouts":
            raise ValueError(
                f"--opponents {SELF}: several seats of one game learn, and only --critic rollouts ignores whose "
                "chips a step's reward holds"
            )
        if self.policy not in ("mlp", "rank_shared"):
            raise ValueError(f"policy got {self.policy!r}; allowed: 'mlp', 'rank_shared'")
        if len(self.rank_head) != 2 or min(self.rank_head) < 1:
            raise ValueError(f"rank_head got {self.rank_head}; allowed: two positive sizes, e.g. 32 64")
        if self.vec not in ("batch", "single"):
            raise ValueError(f"vec got {self.vec!r}; allowed: 'batch', 'single'")
        if self.critic not in CRITICS:
            raise ValueError(f"critic got {self.critic!r}; allowed: {', '.join(map(repr, CRITICS))}")
        if self.critic != "observation" and (self.policy != "rank_shared" or self.vec != "batch"):
            raise ValueError(
                f"critic {self.critic!r} needs --policy rank_shared (its actor reads the observation only; an MLP "
                "actor would see the hidden deal) and --vec batch (the batched engine supplies the deal)"
            )
        if self.critic == "rollouts" and self.rollout_policy not in POLICIES:
            raise ValueError(
                f"rollout_policy got {self.rollout_policy!r}; the rollouts run in the kernel, which plays "
                f"{', '.join(POLICIES)}"
            )
        for n in self.ppo_players:
            check_num_players(n)
        if self.vec == "single" and ppo_tables(self) != [self.num_players]:
            raise ValueError(
                f"--vec single trains at one table size, and --ppo-players is {' '.join(map(str, self.ppo_players))} "
                f"(its default is every size): add --ppo-players {self.num_players}, or use --vec batch"
            )
        if not self.teacher and self.total_timesteps == 0:
            raise ValueError("nothing to train: give a --teacher to distil, or --total-timesteps for PPO")
        for n in self.teacher_players:
            check_num_players(n)
        if self.teacher_loss not in ("choice", "values"):
            raise ValueError(f"teacher_loss got {self.teacher_loss!r}; allowed: 'choice', 'values'")
        if self.teacher:
            from .distill import teacher_from_spec

            teacher_from_spec(self.teacher, 0)
        if self.init_from:
            self._check_init_from()
        if not self.run_name:  # what the run learns from, the rules, the PPO table if any, the seed
            sources = ([self.teacher.replace(":", "")] if self.teacher else []) + ["ppo"] * bool(self.total_timesteps)
            tables = ppo_tables(self)
            every_size = self.total_timesteps == 0 or tables == list(range(MIN_PLAYERS, MAX_PLAYERS + 1))
            table = "" if every_size else f"_{'+'.join(map(str, tables))}p"
            self.run_name = f"{'_'.join(sources)}_{self.rules}{table}_s{self.seed}"
        check_folder_name(self.run_name)

    def _check_init_from(self) -> None:
        """The --init-from file loads and its actor has this run's shape (before any work)."""
        from agents.model_file import load_policy

        try:
            _, meta = load_policy(self.init_from)
        except FileNotFoundError:
            raise ValueError(f"init_from got {self.init_from!r}: no such file") from None
        kwargs = meta.get("policy_kwargs") or {}  # load_policy checked it, and its absence means the defaults
        if meta["policy"] != self.policy:
            raise ValueError(
                f"init_from {self.init_from} holds a {meta['policy']} policy; this run trains a {self.policy} policy "
                f"(--policy {meta['policy']} fine-tunes it)"
            )
        sizes = (kwargs.get("rank_context", 32), kwargs.get("rank_hidden", 64))
        if self.policy == "rank_shared" and sizes != tuple(self.rank_head):
            raise ValueError(
                f"init_from {self.init_from} holds a rank_shared policy with head {sizes}; this run's --rank-head is "
                f"{tuple(self.rank_head)} (--rank-head {sizes[0]} {sizes[1]} fine-tunes it)"
            )
        if self.policy == "mlp" and kwargs.get("net_arch") != list(self.net_arch):
            raise ValueError(
                f"init_from {self.init_from}: its MLP is {kwargs.get('net_arch')}; this run's --net-arch is "
                f"{list(self.net_arch)}"
            )


STREAMS = ("env", "opponents", "evaluation deals", "evaluation opponents", "network", "resume")


def stream_seed(seed: int, name: str, *index: int) -> int:
    """The seed of one named random stream of a run, derived from the run's seed by ``SeedSequence``
    (no ad-hoc offsets that could make two streams collide)."""
    # every word after the seed is at least 1: SeedSequence reads a trailing 0 word as no word at all
    words = [seed, 1 + STREAMS.index(name), *(1 + i for i in index)]
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def opponent_pool(args: Args, seed: int) -> list:
    """The training opponents: policies, SELF for a seat the learner holds, Snapshots for frozen learners."""
    from snipsnap_env import vec_env

    from .snapshots import Snapshots

    def member(i, name):
        seed_i = stream_seed(seed, "opponents", i)
        if name == SELF:
            return vec_env.SELF
        return Snapshots(seed_i) if name == SNAPSHOT else agents.make(name, seed=seed_i)

    return [member(i, name) for i, name in enumerate(args.opponents)]


def training_pool(env) -> list:
    """The opponents' pool of the training env (after a resume, the restored env's own); [] for --vec single."""
    from snipsnap_env.vec_env import TablesVecEnv

    inner = env.unwrapped  # inside VecNormalize(VecMonitor(...))
    table = inner.tables[0] if isinstance(inner, TablesVecEnv) else inner  # the tables share one pool
    return list(getattr(table, "opponents", None) or ())


def evaluation_opponents(args: Args) -> list[str]:
    """The agents of the training pool (the learner's copies and snapshots aside); random lead choice if none."""
    return [name for name in args.opponents if name in agents.names()] or ["random"]


def make_vec_env(args: Args, seed: int, pool: list | None = None):
    """The training VecEnv (over ``pool``, default :func:`opponent_pool`) with a VecMonitor (episode stats) and
    reward normalisation."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor, VecNormalize

    pool = opponent_pool(args, seed) if pool is None else pool
    if args.vec == "batch":
        from snipsnap_env.vec_env import SnipSnapVecEnv, TablesVecEnv

        tables = [
            SnipSnapVecEnv(
                args.num_envs,
                n,
                rules=args.rules,
                opponents=pool,
                seed=stream_seed(seed, "env", i),
                critic_state=args.critic == "state",
                lead_values=args.critic_rollouts if args.critic == "rollouts" else 0,
                rollout_policy=args.rollout_policy,
            )
            for i, n in enumerate(ppo_tables(args))
        ]
        venv = tables[0] if len(tables) == 1 else TablesVecEnv(tables)
    else:
        from snipsnap_env.single_agent import SingleSeatEnv

        def make(i):
            return lambda: SingleSeatEnv(
                args.num_players,
                args.rules,
                opponents=[
                    agents.make(n, seed=stream_seed(seed, "opponents", i, j)) for j, n in enumerate(args.opponents)
                ],
            )

        if ppo_tables(args) != [args.num_players]:
            raise ValueError("--vec single trains at one table size: give --ppo-players only with --vec batch")
        venv = DummyVecEnv([make(i) for i in range(args.num_envs)])
        venv.seed(stream_seed(seed, "env"))
    # Chips swing by ±50 in a deal; scaling returns keeps the value loss in range. Inference needs no stats.
    return VecNormalize(VecMonitor(venv), norm_obs=False, norm_reward=True, gamma=1.0)


def ppo_tables(args: Args) -> list[int]:
    """The table sizes PPO trains at (--players when --ppo-players is given empty)."""
    return list(args.ppo_players or (args.num_players,))


def model_class(args: Args):
    """MaskablePPO, or its subclass whose advantages come from rollouts of the true deal."""
    if args.critic == "rollouts":
        from .rollout_critic import RolloutCriticPPO

        return RolloutCriticPPO
    from sb3_contrib import MaskablePPO

    return MaskablePPO


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the most timesteps in ``run_dir/checkpoints`` (readable or not)."""
    found = checkpoints(run_dir)
    return found[0] if found else None


def vecnormalize_path(checkpoint: Path) -> Path:
    return checkpoint.with_name(checkpoint.name.replace("ppo_", "ppo_vecnormalize_").replace(".zip", ".pkl"))


def make_callbacks(args: Args, folder: RunFolder, run_state: dict, snapshots: list = ()):
    from stable_baselines3.common.callbacks import BaseCallback

    from .snapshots import snapshot_callback

    class PairedEvaluation(BaseCallback):
        """Every ``eval_every`` steps: the greedy policy on paired deals against random lead choice and
        most_copies in its seat (``EVAL_COLUMNS`` of eval.csv); keeps the best model."""

        def __init__(self):
            super().__init__()
            self.deals = PairedDeals.draw(
                args.eval_deals,
                args.num_players,
                len(evaluation_opponents(args)),
                stream_seed(args.seed, "evaluation deals"),
            )
            # a resumed run keeps the best model it already had unless a new evaluation beats it, and counts
            # its training time on from the last evaluation it kept
            earlier = read_rows(folder.path / "eval.csv")
            self.best = max((float(row[2]) for row in earlier), default=-np.inf)
            self.seconds = float(earlier[-1][6]) if earlier and len(earlier[-1]) > 6 else 0.0
            self.clock = time.perf_counter()
            self.next_eval = 0
            self.reference_chips = None

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_eval:
                self.next_eval = self.num_timesteps + args.eval_every
                self.evaluate()
            return True

        def evaluate(self):
            pool = lambda: [  # noqa: E731
                agents.make(n, seed=stream_seed(args.seed, "evaluation opponents", i))
                for i, n in enumerate(evaluation_opponents(args))
            ]
            now = time.perf_counter()
            self.seconds, self.clock = self.seconds + now - self.clock, now
            if self.reference_chips is None:
                self.reference_chips = [
                    play_paired(agents.make(name, seed=args.seed), pool(), self.deals, args.rules)
                    for name in ("random", "most_copies")
                ]
            chips = play_paired(LivePolicy(self.model), pool(), self.deals, args.rules)
            (mean, ci), (gain, gain_ci) = [mean_ci(chips - base) for base in self.reference_chips]
            self.logger.record("eval/chips_per_deal", float(chips.mean()))
            self.logger.record("eval/diff_vs_random", mean)
            self.logger.record("eval/gain_over_most_copies", gain)
            row = [self.num_timesteps, float(chips.mean()), mean, ci, gain, gain_ci, round(self.seconds, 1)]
            with open(folder.path / "eval.csv", "a", newline="") as f:
                csv.writer(f).writerow(row)
            self.clock = time.perf_counter()  # the evaluation's own time is not training time
            folder.record(folder.path / "eval.csv")
            if mean > self.best:
                self.best = mean
                folder.write(folder.path / "best_model.zip", lambda p: save_model(self.model, p, trained_on(args)))

        def _on_training_end(self) -> None:
            self.evaluate()

    class AtomicCheckpoints(BaseCallback):
        """Where a rollout starts: a resume point (kept for an interruption), and every ``checkpoint_every``
        steps a checkpoint with it, written atomically (see :func:`save_checkpoint`)."""

        def __init__(self):
            super().__init__()
            self.next_save = args.checkpoint_every

        def _on_rollout_start(self) -> None:
            run_state["point"] = resume_point.capture(self.model)
            if self.num_timesteps >= self.next_save:
                self.next_save = self.num_timesteps + args.checkpoint_every
                save_checkpoint(self.model, folder, run_state["point"])

        def _on_step(self) -> bool:
            return True

    return [AtomicCheckpoints(), PairedEvaluation()] + (
        [snapshot_callback(snapshots, args.snapshot_every)] * bool(snapshots)
    )


def save_checkpoint(model, folder: RunFolder, point=None) -> Path:
    """``checkpoints/ppo_<steps>_steps.zip``, its reward-normalisation stats and its resume point, each
    written to a temporary file, renamed and hashed in the run's manifest; the zip last, so a checkpoint that
    exists has the others. (These are SB3 and pickle files: a resume loads them only if the hashes match.)"""
    path = folder.path / "checkpoints" / f"ppo_{model.num_timesteps}_steps.zip"
    env = model.get_env()
    if env is not None and hasattr(env, "save"):
        folder.write(vecnormalize_path(path), lambda p: env.save(str(p)))
    if point is not None:
        folder.write(resume_point.path_for(path), lambda p: resume_point.save(point, p))
    folder.write(path, lambda p: model.save(p))
    return path


def read_rows(path: Path) -> list[list[str]]:
    """The rows of a CSV file ([] when there is none)."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.reader(f))


#: eval.csv's columns (no header row): one row per evaluation during training
EVAL_COLUMNS = (
    "timesteps",
    "chips_per_deal",
    "diff_vs_random",
    "ci95",
    "gain_over_most_copies",
    "gain_ci95",
    "seconds",
)


def plot_learning_curve(folder: RunFolder) -> Path | None:
    """learning_curve.png from eval.csv: gain over most_copies on paired deals (95% CIs) against timesteps and
    against training time (train.curves draws several runs in one plot)."""
    from .curves import plot_runs

    if not read_rows(folder.path / "eval.csv"):
        return None
    return folder.write(folder.path / "learning_curve.png", lambda p: plot_runs([folder.path], p, folder.path.name))


def train(args: Args) -> Path:
    """Train (or resume) a run in its own folder; return the path of its final model."""
    run_dir = Path(args.out_dir) / args.run_name
    with RunFolder(run_dir, dataclasses.asdict(args), resume=args.resume, overwrite=args.overwrite) as folder:
        return _train(args, folder)


def train_or_reuse(args: Args) -> Path:
    """The run folder of ``args``, trained as far as needed: a finished run with these settings is reused, an
    interrupted one resumed, one stopped before its first checkpoint (or ``--overwrite``) trained from the
    start. A folder holding a run with other settings is an error unless ``--overwrite``."""
    run_dir = Path(args.out_dir) / args.run_name
    recorded = recorded_settings(run_dir)
    difference = [] if recorded is None else settings_difference(recorded, dataclasses.asdict(args))
    if difference and not args.overwrite:
        raise OtherSettings(
            f"{run_dir} holds a run with other settings ({'; '.join(difference)}); "
            "choose another --run-name, or --overwrite to replace it"
        )
    if (run_dir / "final_model.zip").exists() and not args.overwrite:
        print(f"reusing the finished run in {run_dir} (choose another --run-name, or --overwrite, to train again)")
        return run_dir
    resume = not args.overwrite and latest_checkpoint(run_dir) is not None
    train(dataclasses.replace(args, resume=resume, overwrite=not resume))
    return run_dir


def _train(args: Args, folder: RunFolder) -> Path:
    import torch
    from stable_baselines3.common.logger import Logger, make_output_format
    from stable_baselines3.common.vec_env import VecNormalize

    set_torch_threads(args.threads)
    run_dir = folder.path
    env = make_vec_env(args, args.seed)
    model = checkpoint = point = None  # point: where the run stands, when known (train.resume_point)
    if args.resume:

        def load(path):  # SB3 zips and pickles: only the ones this run wrote, unchanged (the manifest's hashes)
            stats = vecnormalize_path(path)
            resumed_env = VecNormalize.load(str(folder.verify(stats)), env.venv) if stats.exists() else env
            point = resume_point.load(path, folder.verify)
            return model_class(args).load(folder.verify(path), env=resumed_env, device="cpu"), point

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
        print(f"resuming {run_dir} from {checkpoint.name} at {model.num_timesteps:,} timesteps")
    else:
        model = new_model(args, env)
    tensorboard = make_output_format("tensorboard", str(run_dir))
    model.set_logger(Logger(str(run_dir), [ResumableCSV(str(run_dir / "progress.csv")), tensorboard]))
    folder.record(run_dir / "progress.csv")
    for events in run_dir.glob("events.out.tfevents.*"):  # the file the TensorBoard output has just opened
        if not folder.manifest.owns(events):
            folder.record(events)
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    run_state = {"point": point}  # the latest resume point, then one taken where each rollout starts
    started = time.perf_counter()
    distilling = checkpoint is None and bool(args.teacher)
    try:
        if distilling:
            from .distill import distill

            torch.manual_seed(stream_seed(args.seed, "network"))
            report = distill(model, args)
            folder.write(run_dir / "distill.json", lambda p: p.write_text(json.dumps(report, indent=2)))
            folder.write(run_dir / "distilled_model.zip", lambda p: save_model(model, p, trained_on(args)))
            run_state["point"] = resume_point.capture(model)
            save_checkpoint(model, folder, run_state["point"])  # step 0: a resume keeps the distillation
            distilling = False
        if run_state["point"] is None:
            run_state["point"] = resume_point.capture(model)
        remaining = args.total_timesteps - model.num_timesteps
        if remaining > 0:
            snapshots = first_snapshots(training_pool(model.get_env()), model)  # before the env's first deal
            model.learn(
                remaining,
                callback=make_callbacks(args, folder, run_state, snapshots),
                progress_bar=args.progress,
                reset_num_timesteps=checkpoint is None,
            )
    except BaseException:  # a crash, Ctrl-C or SIGTERM keeps what was learned
        if distilling:  # a half-fitted policy is no checkpoint: a resume would take it for a finished one
            print("\ninterrupted during distillation: nothing to resume; start again with --overwrite")
            raise
        if run_state["point"] is not None:  # back to where the current rollout started: nothing half-done
            resume_point.restore(model, run_state["point"])
        path = save_checkpoint(model, folder, run_state["point"])
        print(f"\ninterrupted: saved {path}; continue with --resume --run-name {args.run_name}")
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
    final = folder.write(run_dir / "final_model.zip", lambda p: save_model(model, p, trained_on(args)))
    if not (run_dir / "best_model.zip").exists():  # no evaluation ran (no PPO steps): the final model is the best
        folder.write(run_dir / "best_model.zip", lambda p: save_model(model, p, trained_on(args)))
    curve = plot_learning_curve(folder)
    minutes = (time.perf_counter() - started) / 60
    if model.num_timesteps == 0:  # distillation only: no PPO steps, no learning curve
        print(f"distilled a policy from {args.teacher} in {minutes:.1f} min; model: {final}")
    else:
        print(f"trained {model.num_timesteps:,} PPO timesteps in {minutes:.1f} min; model: {final}; curve: {curve}")
    return final


def trained_on(args: Args) -> dict:
    """The tables a run's model learned: the teacher's table sizes and, with PPO steps, the training table."""
    players = set(args.teacher_players) if args.teacher else set()
    if args.total_timesteps > 0:
        players.update(ppo_tables(args))
    opponents = set(args.teacher_opponents if args.teacher else ()) | set(
        args.opponents if args.total_timesteps else ()
    )
    return {"players": sorted(players), "rules": args.rules, "opponents": sorted(opponents)}


def new_model(args: Args, env):
    """A fresh MaskablePPO model with the run's settings."""
    policy, policy_kwargs = "MlpPolicy", {"net_arch": list(args.net_arch)}
    if args.policy == "rank_shared":
        from agents.rank_policy import RankSharedPolicy as policy

        policy_kwargs.update(rank_context=args.rank_head[0], rank_hidden=args.rank_head[1])
    model = model_class(args)(
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
    for name, header_rows, column in (("progress.csv", 1, "time/total_timesteps"), ("eval.csv", 0, 0)):
        rows = read_rows(folder.path / name)
        header, body = rows[:header_rows], rows[header_rows:]
        if not body or (header and column not in header[0]):
            continue
        index = header[0].index(column) if header else column
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


def parser():
    return add_dataclass_flags(Args, new_parser(__doc__, __name__))


TRAINING_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "safetensors", "matplotlib", "tensorboard")


def main(argv=None) -> Path:
    job = parser()
    namespace = job.parse_args(argv)
    require(job, "train", *TRAINING_MODULES)
    args = from_namespace(Args, namespace, job)
    with refusals_and_interrupts(job):
        return train(args)


@contextlib.contextmanager
def refusals_and_interrupts(job):
    """A refusal (busy, taken or other settings: see run_folder.Refused) as one line and exit status 2; Ctrl-C
    or SIGTERM, after the run has saved and said so, as exit status 130 or 143 without a traceback."""
    with stops_cleanly():  # the run has said where it saved
        try:
            yield
        except Refused as error:
            job.error(str(error))


if __name__ == "__main__":
    main()
