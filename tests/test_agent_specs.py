"""Agents of your own by spec (agents.spec): every form the docs name plays, every bad spec is refused in one line
naming it before any folder is made, a failure mid-job stops the job in one line with nothing written, and the jobs
that take agents take specs, keyed by the file's SHA-256."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.spec import AgentFailed, is_spec
from snipsnap_env.batch import BatchEnv

ROOT = Path(__file__).resolve().parent.parent
FORMS = '''
import numpy as np
from agents import Policy
from agents.scripted import MostCopies


def function(observation):
    legal = np.flatnonzero(observation["action_mask"])
    return int(legal[0])


class Batched(Policy):
    def act_batch(self, obs, mask):
        return np.asarray(mask).argmax(axis=1)


class Duck:
    """Not a Policy: only act_batch."""
    def act_batch(self, obs, mask):
        return np.asarray(mask).argmax(axis=1)


instance = Batched(seed=0)


def factory():
    return MostCopies(seed=0)


def seeded_factory(seed=None):
    return MostCopies(seed=seed)


pi = 3.14


def raises(observation):
    raise RuntimeError("no idea")


def illegal(observation):
    return 13


def late(observation):
    """Plays the first lead of a deal, then fails once a set has been played."""
    if observation["observation"][13:26].any():
        raise ZeroDivisionError("late")
    return int(np.flatnonzero(observation["action_mask"])[0])
'''


@pytest.fixture
def forms(tmp_path):
    path = tmp_path / "forms.py"
    path.write_text(FORMS)
    return path


@pytest.mark.parametrize("attr", ["function", "Batched", "Duck", "instance", "factory", "seeded_factory"])
def test_every_form_of_agent_plays_legal_actions(forms, attr):
    agent = agents.make(f"{forms}:{attr}", seed=3)
    obs, mask = BatchEnv(32, 4, seed=1).reset()
    actions = agent.act_batch(obs, mask)
    assert mask[np.arange(32), actions].all()
    assert agent.name == f"{forms}:{attr}" and agent.path == str(forms)


def test_a_module_spec_imports_from_the_path():
    agent = agents.make("agents.scripted:MostCopies", seed=0)
    assert agent.path.endswith("agents/scripted.py") and agent.lead_probabilities(*BatchEnv(4, 3).reset()) is not None


@pytest.mark.parametrize(
    "spec, words",
    [
        ("{dir}/missing.py:agent", "no such file"),
        ("{forms}:nothing", "has no attribute 'nothing'"),
        ("{forms}:pi", "float is not an agent"),
        ("no_such_module_here:agent", "no module 'no_such_module_here'"),
        ("{forms}:raises", "raised RuntimeError: no idea"),
        ("{forms}:illegal", "chose the illegal action 13"),
    ],
)
def test_a_bad_spec_is_refused_naming_it(forms, spec, words):
    spec = spec.format(dir=forms.parent, forms=forms)
    with pytest.raises(ValueError, match=words) as refused:
        agents.make(spec)
    assert spec in str(refused.value) and "\n" not in str(refused.value)


def test_registry_options_are_not_specs():
    assert not is_spec("ppo:runs/x/final_model.zip") and not is_spec("pimc:128") and not is_spec("most_copies")
    assert is_spec("my_agent.py:agent") and is_spec("pkg.mod:Agent") and is_spec("dir/my.py:make.agent")


def test_a_job_refuses_a_bad_spec_before_any_folder(forms, tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "train.evaluate", "--candidates", f"{forms}:illegal", "--players", "3",
               "--deals", "40", "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "chose the illegal action 13" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()


def test_an_agent_that_fails_mid_job_stops_it_in_one_line_with_nothing_written(forms, tmp_path):
    from train.measure.paired import PairedDeals, play_paired

    agent = agents.make(f"{forms}:late")  # its first observations are first leads: it passes the check
    with pytest.raises(AgentFailed, match="late"):
        play_paired(agent, [agents.make("random")], PairedDeals.draw(50, 3, 1, 0), "scarne")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "train.evaluate", "--candidates", f"{forms}:late", "--players", "3",
                           "--deals", "200", "--out", str(out), "--no-progress"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 2 and "raised ZeroDivisionError: late" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (out / "results.json").exists() and not (out / "results.md").exists()


MINE = '''
import numpy as np

def agent(observation):
    hand = np.rint(observation["observation"][:13] * 4)
    legal = np.flatnonzero(observation["action_mask"][:13])
    return 13 if len(legal) == 0 else int(legal[np.argmin(hand[legal])])
'''


@pytest.mark.slow
@pytest.mark.parametrize(
    "job, argv",
    [
        ("train.evaluate", ["--candidates", "{spec}", "--players", "3", "--deals", "40"]),
        ("train.mixed", ["--agents", "{spec}", "random", "--players", "3", "--deals", "20"]),
        ("train.league", ["--agents", "{spec}", "random", "--players", "3", "--tables", "2", "--deals", "10"]),
        ("train.exploit", ["--target", "{spec}", "--players", "3", "--deals", "20", "--samples", "4"]),
        ("train.matrix", ["--agents", "{spec}", "random", "--players", "3", "--deals", "40", "--shard-deals", "20"]),
        ("train.exact", ["--candidates", "{spec}", "--rules", "scarne:ranks=3"]),
    ],
)
def test_the_jobs_take_an_agent_of_a_file_of_its_own_keyed_by_its_hash(job, argv, tmp_path):
    (tmp_path / "mine.py").write_text(MINE)
    out = tmp_path / "out"
    command = [sys.executable, "-m", job, *[a.format(spec="mine.py:agent") for a in argv], "--out", str(out),
               "--no-progress"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    settings = json.loads((out / "args.json").read_text())
    models = settings.get("models") or settings.get("settings", {}).get("models", {})
    import hashlib

    assert models["mine.py:agent"] == hashlib.sha256((tmp_path / "mine.py").read_bytes()).hexdigest()
