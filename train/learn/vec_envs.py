"""The VecEnv a training run learns on: the batched engine's tables (every --ppo-players size side by side) or
SB3's DummyVecEnv of the single-seat env, with episode statistics and reward normalisation."""

from __future__ import annotations

from .args import Args, ppo_tables, stream_seed
from .critics import critic_named
from .opponents import make_opponent
from .pool import opponent_pool


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
                pure=args.pure_tables,
                **critic_named(args.critic).env_options(args),
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
                    make_opponent(n, stream_seed(seed, "opponents", i, j)) for j, n in enumerate(args.opponents)
                ],
            )

        venv = DummyVecEnv([make(i) for i in range(args.num_envs)])
        venv.seed(stream_seed(seed, "env"))
    # Chips swing by ±50 in a deal; scaling returns keeps the value loss in range. Inference needs no stats.
    return VecNormalize(VecMonitor(venv), norm_obs=False, norm_reward=True, gamma=1.0)
