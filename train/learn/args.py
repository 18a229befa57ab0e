"""The settings of a training run (``python -m train.train_ppo``'s flags): one dataclass, every value checked
before any work, and the named random streams every part of a run draws from."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS, check_num_players, check_rules_spec

from ..runner.cli import (
    MAX_GAMES,
    MAX_LAYERS,
    MAX_POSITIONS,
    MAX_STEPS,
    MAX_UNITS,
    arg,
    between,
    check_fields,
    deal_count,
    fraction,
    learning_rate_value,
    non_negative_float,
    position_count,
    positive_float,
    rollout_count,
    seed_value,
    settings_command,
    step_count,
)
from ..runner.run_folder import check_folder_name
from .critics import CRITICS, critic_named
from .opponents import make_opponent

SELF = "self"  # in --opponents: a seat the learner holds too (the VecEnv's marker: snipsnap_env.vec_env.SELF)
SNAPSHOT = "snapshot"  # in --opponents: frozen copies of the learner (train.learn.snapshots)
# a new network's rank head (table summary, scorer's hidden units). 48 hidden units update 1.3x faster and matched
# 64 at the default budget over three seeds, but stalled at most_copies' level more often in short runs
# (docs/speed.md, 2026-12-06): kept at 64
RANK_HEAD = (32, 64)


def opponent_files(args) -> dict[str, str]:
    """The SHA-256 of every model file a run learns from or against (its opponents', its teacher's opponents',
    its --init-from): a run is keyed by them, so that a file replaced under the same name is another run."""
    from ..measure.candidates import model_files
    from ..runner.manifest import sha256

    specs = sorted({*args.opponents, *args.teacher_opponents} - {SELF, SNAPSHOT})
    files = model_files({spec: make_opponent(spec) for spec in specs})
    return files | ({"init_from": sha256(args.init_from)} if args.init_from else {})


def run_settings(args) -> dict:
    """What a run's folder records and checks on resume and reuse: its settings, the model files behind them, and
    the code that trains it (train.learn.code_version)."""
    from .code_version import code_version

    files = opponent_files(args)
    played = (*args.opponents, *args.teacher_opponents, args.rollout_policy, args.teacher.partition(":")[0])
    return dataclasses.asdict(args) | ({"model_files": files} if files else {}) | {"code": code_version(played)}


@dataclass
class Args:
    num_players: int = arg(6, "players at the table, 3..8", flag="players")
    rules: str = arg("scarne", f"rules preset ({', '.join(PRESETS)}) or <preset>:<option>=<value>,...")
    opponents: tuple[str, ...] = arg(
        ("random",),
        "the opponents' pool, one drawn per seat per episode: agent names or ppo:<model file>; 'self', a seat the "
        "learner holds too "
        "(self-play, with --critic rollouts); 'snapshot', frozen copies of the learner (--snapshot-every)",
    )
    pure_tables: float = arg(
        0.0, "the share of games whose opponents are all one member of the pool (else one per seat)", check=fraction
    )
    pfsp: float = arg(
        0.0,
        "prioritised fictitious self-play: draw pool members by exp(-gain/T), gain the learner's running gain "
        "over most_copies' lead at their games (--critic rollouts); 0: uniformly",
        check=non_negative_float,
    )
    snapshot_every: int = arg(200_000, "timesteps between snapshots of the learner for 'snapshot'", check=step_count)
    total_timesteps: int = arg(
        300_000,
        "PPO steps (learner decisions), after distillation if any; 0: distillation only",
        check=between(0, MAX_STEPS),
    )
    seed: int = arg(0, "seed of the envs, the opponents and the network", check=seed_value)
    num_envs: int = arg(512, "games played in parallel at each PPO table size", check=between(1, MAX_GAMES))
    vec: str = arg("batch", "'batch' (the batched engine's VecEnv) or 'single' (DummyVecEnv of SingleSeatEnv)")
    n_steps: int = arg(8, "steps per game per PPO rollout", check=between(1, MAX_GAMES))
    batch_size: int = arg(2048, "PPO minibatch size", check=between(2, MAX_POSITIONS))
    n_epochs: int = arg(10, "PPO epochs per rollout", check=between(1, 1000))
    learning_rate: float = arg(3e-3, "Adam learning rate", check=learning_rate_value)
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
    teacher_positions: int = arg(900_000, "positions the teacher labels in all", check=position_count)
    teacher_loss: str = arg("choice", "'choice' (the teacher's best copy count) or 'values' (its values)")
    teacher_players: tuple[int, ...] = arg((3, 4, 5, 6, 7, 8), "table sizes the teacher's positions come from")
    teacher_opponents: tuple[str, ...] = arg(
        ("random", "most_copies"),
        "the opponents at the teacher's tables (agent names or ppo:<model file>), one drawn per seat per deal; the "
        "teacher models each as seated",
    )
    teacher_rounds: int = arg(
        1, "DAgger rounds after the first: label the positions the learned policy reaches", check=between(0, 100)
    )
    teacher_epochs: int = arg(10, "supervised epochs over the labelled positions per round", check=between(1, 1000))
    teacher_learning_rate: float = arg(3e-3, "Adam learning rate of the supervised fit", check=learning_rate_value)
    policy: str = arg(
        "rank_shared", "'mlp' (SB3's MLP) or 'rank_shared' (one network scores every rank: agents.rank_policy)"
    )
    init_from: str = arg(
        "",
        "start the actor from this model file (snipsnap's format, e.g. agents/models/ppo_distilled_scarne.zip) and "
        "fine-tune it: its kind and sizes must match --policy and --rank-head; the critic starts fresh",
    )
    critic: str = arg(
        "rollouts",
        "where PPO's advantages come from: 'observation' (GAE, a value network reading what the learner sees), "
        "'state' (GAE, a value network that also reads every hidden hand, snipsnap_env.state) or 'rollouts' "
        "(each lead's value in the true deal by --critic-rollouts rollouts, train.learn.rollout_critic); "
        "training only: the actor always reads the observation alone",
    )
    critic_rollouts: int = arg(16, "--critic rollouts: rollouts per candidate lead and position", check=rollout_count)
    surrogate: str = arg(
        "auto",
        "PPO's clipped surrogate over the lead taken ('sampled', MaskablePPO's) or, with --critic rollouts, summed "
        "over every legal lead's value, weighted by the policy that collected the rollout ('all_leads': no "
        "sampling noise, only the actor fitted; train.learn.rollout_critic); 'auto': all_leads with --critic "
        "rollouts, else sampled",
    )
    rollout_policy: str = arg(
        "most_copies",
        "--critic rollouts: the learner's later leads in the rollouts: a kernel policy (one-step improvement over "
        "it), or 'self', the learner's current network (approximate policy iteration)",
    )
    ppo_players: tuple[int, ...] = arg(
        (3, 4, 5, 6, 7, 8),
        "table sizes PPO trains at, --num-envs games at each (a size listed twice, twice as many; the evaluation "
        "plays at --players)",
    )
    net_arch: tuple[int, ...] = arg(
        (256, 256), "hidden layer sizes of the value network (and of the MLP policy)", check=between(1, MAX_UNITS)
    )
    rank_head: tuple[int, ...] = arg(
        (),
        "rank_shared policy: table summary size and hidden units of its rank scorer (default: "
        f"{' '.join(map(str, RANK_HEAD))}; with --init-from, the file's own)",
        check=between(1, MAX_UNITS),
    )
    eval_every: int = arg(150_000, "timesteps between paired evaluations against random lead choice", check=step_count)
    eval_deals: int = arg(20_000, "paired deals per evaluation", check=deal_count)
    checkpoint_every: int = arg(150_000, "timesteps between checkpoints", check=step_count)
    out_dir: str = arg("runs", "the folder runs are written to", flag="runs")
    run_name: str = arg("", "the run's folder name; default <teacher or ppo>_<preset>[_<N>p]_s<seed>")
    resume: bool = arg(False, "continue the run in <runs>/<run-name> from its newest readable checkpoint")
    overwrite: bool = arg(False, "start over in <runs>/<run-name>, deleting the run there")
    progress: bool = arg(True, "show a progress bar")
    threads: int = arg(
        1,
        "torch's own CPU threads in each piece of work (the update's shards and the rollouts' forward already run "
        "one per core, on threads that sleep while they wait; a second torch thread made a third of the speed "
        "beside another busy process: docs/speed.md)",
        check=between(1, 256),
    )

    def __post_init__(self):
        check_fields(self)  # every number, before any work
        check_num_players(self.num_players)
        check_rules_spec(self.rules)
        for name in self.teacher_opponents:
            make_opponent(name)
        for name in self.opponents:
            if name not in (SELF, SNAPSHOT):
                make_opponent(name, also=(SELF, SNAPSHOT))
        learners = {SELF, SNAPSHOT} & set(self.opponents)
        if learners and self.vec != "batch":
            raise ValueError(f"--opponents {' '.join(sorted(learners))} needs --vec batch")
        critic = critic_named(self.critic)
        if SELF in self.opponents and not critic.learns_every_seat:
            learns = ", ".join(name for name, c in CRITICS.items() if c.learns_every_seat)
            raise ValueError(
                f"--opponents {SELF}: several seats of one game learn, and only --critic {learns} ignores whose "
                "chips a step's reward holds"
            )
        if self.policy not in ("mlp", "rank_shared"):
            raise ValueError(f"policy got {self.policy!r}; allowed: 'mlp', 'rank_shared'")
        if self.num_envs * self.n_steps > MAX_POSITIONS:  # SB3's rollout buffer holds them all at once
            raise ValueError(
                f"num_envs x n_steps = {self.num_envs * self.n_steps:,} decisions a rollout; allowed: at most "
                f"{MAX_POSITIONS:,}"
            )
        if not 1 <= len(self.net_arch) <= MAX_LAYERS:
            raise ValueError(f"net_arch got {len(self.net_arch)} layers; allowed: 1 to {MAX_LAYERS}")
        if not self.rank_head:  # not given: a fine-tuned model keeps its head, a new one has the default
            self.rank_head = self._head_of_init_from() or RANK_HEAD
        if len(self.rank_head) != 2 or min(self.rank_head) < 1:
            raise ValueError(f"rank_head got {self.rank_head}; allowed: two positive sizes, e.g. 32 64")
        if self.vec not in ("batch", "single"):
            raise ValueError(f"vec got {self.vec!r}; allowed: 'batch', 'single'")
        critic.check(self)
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

    @functools.cached_property
    def _init_from_meta(self) -> dict:
        """What the --init-from file says of its policy, read once (a ValueError if there is no such file)."""
        from agents.model_file import load_policy

        try:
            return load_policy(self.init_from)[1]
        except FileNotFoundError:
            raise ValueError(f"init_from got {self.init_from!r}: no such file") from None

    def _head_of_init_from(self) -> tuple[int, int] | None:
        """The rank head sizes of the --init-from file's policy, if it holds a rank_shared one."""
        if not self.init_from or self.policy != "rank_shared" or self._init_from_meta["policy"] != "rank_shared":
            return None  # no file, or another kind: _check_init_from names the mismatch
        from agents.model_file import rank_head_sizes

        return rank_head_sizes(self._init_from_meta.get("policy_kwargs") or {})

    def _check_init_from(self) -> None:
        """The --init-from file loads and its actor has this run's shape (before any work)."""
        meta = self._init_from_meta
        kwargs = meta.get("policy_kwargs") or {}  # load_policy checked it, and its absence means the defaults
        from agents.model_file import rank_head_sizes
        from snipsnap_env.observation import OBS_DIM, column_map

        if meta["policy"] != self.policy:  # the kind first: no layout makes the other kind fine-tune
            raise ValueError(
                f"init_from {self.init_from} holds a {meta['policy']} policy; this run trains a {self.policy} policy "
                f"(--policy {meta['policy']} fine-tunes it)"
            )
        if column_map(meta["layout"])[0] is not None:  # the same test the player applies to feed it its columns
            raise ValueError(
                f"init_from {self.init_from} was trained on an earlier observation ({meta['observation_dim']} "
                f"columns, this version makes {OBS_DIM}); it plays, but fine-tuning needs a model of this version's"
            )
        sizes = rank_head_sizes(kwargs)
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


STREAMS = ("env", "opponents", "evaluation deals", "evaluation opponents", "network", "resume", "learner ties")


def stream_seed(seed: int, name: str, *index: int) -> int:
    """The seed of one named random stream of a run, derived from the run's seed by ``SeedSequence``
    (no ad-hoc offsets that could make two streams collide)."""
    # every word after the seed is at least 1: SeedSequence reads a trailing 0 word as no word at all
    words = [seed, 1 + STREAMS.index(name), *(1 + i for i in index)]
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def ppo_tables(args: Args) -> list[int]:
    """The table sizes PPO trains at (--players when --ppo-players is given empty)."""
    return list(args.ppo_players or (args.num_players,))


def trained_on(args: Args) -> dict:
    """The tables a run's model learned: the teacher's table sizes and, with PPO steps, the training table."""
    players = set(args.teacher_players) if args.teacher else set()
    if args.total_timesteps > 0:
        players.update(ppo_tables(args))
    opponents = set(args.teacher_opponents if args.teacher else ()) | set(
        args.opponents if args.total_timesteps else ()
    )
    return {"players": sorted(players), "rules": args.rules, "opponents": sorted(opponents)}


def save_run_model(model, path, args: Args):
    """The run's model in the project's format, with what it learned and how (:func:`training_record`)."""
    from agents.ppo import save_model

    return save_model(model, path, trained_on(args), training_record(args, model))


def training_record(args: Args, model) -> dict:
    """How a run's model was trained, saved with it: the algorithm (``ppo``; ``distillation`` or
    ``distillation+ppo`` with a teacher), the settings that shape the model, and the command."""
    algorithm = "+".join(["distillation"] * bool(args.teacher) + ["ppo"] * bool(args.total_timesteps))
    local = ("out_dir", "run_name", "resume", "overwrite", "progress", "threads")  # where and how, not what
    settings = {k: v for k, v in dataclasses.asdict(args).items() if k not in local}
    return {
        "algorithm": algorithm,
        "ppo_timesteps": int(model.num_timesteps),
        "settings": settings,
        "command": settings_command("train.train_ppo", args, skip=local),
    }
