"""A search player whose sampled worlds seat any policy: PIMC lead choice against a model of the table.

:class:`agents.pimc.PIMC` rolls its worlds out inside the compiled kernel, so its opponents there can only
be the scripted policies the kernel plays. This player samples worlds the same way (the unseen cards dealt
uniformly among the other seats, given the cards played and every hand's size), but plays each candidate
lead out on the batched engine, lead by lead: the other seats lead with ``model.act_batch`` — a learned
network, a search player, anything with ``act_batch`` — and the searcher itself with ``rollout_policy``.
Given a list of models, ``scores(obs, mask, opponents)`` seats in each row's worlds the models really seated
round that position (a teacher that knows its table, as PIMC's ``opponents``); without, the first model.
Every world of every candidate and every row is one game of one :class:`~snipsnap_env.batch.BatchEnv`, so
the model decides for all of them in one batched call per step. Candidates meet the same worlds and the
same random streams (common random numbers), as in PIMC.

It is the best response that ``python -m train.exploit`` measures a policy's exploitability with: seated
at a table of N-1 copies of a target, with the target as its model, it knows how the table plays.

>>> import agents, numpy as np
>>> from snipsnap_env.batch import BatchEnv
>>> env = BatchEnv(4, 4, seed=0)
>>> obs, mask = env.reset()
>>> searcher = ModelSearch(agents.make("most_copies"), samples=8, seed=0)
>>> actions = searcher.act_batch(obs, mask)
>>> bool(mask[np.arange(4), actions].all())
True
"""

from __future__ import annotations

import numba
import numpy as np

from snipsnap_env.batch import BatchEnv, play_seated
from snipsnap_env.cards import CARDS_PER_RANK, NUM_CARDS, NUM_RANKS
from snipsnap_env.jit_cache import drop_if_sources_changed
from snipsnap_env.kernel import (
    COPIES_LED,
    FEWEST_LED,
    LEADS,
    NOT_LED,
    kernel_policy,
    lead_positions,
    rule_codes,
    seed_streams,
)
from snipsnap_env.lead_values import values_for
from snipsnap_env.observation import CHIP_SCALE, SLICES, rules_from_features, table_template
from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS, check_count

from .base import Policy, check_masks
from .kernel_seats import NOT_PLAYED, kernel_codes
from .pimc import LeadSearch, candidates_by_copies, fewest_led, position_counts, respect_caps, sample_world

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)


@numba.njit(cache=True, nogil=True)
def _sample_worlds(own, played, sizes, caps, streams, worlds):
    """``worlds[r, w]``: row ``r``'s world ``w`` (seat 0 holds ``own[r]``, seat ``s`` at most ``caps[r, s]``
    copies of a rank where it can), drawn from ``streams[r, w]``."""
    for r in range(worlds.shape[0]):
        for w in range(worlds.shape[1]):
            sample_world(own[r], played[r], sizes[r], streams[r, w : w + 1], worlds[r, w])
            respect_caps(worlds[r, w], caps[r], streams[r, w : w + 1], 16 * NUM_CARDS)  # no draw if none over


class ModelSearch(LeadSearch):
    """Determinized Monte-Carlo lead choice whose worlds seat ``model`` (a policy, or a list of them:
    see :meth:`scores`) in the other seats."""

    name = "model_search"

    def __init__(
        self,
        model: Policy | list[Policy],
        samples: int = 64,
        rollout_policy: Policy | None = None,
        seed: int | None = None,
        max_games: int = 1 << 16,
        in_kernel: bool = True,
    ):
        super().__init__(seed)
        models = list(model) if isinstance(model, (list, tuple)) else [model]
        for member in models:
            if not hasattr(member, "act_batch"):
                kind = type(member).__name__
                raise TypeError(f"model must be a policy with act_batch (or a list of them), got {kind}")
        from .scripted import MostCopies

        self.models = models
        self.model = models[0]
        self.rollout_policy = rollout_policy if rollout_policy is not None else MostCopies()
        self.samples = check_count("samples", samples)
        self.max_games = check_count("max_games", max_games)  # games on the engine at once (memory)
        # roll out in compiled code when the kernel plays every seat (scripted players, greedy networks)
        self.in_kernel = in_kernel
        self.reseed(seed)  # the model's and the rollout policy's draws follow the searcher's seed too

    def reseed(self, seed: int | None) -> None:
        super().reseed(seed)
        for i, policy in [(0, self.rollout_policy), *enumerate(self.models)]:
            if hasattr(policy, "reseed"):
                policy.reseed(None if seed is None else seed + 1 + i)

    def scores(self, obs: np.ndarray, mask: np.ndarray, opponents: np.ndarray | None = None) -> np.ndarray:
        """(B, 13) mean chips from here on of each candidate lead over the sampled worlds (NaN where not a
        candidate), as :meth:`agents.pimc.PIMC.scores`. ``opponents`` (B, 7), optional: the index in the
        models of the policy in each row's relative seats 1..7 (entries past the table size are ignored)."""
        obs, mask = np.asarray(obs, np.float32), check_masks(mask)
        for model in [self.rollout_policy, *self.models]:  # the kernel plays them from weights: refuse tables here
            if hasattr(model, "refuse_table"):
                model.refuse_table(obs)
        if opponents is None:
            opponents = np.zeros((len(obs), MAX_PLAYERS - 1), np.int64)
        opponents = np.asarray(opponents)
        if opponents.shape != (len(obs), MAX_PLAYERS - 1) or opponents.min(initial=0) < 0:
            raise ValueError(f"opponents must be ({len(obs)}, {MAX_PLAYERS - 1}) indices into the models")
        if opponents.max(initial=0) >= len(self.models):
            raise ValueError(f"opponents index model {opponents.max()}, but there are {len(self.models)} models")
        num_players = MIN_PLAYERS + obs[:, SLICES["num_players"]].argmax(axis=1)
        scores = np.full((len(obs), NUM_RANKS), np.nan)
        table = np.concatenate([num_players[:, None], obs[:, SLICES["rules"]]], axis=1)
        for key in np.unique(table, axis=0):  # one engine per table size and rules (usually one)
            rows = np.flatnonzero((table == key).all(axis=1))
            per_game = self.samples * CARDS_PER_RANK  # at most four candidates a row
            for start in range(0, len(rows), max(1, self.max_games // per_game)):
                part = rows[start : start + max(1, self.max_games // per_game)]
                scores[part] = self._scores_for_table(obs[part], mask[part], int(key[0]), opponents[part])
        return scores

    def _scores_for_table(self, obs, mask, n, opponents):
        rows, samples = len(obs), self.samples
        own, played, sizes = position_counts(obs, n)
        if (obs[:, SLICES["is_lead"].start] < 0.5).any() or (
            (CARDS_PER_RANK - own - played).sum(axis=1) != sizes[:, 1:].sum(axis=1)
        ).any():
            raise ValueError("model_search searches leads only: every row with a choice must be a lead")
        candidates = candidates_by_copies(own, mask[:, :NUM_RANKS], self.rng.random((len(own), NUM_RANKS)))
        streams = seed_streams(int(self.rng.integers(2**63)), rows * samples * (2 + n)).reshape(rows, samples, -1)
        worlds = self.sample_worlds(obs, n, opponents, streams[:, :, 0].copy())
        codes, nets = kernel_codes([self.rollout_policy, *self.models])
        if self.in_kernel and (codes != NOT_PLAYED).all():
            return self._scores_in_kernel(obs, n, opponents, candidates, worlds, codes, nets)
        # one game per (row, world, candidate); the candidates of a world share its seat streams
        row, world, rank = np.nonzero(np.broadcast_to(candidates[:, None, :], (rows, samples, NUM_RANKS)))
        env = BatchEnv(len(row), n, rules=rules_from_features(obs[0, SLICES["rules"]]))
        self._set_up(env, obs[row], worlds[row, world], played[row], sizes[row], n)
        env.games.rng[:] = streams[row, world, 1:]
        first = [True]

        def lead(env, games, obs_, mask_):
            if first[0]:  # every game starts at the searcher's lead: play the candidate
                first[0] = False
                return rank[games]
            return self.rollout_policy.act_batch(obs_, mask_)

        seats = np.zeros(len(row), np.int64)
        seated = np.zeros((len(row), n), np.int64)  # world seat k is the searcher's relative seat k
        seated[:, 1:] = opponents[row, : n - 1]
        chips = play_seated(env, env.observe(), seats, lead, self.models, seated)
        totals = np.zeros((rows, samples, NUM_RANKS))
        totals[row, world, rank] = chips - np.rint(obs[row, SLICES["score"].start] * CHIP_SCALE)  # from here on
        return np.where(candidates, totals.mean(axis=1), np.nan)

    def _scores_in_kernel(self, obs, n, opponents, candidates, worlds, codes, nets):
        """The same search with every world's rollouts in compiled code (every seat a kernel policy or a greedy
        network): one game per (row, world), each candidate rolled out once in it with common random numbers."""
        rows, samples = worlds.shape[:2]
        _, played, sizes = position_counts(obs, n)
        row = np.repeat(np.arange(rows), samples)
        env = BatchEnv(len(row), n, rules=rules_from_features(obs[0, SLICES["rules"]]))
        self._set_up(env, obs[row], worlds.reshape(len(row), n, NUM_RANKS), played[row], sizes[row], n)
        policies = np.empty((len(row), n), np.int64)
        policies[:, 0] = codes[0]  # the searcher's own later leads
        policies[:, 1:] = codes[1 + opponents[row, : n - 1]]
        seeds = self.rng.integers(0, 2**63, size=len(row), dtype=np.uint64)
        values = np.empty((len(row), NUM_RANKS))
        template = table_template(env.rules, n).astype(np.float32)
        state = env.games.state[:5]
        values_for(len(row), *state, np.zeros(len(row), np.int64), candidates[row], policies, 1, seeds,
                   rule_codes(env.rules), values, nets, template)  # fmt: skip
        return np.where(candidates, values.reshape(rows, samples, NUM_RANKS).mean(axis=1), np.nan)

    def sample_worlds(self, obs, n: int, opponents, streams) -> np.ndarray:
        """(rows, samples, n, 13) worlds of each row's lead, one per stream of ``streams`` (rows, samples).
        A seat played by most_copies holds no more of any rank than the fewest copies it showed in a set it
        chose to lead (as in :class:`agents.pimc.PIMC`): what its leads revealed."""
        own, played, sizes = position_counts(obs, n)
        shown = fewest_led(obs, n)
        caps = np.full((len(obs), n), CARDS_PER_RANK, np.int64)
        for index, model in enumerate(self.models):
            if kernel_policy(model) == "most_copies":
                seated = np.zeros((len(obs), n), bool)
                seated[:, 1:] = opponents[:, : n - 1] == index
                caps = np.where(seated & (shown < NOT_LED), shown, caps)
        worlds = np.zeros((*streams.shape, n, NUM_RANKS), np.int8)
        _sample_worlds(own, played, sizes, caps, streams, worlds)
        return worlds

    @staticmethod
    def _set_up(env: BatchEnv, obs, holding, played, sizes, n):
        """The engine's state of each game from its row's observation (seat 0 = the searcher, to lead)."""
        games = env.games
        games.holding[:] = holding
        games.hand_size[:] = sizes
        games.played[:] = played
        games.deal_score[:] = np.rint(obs[:, SLICES["score"]][:, :n] * CHIP_SCALE)
        public = games.public
        lead_positions(public, np.rint(obs[:, SLICES["pot"].start] * CHIP_SCALE).astype(np.int64), n - 1)
        leads = np.rint(obs[:, SLICES["leads"]][:, :n] * NUM_RANKS).astype(np.int64)
        copies = np.rint(obs[:, SLICES["copies_led"]][:, :n] * CARDS_PER_RANK * leads).astype(np.int64)
        public[:, LEADS : LEADS + n] = leads
        public[:, COPIES_LED : COPIES_LED + n] = copies
        public[:, FEWEST_LED : FEWEST_LED + n] = fewest_led(obs, n)

    def __repr__(self) -> str:
        return f"ModelSearch(models={self.models!r}, samples={self.samples})"
