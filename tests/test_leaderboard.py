"""python -m train.leaderboard: entries of agents by spec or from a train.seeds folder, each agent's exact regret on
every deck, the IQM over seeds with its interval, ranked; refusals by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agents
from train.leaderboard import board, entry, format_markdown, from_file, from_seeds
from train.measure.exact_walk import exact_values

pytest.importorskip("rliable")
ROOT = Path(__file__).resolve().parent.parent


def test_each_entry_gets_its_agents_exact_regrets_ranked_by_iqm():
    entries = {"lead_random": {"agents": {"*": ["random"]}, "settings": "as given", "training_seconds": None},
               "scripted": {"agents": {"3x3": ["most_copies", "fewest_copies"]}, "settings": "as given",
                            "training_seconds": None}}  # fmt: skip
    policies = {name: agents.make(name) for name in ("random", "most_copies", "fewest_copies")}
    document = board(entries, policies, [("3x3", "scarne:ranks=3", 3)], "random", 0)
    walked = exact_values("random", 3, "scarne:ranks=3", policies=("random", "most_copies", "fewest_copies"))
    scripted = document["entries"]["scripted"]["decks"]["3x3"]
    assert scripted["seeds"] == pytest.approx([walked["optimum"] - walked[n] for n in ("most_copies", "fewest_copies")])
    assert document["optimum"]["3x3"] == pytest.approx(walked["optimum"])
    means = [row["mean_iqm_regret"] for row in document["entries"].values()]
    assert means == sorted(means)
    assert "| rank | entry | regret at 3 ranks × 3 players" in format_markdown(document, "random")


@pytest.mark.parametrize("text", ["noname", "=most_copies", "name="])
def test_a_malformed_entry_is_refused_naming_the_form(text):
    with pytest.raises(ValueError, match="NAME=AGENT"):
        entry(text)


def test_a_seeds_folder_without_its_models_is_refused(tmp_path):
    settings = {"arms": {"default": {"flags": []}}, "seeds": [0], "evaluation": {"rules": "scarne:ranks=4",
                                                                                  "players": [3]}}  # fmt: skip
    (tmp_path / "args.json").write_text(json.dumps(settings))
    with pytest.raises(ValueError, match="not kept there"):
        from_seeds(tmp_path)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--entry", "a=pimc:8"], "is a search"),
        (["--entry", "a=random", "--decks", "6x4"], "more than the"),
        (["--entry", "a=random", "--decks", "4by3"], "a deck is <ranks>x<players>"),
        (["--entry", "a=random", "--rules", "scarne:ranks=3", "--decks", "3x3"], "the decks set the ranks"),
        (["--decks", "3x3"], "no entries"),
    ],
)
def test_the_job_refuses_in_one_line_before_any_folder(argv, words, tmp_path):
    done = subprocess.run([sys.executable, "-m", "train.leaderboard", *argv, "--out", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "content, words",
    [
        ("[1, 2]", "not an object of entries"),
        ("{not json", "cannot read it as JSON"),
        ('{"a": {"agents": {"4x3": []}}}', "needs \"agents\""),
        ('{"a": {"agents": {"4by3": ["random"]}}}', "entry 'a': a deck is <ranks>x<players>"),
        ('{"a": {"agents": {"4x3": ["random"]}, "training_seconds": "long"}}', "a list of seconds"),
    ],
)
def test_an_entries_file_is_refused_naming_the_file_and_what_is_wrong(content, words, tmp_path):
    path = tmp_path / "entries.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=f"--entries {path}") as refused:
        from_file(path)
    assert words in str(refused.value)


def test_an_entries_files_agents_by_deck_are_ranked_with_the_others(tmp_path):
    """A file as examples/leaderboard_recipes.py writes it: each entry's own agents on each deck, its settings and
    seconds on the board."""
    path = tmp_path / "entries.json"
    path.write_text(json.dumps({"mine": {"agents": {"3x3": ["most_copies", "fewest_copies"]}, "settings": "mine.py",
                                         "training_seconds": [1.5, 2.5]}}))  # fmt: skip
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "train.leaderboard", "--entries", str(path), "--entry", "r=random",
                           "--decks", "3x3", "--out", str(out), "--no-progress"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((out / "leaderboard.json").read_text())
    assert len(document["entries"]["mine"]["decks"]["3x3"]["seeds"]) == 2
    assert "| mine | " in (out / "leaderboard.md").read_text() and "4 s for all its runs | mine.py |" in (
        out / "leaderboard.md"
    ).read_text()


def test_one_deck_a_work_unit_in_other_processes_gives_the_same_board(tmp_path):
    """--workers 2: each deck walked in a process of its own (as on Ray, --ray), its agents' files named by absolute
    path there; the same leaderboard.json as one process walking every deck."""
    (tmp_path / "mine.py").write_text("import agents\n\nagent = agents.make('most_copies')\n")
    flags = ["--entry", "mine=mine.py:agent", "--entry", "r=random fewest_copies", "--decks", "3x3", "4x3",
             "--no-progress"]  # fmt: skip
    boards = []
    for out, extra in (("here", []), ("processes", ["--workers", "2"])):
        done = subprocess.run([sys.executable, "-m", "train.leaderboard", *flags, *extra, "--out", out], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr
        boards.append((tmp_path / out / "leaderboard.json").read_bytes())
    assert boards[0] == boards[1]
