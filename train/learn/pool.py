"""The opponents of a training run: ``--opponents`` names, made into the pool the training VecEnv seats (one
member drawn per seat per episode): scripted agents, ``self`` (a seat the learner holds too: parameter
sharing, every learner seat's decisions are experience) and ``snapshot`` (frozen copies of the learner,
:mod:`train.learn.snapshots`)."""

from __future__ import annotations

import agents

from .args import SELF, SNAPSHOT, Args, stream_seed


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
