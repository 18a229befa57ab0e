"""Variance reduction for paired evaluation: control variates in the manner of AIVAT (Burch, Schmid, Moravčík,
Morill and Bowling, AAAI 2018).

After a deal the evaluator knows every hand, and at each lead of a player whose action distribution it knows
(``Policy.lead_probabilities``: the random and scripted players, the candidate included) it adds

    sum over the legal leads a of pi(a) V(a)  -  V(the lead taken)

to the candidate's chips, where ``V(a)`` is what the candidate's seat makes from there on in the true deal
after lead ``a``, the mean of ``samples`` kernel rollouts (:func:`snipsnap_env.lead_values.values_for`, with
common random numbers across the leads). Given the history, the lead taken is drawn from ``pi`` independently
of the rollouts, so each term has expectation zero and the corrected chips are unbiased **for any** ``V``; a
good ``V`` cancels most of the luck of the opponents' draws, which is what is left once paired deals have
cancelled the luck of the cards. Only real choices count: in the base rules every follow is forced.

The rollouts play every seat as it really plays where the kernel can (scripted players, greedy networks),
and as most_copies where it cannot (a search, ``control``): that changes the variance, never the mean.
"""

from __future__ import annotations

import numpy as np

from agents.kernel_seats import NOT_PLAYED, kernel_codes
from snipsnap_env import training_signal
from snipsnap_env.batch import BatchEnv
from snipsnap_env.kernel import POLICIES, kernel_policy
from snipsnap_env.observation import table_template

STAND_IN = POLICIES.index("most_copies")  # the rollouts' player for one the kernel does not play
DEFAULT_SAMPLES = 32  # rollouts per legal lead: CI shrink against time in docs/evaluation.md


def rollout_codes(policies: list):
    """Each policy's kernel code in the rollouts (``STAND_IN`` for one the kernel does not play), and the
    networks' stack."""
    codes, networks = kernel_codes(policies)
    return np.where(codes == NOT_PLAYED, STAND_IN, codes), networks


def play_reduced(candidate, opponents: list, deals, rules: str, samples: int, seed: int, chunk: int = 4096,
                 progress=None, rollout_policy: str | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The candidate's chips in each of ``deals`` (a :class:`train.measure.paired.PairedDeals`), playing their seats,
    as played (plain) and with the control variates (reduced): ``(plain, reduced)``. ``rollout_policy``: a
    kernel policy every seat plays in the rollouts instead of its own (a worse value function: the CI
    changes, the mean does not)."""
    num_deals = len(deals.seats)
    plain, reduced = np.zeros(num_deals), np.zeros(num_deals)
    codes, nets = rollout_codes([candidate, *opponents])
    if rollout_policy is not None:
        codes[:] = POLICIES.index(rollout_policy)
    rollout_seeds = np.random.default_rng([seed, 0xA17A7])
    for start in range(0, num_deals, chunk):
        part = slice(start, min(start + chunk, num_deals))
        plain[part], correction = _play_chunk(
            candidate, opponents, deals, part, rules, samples, codes, nets, rollout_seeds, seed
        )
        reduced[part] = plain[part] + correction
        if progress is not None:
            progress(part.stop - part.start)
    return plain, reduced


def _play_chunk(candidate, opponents, deals, part, rules, samples, codes, nets, rollout_seeds, seed):
    seats, index = deals.seats[part], deals.opponent_index[part]
    games, num_players = index.shape
    env = BatchEnv(games, num_players, rules=rules)
    obs, mask = env.reset(owners=deals.owners[part], dealers=deals.dealers[part])
    env.use_deal_streams(seed, part.start)  # kernel policies draw as in play_paired: the plain chips are its chips
    template = table_template(env.rules, num_players).astype(np.float32)
    rows = np.arange(games)
    # who plays each seat: 0 the candidate, 1 + i opponent i; and each seat's rollout code
    player = np.where(np.arange(num_players) == seats[:, None], 0, 1 + index)
    seat_codes = codes[player]
    chips, correction = np.zeros(games), np.zeros(games)
    finished = np.zeros(games, bool)
    everyone = [candidate, *opponents]
    in_kernel = [kernel_policy(policy) for policy in everyone]
    while not finished.all():
        live = ~finished
        acting = player[rows, env.to_act]
        actions = np.zeros(games, np.int64)
        probabilities = np.zeros((games, mask.shape[1]))
        known = np.zeros(games, bool)
        for who, policy in enumerate(everyone):
            sel = np.flatnonzero(live & (acting == who))
            if not sel.size:
                continue
            kernel = in_kernel[who]
            actions[sel] = env.choose_leads(sel, kernel) if kernel else policy.act_batch(obs[sel], mask[sel])
            p = policy.lead_probabilities(obs[sel], mask[sel])
            if p is not None:
                chance = p.max(axis=1) < 1.0  # a draw among several leads: a term to add
                probabilities[sel[chance]] = p[chance]
                known[sel[chance]] = True
        drawn = np.flatnonzero(known)
        if drawn.size:
            correction[drawn] += _terms(env, drawn, seats, seat_codes, probabilities, actions, samples, nets,
                                        template, rollout_seeds)  # fmt: skip
        obs, mask, _, dones, infos = env.step(actions, active=live)
        ended = dones & live
        chips[ended] = infos["deal_score"][ended, seats[ended]]
        finished |= ended
    return chips, correction


def _terms(env, drawn, seats, seat_codes, probabilities, actions, samples, nets, template, rollout_seeds):
    """sum_a pi(a) V(a) - V(taken) at the leads of games ``drawn``, V for the candidate's seat."""
    if (probabilities[drawn, actions[drawn]] <= 0).any():
        raise RuntimeError("a lead taken had no probability by the policy's own odds: act_batch and its odds disagree")
    seeds = rollout_seeds.integers(0, 2**63, size=len(drawn), dtype=np.uint64)
    return -lead_advantages(env, drawn, seats[drawn], probabilities[drawn], actions[drawn], seat_codes[drawn],
                            samples, seeds, nets, template)  # fmt: skip


def lead_advantages(env, rows, viewers, odds, actions, policies, samples, seeds, nets, template) -> np.ndarray:
    """:func:`snipsnap_env.training_signal.lead_advantages` at the leads of ``env``'s (a BatchEnv) games ``rows``."""
    return training_signal.lead_advantages(
        env.games.state, env._rule_codes, rows, viewers, odds, actions, policies, samples, seeds, nets, template
    )
