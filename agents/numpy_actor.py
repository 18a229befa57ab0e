"""The actor of a saved policy network in plain numpy: one greedy decision in tens of microseconds.

A decision needs only the action head's logits. Through torch a (1, OBS_DIM) forward costs a few hundred
microseconds of dispatch and thread hand-offs (issue: a learned seat made an AEC deal 15× slower than a
scripted one); the same arithmetic in numpy, on weights copied once, costs a tenth of that. The twin reads
the layers of :class:`agents.rank_policy.RankSharedHead` (or of SB3's MLP actor) from the torch network and
reproduces its forward: the same logits up to float32 rounding (a test compares them), so greedy choices
agree wherever two logits are not within rounding of each other (:func:`greedy_actions` asks torch there).
"""

from __future__ import annotations

import numba
import numpy as np

from snipsnap_env import kernel_network
from snipsnap_env.cards import CARDS_PER_RANK, NUM_RANKS
from snipsnap_env.observation import PER_RANK as _PER_RANK
from snipsnap_env.observation import SLICES

_CONTEXT_START = kernel_network.CONTEXT_START  # as RankSharedHead reads them: the per-rank fields, then the table
_COMPILED_ROWS = 8  # up to this many rows the compiled loops beat numpy's per-call overheads
ROUNDING = 1e-4  # logits this close may order differently in numpy and torch (float32, other sum orders)


def _layers(state: dict, prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(weight.T, bias) as float32 arrays of the linear layers in a state dict of numpy arrays: those of the
    Sequential ``prefix`` (``prefix.0``, ``prefix.2``, ... in order), or the one layer ``prefix``."""
    numbered = {name[len(prefix) + 1 :].split(".")[0] for name in state if name.startswith(prefix + ".")}
    indices = sorted(int(i) for i in numbered if i.isdigit())
    names = [f"{prefix}.{i}" for i in indices] if indices else [prefix]
    return [(np.array(state[f"{n}.weight"], np.float32).T.copy(), np.array(state[f"{n}.bias"], np.float32).copy())
            for n in names]  # fmt: skip


def _tanh_stack(x: np.ndarray, layers) -> np.ndarray:
    for weight, bias in layers:
        x = np.tanh(x @ weight + bias)
    return x


class NumpyActor:
    """``logits(obs)``: (B, 14) from (B, OBS_DIM) observations of this version's layout, of a rank-shared or an
    MLP network; ``own_columns`` (:func:`snipsnap_env.observation.column_map`) picks the network's own columns
    when it was saved on another layout."""

    def __init__(self, network, own_columns: np.ndarray | None = None):
        """From a torch policy network (SB3's, or :class:`agents.rank_policy.RankSharedPolicy`), its weights as
        they are now."""
        head = network.action_net
        kind, obs_dim = ("rank_shared", head.obs_dim) if hasattr(head, "scorer") else ("mlp", None)
        state = {name: tensor.detach().cpu().numpy() for name, tensor in network.state_dict().items()}
        self._build(state, kind, obs_dim, own_columns)

    @classmethod
    def from_arrays(cls, state: dict, kind: str, obs_dim: int, own_columns: np.ndarray | None = None):
        """From a policy's weights as numpy arrays by their torch names (:func:`agents.model_file.load_arrays`):
        no torch needed."""
        actor = cls.__new__(cls)
        actor._build(state, kind, obs_dim, own_columns)
        return actor

    def _build(self, state: dict, kind: str, obs_dim: int | None, own_columns) -> None:
        self.own_columns = own_columns
        self.kernel_networks = None  # the compiled twin (snipsnap_env.kernel_network), when the shape allows
        self.kind = kind
        if kind == "rank_shared":
            self.context = _layers(state, "action_net.context")
            (first, bias), *self.hidden, self.score = _layers(state, "action_net.scorer")
            # the first scorer layer reads [rank features, context]: split, so the context's share is computed
            # once per row instead of once per rank
            self.first_rank, self.first_context, self.first_bias = (
                first[: len(_PER_RANK)],
                first[len(_PER_RANK) :],
                bias,
            )
            (self.pass_logit,) = _layers(state, "action_net.pass_logit")
            self.obs_dim = obs_dim
            self.rank_columns = kernel_network.RANK_COLUMNS
            if len(self.hidden) == 1 and len(self.context) == 1:
                self.kernel_networks = kernel_network.embed(self._kernel_layers(), own_columns)
        else:  # SB3's MLP actor: policy_net (Linear, Tanh)*, then action_net
            has_hidden = any(name.startswith("mlp_extractor.policy_net.") for name in state)
            self.hidden = _layers(state, "mlp_extractor.policy_net") if has_hidden else []
            (self.score,) = _layers(state, "action_net")
            self.obs_dim = (self.hidden[0][0] if self.hidden else self.score[0]).shape[0]

    def _kernel_layers(self) -> dict:
        """The arrays of :class:`snipsnap_env.kernel_network.Networks` (one network, over its own columns)."""
        ((ctx_w, ctx_b),), ((hidden_w, hidden_b),) = self.context, self.hidden
        (score_w, score_b), (pass_w, pass_b) = self.score, self.pass_logit
        return dict(
            ctx_w=ctx_w, ctx_b=ctx_b, first_rank=self.first_rank, first_context=self.first_context,
            first_bias=self.first_bias, hidden_w=hidden_w, hidden_b=hidden_b, score_w=score_w[:, 0],
            score_b=score_b[0], pass_w=pass_w[:, 0], pass_b=pass_b[0],
        )  # fmt: skip

    def networks(self) -> kernel_network.Networks:
        """This network as the kernel plays it in rollouts (a stack of one)."""
        if self.kernel_networks is None:
            raise ValueError(
                "the kernel plays rank-shared networks with one hidden scorer layer only; this one is "
                f"{self.kind} with {len(self.hidden)} hidden layers"
            )
        return self.kernel_networks

    def decide_one(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator, exact: bool) -> int | None:
        """:func:`greedy_actions` of one observation (OBS_DIM,) and mask (14,) (an AEC decision) by a network the
        kernel plays, in one compiled call and one draw if the best logit is tied: the same choice and the same
        draws. None where the general path must decide (another network, no legal action, or a near-tie for
        torch when ``exact``)."""
        if self.kernel_networks is None:
            return None
        status, action, count, tied = _decide_one(obs, mask, self.kernel_networks, ROUNDING)
        if status == 1 or (status == 2 and exact):
            return None
        return int(tied[int(rng.random() * count)]) if count > 1 else int(action)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, np.float32)
        if self.kernel_networks is not None and len(obs) <= _COMPILED_ROWS:
            out = np.empty((len(obs), NUM_RANKS + 1), np.float32)
            kernel_network.logits_rows(obs, 0, self.kernel_networks, out)
            return out
        if self.own_columns is not None:
            obs = obs[:, self.own_columns]
        if self.kind == "mlp":
            weight, bias = self.score
            return _tanh_stack(obs[:, : self.obs_dim], self.hidden) @ weight + bias
        copies = np.rint(obs[:, SLICES["hand"]] * CARDS_PER_RANK).astype(np.int64)  # (B, 13)
        histogram = np.zeros((len(obs), CARDS_PER_RANK + 1), np.float32)
        np.add.at(histogram, (np.arange(len(obs))[:, None], np.clip(copies, 0, CARDS_PER_RANK)), 1.0)
        table = np.concatenate([obs[:, _CONTEXT_START : self.obs_dim], histogram / NUM_RANKS], axis=1)
        context = _tanh_stack(table, self.context)  # (B, C)
        row = context @ self.first_context + self.first_bias  # (B, H)
        features = obs[:, self.rank_columns]  # (B, 13, 4)
        hidden = np.tanh(features @ self.first_rank + row[:, None, :])  # (B, 13, H)
        weight, bias = self.score
        ranks = (_tanh_stack(hidden, self.hidden) @ weight + bias)[..., 0]  # (B, 13)
        # ranks with the same features get exactly the first one's logit (a batched product may round two equal
        # rows differently), so a tie stays a tie and the greedy choice the lowest such rank, as in torch
        first_same = (features[:, :, None, :] == features[:, None, :, :]).all(axis=-1).argmax(axis=2)
        ranks = np.take_along_axis(ranks, first_same, axis=1)
        weight, bias = self.pass_logit
        return np.concatenate([ranks, context @ weight + bias], axis=1)


@numba.njit(cache=True, nogil=True)
def greedy_rows(logits, legal, rounding):
    """Per row, the legal action with the highest logit (the lowest of equal ones), and whether the runner-up
    is within ``rounding`` of it without being equal (a near-tie another float32 sum order could flip)."""
    actions = np.empty(logits.shape[0], np.int64)
    close = np.zeros(logits.shape[0], np.bool_)
    for b in range(logits.shape[0]):
        best, second = -1, -np.inf
        for a in range(logits.shape[1]):
            if not legal[b, a]:
                continue
            if best < 0 or logits[b, a] > logits[b, best]:
                if best >= 0:
                    second = logits[b, best]
                best = a
            elif logits[b, a] > second:
                second = logits[b, a]
        actions[b] = best
        gap = logits[b, best] - second
        close[b] = 0 < gap < rounding
    return actions, close


@numba.njit(cache=True, nogil=True)
def tie_counts(logits, legal, actions):
    """Per row, how many legal actions have exactly the logit of the row's action."""
    counts = np.zeros(logits.shape[0], np.int64)
    for b in range(logits.shape[0]):
        for a in range(logits.shape[1]):
            if legal[b, a] and logits[b, a] == logits[b, actions[b]]:
                counts[b] += 1
    return counts


@numba.njit(cache=True, nogil=True)
def _greedy_with_ties(logits, legal, rounding):
    actions, close = greedy_rows(logits, legal, rounding)
    return actions, close, tie_counts(logits, legal, actions)


@numba.njit(cache=True, nogil=True)
def _pick_tied(logits, legal, actions, rows, ks):
    """Row ``rows[i]``'s action becomes the ``ks[i]``-th (from 0, in action order) of its legal actions that
    share its logit."""
    for i in range(rows.shape[0]):
        b, k = rows[i], ks[i]
        chosen = logits[b, actions[b]]
        for a in range(logits.shape[1]):
            if legal[b, a] and logits[b, a] == chosen:
                if k == 0:
                    actions[b] = a
                    break
                k -= 1


@numba.njit(cache=True, nogil=True)
def _decide_one(obs, mask, nets, rounding):
    """One observation's greedy choice by network 0 of ``nets`` in one compiled call: ``(status, action, count,
    tied)``: the lowest legal action of the highest logit, and the ``count`` legal actions sharing that logit
    (``tied``, in action order). ``status`` 1: no legal action; 2: the two best are a near-tie (torch's call)."""
    logits = np.empty((1, NUM_RANKS + 1), np.float32)
    kernel_network.logits_rows(obs.reshape(1, -1), 0, nets, logits)
    legal = (mask != 0).reshape(1, -1)
    tied = np.zeros(NUM_RANKS + 1, np.int64)
    if not legal.any():
        return 1, -1, 0, tied
    actions, close = greedy_rows(logits, legal, rounding)
    count = 0
    for a in range(NUM_RANKS + 1):
        if legal[0, a] and logits[0, a] == logits[0, actions[0]]:
            tied[count] = a
            count += 1
    return (2 if close[0] else 0), actions[0], count, tied


def greedy_actions(logits: np.ndarray, legal: np.ndarray, rng: np.random.Generator | None, exact_logits=None):
    """Each row's legal action with the highest of ``logits`` (the twin's), one of equal ones drawn uniformly
    with ``rng``: ranks the observation cannot tell apart (the same copies held, played, unseen) have equal
    logits, and always playing the lowest of them is a convention the other seats exploit (at a 6-player table
    of the shipped model's copies a most_copies player out-earned it by half a chip a deal; breaking ties at
    random, it out-earns a most_copies player); ``rng=None`` keeps the lowest. ``exact_logits(rows)``: the torch
    network's logits of those rows, which decide where the two best differ by less than float32 rounding.
    (Compiled but for the draws, which take one number from ``rng`` per row with a tie, in row order.)"""
    actions, close, counts = _greedy_with_ties(logits, legal, ROUNDING)
    if exact_logits is not None and close.any():  # only near-ties go to torch: an exact tie is a tie there too
        rows = np.flatnonzero(close)
        actions[rows] = np.where(legal[rows], exact_logits(rows), -np.inf).argmax(axis=1)
        counts[rows] = tie_counts(logits[rows], legal[rows], actions[rows])
    if rng is None:
        return actions
    rows = np.flatnonzero(counts > 1)
    if rows.size:
        _pick_tied(logits, legal, actions, rows, (rng.random(len(rows)) * counts[rows]).astype(np.int64))
    return actions
