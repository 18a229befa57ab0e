"""The scripted lead policies the compiled kernel plays itself, each declared once, here: its name, how it picks
a lead, and its branch of :func:`lead_score`. Everything else follows from these three: the codes (a name's
place in :data:`POLICIES`), the kernel's :func:`~snipsnap_env.kernel.choose_lead` (a draw, or the best score),
the exact walk's lead distributions (``train.measure.exact_walk``), and which Python agent the kernel may play
in its stead — an agent class that declares ``kernel_policy = "<name>"`` (:func:`kernel_policy`; the agent
registry and the parity test hold the two together).

A policy picks its lead among the ranks the seat holds (the forced and single-rank cases are the kernel's, the
same for every policy) in one of two ways:

- ``DRAW``: one draw, each rank with probability proportional to its score (a weight ≥ 0);
- ``BEST``: the rank of highest score, ties uniformly at random (one draw per tie met).

A name without its branch in :func:`lead_score` stops this module's import, naming it: nothing is ever played
under another policy's rule. Codes reach compiled code only through :func:`policy_codes` (or this module's
constants), which refuse a name the kernel does not play.
"""

from __future__ import annotations

import numba
import numpy as np

DRAW, BEST = 0, 1

#: name → how it picks; a code is a name's place here (append new policies: codes are kept in results)
LEAD_RULES = {
    "random": DRAW,  # uniform over the held ranks
    "random_card": DRAW,  # a card of the hand, uniformly: a rank by its copies
    "most_copies": BEST,  # the rank held most often
    "fewest_copies": BEST,  # the rank held least often
}
POLICIES = tuple(LEAD_RULES)
RANDOM, RANDOM_CARD, MOST_COPIES, FEWEST_COPIES = map(POLICIES.index, ("random", "random_card", "most_copies",
                                                                     "fewest_copies"))  # fmt: skip
PICKS = tuple(LEAD_RULES.values())  # by code, for compiled code
NO_RULE = -(2**40)  # lead_score of a code without a branch (refused at import, see _check_every_rule)


@numba.njit(cache=True, nogil=True, inline="always")
def lead_score(policy, rank, copies):
    """``policy``'s score (``BEST``) or weight (``DRAW``) of leading ``rank``, held ``copies`` times: one branch
    per code."""
    if policy == RANDOM:
        return 1
    if policy == RANDOM_CARD:
        return copies
    if policy == MOST_COPIES:
        return copies
    if policy == FEWEST_COPIES:
        return -copies
    return NO_RULE


def _check_every_rule() -> None:
    """Refuse (at import) a policy declared in LEAD_RULES without its branch in lead_score."""
    missing = [name for code, name in enumerate(POLICIES) if lead_score.py_func(code, 0, 1) == NO_RULE]
    if missing:
        raise RuntimeError(f"kernel_leads: {', '.join(missing)} in LEAD_RULES without a branch in lead_score")


_check_every_rule()


def kernel_policy(policy) -> str | None:
    """The name in :data:`POLICIES` under which the kernel plays ``policy`` itself, decided by what the policy is:
    its own class declares it (``kernel_policy = "most_copies"``); None for anything else, which is played in
    Python. Never by its ``name``, and never inherited: a subclass that changes how its parent chooses declares
    again, or is played as it chooses."""
    declared = type(policy).__dict__.get("kernel_policy")
    if declared is not None and declared not in POLICIES:
        raise ValueError(
            f"{type(policy).__name__}.kernel_policy is {declared!r}, which the kernel does not play; kernel policies: "
            f"{', '.join(POLICIES)}"
        )
    return declared


def policy_codes(names) -> np.ndarray:
    """Scripted policy names as the kernel's codes, with a clear error for one it cannot play."""
    unknown = [name for name in names if name not in POLICIES]
    if unknown:
        raise ValueError(f"policies {unknown} are not played by the kernel; kernel policies: {', '.join(POLICIES)}")
    return np.array([POLICIES.index(name) for name in names], np.int64)
