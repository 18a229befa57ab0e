"""The exact value of **any** lead policy in one seat at a table of one scripted policy, on a small deck: the
responder's information tree walked once in compiled code, then valued for each agent from its probabilities at
every information state, asked in batches.

The walk is :mod:`train.measure.exact_walk`'s (every deal of the deck, the worlds the seat cannot tell apart carried
together, every set played by the kernel's rules step), with two differences. At each of the seat's **real
choices** (two or more legal ranks) it walks every legal rank, as a best response does, and records a node: the
seat's observation there (the kernel's observer, with the lead record the engine keeps, so it is the observation the
agent gets in play), its mask, and, per rank, the chips (weighted by chance and the opponents' probabilities) that
the rank reaches before the seat's next choice; the nodes below a choice link back to it. The tree then values any
policy by one pass from the leaves up: a node is worth the sum over its legal ranks of the policy's probability ×
(the rank's chips + the nodes it leads to) — or the most of them, for the optimum. One walk serves the optimum and
every candidate.

An agent's probabilities: its ``lead_probabilities`` where it gives them (the scripted agents), a greedy network's
(its ties, which play draws uniformly, as :func:`train.measure.exact.action_probabilities` takes them), else the
action it returns, as a point mass, once a second call with another seed has returned the same actions (a
deterministic agent); an agent whose choices vary and give no distribution has no exact value, and is refused.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from agents.pimc import LeadSearch
from agents.spec import UserAgent
from snipsnap_env.cards import NUM_RANKS
from snipsnap_env.engine import NUM_ACTIONS
from snipsnap_env.jit_cache import drop_if_sources_changed
from snipsnap_env.kernel import POLICIES, TO_ACT, opening_rank, rule_codes
from snipsnap_env.kernel_observe import observe
from snipsnap_env.kernel_state import POT as POT_INDEX
from snipsnap_env.observation import OBS_DIM, table_template
from snipsnap_env.parallelism import cores
from snipsnap_env.rules import make_rules

from .exact import UnknownProbabilities, action_probabilities
from .exact_walk import POT, check_exact, deal_worlds, groups_of, hands, lead_probabilities_at, play_led_set

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache): it inlines the kernel

BATCH_NODES = 200_000  # nodes gathered before the agents are asked (memory: ~700 bytes a node)
WINDOW = 64  # hands walked side by side before their trees are taken


@numba.njit(cache=True, nogil=True)
def _collect(holding, hand_size, played, public, deal_score, carry, weight, seat, table, rules, template, parent,
             prank, obs, mask, chips, parents, ranks, count, root):  # fmt: skip
    """Walk the public tree below worlds the seat cannot tell apart (one leader in all), recording a node at each
    real choice of ``seat`` (while ``count[0]`` is below the buffers' size: the caller retries with room for all).
    Chips reached add weight × the seat's chips to ``chips[node, rank]`` of the choice above (``parent``, ``prank``),
    or to ``root[0]`` above the first. (One function that calls itself: numba's cache cannot hold two that call
    each other.)"""
    worlds = holding.shape[0]
    leader = public[0, TO_ACT]
    forced = opening_rank(played[0], rules)  # the deal's first lead with opening six: public
    probs = np.zeros((worlds, NUM_RANKS))
    node, room = -1, obs.shape[0]
    if leader == seat:  # its hand is the same in every world
        legal = 0
        for r in range(NUM_RANKS):
            if holding[0, seat, r] > 0 and (forced < 0 or r == forced):
                probs[:, r] = 1.0
                legal += 1
        if legal >= 2:  # a real choice: every legal rank walked, its chips kept apart
            node = count[0]
            count[0] += 1
            if node < room:
                public[0, POT_INDEX] = carry[0, POT]  # the observer reads the pot from the public scalars
                observe(holding[0], hand_size[0], played[0], public[0], deal_score[0], seat, template, rules,
                        obs[node], mask[node])  # fmt: skip
                parents[node], ranks[node] = parent, prank
    else:
        for w in range(worlds):
            lead_probabilities_at(holding[w], played[w], leader, table, rules, probs[w])
    below, below_rank = (node, 0) if node >= 0 else (parent, prank)
    for rank in range(NUM_RANKS):
        members = np.flatnonzero(probs[:, rank] > 0)
        if members.size == 0:
            continue
        if node >= 0:
            below_rank = rank
        held, sizes, shown = holding[members], hand_size[members], played[members]
        seen, scores, carried = public[members], deal_score[members], carry[members]
        weights = weight[members] * probs[members, rank]
        recorded = np.full(members.size, -1, np.int64)
        for w in range(members.size):  # a lead joins the lead record where it was a real choice (two ranks held)
            choices = 0
            for r in range(NUM_RANKS):
                choices += held[w, leader, r] > 0
            if forced < 0 and choices >= 2:
                recorded[w] = leader
        keys = np.empty(members.size, np.int64)
        reached = play_led_set(held, sizes, shown, seen, scores, carried, weights, leader, rank, recorded, seat,
                               rules, keys)  # fmt: skip
        if below < 0:
            root[0] += reached
        elif below < room:
            chips[below, below_rank] += reached
        order, starts = groups_of(keys)
        for g in range(starts.size - 1):
            group = order[starts[g] : starts[g + 1]]
            _collect(held[group], sizes[group], shown[group], seen[group], scores[group], carried[group],
                     weights[group], seat, table, rules, template, below, below_rank, obs, mask, chips, parents,
                     ranks, count, root)  # fmt: skip


@numba.njit(cache=True, nogil=True)
def _deal_and_collect(matrices, weights, dealer, seat, table, rules, template, obs, mask, chips, parents, ranks,
                      count, root):  # fmt: skip
    """The worlds of one hand of the seat dealt (:func:`~train.measure.exact_walk.deal_worlds`), then walked by
    :func:`_collect`."""
    n = matrices.shape[1]
    holding, hand_size, played, public, deal_score, carry = deal_worlds(matrices, dealer, rules)
    top, no_rank = np.int64(-1), np.int64(0)  # typed as the recursion's own: one compiled _collect, not two
    for leader in range(n):  # the first leader may differ between worlds (opening six), and is seen: apart
        members = np.flatnonzero(public[:, TO_ACT] == leader)
        if members.size:
            _collect(holding[members], hand_size[members], played[members], public[members], deal_score[members],
                     carry[members], weights[members], seat, table, rules, template, top, no_rank, obs, mask, chips,
                     parents, ranks, count, root)  # fmt: skip


@numba.njit(cache=True, nogil=True)
def _value(chips, parents, ranks, probs, best):
    """The tree's nodes valued from the leaves up (children follow their parent in the walk's order): a node is
    worth Σ over ranks of ``probs`` × (its chips + its children's worth), or the most of them over the ranks
    ``probs`` allows (``best``). Returns the sum of the nodes at the top (their parent −1)."""
    below = np.zeros_like(chips)
    total = 0.0
    for m in range(parents.shape[0] - 1, -1, -1):
        worth = -np.inf if best else 0.0
        for r in range(NUM_RANKS):
            if probs[m, r] > 0:
                here = chips[m, r] + below[m, r]
                worth = max(worth, here) if best else worth + probs[m, r] * here
        if parents[m] >= 0:
            below[parents[m], ranks[m]] += worth
        else:
            total += worth
    return total


class Tree:
    """Nodes of one or more hands' trees, gathered for the agents to be asked about in one batch."""

    def __init__(self, capacity: int):
        self.obs = np.zeros((capacity, OBS_DIM), np.float32)
        self.mask = np.zeros((capacity, NUM_ACTIONS), np.int8)
        self.chips = np.zeros((capacity, NUM_RANKS))
        self.parents = np.full(capacity, -1, np.int64)
        self.ranks = np.zeros(capacity, np.int64)


def walk_hand(matrices, weights, dealer, seat, table_code, codes, template, capacity=4096):
    """One hand of the seat's tree: ``(Tree, nodes, root chips)``, the buffers grown until the walk fits."""
    while True:
        tree, count, root = Tree(capacity), np.zeros(1, np.int64), np.zeros(1)
        _deal_and_collect(matrices, weights, dealer, seat, table_code, codes, template, tree.obs, tree.mask,
                          tree.chips, tree.parents, tree.ranks, count, root)  # fmt: skip
        if count[0] <= capacity:
            return tree, int(count[0]), float(root[0])
        capacity = int(count[0])


def probabilities(policy, obs: np.ndarray, mask: np.ndarray, name: str) -> tuple[np.ndarray, str]:
    """(B, 14): ``policy``'s exact distribution at each observation (see the module), and how it was had: its own,
    a greedy network's, or a deterministic agent's point mass; :class:`UnknownProbabilities` naming ``name`` where
    none is known."""
    inner = policy.inner if isinstance(policy, UserAgent) else policy
    if isinstance(inner, LeadSearch):
        if getattr(inner, "state_seed", None) is None:
            raise UnknownProbabilities(
                f"{name} is a search: its leads are draws of its own, with no distribution to walk (seeded by the "
                "information state, pimc:<samples>@<seed>, it has one)"
            )
        point = np.zeros(mask.shape)
        point[np.arange(len(mask)), policy.act_batch(obs, mask)] = 1.0
        return point, "its leads (a search seeded by the information state: one lead an observation)"
    if hasattr(inner, "logits") and getattr(inner, "deterministic", False):
        return action_probabilities(inner, obs, mask), "its greedy network's (ties uniform)"
    given = policy.lead_probabilities(obs, mask)
    if given is not None:
        return np.asarray(given, float), "its lead_probabilities"
    policy.reseed(0)
    first = policy.act_batch(obs, mask)
    policy.reseed(1)
    if not np.array_equal(first, policy.act_batch(obs, mask)):
        raise UnknownProbabilities(
            f"{name} gives no lead_probabilities and its choices vary between calls: its exact value needs its "
            "distribution (give the policy a lead_probabilities(obs, mask) method)"
        )
    point = np.zeros(mask.shape)
    point[np.arange(len(first)), first] = 1.0
    return point, "its actions (deterministic: two seeds chose alike)"


def check_has_exact_value(policy, name: str, players: int, rules) -> None:
    """:class:`UnknownProbabilities` (a ValueError: a job's refusal) naming ``name`` where the agent has no exact value
    (a search; a stochastic agent that gives no distribution), found on a few first leads before any walk."""
    from snipsnap_env.batch import BatchEnv

    obs, mask = BatchEnv(64, players, rules=rules, seed=0).reset()
    choosing = mask.sum(axis=1) > 1
    probabilities(policy, obs[choosing], mask[choosing], name)


def exact_agent_values(policies: dict, table: str, num_players: int, rules, seat: int = 0, progress=None) -> dict:
    """Chips per deal in ``seat`` at a table of ``table`` players, the dealer uniform (averaged over the seat's
    positions, as :func:`train.measure.exact_walk.exact_values`): the optimum's and each of ``policies``' (name →
    policy), all exact; and how each policy's probabilities were had. ``progress(k)``: called with the deals
    walked (holdings matrices: ``count_worlds`` in all)."""
    check_exact([table], num_players, rules)
    rules = make_rules(rules)
    codes = rule_codes(rules)
    template = table_template(rules, num_players)
    table_code = POLICIES.index(table)
    totals = dict.fromkeys(["optimum", *policies], 0.0)
    how = dict.fromkeys(policies, "its lead_probabilities")  # a table where the seat never chooses asks nobody
    batch, size, root = [], 0, 0.0

    def flush():
        nonlocal batch, size, root
        if not batch:
            return
        obs = np.concatenate([tree.obs[:k] for tree, k in batch])
        mask = np.concatenate([tree.mask[:k] for tree, k in batch])
        chips = np.concatenate([tree.chips[:k] for tree, k in batch])
        offsets = np.cumsum([0] + [k for _, k in batch])[:-1]
        parents = np.concatenate([np.where(tree.parents[:k] >= 0, tree.parents[:k] + at, -1)
                                  for (tree, k), at in zip(batch, offsets)])  # fmt: skip
        ranks = np.concatenate([tree.ranks[:k] for tree, k in batch])
        legal = mask[:, :NUM_RANKS].astype(float)
        totals["optimum"] += root + _value(chips, parents, ranks, legal, True)
        for name, policy in policies.items():
            probs, how[name] = probabilities(policy, obs, mask, name)
            probs = np.ascontiguousarray(probs[:, :NUM_RANKS])
            totals[name] += root + _value(chips, parents, ranks, probs, False)
        batch, size, root = [], 0, 0.0

    def walk(hand):
        dealer, matrices, weights = hand
        return (*walk_hand(matrices, weights, dealer, seat, table_code, codes, template), len(weights))

    # the hands' walks release the GIL: one a core, a window at a time (memory), taken in order (the same sums)
    with ThreadPoolExecutor(cores()) as pool:
        todo = hands(num_players, rules, seat)
        while window := list(itertools.islice(todo, WINDOW)):
            for tree, count, chips_above, worlds in pool.map(walk, window):
                batch.append((tree, count))
                size += count
                root += chips_above
                if size >= BATCH_NODES:
                    flush()
                if progress is not None:
                    progress(worlds)
    flush()
    return {name: total / num_players for name, total in totals.items()}, how
