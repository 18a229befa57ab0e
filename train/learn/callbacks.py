"""What a training run does between PPO's steps: checkpoints written atomically (with a resume point), paired
evaluations against random lead choice and most_copies in the learner's seat (eval.csv, best_model.zip), and
snapshots of the learner for ``--opponents snapshot``. Each is an SB3 callback of its own (this module needs the
training extras: train_ppo imports it only when it trains)."""

from __future__ import annotations

import time

import numpy as np

import agents

from ..measure.paired import PairedDeals, mean_ci, play_paired
from ..runner.cli import say
from ..runner.run_folder import RunFolder
from . import resume_point
from .args import Args, save_run_model, stream_seed
from .checkpoints import RunState, append_eval_row, read_eval_rows, save_checkpoint
from .live_policy import LivePolicy
from .opponents import make_opponent
from .pool import evaluation_opponents


def _callback_base():
    from stable_baselines3.common.callbacks import BaseCallback

    return BaseCallback


class PairedEvaluation(_callback_base()):
    """Every ``eval_every`` steps: the greedy policy on paired deals against random lead choice and most_copies
    in its seat (``EVAL_COLUMNS`` of eval.csv); keeps the best model."""

    def __init__(self, args: Args, folder: RunFolder):
        super().__init__()
        self.args, self.folder = args, folder
        self.deals = PairedDeals.draw(
            args.eval_deals,
            args.num_players,
            len(evaluation_opponents(args)),
            stream_seed(args.seed, "evaluation deals"),
            args.rules,
        )
        # a resumed run keeps the best model it already had unless a new evaluation beats it, and counts its
        # training time on from the last evaluation it kept
        earlier = read_eval_rows(folder.path / "eval.csv")
        self.best = max((float(row[2]) for row in earlier), default=-np.inf)
        self.seconds = float(earlier[-1][6]) if earlier and len(earlier[-1]) > 6 else 0.0
        self.clock = time.perf_counter()
        self.next_eval = 0
        self.reference_chips = None

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_eval:
            self.next_eval = self.num_timesteps + self.args.eval_every
            self.evaluate()
        return True

    def _pool(self) -> list:
        names = evaluation_opponents(self.args)
        return [make_opponent(n, stream_seed(self.args.seed, "evaluation opponents", i)) for i, n in enumerate(names)]

    def evaluate(self) -> None:
        args, folder = self.args, self.folder
        now = time.perf_counter()
        self.seconds, self.clock = self.seconds + now - self.clock, now
        if self.reference_chips is None:
            self.reference_chips = [
                play_paired(agents.make(name, seed=args.seed), self._pool(), self.deals, args.rules)
                for name in ("random", "most_copies")
            ]
        learner = LivePolicy(self.model, seed=stream_seed(args.seed, "learner ties"))  # the same draws each time
        chips = play_paired(learner, self._pool(), self.deals, args.rules)
        (mean, ci), (gain, gain_ci) = [mean_ci(chips - base) for base in self.reference_chips]
        self.logger.record("eval/chips_per_deal", float(chips.mean()))
        self.logger.record("eval/diff_vs_random", mean)
        self.logger.record("eval/gain_over_most_copies", gain)
        row = [self.num_timesteps, float(chips.mean()), mean, ci, gain, gain_ci, round(self.seconds, 1)]
        append_eval_row(folder.path / "eval.csv", row)
        self.clock = time.perf_counter()  # the evaluation's own time is not training time
        folder.record(folder.path / "eval.csv")
        if mean > self.best:
            self.best = mean
            folder.write(folder.path / "best_model.zip", lambda p: save_run_model(self.model, p, self.args))

    def _on_training_end(self) -> None:
        self.evaluate()


class AtomicCheckpoints(_callback_base()):
    """Where a rollout starts: a resume point (kept for an interruption), and every ``checkpoint_every`` steps a
    checkpoint with it, written atomically (see :func:`save_checkpoint`)."""

    def __init__(self, args: Args, folder: RunFolder, state: RunState):
        super().__init__()
        self.folder, self.state, self.every = folder, state, args.checkpoint_every
        self.next_save = args.checkpoint_every

    def _on_rollout_start(self) -> None:
        self.state.point = resume_point.capture(self.model)
        if self.num_timesteps >= self.next_save:
            self.next_save = self.num_timesteps + self.every
            save_checkpoint(self.model, self.folder, self.state.point)

    def _on_step(self) -> bool:
        return True


class TrainingBar(_callback_base()):
    """The run's progress in PPO steps (the learner's lead choices) as a plain tqdm bar that reads in 80
    columns (SB3's own bar, drawn by rich, showed no count, time or rate there); the details go on one line
    before it.

    A step costs its collection *and* its share of the PPO update that learns from it, and the update is the
    larger part: a bar counting collected steps alone froze through every update and its ETA left out most of
    the work. So each rollout's steps are spread over both phases, in the shares of time the phases have taken
    so far (half and half until one rollout is done): the bar moves with every environment step and every
    optimiser step, is exact at each rollout's end, and its count grows in proportion to time, which is what
    makes the ETA (the average rate since the start) hold."""

    def __init__(self, label: str, details: str):
        super().__init__()
        self.label, self.details, self.bar = label, details, None
        self.times = {"collect": 0.0, "update": 0.0}  # seconds each phase took over the finished rollouts
        self.phase, self.since, self.done, self.hook = None, 0.0, 0.0, None
        self.share = 0.5  # the collection's share of a rollout's time, over the finished rollouts

    def _on_training_start(self) -> None:
        remaining = self.locals["total_timesteps"] - self.model.num_timesteps  # what learn() still has to do
        self.rollout = self.model.n_envs * self.model.n_steps  # PPO stops after the rollout that reaches the total
        self.remaining = -(-remaining // self.rollout) * self.rollout
        say(f"{self.details} ({self.model.num_timesteps + self.remaining:,} in whole rollouts of {self.rollout:,}; "
            "each counted over its collection and its update)", flush=True)  # fmt: skip
        self.optimiser_steps = self.model.n_epochs * -(-self.rollout // self.model.batch_size)
        self.hook = self.model.policy.optimizer.register_step_post_hook(self._on_optimiser_step)

    def _advance(self, steps: float) -> None:
        steps = min(steps, self.remaining - self.bar.n)
        if steps > 0:
            self.bar.update(steps)

    def _switch(self, phase: str | None) -> None:
        now = time.perf_counter()
        if self.phase is not None:
            self.times[self.phase] += now - self.since
        self.phase, self.since = phase, now

    def _on_step(self) -> bool:
        if self.bar is None:  # opened after the first step's evaluation and warm-up, which would skew the ETA
            from ..runner.cli import progress_bar

            self.bar = progress_bar(total=self.remaining, desc=self.label, unit="step", unit_scale=True)
            self._switch("collect")
        self._advance(self.share * self.training_env.num_envs)
        return True

    def _on_rollout_end(self) -> None:
        if self.bar is not None:
            self._advance(self.done + self.share * self.rollout - self.bar.n)
            self._switch("update")

    def _on_optimiser_step(self, *_) -> None:
        if self.bar is not None and self.phase == "update":
            self._advance((1 - self.share) * self.rollout / self.optimiser_steps)

    def _finish_rollout(self, then: str | None) -> None:
        """The update is over: the rollout's steps are all counted, whatever the share guessed, and the share is
        measured again."""
        if self.bar is not None and self.phase == "update":
            self._switch(then)
            self.done += self.rollout
            self._advance(self.done - self.bar.n)
            self.share = self.times["collect"] / sum(self.times.values())

    def _on_rollout_start(self) -> None:
        self._finish_rollout("collect")

    def _on_training_end(self) -> None:
        self._finish_rollout(None)
        if self.hook is not None:
            self.hook.remove()
        if self.bar is not None:
            self.bar.close()
