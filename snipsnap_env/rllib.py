"""The env for RLlib: RLlib's own ``PettingZooEnv`` around the AEC env, with the observation keys that RLlib's
action-masking RLModule reads (``"observations"`` and a float ``"action_mask"``; PettingZoo's classic games say
``"observation"``). Needs ``pip install -e ".[rllib]"``; examples/rllib_ppo.py trains masked PPO with it.

    from ray.tune.registry import register_env
    import snipsnap_env.rllib
    register_env("snipsnap", lambda config: snipsnap_env.rllib.env(**config))
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

from .engine import NUM_ACTIONS

MASK_SPACE = spaces.Box(0.0, 1.0, shape=(NUM_ACTIONS,), dtype=np.float32)


class RLlibObservations(BaseWrapper):
    """The AEC env with each observation as ``{"observations": ..., "action_mask": ...}`` (the mask as floats)."""

    def observation_space(self, agent) -> spaces.Dict:
        return spaces.Dict({"observations": super().observation_space(agent)["observation"], "action_mask": MASK_SPACE})

    def observe(self, agent) -> dict:
        observed = super().observe(agent)
        return {"observations": observed["observation"], "action_mask": observed["action_mask"].astype(np.float32)}


def env(**kwargs):
    """``snipsnap_env.env(**kwargs)`` as an RLlib ``MultiAgentEnv`` (``ray.rllib.env.wrappers.pettingzoo_env``)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from .aec import env as aec_env

    return PettingZooEnv(RLlibObservations(aec_env(**kwargs)))
