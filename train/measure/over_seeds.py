"""A recipe's result over training seeds, as the field reports one (Agarwal et al., *Deep RL at the Edge of the
Statistical Precipice*, 2021, with their library ``rliable``): each seed's score, the mean, the interquartile
mean (IQM) with its stratified-bootstrap 95% interval, and the probability that one recipe's run beats
another's. A score here is a seed's gain over most_copies at one table size (a "task" in rliable's words); the
tasks stay apart, since a chip at 3 players and a chip at 8 are not the same size of win.

The bootstrap's draws are seeded (``seed``): the same scores give the same intervals everywhere.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

#: bootstrap resamples (rliable's resampling runs a Python call each: ~0.3 ms for an IQM, ~1 ms for a probability of
#: improvement); a few seeds have few distinct resamples, and 5,000 put each 2.5% tail on 125 of them
REPS = 5_000


@dataclass(frozen=True)
class Interval:
    """A point estimate and its 95% interval."""

    value: float
    low: float
    high: float

    def text(self, digits: int = 2) -> str:
        return f"{self.value:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"

    def record(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high}


def _rliable():
    from rliable import library, metrics

    return library, metrics


def _estimates(scores: dict, function, seed: int):
    """rliable's stratified-bootstrap interval estimates, reproducible: rliable 1.2's ``StratifiedBootstrap`` draws
    its resamples from numpy's global generator whatever ``random_state`` it is given (``update_indices`` calls
    ``np.random.choice``), so that generator is seeded for the call and put back as it was after it."""
    library, _ = _rliable()
    saved = np.random.get_state()
    np.random.seed(seed)  # the library's own draws (see above); nothing of ours draws from the global generator
    try:
        with warnings.catch_warnings():  # it hands arch a RandomState by the keyword arch now deprecates
            warnings.filterwarnings("ignore", "random_state is deprecated", FutureWarning)
            return library.get_interval_estimates(scores, function, reps=REPS, random_state=np.random.RandomState(seed))
    finally:
        np.random.set_state(saved)


def iqm(scores: np.ndarray, seed: int = 0) -> Interval:
    """The IQM of one recipe's seeds at one task (``scores``: one per seed) with its stratified-bootstrap 95%
    interval (rliable's ``get_interval_estimates``; with one task, stratified = resampling the seeds)."""
    _, metrics = _rliable()
    matrix = np.asarray(scores, float).reshape(-1, 1)
    point, ci = _estimates({"x": matrix}, lambda x: np.array([metrics.aggregate_iqm(x)]), seed)
    return Interval(float(point["x"][0]), float(ci["x"][0, 0]), float(ci["x"][1, 0]))


def probability_of_improvement(x: np.ndarray, y: np.ndarray, seed: int = 0) -> Interval:
    """P(a run of X scores more than a run of Y) at one task (the Mann–Whitney U statistic over their seeds, ties
    counting one half) with its stratified-bootstrap 95% interval."""
    _, metrics = _rliable()
    pair = [np.asarray(x, float).reshape(-1, 1), np.asarray(y, float).reshape(-1, 1)]
    point, ci = _estimates({"xy": pair}, lambda a, b: np.array([metrics.probability_of_improvement(a, b)]), seed)
    return Interval(float(point["xy"][0]), float(ci["xy"][0, 0]), float(ci["xy"][1, 0]))


def summary(scores: np.ndarray, seed: int = 0) -> dict:
    """Seeds' scores at one task: each, their mean, range and IQM with its interval."""
    scores = np.asarray(scores, float)
    return {
        "seeds": [float(s) for s in scores],
        "mean": float(scores.mean()),
        "min": float(scores.min()),
        "max": float(scores.max()),
        "iqm": iqm(scores, seed).record(),
    }
