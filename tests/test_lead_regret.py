"""examples/lead_regret.py: where a learned lead falls short of its training critic's best lead."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import lead_regret  # noqa: E402


def visits(count: int, greedy: int, probability_of_0: float, values: tuple[float, float]) -> list[tuple]:
    """``count`` visits of one observation whose legal leads are ranks 0 and 1."""
    legal = np.zeros(13, bool)
    legal[:2] = True
    probabilities = np.zeros(13)
    probabilities[:2] = probability_of_0, 1 - probability_of_0
    lead_values = np.zeros(13)
    lead_values[:2] = values
    return [(legal, greedy, probabilities, lead_values)] * count


def test_the_shortfall_is_the_better_leads_value_where_the_greedy_lead_is_worse():
    seen = {
        b"worse": visits(4, greedy=1, probability_of_0=1e-9, values=(1.0, -0.5)),  # leaves 1.5 a visit
        b"best": visits(6, greedy=0, probability_of_0=0.9, values=(2.0, 0.0)),  # its greedy lead is the best
        b"rare": visits(3, greedy=1, probability_of_0=0.0, values=(9.0, 0.0)),  # too few visits to split
    }
    total, short = lead_regret.shortfall(seen, margin=0.2, seed=0)
    assert total == pytest.approx(4 * 1.5)
    assert short == [(4, pytest.approx(1.5), pytest.approx(1e-9))]


def test_a_lead_better_in_one_half_only_is_not_counted_as_better():
    """The best lead is picked on one half of the visits and scored on the other: values that favour a lead by
    chance in the half that picks it do not pass for a shortfall in the half that scores it."""
    legal = np.zeros(13, bool)
    legal[:2] = True
    probabilities = np.zeros(13)
    probabilities[:2] = 0.5
    rng = np.random.default_rng(1)
    seen = {}
    for key in range(200):  # both leads worth the same: any pick scores 0 on average
        noise = [np.r_[rng.normal(size=2), np.zeros(11)] for _ in range(4)]
        seen[bytes([key])] = [(legal, 1, probabilities, values) for values in noise]
    total, _ = lead_regret.shortfall(seen, margin=0.2, seed=0)
    assert abs(total / 800) < 0.15  # without the split, picking the best of noise gains about +0.3 a visit


def test_it_plays_a_model_and_pools_its_leads_by_observation(capsys):
    per_deal, short = lead_regret.main(["--model", "ppo_scratch", "--games", "128", "--steps", "6", "--rollouts", "2"])
    out = capsys.readouterr().out
    assert math.isfinite(per_deal) and "lead choices from" in out and "chips per deal" in out
    assert all(visits >= 4 and gap > 0.2 and 0 <= probability <= 1 for visits, gap, probability in short)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--model", "most_copies"], "a learned agent's name"),
        (["--model", "ppo:/nonexistent/model.zip"], "no PPO model file"),
        (["--players", "9"], "--players"),
        (["--rules", "scarne:ranks=99"], "--rules"),
        (["--rollouts", "0"], "--rollouts"),
    ],
)
def test_bad_input_is_refused_naming_it(argv, says, capsys):
    with pytest.raises(SystemExit):
        lead_regret.main(argv)
    assert says in capsys.readouterr().err
