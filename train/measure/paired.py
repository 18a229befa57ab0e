"""Paired deals: the deals every candidate plays (identical hands and dealers, the candidate's seat rotated,
the same opponents with identically seeded streams), played on the compiled engine, and the summary of a
candidate's chips with 95% CIs and its paired difference to a reference. Shared by the jobs that learn
(evaluation during training) and the jobs that measure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from snipsnap_env.batch import BatchEnv, play_given_deals, play_seated
from snipsnap_env.cards import NUM_CARDS, deck
from snipsnap_env.kernel import kernel_policy
from snipsnap_env.rules import make_rules

Z95 = 1.959964


@dataclass(frozen=True)
class PairedDeals:
    """The deals every candidate plays: who holds each card, the dealer, the candidate's seat, and which
    opponent from the pool sits in each other seat."""

    owners: np.ndarray  # (D, 52)
    dealers: np.ndarray  # (D,)
    seats: np.ndarray  # (D,)
    opponent_index: np.ndarray  # (D, N)

    @classmethod
    def draw(cls, num_deals: int, num_players: int, pool_size: int, seed: int, rules=None) -> "PairedDeals":
        """``num_deals`` shuffled deals from ``seed`` (of the deck ``rules`` deals: the whole pack by default, the
        same deals as ever); the candidate's seat cycles round the table."""
        rng = np.random.default_rng(seed)
        dealers = rng.integers(num_players, size=num_deals)
        cards = np.asarray(deck(make_rules(rules).ranks))
        pack = cards[rng.random((num_deals, len(cards))).argsort(axis=1)]
        owners = np.full((num_deals, NUM_CARDS), -1, np.int64)  # −1: a card a small deck leaves out
        np.put_along_axis(owners, pack, (dealers[:, None] + 1 + np.arange(len(cards))) % num_players, axis=1)
        seats = np.arange(num_deals) % num_players
        opponent_index = rng.integers(pool_size, size=(num_deals, num_players))
        return cls(owners, dealers, seats, opponent_index)


def play_paired(
    candidate,
    opponents: list,
    deals: PairedDeals,
    rules: str,
    chunk: int = 8192,
    progress=None,
    seed: int = 0,
    on_lead=None,
) -> np.ndarray:
    """The candidate's chips (points with chips off) in each deal, playing ``deals.seats``.

    When every policy is one the kernel plays itself, whole deals run in the kernel (``play_given_deals``,
    each seat drawing from its own stream); otherwise, or with ``on_lead``, the batched engine steps lead by
    lead with the policies' ``act_batch`` between steps. ``on_lead(env, rows, obs, mask, actions, deals)`` is
    shown every turn of the candidate before it is played: the engine, its games ``rows`` (in state), what
    the candidate saw and chose there, and the indices of those games' deals in ``deals``.
    """
    num_deals, num_players = deals.opponent_index.shape
    names = [kernel_policy(policy) for policy in (candidate, *opponents)]
    if None not in names and on_lead is None:
        table = np.array(names[1:], dtype=object)[deals.opponent_index]
        table[np.arange(num_deals), deals.seats] = names[0]
        chips = play_given_deals(deals.owners, deals.dealers, table.astype(str), rules, seed=seed)
        if progress is not None:
            progress(num_deals)
        return chips[np.arange(num_deals), deals.seats]
    result = np.zeros(num_deals)
    for start in range(0, num_deals, chunk):
        part = slice(start, min(start + chunk, num_deals))
        result[part] = _play_chunk(
            candidate,
            opponents,
            deals.owners[part],
            deals.dealers[part],
            deals.seats[part],
            deals.opponent_index[part],
            num_players,
            rules,
            on_lead,
            part.start,
            seed,
        )
        if progress is not None:
            progress(part.stop - part.start)
    return result


def play_candidates(
    policies: dict,
    opponents: list[str],
    deals: PairedDeals,
    rules: str,
    seed: int,
    chunk: int = 8192,
    progress=None,
    variance_reduction: int = 0,
    trust_model: bool = False,
) -> dict[str, np.ndarray]:
    """Every policy's chips on the same ``deals``, each reseeded with ``seed`` and meeting opponents made
    afresh with the same streams (``trust_model``: SB3 zips among them load), so their differences are
    paired. With ``variance_reduction`` (rollouts per
    lead, :mod:`train.measure.variance`) each policy's entry is (2, D): the chips as played, then with the control
    variates."""
    from .candidates import make_candidate  # the opponents are named as candidates are (ppo:<file> too)
    from .variance import play_reduced

    results = {}
    for spec, policy in policies.items():
        policy.reseed(seed)
        pool = [make_candidate(name, seed + 1 + i, trust_model=trust_model) for i, name in enumerate(opponents)]
        if variance_reduction:
            reduced = play_reduced(policy, pool, deals, rules, variance_reduction, seed, progress=progress)
            results[spec] = np.stack(reduced)
        else:
            results[spec] = play_paired(policy, pool, deals, rules, chunk=chunk, progress=progress, seed=seed)
    return results


def _play_chunk(candidate, opponents, owners, dealers, seats, opponent_index, num_players, rules, on_lead=None,
                first_deal=0, seed=0):  # fmt: skip
    """The chunk's deals played lead by lead: the policies the kernel plays draw from the deals' own per-seat
    streams (those of :func:`play_given_deals` with ``seed``), so they play as they would in whole-deal play, and
    a candidate played here meets the opponents it would meet there, however many of them share the pool."""
    env = BatchEnv(len(seats), num_players, rules=rules)
    start = env.reset(owners=owners, dealers=dealers)
    env.use_deal_streams(seed, first_deal)
    own = kernel_policy(candidate)

    def lead(env, rows, obs, mask):
        actions = env.choose_leads(rows, own) if own else candidate.act_batch(obs, mask)
        if on_lead is not None:
            on_lead(env, rows, obs, mask, actions, first_deal + rows)
        return actions

    in_kernel = [kernel_policy(policy) for policy in opponents]
    return play_seated(env, start, seats, lead, opponents, opponent_index, in_kernel)


@dataclass
class Row:
    """One candidate's result, and its paired difference to one reference."""

    name: str
    chips_per_deal: float
    ci95: float
    reference: str
    diff_vs_reference: float
    diff_ci95: float
    deals: int
    diff_vs_reference_plain: float | None = None  # with variance reduction: the difference as played
    diff_ci95_plain: float | None = None

    def record(self) -> dict:
        """The row as results.json and .csv hold it (the plain difference only where there is a reduced one)."""
        return {key: value for key, value in asdict(self).items() if value is not None}


def mean_ci(values: np.ndarray) -> tuple[float, float]:
    """The mean of ``values`` (per deal) and its 95% confidence interval's half-width."""
    return float(values.mean()), Z95 * float(values.std(ddof=1)) / np.sqrt(len(values))


def summarise(results: dict[str, np.ndarray], reference: str) -> list[Row]:
    """Mean and 95% CI per candidate, and the paired difference to ``reference`` with its CI; for results of
    :func:`play_candidates` with variance reduction, the reduced ones, and the plain difference beside them."""
    base = results[reference]
    rows = []
    for name, chips in results.items():
        if chips.ndim == 1:
            rows.append(Row(name, *mean_ci(chips), reference, *mean_ci(chips - base), len(chips)))
        else:
            reduced = Row(name, *mean_ci(chips[1]), reference, *mean_ci(chips[1] - base[1]), chips.shape[1])
            rows.append(replace(reduced, **dict(zip(("diff_vs_reference_plain", "diff_ci95_plain"),
                                                    mean_ci(chips[0] - base[0])))))  # fmt: skip
    return rows
