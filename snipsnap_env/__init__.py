"""snipsnap: the card game Snip Snap Snorem as a PettingZoo AEC environment, with a fast batched engine.

>>> import snipsnap_env
>>> env = snipsnap_env.env(num_players=6)
"""

from .aec import env, raw_env
from .engine import NUM_ACTIONS, PASS, Deal, IllegalActionError, Match
from .observation import OBS_DIM
from .rules import PRESETS, Rules, make_rules
from .single_agent import SingleSeatEnv

__all__ = [
    "env",
    "raw_env",
    "Deal",
    "Match",
    "Rules",
    "make_rules",
    "PRESETS",
    "IllegalActionError",
    "NUM_ACTIONS",
    "PASS",
    "OBS_DIM",
    "SingleSeatEnv",
]
__version__ = "0.2.0"


def _register_with_pettingzoo() -> None:
    """``pettingzoo.make("aec", "snipsnap/snipsnap_v0")`` where PettingZoo has a registry (1.26+); the id's
    version is the observation's (``observation.ENV_VERSION``)."""
    try:
        from pettingzoo.env_registry.registration import aec_registry, register
    except ImportError:  # PettingZoo < 1.26 has no registry
        return
    from .observation import ENV_NAME

    if f"snipsnap/{ENV_NAME}" not in aec_registry:
        register("aec", f"snipsnap/{ENV_NAME}", entry_point="snipsnap_env:env")


def _register_with_gymnasium() -> None:
    """``gymnasium.make("snipsnap/SingleSeat-v0", num_players=6, opponents=[...])``: one learner seat;
    ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``: many, on the batched engine."""
    import gymnasium

    if "snipsnap/SingleSeat-v0" not in gymnasium.registry:
        gymnasium.register(
            id="snipsnap/SingleSeat-v0",
            entry_point="snipsnap_env.single_agent:SingleSeatEnv",
            vector_entry_point="snipsnap_env.gym_vector:SingleSeatVectorEnv",
        )


_register_with_pettingzoo()
_register_with_gymnasium()
