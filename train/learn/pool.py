"""The opponents of a training run: ``--opponents`` names, made into the pool the training VecEnv seats:
scripted agents, learned models (``ppo``, ``ppo_scratch``: the kernel plays their networks, in the game and
in the rollouts), ``self`` (a seat the learner holds too: parameter sharing, every learner seat's decisions
are experience) and ``snapshot`` (frozen copies of the learner, :mod:`train.learn.snapshots`).

A game's opponents are one member at every seat with probability ``--pure-tables`` (a table of one kind),
else one drawn per seat. With ``--pfsp T`` (prioritised fictitious self-play, AlphaStar's league) a member
is drawn in proportion to ``exp(-gain / T)``, ``gain`` being the learner's running gain per real lead over
most_copies' lead, by the lead values, at the games that member sits in: the opponents the learner gains
least against are met most. :class:`PoolUpkeep` keeps the pool current where each rollout starts: snapshots
taken, the learner's latest network at the tables, the draw weights.
"""

from __future__ import annotations

import numpy as np

from .args import SELF, SNAPSHOT, Args, stream_seed
from .opponents import make_opponent


def opponent_pool(args: Args, seed: int) -> list:
    """The training opponents: policies, SELF for a seat the learner holds, Snapshots for frozen learners."""
    from snipsnap_env import vec_env

    from .snapshots import Snapshots

    def member(i, name):
        seed_i = stream_seed(seed, "opponents", i)
        if name == SELF:
            return vec_env.SELF
        if name == SNAPSHOT:
            return Snapshots(seed_i, in_kernel=args.policy == "rank_shared")
        return make_opponent(name, seed_i)

    return [member(i, name) for i, name in enumerate(args.opponents)]


def training_pool(env) -> list:
    """The opponents' pool of the training env (after a resume, the restored env's own); [] for --vec single."""
    tables = tables_of(env)  # they share one pool
    return list(tables[0].opponents or ()) if tables else []


def evaluation_opponents(args: Args) -> list[str]:
    """The agents of the training pool (the learner's copies and snapshots aside); random lead choice if none."""
    return [name for name in args.opponents if name not in (SELF, SNAPSHOT)] or ["random"]


def tables_of(env) -> list:
    """The SnipSnapVecEnvs inside the training env (VecNormalize(VecMonitor(...)), one per table size)."""
    from snipsnap_env.vec_env import TablesVecEnv

    inner = env.unwrapped
    return list(inner.tables) if isinstance(inner, TablesVecEnv) else [inner] if hasattr(inner, "weights") else []


def seat_the_learner(env, model) -> None:
    """Give every table the learner's current network (for ``self`` seats and ``--rollout-policy self``) and
    the pool's current networks (snapshots taken since)."""
    from agents.numpy_actor import NumpyActor

    tables = tables_of(env)
    if not tables:
        return
    networks = NumpyActor(model.policy).kernel_networks  # None for an MLP policy (no critic that rolls out)
    for table in tables:
        if networks is not None:
            table.set_learner(networks)
        else:
            table.sync_networks()


class Priorities:
    """Prioritised fictitious self-play weights, each table's from its own running gains (a member the learner
    beats easily at 6 players may be the one it loses to at 3); see the module docstring."""

    def __init__(self, temperature: float, floor: float = 0.25, memory: float = 0.8):
        self.temperature, self.floor, self.memory = temperature, floor, memory

    def update(self, tables) -> list[np.ndarray | None]:
        """Fold the gains each table booked since the last update into its running gains (``running_gains``,
        NaN for a member not met yet: kept on the table, so a resume point has them), and set its weights
        from them: one array per table (None for a table with no gain known yet, whose weights stay)."""
        out = []
        for table in tables:
            counts = table.gain_counts.copy()
            latest = np.where(counts > 0, table.gains / np.maximum(counts, 1), np.nan)
            table.gains[:], table.gain_counts[:] = 0.0, 0.0
            old = getattr(table, "running_gains", None)  # None: none yet (or an env pickled before they were kept)
            old = np.full(len(latest), np.nan) if old is None else old
            mixed = np.where(np.isnan(old), latest, self.memory * old + (1 - self.memory) * latest)
            gain = table.running_gains = np.where(np.isnan(latest), old, mixed)
            if np.isnan(gain).all():
                out.append(None)
                continue
            known = np.nan_to_num(gain, nan=np.nanmin(gain))  # a member never seen yet counts as the hardest
            scores = np.exp(-(known - known.min()) / self.temperature)
            table.weights = (1 - self.floor) * scores / scores.sum() + self.floor / len(scores)
            out.append(table.weights)
        return out


def pool_upkeep(snapshots: list, every: int, pfsp: float):
    """An SB3 callback that keeps the pool current where each rollout starts: a snapshot of the learner every
    ``every`` timesteps (:mod:`train.learn.snapshots`), the learner's latest network at the tables, and with
    ``pfsp`` > 0 the draw weights of :class:`Priorities` (logged as ``pool/<N>p_weight_<member>``)."""
    from stable_baselines3.common.callbacks import BaseCallback

    from .snapshots import take_due_snapshots

    class PoolUpkeep(BaseCallback):
        def __init__(self):
            super().__init__()
            self.priorities = Priorities(pfsp) if pfsp > 0 else None

        def _on_rollout_start(self) -> None:
            take_due_snapshots(snapshots, self.model, every)
            env = self.model.get_env()
            seat_the_learner(env, self.model)
            tables = tables_of(env)
            if self.priorities is not None and tables:
                self.priorities.update(tables)
                for table in tables:
                    n, gains = table.batch.num_players, table.running_gains
                    names = [getattr(m, "name", str(m)) for m in table.opponents or ()]
                    for name, weight, gain in zip(names, table.weights, gains):
                        self.logger.record(f"pool/{n}p_weight_{name}", float(weight))
                        self.logger.record(f"pool/{n}p_gain_{name}", float(gain))

        def _on_step(self) -> bool:
            return True

    return PoolUpkeep()
