"""Policy networks the kernel plays: the greedy lead of a rank-shared network, compiled, from its weights.

A rollout that seats a learned player (an opponent model, a frozen snapshot, the learner itself) plays it
here, in the same compiled loop as the scripted seats, instead of handing every decision back to torch: the
seat is observed by :func:`snipsnap_env.kernel_observe.observe` and its lead is the highest logit of the
network's action head, reproduced in plain loops over its weights. Ranks the seat's observation cannot tell
apart (the same copies held, played and unseen) get equal logits; one of them is drawn uniformly at random, as
:class:`agents.ppo.PPOPolicy` does: a fixed convention (always the lowest) is one the other seats exploit.

The networks are :class:`agents.rank_policy.RankSharedHead`'s shape (a table summary, one rank scorer with
one hidden layer, a pass logit), stacked along a first axis: ``NETWORK + k`` as a seat's policy code plays
network ``k`` of the stack. Each network reads *this version's* observation: a model saved on an earlier
layout is embedded with zero weights on the columns it never saw (:func:`embed`), which is what it computes
wherever those columns are 0 — and a model refuses tables where they are not before it gets here.
torch stays out of this package: :mod:`agents.numpy_actor` turns a torch network into these arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .cards import CARDS_PER_RANK, NUM_RANKS
from .jit_cache import drop_if_sources_changed
from .kernel import choose_lead, play_until_choice
from .kernel_observe import observe
from .kernel_state import TO_ACT, WINNER, inline, jit, splitmix
from .observation import OBS_DIM, PER_RANK, SLICES

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)

#: policy codes from here on are networks: ``NETWORK + k`` plays network ``k`` of the stack
NETWORK = 64
CONTEXT_START = SLICES["open_rank"].stop  # the rank-shared head reads the per-rank fields, then the table
#: (13, 4): the observation's column of each per-rank feature of each rank
RANK_COLUMNS = np.stack([np.arange(NUM_RANKS) + SLICES[name].start for name in PER_RANK], axis=-1)
TABLE_DIM = OBS_DIM - CONTEXT_START + CARDS_PER_RANK + 1  # the table summary's input: context columns, histogram


class Networks(NamedTuple):
    """``K`` rank-shared networks' weights (``x @ w + b`` orientation), stacked along the first axis."""

    ctx_w: np.ndarray  # (K, TABLE_DIM, C)
    ctx_b: np.ndarray  # (K, C)
    first_rank: np.ndarray  # (K, 4, H): the scorer's first layer, split into its rank features'
    first_context: np.ndarray  # (K, C, H) and the table summary's share
    first_bias: np.ndarray  # (K, H)
    hidden_w: np.ndarray  # (K, H, H2)
    hidden_b: np.ndarray  # (K, H2)
    score_w: np.ndarray  # (K, H2)
    score_b: np.ndarray  # (K,)
    pass_w: np.ndarray  # (K, C)
    pass_b: np.ndarray  # (K,)


def no_networks() -> Networks:
    """An empty stack (for rollouts that seat scripted players only)."""
    return stack([])


def stack(networks: list[Networks]) -> Networks:
    """One stack of the networks of several stacks. Networks of other sizes (a learner with a narrower head than
    a shipped opponent's) share it padded to the widest with zero units: a zero unit's tanh is 0 and its outgoing
    weights are 0, so it adds exact zeros and every network's logits stay its own."""
    if not networks:
        shapes = ((TABLE_DIM, 1), (1,), (len(PER_RANK), 1), (1, 1), (1,), (1, 1), (1,), (1,), (), (1,), ())
        return Networks(*(np.zeros((0, *shape), np.float32) for shape in shapes))
    fields = []
    for arrays in zip(*networks):
        widest = np.max([array.shape[1:] for array in arrays], axis=0) if arrays[0].ndim > 1 else ()
        padded = [np.pad(array, [(0, 0), *((0, w - n) for n, w in zip(array.shape[1:], widest))]) for array in arrays]
        fields.append(np.ascontiguousarray(np.concatenate(padded), np.float32))
    return Networks(*fields)


def embed(layers: dict, own_columns: np.ndarray | None) -> Networks:
    """One network (K = 1) reading this version's observation, from ``layers`` — its arrays in
    :class:`Networks`' names without the K axis, ``ctx_w`` over its own columns — and ``own_columns`` (the
    index here of each of its columns, :func:`snipsnap_env.observation.column_map`; None: the same layout)."""
    ctx_w = np.asarray(layers["ctx_w"], np.float32)
    width = ctx_w.shape[0] - (CARDS_PER_RANK + 1) + CONTEXT_START  # the model's observation width
    if own_columns is None:
        own_columns = np.arange(width)
    own_columns = np.asarray(own_columns)
    if len(own_columns) != width or (own_columns[:CONTEXT_START] != np.arange(CONTEXT_START)).any():
        raise ValueError("the network's per-rank columns are not where this version's observation has them")
    full = np.zeros((TABLE_DIM, ctx_w.shape[1]), np.float32)
    full[own_columns[CONTEXT_START:] - CONTEXT_START] = ctx_w[: width - CONTEXT_START]
    full[OBS_DIM - CONTEXT_START :] = ctx_w[width - CONTEXT_START :]  # the copy-count histogram
    arrays = dict(layers, ctx_w=full)
    return Networks(*(np.asarray(arrays[name], np.float32)[None] for name in Networks._fields))


@numba.njit(cache=True, nogil=True, fastmath=True, inline="always")
def _affine(x, weight, bias, out):
    """out = x @ weight + bias, walking weight row by row (contiguous, so the inner loop vectorises)."""
    out[:] = bias
    for i in range(weight.shape[0]):
        xi = x[i]
        for o in range(weight.shape[1]):
            out[o] += xi * weight[i, o]


@numba.njit(cache=True, nogil=True, fastmath=True)  # reassociated sums: float32 rounding, as torch's own
def logits_into(obs, k, nets, out):
    """Network ``k``'s 14 logits for one observation ``obs`` (this version's layout) into ``out``.

    Ranks with the same features get exactly the first such rank's logit (most of a hand's ranks at a lead):
    a tie stays a tie, and is computed once.
    """
    ctx_w, ctx_b, first_rank, first_context, first_bias, hidden_w, hidden_b, score_w, score_b, pass_w, pass_b = nets
    context_dim, hidden, hidden2 = ctx_w.shape[2], first_bias.shape[1], hidden_b.shape[1]
    features = RANK_COLUMNS.shape[1]
    table = np.empty(TABLE_DIM, np.float32)
    context = np.empty(context_dim, np.float32)
    row_part = np.empty(hidden, np.float32)
    rank = np.empty(features, np.float32)
    h1 = np.empty(hidden, np.float32)
    h2 = np.empty(hidden2, np.float32)
    k_ctx = OBS_DIM - CONTEXT_START
    for j in range(k_ctx):
        table[j] = obs[CONTEXT_START + j]
    for c in range(CARDS_PER_RANK + 1):
        table[k_ctx + c] = 0.0
    for r in range(NUM_RANKS):
        copies = int(np.rint(obs[RANK_COLUMNS[r, 0]] * CARDS_PER_RANK))
        table[k_ctx + min(max(copies, 0), CARDS_PER_RANK)] += 1.0 / NUM_RANKS
    _affine(table, ctx_w[k], ctx_b[k], context)
    for o in range(context_dim):
        context[o] = np.tanh(context[o])
    _affine(context, first_context[k], first_bias[k], row_part)
    for r in range(NUM_RANKS):
        same = -1
        for q in range(r):
            equal = True
            for f in range(features):
                if obs[RANK_COLUMNS[q, f]] != obs[RANK_COLUMNS[r, f]]:
                    equal = False
                    break
            if equal:
                same = q
                break
        if same >= 0:
            out[r] = out[same]
            continue
        for f in range(features):
            rank[f] = obs[RANK_COLUMNS[r, f]]
        _affine(rank, first_rank[k], row_part, h1)
        for o in range(hidden):
            h1[o] = np.tanh(h1[o])
        _affine(h1, hidden_w[k], hidden_b[k], h2)
        acc = score_b[k]
        for i in range(hidden2):
            acc += np.tanh(h2[i]) * score_w[k, i]
        out[r] = acc
    acc = pass_b[k]
    for i in range(context_dim):
        acc += context[i] * pass_w[k, i]
    out[NUM_RANKS] = acc


@jit
def logits_rows(obs, k, nets, out):
    """:func:`logits_into` for every row of ``obs`` (B, OBS_DIM) into ``out`` (B, 14)."""
    for b in range(obs.shape[0]):
        logits_into(obs[b], k, nets, out[b])


@inline
def best_and_ties(logits, mask):
    """The lowest legal action with the highest logit, and how many legal actions share that logit."""
    best, ties = -1, 0
    for a in range(logits.shape[0]):
        if not mask[a]:
            continue
        if best < 0 or logits[a] > logits[best]:
            best, ties = a, 1
        elif logits[a] == logits[best]:
            ties += 1
    return best, ties


@inline
def tied(logits, mask, best, k):
    """The ``k``-th (from 0) legal action whose logit equals ``logits[best]``."""
    for a in range(logits.shape[0]):
        if mask[a] and logits[a] == logits[best]:
            if k == 0:
                return a
            k -= 1
    return best


@inline
def greedy(logits, mask, rng, stream):
    """The legal action with the highest logit, one of equal ones uniformly at random (a draw from
    ``rng[stream]`` only when there is a tie)."""
    best, ties = best_and_ties(logits, mask)
    if ties <= 1:
        return best
    rng[stream], draw = splitmix(rng[stream])
    return tied(logits, mask, best, int(draw * ties))


@jit
def network_actions(obs, mask, which, nets, draws):
    """Row ``b``'s greedy action by network ``which[b]`` (a forced turn without computing logits), the tied best
    picked by ``draws[b]`` (uniform on [0, 1))."""
    actions = np.empty(obs.shape[0], np.int64)
    logits = np.empty(mask.shape[1], np.float32)
    for b in range(obs.shape[0]):
        legal, only = 0, -1
        for a in range(mask.shape[1]):
            if mask[b, a]:
                legal += 1
                only = a
        if legal == 1:
            actions[b] = only
            continue
        logits_into(obs[b], which[b], nets, logits)
        best, ties = best_and_ties(logits, mask[b])
        actions[b] = best if ties <= 1 else tied(logits, mask[b], best, int(draws[b] * ties))
    return actions


@jit
def play_out_observed(holding, hand_size, played, public, deal_score, policies, rng, rules, nets, template, obs,
                      mask, logits):  # fmt: skip
    """:func:`snipsnap_env.kernel.play_out` for tables that seat networks: every real lead of a seat whose code
    is ``NETWORK + k`` is network ``k``'s greedy choice from what the seat sees (``template``:
    :func:`snipsnap_env.observation.table_template` of this table; ``obs``, ``mask``, ``logits``: scratch).

    Play stops at every real choice and keeps the lead record (which the networks read), so it is slower than
    ``play_out``; the scripted seats draw from the same streams, so a table without networks plays the same
    deal as ``play_out``.
    """
    lead = -1
    while True:
        play_until_choice(holding, hand_size, played, public, deal_score, lead, rules)
        if public[WINNER] >= 0:
            return
        seat = public[TO_ACT]
        code = policies[seat]
        if code >= NETWORK:
            observe(holding, hand_size, played, public, deal_score, seat, template, rules, obs, mask)
            logits_into(obs, code - NETWORK, nets, logits)
            lead = greedy(logits, mask, rng, 1 + seat)  # the stream a scripted seat would draw from
        else:
            lead = choose_lead(holding, played, seat, code, rng, 1 + seat, rules)
