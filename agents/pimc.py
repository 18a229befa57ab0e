"""A search player: determinized Monte-Carlo (PIMC) lead choice on the compiled kernel's rollouts.

At a lead with more than one legal action, the player samples ``samples`` worlds — the unseen cards dealt
to the other seats uniformly among the deals consistent with public information — and, in every world,
plays each candidate lead out to the end of the deal in the kernel: itself with ``rollout_policy`` after
the lead, the other seats with ``opponent_model`` (or, for ``"random+most_copies"``, half the worlds with
each). It leads the candidate with the best mean chip result
(deal points with chips off). Every candidate meets the same worlds and the same random streams (common
random numbers). That helps less than one would hope: after different leads the rollouts soon diverge.
Measured over 2,000 positions each at 3 and 6 players with 256 worlds: one candidate's result spreads by
21 / 16 chips over the worlds, the difference of two candidates on the same worlds by 24 / 20 chips (30 /
23 if they were independent), while the mean difference is about 1.7 chips — so 128 worlds pick the
better lead only about 70% of the time (against 1,024 worlds).

What the belief uses. At a lead every rank is either untouched (all four cards in hands) or finished (all
four played), so public information is: the cards played, each seat's hand size, the pot. Ranks a seat has
shown it lacks by passing are always finished ranks by the time of a lead, so they add nothing. What the
opponents' own lead choices reveal enters where the world models a seat as most_copies: a most_copies
player who led a set holding ``c`` copies of its rank held no more of any rank then, so that seat's
sampled hand holds no more than its fewest shown (``fewest_led`` in the observation's lead record;
:func:`respect_caps`). Seats modelled as random get the uniform deal given the counts above.

Candidates. Untouched ranks that the player holds equally often are interchangeable under that belief,
so there are at most four candidates: lead a rank held once, twice, three or four times. Which rank of a
group it leads is drawn uniformly (a player who always led the lowest would be one its opponents can read).

>>> import agents, numpy as np
>>> from snipsnap_env.batch import BatchEnv
>>> env = BatchEnv(4, 4, seed=0)
>>> obs, mask = env.reset()
>>> actions = agents.make("pimc", samples=32, seed=0).act_batch(obs, mask)
>>> bool(mask[np.arange(4), actions].all())
True
"""

from __future__ import annotations

import hashlib

import numba
import numpy as np

from snipsnap_env.cards import CARDS_PER_RANK, NUM_CARDS, NUM_RANKS
from snipsnap_env.jit_cache import drop_if_sources_changed
from snipsnap_env.kernel import (
    MOST_COPIES,
    NOT_LED,
    POLICIES,
    lead_position,
    new_game,
    play_out,
    play_until_choice,
    policy_codes,
    rule_codes,
    uniform,
)
from snipsnap_env.observation import CHIP_SCALE, MAX_HAND, SLICES, rules_from_features
from snipsnap_env.parallelism import by_work
from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS, check_count

from .base import Policy, check_masks
from .scripted import hand_counts

drop_if_sources_changed(__file__)  # before numba loads this module's cache (see jit_cache)


@numba.njit(cache=True, nogil=True)
def sample_world(own, played, sizes, rng, holding):
    """Seat 0 holds ``own``; the unseen cards go to seats 1.. uniformly, ``sizes[s]`` each."""
    n = sizes.shape[0]
    unseen = np.empty(sizes[1:].sum(), np.int64)
    k = 0
    for r in range(NUM_RANKS):
        for _ in range(CARDS_PER_RANK - own[r] - played[r]):
            unseen[k] = r
            k += 1
    for i in range(k - 1, 0, -1):  # Fisher–Yates
        j = int(uniform(rng) * (i + 1))
        unseen[i], unseen[j] = unseen[j], unseen[i]
    holding[:, :] = 0
    holding[0, :] = own
    k = 0
    for s in range(1, n):
        for _ in range(sizes[s]):
            holding[s, unseen[k]] += 1
            k += 1


@numba.njit(cache=True, nogil=True)
def respect_caps(holding, caps, rng, tries):
    """Swap cards between seats 1.. until no seat ``s`` holds more than ``caps[s]`` of a rank (or ``tries``
    swaps were tried): a most_copies player who chose to lead a rank held ``c`` copies of it and no more of
    any other rank, and every rank untouched now was untouched then. A swap keeps hand sizes and the
    unseen cards; it moves one excess card to a seat that may hold it, for one it may give back."""
    n = holding.shape[0]
    for _ in range(tries):
        s, r = -1, -1
        for seat in range(1, n):  # the first excess, if any
            for rank in range(NUM_RANKS):
                if holding[seat, rank] > caps[seat]:
                    s, r = seat, rank
                    break
            if s >= 0:
                break
        if s < 0:
            return True
        t = 1 + int(uniform(rng) * (n - 1))
        q = int(uniform(rng) * NUM_RANKS)
        if t != s and q != r and holding[t, q] > 0 and holding[s, q] < caps[s] and holding[t, r] < caps[t]:
            holding[s, r] -= 1
            holding[t, r] += 1
            holding[t, q] -= 1
            holding[s, q] += 1
    return False


@by_work
def pimc_scores(own, played, sizes, pot, fewest_led, candidates, samples, policies, seeds, rules, totals):
    """``totals[r, w, rank]``: seat 0's chips in world ``w`` of row ``r`` when it leads ``rank`` there.

    Row ``r`` is a lead of seat 0 (the observer; seats relative to it) with ``own[r]`` in hand, ``played[r]``
    played, hand sizes ``sizes[r]`` and ``pot[r]``; ``candidates[r, rank]`` marks the leads to score;
    ``policies[k]`` are the rollout policies per relative seat of world kind ``k``: world ``w`` uses kind
    ``w % len(policies)`` (an opponent model that mixes several policies). ``fewest_led[r, s]``: the fewest
    copies seat ``s`` showed in a set it chose to lead (``NOT_LED`` before any) — in worlds where ``s`` plays
    most_copies, it holds no more of any rank.
    """
    rows, n = sizes.shape
    for job in numba.prange(rows * samples):
        r, w = job // samples, job % samples
        world_rng = np.empty(1 + 1 + n, np.uint64)  # the world's deal stream, then one per seat
        for i in range(world_rng.shape[0]):
            world_rng[i] = seeds[r] ^ (np.uint64(w * world_rng.shape[0] + i) * np.uint64(0xD1B54A32D192ED03))
            uniform(world_rng[i : i + 1])
        world = np.empty((n, NUM_RANKS), np.int8)
        sample_world(own[r], played[r], sizes[r], world_rng[:1], world)
        kind = policies[w % policies.shape[0]]
        caps = np.full(n, CARDS_PER_RANK, np.int64)
        for s in range(1, n):
            if kind[s] == MOST_COPIES and fewest_led[r, s] < NOT_LED:
                caps[s] = fewest_led[r, s]
        respect_caps(world, caps, world_rng[:1], 16 * NUM_CARDS)
        holding, hand_size, done, public, deal_score, streams = new_game(n)
        for rank in range(NUM_RANKS):
            if not candidates[r, rank]:
                continue
            holding[:, :] = world
            hand_size[:] = sizes[r]
            done[:] = played[r]
            lead_position(public, pot[r], n - 1)  # (what the seats' leads showed does not steer the rollouts)
            deal_score[:] = 0.0
            streams[:] = world_rng[1:]  # common random numbers: every candidate meets the same draws
            play_until_choice(holding, hand_size, done, public, deal_score, rank, rules)
            play_out(holding, hand_size, done, public, deal_score, kind, streams, rules)
            totals[r, w, rank] = deal_score[0]


class LeadSearch(Policy):
    """A player that searches its real choices: forced turns take the one legal action, and at a lead with a
    choice it leads the candidate its ``scores(obs, mask)`` (B, 13; NaN where not a candidate) values most."""

    def act_batch(self, obs, mask):
        mask = check_masks(mask)
        obs = np.asarray(obs, np.float32)
        actions = mask.argmax(axis=1)  # forced turns: the one legal action
        choosing = np.flatnonzero(mask.sum(axis=1) > 1)
        if choosing.size:
            actions[choosing] = np.nanargmax(self.scores(obs[choosing], mask[choosing]), axis=1)
        return actions

    def scores(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class PIMC(LeadSearch):
    """Determinized Monte-Carlo lead choice: ``samples`` sampled worlds, every candidate rolled out in each.

    ``state_seed``: the draws at each lead (the worlds, the rank of a group led) come from that seed and the
    observation alone, not from the player's stream — so one observation always gets one lead, and the search is a
    deterministic policy of the information state, with an exact value (``pimc:<samples>@<seed>``). ``reseed``
    leaves such a player as it is: its seed is part of which policy it is."""

    name = "pimc"

    def __init__(
        self,
        samples: int = 128,
        opponent_model: str = "random",  # a kernel policy, or several joined by "+" (worlds alternate)
        rollout_policy: str = "most_copies",
        seed: int | None = None,
        state_seed: int | None = None,
    ):
        super().__init__(seed)
        self.state_seed = state_seed
        self.samples = check_count("samples", samples)
        self.opponent_model, self.rollout_policy = opponent_model, rollout_policy
        self._models = opponent_model.split("+")  # "random+most_copies": half the worlds each
        policy_codes([*self._models, rollout_policy])  # a clear error for a policy the kernel cannot play

    def scores(self, obs: np.ndarray, mask: np.ndarray, opponents: np.ndarray | None = None) -> np.ndarray:
        """(B, 13) mean chips of each candidate lead over the sampled worlds (NaN where not a candidate).

        ``opponents`` (B, 7), optional: the kernel policy code (``kernel.POLICIES``) of each row's relative
        seats 1..7 (entries past the table size are ignored) — the policies really seated there, used instead
        of the opponent model (a teacher that knows its table)."""
        obs, mask = np.asarray(obs, np.float32), check_masks(mask)
        num_players = MIN_PLAYERS + obs[:, SLICES["num_players"]].argmax(axis=1)
        if opponents is not None:
            opponents = np.asarray(opponents, np.int64)
            known = (0 <= opponents) & (opponents < len(POLICIES))
            if opponents.shape != (len(obs), MAX_PLAYERS - 1) or not known.all():
                raise ValueError(f"opponents must be ({len(obs)}, {MAX_PLAYERS - 1}) kernel policy codes")
        scores = np.full((len(obs), NUM_RANKS), np.nan)
        for n in np.unique(num_players):  # one kernel call per table size, rules and seating (usually one)
            rows = np.flatnonzero(num_players == n)
            table = obs[rows][:, SLICES["rules"]]
            if opponents is not None:
                table = np.concatenate([table, opponents[rows, : n - 1]], axis=1)
            for key in np.unique(table, axis=0):
                same = rows[(table == key).all(axis=1)]
                seated = opponents[same[0], : n - 1] if opponents is not None else None
                features = obs[same[0], SLICES["rules"]]
                scores[same] = self._scores_for_table(obs[same], mask[same], int(n), features, seated)
        return scores

    def _scores_for_table(self, obs, mask, n, features, seated=None):
        own, played, sizes = position_counts(obs, n)
        pot = np.rint(obs[:, SLICES["pot"].start] * CHIP_SCALE).astype(np.int64)
        if (obs[:, SLICES["is_lead"].start] < 0.5).any() or (
            (CARDS_PER_RANK - own - played).sum(axis=1) != sizes[:, 1:].sum(axis=1)
        ).any():
            raise ValueError("pimc searches leads only: every row with more than one legal action must be a lead")
        if self.state_seed is None:
            draws, seeds = self.rng.random((len(obs), NUM_RANKS)), self.rng.integers(0, 2**63, len(obs), np.uint64)
        else:
            draws, seeds = state_draws(obs, self.state_seed)
        candidates = candidates_by_copies(own, mask[:, :NUM_RANKS], draws)
        if seated is None:
            policies = np.stack([policy_codes([self.rollout_policy] + [model] * (n - 1)) for model in self._models])
        else:
            policies = np.concatenate([policy_codes([self.rollout_policy]), seated])[None, :]
        rules = rule_codes(rules_from_features(features))
        totals = np.zeros((len(obs), self.samples, NUM_RANKS))
        pimc_scores(
            int(candidates.sum()) * self.samples,
            own, played, sizes, pot, fewest_led(obs, n), candidates, self.samples, policies, seeds, rules, totals
        )
        means = totals.mean(axis=1)
        return np.where(candidates, means, np.nan)

    def reseed(self, seed: int | None) -> None:
        if self.state_seed is None:
            super().reseed(seed)

    def __repr__(self) -> str:
        seeded = "" if self.state_seed is None else f", state_seed={self.state_seed}"
        return f"PIMC(samples={self.samples}, opponent_model={self.opponent_model!r}{seeded})"


def state_draws(obs: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(B, 13) uniform draws and (B,) world seeds, each row's a function of ``seed`` and that row's observation."""
    draws, seeds = np.empty((len(obs), NUM_RANKS)), np.empty(len(obs), np.uint64)
    for r, row in enumerate(np.ascontiguousarray(obs, np.float32)):
        key = int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=8, key=str(seed).encode()).digest(), "little")
        stream = np.random.default_rng(key)
        draws[r], seeds[r] = stream.random(NUM_RANKS), stream.integers(0, 2**63, dtype=np.uint64)
    return draws, seeds


def position_counts(obs, n: int):
    """Each row's own hand, the cards played of each rank and the n hand sizes, as whole numbers."""
    own = hand_counts(obs).astype(np.int64)
    played = np.rint(obs[:, SLICES["played"]] * CARDS_PER_RANK).astype(np.int64)
    sizes = np.rint(obs[:, SLICES["hand_size"]][:, :n] * MAX_HAND).astype(np.int64)
    return own, played, sizes


def fewest_led(obs: np.ndarray, n: int) -> np.ndarray:
    """(B, n) the fewest copies each relative seat showed in a set it chose to lead; ``NOT_LED`` before any."""
    fewest = np.rint(obs[:, SLICES["fewest_led"]][:, :n] * CARDS_PER_RANK).astype(np.int64)
    return np.where(obs[:, SLICES["leads"]][:, :n] > 0, fewest, NOT_LED)


def candidates_by_copies(own: np.ndarray, legal: np.ndarray, draws: np.ndarray | None = None) -> np.ndarray:
    """One representative legal rank for each number of copies held: (B, 13) bool. With ``draws`` ((B, 13)
    uniform) it is drawn uniformly among the ranks held that often (the one a search player leads: always the lowest
    would be a convention its opponents exploit, see :func:`agents.numpy_actor.greedy_actions`); without, the
    lowest."""
    candidates = np.zeros(legal.shape, bool)
    rows = np.arange(len(own))
    for copies in range(1, CARDS_PER_RANK + 1):
        group = legal & (own == copies)
        has = group.any(axis=1)
        pick = group[has] if draws is None else np.where(group[has], draws[has], -1.0)
        candidates[rows[has], pick.argmax(axis=1)] = True
    return candidates
