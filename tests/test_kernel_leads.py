"""Every scripted policy the kernel plays is the agent that declares it: one declaration each (kernel_leads and
the agent class), and at lead positions of every rules preset the kernel's leads are drawn from the same
distribution as the Python agent's — so nothing is ever played under another policy's name."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import agents
import snipsnap_env
from agents.scripted import SCRIPTED
from snipsnap_env import kernel
from snipsnap_env.batch import state_of
from snipsnap_env.kernel_leads import POLICIES, kernel_policy
from snipsnap_env.rules import PRESETS

DRAWS = 3000  # per position and side: a total-variation distance of noise alone stays well under TOLERANCE
TOLERANCE = 0.09
POSITIONS = 12  # lead positions per preset with a real choice (at least two ranks held)


def test_every_kernel_policy_is_declared_by_exactly_one_registered_agent():
    declared = [kernel_policy(cls()) for cls in SCRIPTED]
    assert sorted(name for name in declared if name) == sorted(POLICIES)
    for name in POLICIES:
        assert kernel_policy(agents.make(name)) == name  # the registry's agent of that name is the one declaring it


def test_a_declaration_the_kernel_does_not_play_is_refused():
    class Invented(agents.Policy):
        kernel_policy = "invented_lead"

    with pytest.raises(ValueError, match="invented_lead"):
        kernel_policy(Invented())
    with pytest.raises(ValueError, match="invented_lead"):
        kernel.policy_codes(["most_copies", "invented_lead"])


@numba.njit
def _kernel_leads(holding, played, seat, policy, rules, seeds):
    """The kernel's choose_lead at one position, once per seed of the seat's stream."""
    out = np.empty(len(seeds), np.int64)
    rng = np.zeros(2, np.uint64)
    for i in range(len(seeds)):
        rng[1] = seeds[i]
        out[i] = kernel.choose_lead(holding, played, seat, policy, rng, 1, rules)
    return out


def _lead_positions(rules: str, count: int, seed: int):
    """``count`` (deal, observation, mask) at leads where the seat holds two ranks or more, from random play."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        env = snipsnap_env.env(num_players=int(rng.integers(3, 9)), rules=rules)
        env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            deal = env.unwrapped.match.deal
            if deal.is_lead and obs["action_mask"].sum() > 1 and rng.random() < 0.3 and len(found) < count:
                found.append((state_of(deal), deal.to_act, obs["observation"], obs["action_mask"]))
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return found


@pytest.mark.parametrize("rules", sorted(PRESETS))
@pytest.mark.parametrize("name", POLICIES)
def test_the_kernel_leads_as_the_agent_that_declares_it(name, rules):
    code = int(kernel.policy_codes([name])[0])
    agent = agents.make(name, seed=1)
    seeds = np.random.SeedSequence([code, len(rules)]).generate_state(DRAWS, np.uint64)
    rule_codes = kernel.rule_codes(snipsnap_env.rules.make_rules(rules))
    for (holding, _, played, _, _), seat, obs, mask in _lead_positions(rules, POSITIONS, seed=len(rules)):
        compiled = np.bincount(_kernel_leads(holding, played, seat, code, rule_codes, seeds), minlength=len(mask))
        python = np.bincount(agent.act_batch(np.tile(obs, (DRAWS, 1)), np.tile(mask, (DRAWS, 1))), minlength=len(mask))
        assert not compiled[~mask.astype(bool)].any()  # only legal leads
        distance = np.abs(compiled - python).sum() / (2 * DRAWS)
        assert distance < TOLERANCE, f"{name} under {rules}: kernel {compiled}, agent {python}"
