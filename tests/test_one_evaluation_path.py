"""One agent on the same deals has one number, whichever path measures it: ``evaluate_policy``, ``python -m
train.evaluate``, the score card's cells and the seeds job's gains. A policy played lead by lead in Python meets
opponents that draw from the deals' own per-seat streams, as in whole-deal play in the kernel, so a kernel-played
agent gives the same chips either way, and the size of the opponents' pool does not move a number."""

from __future__ import annotations

import json

import numpy as np
import pytest

import agents
from train import evaluate, scorecard, seeds
from train.measure.evaluation import evaluate_policy
from train.measure.paired import PairedDeals, play_paired

FEWEST_LOWEST = '''
import numpy as np

def agent(observation):
    """Lead a legal rank held the fewest times, ties to the lowest rank (deterministic)."""
    hand = np.rint(observation["observation"][:13] * 4)
    legal = np.flatnonzero(observation["action_mask"][:13])
    return 13 if len(legal) == 0 else int(legal[np.argmin(hand[legal])])
'''
RANDOM_LEAD = '''
import numpy as np
from agents import Policy


class RandomLead(Policy):
    """A uniformly random legal action, from its own seeded generator (stochastic)."""

    def act_batch(self, obs, mask):
        scores = self.rng.random(mask.shape)
        return np.where(mask, scores, -1).argmax(axis=1)
'''


@pytest.fixture
def specs(tmp_path):
    (tmp_path / "fewest_lowest.py").write_text(FEWEST_LOWEST)
    (tmp_path / "random_lead.py").write_text(RANDOM_LEAD)
    return {
        "deterministic": f"{tmp_path}/fewest_lowest.py:agent",
        "stochastic": f"{tmp_path}/random_lead.py:RandomLead",
    }


@pytest.mark.parametrize("kind", ["deterministic", "stochastic"])
def test_evaluate_policy_the_job_the_score_card_and_the_seeds_give_one_number(kind, specs, tmp_path):
    spec, players, deals, seed = specs[kind], 4, 600, 3
    row = evaluate_policy(agents.make(spec), num_players=players, opponents="random", deals=deals, seed=seed,
                          quiet=True)  # fmt: skip
    by_spec = evaluate_policy(spec, num_players=players, opponents=("random", "random", "random"), deals=deals,
                              seed=seed, quiet=True)  # fmt: skip
    out = tmp_path / "job"
    evaluate.main(["--candidates", spec, "--reference", "most_copies", "--opponents", "random", "--players",
                   str(players), "--deals", str(deals), "--seed", str(seed), "--out", str(out),
                   "--no-progress"])  # fmt: skip
    job = next(r for r in json.loads((out / "results.json").read_text()) if r["name"] == spec)
    card = scorecard.paired_gains(spec, "random", players, deals, seed, 0, False).mean()
    evaluation = seeds.Evaluation((players,), ("random",), "scarne", deals, seed)
    over_seeds = seeds.gains({"most_copies": agents.make("most_copies"), spec: agents.make(spec)}, evaluation, players)
    figures = [row.diff_vs_reference, by_spec.diff_vs_reference, job["diff_vs_reference"], card,
               over_seeds[spec]["gain"]]  # fmt: skip
    assert np.allclose(figures, figures[0], rtol=0, atol=1e-12), figures


@pytest.mark.parametrize("rules, players", [("scarne", 5), ("scarne:ranks=3", 3), ("pairs", 4)])
@pytest.mark.parametrize("name", ["most_copies", "random", "fewest_copies", "random_card"])
def test_a_kernel_agent_played_lead_by_lead_gives_its_whole_deal_chips(name, rules, players):
    """The lead-by-lead path (which every Python-played agent takes) and the kernel's whole deals agree deal by
    deal for the agents the kernel plays, however many opponents share the pool (on a small deck too, where a deal
    can end before anyone chooses)."""
    deals = PairedDeals.draw(1500, players, 2, 11, rules)
    pool = lambda: [agents.make("random", seed=1), agents.make("most_copies", seed=2)]  # noqa: E731
    whole = play_paired(agents.make(name, seed=0), pool(), deals, rules, seed=11)
    by_lead = play_paired(agents.make(name, seed=0), pool(), deals, rules, seed=11, on_lead=lambda *a: None)
    assert np.array_equal(whole, by_lead)


def test_a_python_agent_meets_the_same_opponents_in_a_pool_of_one_or_of_copies(specs):
    deals = PairedDeals.draw(800, 4, 1, 2)
    copies = PairedDeals.draw(800, 4, 3, 2)
    one = play_paired(agents.make(specs["deterministic"]), [agents.make("random", seed=1)], deals, "scarne", seed=2)
    many = play_paired(agents.make(specs["deterministic"]), [agents.make("random", seed=s) for s in (1, 2, 3)],
                       copies, "scarne", seed=2)  # fmt: skip
    assert np.array_equal(deals.owners, copies.owners) and np.array_equal(one, many)
