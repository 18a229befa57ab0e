"""The sizes of the rank-shared policy (:mod:`agents.rank_policy`), without torch: what a model file's checks
and the numpy player need to know of its shape on an install with no training extras."""

from __future__ import annotations

from snipsnap_env.cards import CARDS_PER_RANK
from snipsnap_env.observation import OBS_DIM, PER_RANK, SLICES

CONTEXT_START = SLICES["open_rank"].stop  # is_lead onwards: the table, not one rank
RANK_FEATURES = len(PER_RANK)  # what the scorer reads of one rank (with the table's summary)


def table_features(obs_dim: int = OBS_DIM) -> int:
    """What the head's table summary reads: the observation from ``is_lead`` on, + the copies histogram (0..4).
    (The per-rank fields lead every layout, so only the observation's width varies between versions.)"""
    return obs_dim - CONTEXT_START + CARDS_PER_RANK + 1


def value_arch(net_arch) -> list[int]:
    """The value network's hidden sizes for ``net_arch`` (a list, or a dict's ``vf``; [128, 128] if none)."""
    return list(net_arch.get("vf", [128, 128]) if isinstance(net_arch, dict) else (net_arch or [128, 128]))
