"""Ratings from a league's tables, fitted all at once and separately for each table size, so that no order of
play and no mix of sizes moves them; and α-Rank over the same tables as a second view.

**The rating model** is a paired comparison on chip margins: at a table, agent ``i`` out-earns agent ``j``
by ``r_i - r_j`` chips per deal plus noise. It is Bradley–Terry's model in its Gaussian (Thurstone–Mosteller)
form, read on the margins rather than on who won — wins and losses throw away the size of a win, and a
ranking of chips by who won more often can contradict the chips themselves. Its maximum-likelihood fit is
least squares over every pair that shared a table, each weighted by the table's deals; ratings sum to 0 at
each size, so ``r_i`` is agent ``i``'s margin per deal over the size's average agent. When every agent meets
every company equally often (the league's cycles do that) the ratings order the agents as their chips do;
when not, the fit corrects for whom each met. 95% intervals come from a bootstrap over each table's deals
(the same resampled deals for every seat of a table, keeping the pairing), seeded by the table, so they too
are the same in any order.

**α-Rank** (Omidshafiei et al., Scientific Reports 2019), single population, on the size's meta-game of pairwise
margins ``M[i, j]``: the stationary mass of an evolutionary process in which a mutant ``r`` takes over a
population of ``s`` with Moran fixation probability; mass goes to the agents nobody out-earns (a cycle shares
it). Pairs that never shared a table count as even.
"""

from __future__ import annotations

import numpy as np

BOOTSTRAP = 200  # resamples for the rating intervals
ALPHA = 10.0  # α-Rank's selection intensity, per chip of margin
POPULATION = 50  # α-Rank's population size m


def table_means(chips: dict[str, np.ndarray], picks: np.ndarray | None = None) -> dict[str, float]:
    """Each agent's mean chips per deal at one table (over ``picks``, resampled deal indices, if given)."""
    return {name: float(deals.mean() if picks is None else deals[picks].mean()) for name, deals in chips.items()}


def fit(agents: list[str], tables: list[dict[str, float]], weights: list[float]) -> np.ndarray:
    """The weighted least-squares ratings (summing to 0) of ``agents`` from each table's mean chips per agent."""
    index = {name: i for i, name in enumerate(agents)}
    rows, targets, scale = [], [], []
    for means, weight in zip(tables, weights):
        names = list(means)
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                row = np.zeros(len(agents))
                row[index[names[a]]], row[index[names[b]]] = 1.0, -1.0
                rows.append(row)
                targets.append(means[names[a]] - means[names[b]])
                scale.append(np.sqrt(weight))
    rows.append(np.ones(len(agents)))  # the ratings sum to 0 (any agent met by nobody stays at 0)
    targets.append(0.0)
    scale.append(1.0)
    scale = np.asarray(scale)
    solution, *_ = np.linalg.lstsq(np.asarray(rows) * scale[:, None], np.asarray(targets) * scale, rcond=None)
    return solution


def rate_size(agents: list[str], tables: list[dict], seed: int, bootstrap: int = BOOTSTRAP) -> dict[str, dict]:
    """Per agent at one table size: ``rating`` and its bootstrap ``rating_ci95`` (low, high). ``tables``: each
    a league table with its ``index`` and ``chips`` per agent (``agent_chips``), in any order."""
    tables = sorted(tables, key=lambda table: table["index"])
    weights = [len(next(iter(table["chips"].values()))) for table in tables]
    ratings = fit(agents, [table_means(table["chips"]) for table in tables], weights)
    draws = np.empty((bootstrap, len(agents)))
    streams = [np.random.default_rng([seed, table["index"]]) for table in tables]  # one per table: order-free
    for k in range(bootstrap):
        resampled = [
            table_means(table["chips"], stream.integers(deals, size=deals))
            for table, stream, deals in zip(tables, streams, weights)
        ]
        draws[k] = fit(agents, resampled, weights)
    low, high = np.percentile(draws, [2.5, 97.5], axis=0)
    return {
        name: {"rating": float(ratings[i]), "rating_ci95": [float(low[i]), float(high[i])]}
        for i, name in enumerate(agents)
    }


def margins(agents: list[str], tables: list[dict]) -> np.ndarray:
    """(K, K): the mean chips per deal agent ``i`` makes over agent ``j`` at the tables they shared (weighted by
    deals; 0 for a pair that never met, and on the diagonal)."""
    index = {name: i for i, name in enumerate(agents)}
    total, weight = np.zeros((len(agents), len(agents))), np.zeros((len(agents), len(agents)))
    for table in tables:
        means = table_means(table["chips"])
        deals = len(next(iter(table["chips"].values())))
        for a, ma in means.items():
            for b, mb in means.items():
                if a != b:
                    total[index[a], index[b]] += deals * (ma - mb)
                    weight[index[a], index[b]] += deals
    return np.divide(total, weight, out=np.zeros_like(total), where=weight > 0)


def alpharank(payoffs: np.ndarray, alpha: float = ALPHA, population: int = POPULATION) -> np.ndarray:
    """The stationary distribution of single-population α-Rank on the symmetric meta-game ``payoffs[i, j]`` (the
    payoff of ``i`` against ``j``). A mutant ``r`` among ``m - 1`` players of ``s`` has fitness advantage
    ``f_r(k) - f_s(k)`` with ``k`` mutants, and fixes with the Moran probability
    ``1 / (1 + sum_l prod_{k<=l} exp(-alpha (f_r(k) - f_s(k))))``."""
    payoffs = np.asarray(payoffs, float)
    count, m = len(payoffs), population
    if count == 1:
        return np.ones(1)
    chain = np.zeros((count, count))
    k = np.arange(1, m)
    for s in range(count):
        for r in range(count):
            if r == s:
                continue
            fitness_r = ((k - 1) * payoffs[r, r] + (m - k) * payoffs[r, s]) / (m - 1)
            fitness_s = (k * payoffs[s, r] + (m - k - 1) * payoffs[s, s]) / (m - 1)
            exponents = np.cumsum(-alpha * (fitness_r - fitness_s))
            top = exponents.max(initial=0.0)  # a stable log-sum-exp of 1 + sum_l exp(exponent_l)
            chain[s, r] = np.exp(-top) / (np.exp(-top) + np.exp(exponents - top).sum()) / (count - 1)
        chain[s, s] = 1.0 - chain[s].sum()
    values, vectors = np.linalg.eig(chain.T)
    stationary = np.abs(np.real(vectors[:, np.argmin(np.abs(values - 1.0))]))
    return stationary / stationary.sum()
