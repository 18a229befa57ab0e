"""Which policies the compiled kernel plays itself, and under which code: the scripted players by name, greedy
rank-shared networks from :data:`snipsnap_env.kernel_network.NETWORK` on (their weights stacked). Rollouts
that seat only such policies run entirely in compiled code (:func:`snipsnap_env.lead_values.values_for`).
"""

from __future__ import annotations

import numpy as np

from snipsnap_env.kernel import POLICIES, kernel_policy
from snipsnap_env.kernel_network import NETWORK, Networks, stack

NOT_PLAYED = -1  # the code of a policy the kernel cannot play (a search, a sampling network)


def kernel_codes(policies: list) -> tuple[np.ndarray, Networks]:
    """Each policy's kernel code (``NOT_PLAYED`` where the kernel cannot play it) and the networks' stack."""
    codes, networks = [], []
    for policy in policies:
        name = kernel_policy(policy)
        if name is not None:
            codes.append(POLICIES.index(name))
        elif getattr(policy, "kernel_playable", lambda: False)():
            codes.append(NETWORK + sum(len(n.ctx_b) for n in networks))
            networks.append(policy.networks())
        else:
            codes.append(NOT_PLAYED)
    return np.array(codes, np.int64), stack(networks)
