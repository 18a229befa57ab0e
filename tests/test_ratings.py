"""Ratings (train.measure.ratings): fitted all at once, so no order of the tables moves them; ordered as the chips are;
and α-Rank on games whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from train.measure import ratings


def made_up_tables(strengths: dict[str, float], seats: int, count: int, deals: int, seed: int) -> list[dict]:
    """Tables of ``seats`` distinct agents drawn from ``strengths``, each agent's chips per deal its strength
    minus the table's mean strength, plus noise of 15 chips (a deal's spread here), zero-sum per deal."""
    rng = np.random.default_rng(seed)
    names = list(strengths)
    tables = []
    for index in range(count):
        seated = [names[i] for i in rng.permutation(len(names))[:seats]]
        base = np.array([strengths[n] for n in seated])
        noise = rng.normal(0, 15, size=(seats, deals))
        chips = base[:, None] - base.mean() + noise - noise.mean(axis=0)
        tables.append({"index": index, "chips": dict(zip(seated, chips))})
    return tables


STRENGTHS = {"a": 2.0, "b": 0.5, "c": 0.0, "d": -0.3, "e": -2.2}


def test_shuffling_the_tables_leaves_the_ratings_and_their_intervals_unchanged():
    tables = made_up_tables(STRENGTHS, 3, 30, 200, seed=1)
    first = ratings.rate_size(list(STRENGTHS), tables, seed=5, bootstrap=50)
    shuffled = [tables[i] for i in np.random.default_rng(2).permutation(len(tables))]
    assert ratings.rate_size(list(STRENGTHS), shuffled, seed=5, bootstrap=50) == first
    assert ratings.alpharank(ratings.margins(list(STRENGTHS), shuffled)) == pytest.approx(
        ratings.alpharank(ratings.margins(list(STRENGTHS), tables))
    )


def test_the_ratings_recover_the_strengths_their_intervals_cover_them_and_they_order_the_agents():
    mean = np.mean(list(STRENGTHS.values()))
    covered = []
    for seed in range(12):
        rated = ratings.rate_size(list(STRENGTHS), made_up_tables(STRENGTHS, 4, 30, 300, seed), seed=0, bootstrap=100)
        for better, worse in zip(STRENGTHS, list(STRENGTHS)[1:]):  # wherever the intervals are apart, in order
            if rated[better]["rating_ci95"][0] > rated[worse]["rating_ci95"][1] or rated[worse]["rating_ci95"][0] > \
                    rated[better]["rating_ci95"][1]:  # fmt: skip
                assert rated[better]["rating"] > rated[worse]["rating"]
        assert [max(rated, key=lambda n: rated[n]["rating"]), min(rated, key=lambda n: rated[n]["rating"])] == [
            "a",
            "e",
        ]
        for name, strength in STRENGTHS.items():  # the margin over the average agent
            low, high = rated[name]["rating_ci95"]
            covered.append(low <= strength - mean <= high)
    assert 0.85 <= np.mean(covered) <= 1.0  # 95% intervals: about 57 of 60


def test_an_agent_that_out_earns_every_other_rates_first_even_when_it_met_weaker_company_less():
    # "top" sits only with the two strongest others; a mean-chips ranking would still rank it first, and the
    # fit, correcting for company, must too — with the weakest agent last though it met everyone
    strengths = {"top": 3.0, "good": 2.5, "mid": 0.0, "weak": -1.0}
    tables = made_up_tables(strengths, 3, 40, 400, seed=4)
    tables = [t for t in tables if "top" not in t["chips"] or "weak" not in t["chips"]]
    rated = ratings.rate_size(list(strengths), tables, seed=0, bootstrap=50)
    assert max(rated, key=lambda n: rated[n]["rating"]) == "top"
    assert min(rated, key=lambda n: rated[n]["rating"]) == "weak"


def test_alpharank_shares_a_cycle_evenly_and_gives_a_dominant_agent_all_the_mass():
    rock_paper_scissors = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], float)
    assert ratings.alpharank(rock_paper_scissors) == pytest.approx(np.full(3, 1 / 3))
    dominant = np.array([[0, 1, 2], [-1, 0, 0.5], [-2, -0.5, 0]], float)
    mass = ratings.alpharank(dominant)
    assert mass[0] > 0.99 and mass.sum() == pytest.approx(1.0)
    even = np.zeros((4, 4))  # nobody out-earns anybody: neutral drift, even mass
    assert ratings.alpharank(even) == pytest.approx(np.full(4, 0.25))


def test_alpharank_agrees_with_openspiel_where_it_is_installed():
    alpharank = pytest.importorskip("open_spiel.python.egt.alpharank", reason="open-spiel is not installed")
    payoffs = np.array([[0, 0.4, -0.2, 1.0], [-0.4, 0, 0.6, 0.3], [0.2, -0.6, 0, 0.1], [-1.0, -0.3, -0.1, 0]])
    # the population model of the paper (fitness against the whole population), not OpenSpiel's default local one
    _, _, theirs, _, _ = alpharank.compute(
        [payoffs], m=ratings.POPULATION, alpha=ratings.ALPHA, use_local_selection_model=False
    )
    assert ratings.alpharank(payoffs) == pytest.approx(theirs, abs=1e-6)
