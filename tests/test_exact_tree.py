"""The exact value of any agent (train.measure.exact_tree, python -m train.exact): the optimum and the scripted
agents' values as the compiled best-response walk gives them, for every kernel table and rules preset a small deck
allows; the observations at the tree's nodes are those the agent meets in play; agents that ignore their
observation are worth what symmetry says; a learned model's and a record-reading agent's exact values agree with a
million paired deals; the job's document and refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.spec import UserAgent
from snipsnap_env.batch import BatchEnv
from snipsnap_env.kernel import POLICIES, rule_codes
from snipsnap_env.observation import SLICES, table_template
from snipsnap_env.rules import make_rules
from train.measure.candidates import make_candidate
from train.measure.exact_tree import exact_agent_values, hands, walk_hand
from train.measure.exact_walk import exact_values
from train.measure.paired import PairedDeals, mean_ci, play_candidates

ROOT = Path(__file__).resolve().parent.parent
SCRIPTED = ("random", "random_card", "most_copies", "fewest_copies")


def scripted():
    return {name: agents.make(name) for name in SCRIPTED}


@pytest.mark.parametrize("rules, players", [("scarne:ranks=3", 3), ("scarne:ranks=3", 4), ("scarne:ranks=4", 3)])
@pytest.mark.parametrize("table", ["random", "most_copies"])
def test_the_tree_gives_the_walks_optimum_and_the_scripted_agents_values(rules, players, table):
    values, how = exact_agent_values(scripted(), table, players, rules)
    walked = exact_values(table, players, rules, policies=SCRIPTED)
    for name, value in walked.items():
        assert values[name] == pytest.approx(value, abs=1e-10), name
    assert set(how.values()) == {"its lead_probabilities"}


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["parlett", "bicycle", "wiswell", "kids", "pairs", "kids_settle"])
@pytest.mark.parametrize("table", POLICIES)
def test_every_preset_and_table_the_small_deck_allows(preset, table):
    rules = f"{preset}:ranks=3"
    values, _ = exact_agent_values(scripted(), table, 3, rules)
    walked = exact_values(table, 3, rules, policies=SCRIPTED)
    assert all(values[name] == pytest.approx(value, abs=1e-10) for name, value in walked.items()), (values, walked)


@pytest.mark.parametrize("players", [3, 4])
def test_the_nodes_observations_are_those_the_seat_meets_in_play(players):
    """Every observation seat 0 has at a real choice in real play (the engine's, lead record and all) is one of the
    tree's nodes, and the tree has no node play never shows (over enough deals of a tiny deck)."""
    rules = make_rules("scarne:ranks=3")
    codes, template = rule_codes(rules), table_template(rules, players)
    nodes = set()
    for dealer, matrices, weights in hands(players, rules, seat=0):
        tree, count, _ = walk_hand(matrices, weights, dealer, 0, POLICIES.index("random"), codes, template)
        nodes |= {row.tobytes() for row in np.round(tree.obs[:count], 5)}
    env = BatchEnv(4096, players, rules=rules, seed=3)
    obs, mask = env.reset()
    seen = set()
    for _ in range(60):
        mine = (env.to_act == 0) & (mask.sum(axis=1) > 1)
        seen |= {row.tobytes() for row in np.round(obs[mine], 5)}
        random = np.where(mask, np.random.default_rng(len(seen)).random(mask.shape), -1).argmax(axis=1)
        obs, mask, *_ = env.step(random)
    assert seen <= nodes, f"{len(seen - nodes)} observations of play are not nodes of the tree"
    assert len(seen) == len(nodes)


class FixedOrder:
    """Leads the first legal rank in a fixed order of the ranks: it ignores everything but the mask."""

    def __init__(self, order):
        self.order = np.asarray(order)

    def __call__(self, observation):
        legal = np.flatnonzero(observation["action_mask"])
        return int(next(rank for rank in self.order if rank in legal)) if legal[0] < 13 else 13


@pytest.mark.parametrize("table", ["random", "most_copies"])
def test_agents_that_ignore_their_observation_are_worth_what_symmetry_says(table):
    """The deck and the table treat the ranks alike, so every fixed order of the ranks is worth the same, and a
    uniformly random lead at a table of random leads is worth 0 (a zero-sum table of one policy)."""
    orders = {"lowest": range(13), "highest": range(12, -1, -1), "shuffled": np.random.default_rng(5).permutation(13)}
    policies = {name: UserAgent(name, FixedOrder(order), None) for name, order in orders.items()}
    values, how = exact_agent_values(policies | {"random": agents.make("random")}, table, 3, "scarne:ranks=4")
    assert values["lowest"] == pytest.approx(values["highest"], abs=1e-12)
    assert values["lowest"] == pytest.approx(values["shuffled"], abs=1e-12)
    assert how["lowest"].startswith("its actions")
    if table == "random":
        assert values["random"] == pytest.approx(0.0, abs=1e-12)


RECORD_READER = f"""
import numpy as np

LEADS = slice({SLICES["leads"].start}, {SLICES["leads"].stop})
POT = {SLICES["pot"].start}


def agent(observation):
    '''Leads its rank held most often when the player on its left has led before or the pot holds chips, else its
    rank held least often (ties to the lowest): a player that reads the lead record and the pot.'''
    obs, mask = observation["observation"], observation["action_mask"]
    legal = np.flatnonzero(mask[:13])
    if len(legal) == 0:
        return 13
    hand = np.rint(obs[:13] * 4)[legal]
    reads = obs[LEADS][1] > 0 or obs[POT] > 0
    return int(legal[np.argmax(hand) if reads else np.argmin(hand)])
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ppo_scratch", "record_reader"])
def test_the_exact_value_agrees_with_a_million_paired_deals(name, tmp_path):
    rules, players, deals = "scarne:ranks=4", 3, 1_000_000
    (tmp_path / "record_reader.py").write_text(RECORD_READER)
    spec = f"{tmp_path}/record_reader.py:agent" if name == "record_reader" else name
    values, _ = exact_agent_values({name: agents.make(spec), "most_copies": agents.make("most_copies")}, "random",
                                   players, rules)  # fmt: skip
    paired = PairedDeals.draw(deals, players, 1, 17, rules)
    chips = play_candidates({name: agents.make(spec), "most_copies": agents.make("most_copies")}, ["random"], paired,
                            rules, 17)  # fmt: skip
    gain, ci95 = mean_ci(chips[name] - chips["most_copies"])
    assert abs(gain - (values[name] - values["most_copies"])) < ci95, (gain, ci95, values)
    value, ci = mean_ci(chips[name])
    assert abs(value - values[name]) < ci


def test_a_search_seeded_by_the_information_state_leads_alike_at_one_observation_whatever_else_is_asked():
    """pimc:<samples>@<seed>: the same observation gets the same lead alone, in another batch, after a reseed —
    a deterministic policy of the information state; another seed is another policy."""
    obs, mask = BatchEnv(256, 3, rules="scarne:ranks=4", seed=3).reset()
    choosing = np.flatnonzero(mask.sum(axis=1) > 1)
    search = make_candidate("pimc:16@0", 0)
    whole = search.act_batch(obs[choosing], mask[choosing])
    search.reseed(99)
    alone = [search.act_batch(obs[[r]], mask[[r]])[0] for r in choosing[:16]]
    assert list(whole[:16]) == alone
    assert (make_candidate("pimc:16@0", 7).act_batch(obs[choosing], mask[choosing]) == whole).all()
    assert (make_candidate("pimc:16@1", 0).act_batch(obs[choosing], mask[choosing]) != whole).any()


@pytest.mark.slow
def test_a_seeded_searchs_exact_value_agrees_with_paired_deals():
    rules, players = "scarne:ranks=4", 3
    made = lambda: {"pimc:16@0": make_candidate("pimc:16@0", 0), "most_copies": agents.make("most_copies")}  # noqa: E731
    values, how = exact_agent_values(made(), "random", players, rules)
    assert "seeded by the information state" in how["pimc:16@0"]
    chips = play_candidates(made(), ["random"], PairedDeals.draw(100_000, players, 1, 17, rules), rules, 17)
    gain, ci95 = mean_ci(chips["pimc:16@0"] - chips["most_copies"])
    assert abs(gain - (values["pimc:16@0"] - values["most_copies"])) < ci95, (gain, ci95, values)


def _job(tmp_path, *argv):
    return subprocess.run([sys.executable, "-m", "train.exact", *argv, "--no-progress"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def test_the_job_writes_the_documented_results_for_an_agent_in_a_file_of_its_own(tmp_path):
    (tmp_path / "mine.py").write_text(RECORD_READER)
    out = tmp_path / "out"
    done = _job(tmp_path, "--candidates", "most_copies", "random", "mine.py:agent", "--rules", "scarne:ranks=3",
                "--players", "3", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((out / "results.json").read_text())
    optimum = document["optimum"]["value"]
    rows = {row["name"]: row for row in document["candidates"]}
    assert set(rows) == {"most_copies", "random", "mine.py:agent"}
    walked = exact_values("random", 3, "scarne:ranks=3")
    assert optimum == pytest.approx(walked["optimum"], abs=1e-12)
    for row in rows.values():
        assert set(row) >= {"value", "gain_over_most_copies", "regret", "share_of_optimum", "probabilities"}
        assert row["regret"] == pytest.approx(optimum - row["value"], abs=1e-12)
        assert row["share_of_optimum"] == pytest.approx(
            row["gain_over_most_copies"] / (optimum - walked["most_copies"]), abs=1e-9
        )
    assert rows["random"]["value"] == pytest.approx(0.0, abs=1e-12)
    settings = json.loads((out / "args.json").read_text())
    assert len(settings["models"]["mine.py:agent"]) == 64  # keyed by the file's SHA-256
    assert "| mine.py:agent |" in done.stdout


def test_where_the_optimum_gains_nothing_no_share_is_given(tmp_path):
    out = tmp_path / "out"
    done = _job(tmp_path, "--candidates", "random", "--opponents", "most_copies", "--rules", "scarne:ranks=4",
                "--players", "4", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((out / "results.json").read_text())
    assert document["optimum"]["gain_over_most_copies"] == pytest.approx(0.0, abs=1e-12)
    assert "share_of_optimum" not in document["candidates"][0]


STOCHASTIC = """
import numpy as np
from agents import Policy


class Coin(Policy):
    def act_batch(self, obs, mask):
        return np.where(mask, self.rng.random(mask.shape), -1).argmax(axis=1)
"""


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--candidates", "pimc:8"], "is a search"),
        (["--candidates", "coin.py:Coin"], "its choices vary between calls"),
        (["--candidates", "random", "--rules", "scarne:ranks=6", "--players", "4"], "more than the"),
        (["--candidates", "random", "--opponents", "ppo"], "one policy the kernel plays"),
        (["--candidates", "nothere.py:agent"], "no such file nothere.py"),
    ],
)
def test_what_has_no_exact_value_is_refused_in_one_line_before_any_folder(argv, words, tmp_path):
    (tmp_path / "coin.py").write_text(STOCHASTIC)
    done = _job(tmp_path, *argv, "--rules", "scarne:ranks=3", "--out", str(tmp_path / "out")) if "--rules" not in argv \
        else _job(tmp_path, *argv, "--out", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_the_compiled_walk_loads_from_its_cache_in_a_second_process(tmp_path):
    """The recursive walk compiles to one function that numba's cache can hold (two versions of a function that
    calls itself crashed the second process that loaded them)."""
    code = "from train.measure.exact_tree import exact_agent_values; import agents\n" \
           "print(exact_agent_values({'r': agents.make('random')}, 'random', 3, 'scarne:ranks=3')[0]['optimum'])"
    runs = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
            for _ in range(2)]  # fmt: skip
    assert [run.returncode for run in runs] == [0, 0], runs[-1].stderr[-1000:]
    assert runs[0].stdout == runs[1].stdout


# the small-deck studies measured exactly, their models kept (seeds_small_deck_r6 and the _r4 variants: sampled records)
SMALL_DECKS = ("seeds_small_deck_r4", "seeds_small_deck_r5", "seeds_small_deck_r6")


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL_DECKS)
def test_every_published_small_deck_row_is_rederived_from_its_kept_model(name):
    """docs/results' small-deck studies keep the model behind every row; each seed's exact gain is what the exact
    value of that model gives today (one walk a table size for all the seeds)."""
    from train.runner.manifest import sha256

    folder = ROOT / "docs" / "results" / name
    evaluation = json.loads((folder / "args.json").read_text())["evaluation"]
    assert evaluation.get("exact"), f"{name} was measured by sampling"
    units = {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("units/*_s*.json"))}
    models = {}
    for stem, unit in units.items():
        model = folder / "models" / f"{stem}.zip"
        assert sha256(model) == unit["model_sha256"], stem
        models[stem] = agents.make("ppo", path=str(model))
    for players in evaluation["players"]:
        values, _ = exact_agent_values(models | {"most_copies": agents.make("most_copies")},
                                       evaluation["opponents"][0], players, evaluation["rules"])  # fmt: skip
        for stem, unit in units.items():
            gain = values[stem] - values["most_copies"]
            assert unit["gains"][str(players)]["gain"] == pytest.approx(gain, abs=1e-12), (stem, players)
