"""Frozen snapshots of the learner as opponents: ``train_ppo --opponents snapshot --snapshot-every N``.

A seat drawn as ``snapshot`` is played by earlier versions of the policy being trained (fictitious self-play:
the learner meets its own past, not only its present). Every ``--snapshot-every`` timesteps, where a rollout
starts, the current policy is copied and kept; each decision of a snapshot seat is made greedily by one kept
copy drawn uniformly. The first copy is taken when training starts, so the pool is never empty. The copies
and the timestep of the next one belong to the member, which sits in the training env: a resume point pickles
that env, so a resumed run has the uninterrupted run's copies and takes its next one when that run would.
"""

from __future__ import annotations

import numpy as np

import agents
from agents.numpy_actor import NumpyActor
from snipsnap_env.kernel_network import stack

from .live_policy import LivePolicy

NAME = "snapshot"


class Snapshots(agents.Policy):
    """Greedy play by frozen copies of the learner's policy (one drawn uniformly per decision)."""

    name = NAME

    def __init__(self, seed: int | None = None, in_kernel: bool = True):
        super().__init__(seed)
        self.in_kernel = in_kernel  # rank-shared copies, which the kernel plays (an MLP's play through torch)
        self.kept: list[LivePolicy] = []
        self._networks: list = []
        self.next_at = 0  # the timestep from which the next rollout start takes a copy

    def add(self, model) -> None:
        """Keep a frozen copy of ``model``'s policy (a MaskablePPO model)."""
        policy = model.policy  # rebuilt as SB3's own save and load do (a deepcopy trips over torch's graph)
        frozen = type(policy)(**policy._get_constructor_parameters()).to(model.device)
        frozen.load_state_dict(policy.state_dict())
        frozen.set_training_mode(False)
        self.kept.append(LivePolicy(_Holder(frozen, model.device), seed=int(self.rng.integers(2**63))))
        if self.in_kernel:
            self._networks.append(NumpyActor(frozen).networks())

    def take(self, model, every: int) -> None:
        """Keep a copy of ``model``'s policy now, and the next one due ``every`` timesteps on."""
        self.add(model)
        self.next_at = model.num_timesteps + every

    def kernel_playable(self) -> bool:
        """Whether the kernel plays these copies (rank-shared networks); else they play through torch."""
        return self.in_kernel

    def networks(self):
        """Every kept copy as the kernel plays it (a VecEnv seat draws one per episode and plays it greedily)."""
        return stack(self._networks)

    def act_batch(self, obs, mask):
        if not self.kept:
            raise RuntimeError("no snapshot taken yet: add() one before playing")
        obs, mask = np.asarray(obs, np.float32), np.asarray(mask)
        which = self.rng.integers(len(self.kept), size=len(obs))
        actions = np.zeros(len(obs), np.int64)
        for index in np.unique(which):
            rows = np.flatnonzero(which == index)
            actions[rows] = self.kept[index].act_batch(obs[rows], mask[rows])
        return actions


class _Holder:
    """What LivePolicy reads of a model: its policy and device."""

    def __init__(self, policy, device):
        self.policy, self.device = policy, device


def first_snapshots(pool: list, model, every: int) -> list[Snapshots]:
    """The Snapshots in ``pool``, each given ``model``'s policy as its first copy (before the env's first reset
    deals: the snapshot seats play from the start) unless it has copies already — a resumed env's own — and
    the next copy due ``every`` timesteps on."""
    snapshots = [member for member in pool if isinstance(member, Snapshots)]
    for member in snapshots:
        if not member.kept:
            member.take(model, every)
    return snapshots


def take_due_snapshots(snapshots: list[Snapshots], model, every: int) -> None:
    """Where a rollout starts: a copy of ``model``'s policy for each member whose next copy is due."""
    for member in snapshots:
        if model.num_timesteps >= getattr(member, "next_at", 0):  # (a member pickled before it kept next_at)
            member.take(model, every)
