"""Saved models survive a new rule option: a model reads its own observation columns, found by name in this
version's, plays wherever the columns it never saw are 0, and refuses a table that sets one."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
from safetensors.numpy import load, save  # noqa: E402

import snipsnap_env  # noqa: E402
from agents.model_file import META_FILE, WEIGHTS_FILE  # noqa: E402
from agents.ppo import PPOPolicy  # noqa: E402
from snipsnap_env.observation import (  # noqa: E402
    COLUMNS,
    ENV_NAME,
    ENV_VERSION,
    LAYOUT,
    LAYOUT_DIGESTS,
    OBS_DIM,
    SLICES,
    column_map,
    columns,
    layout_digest,
)

MODELS = Path(__file__).parents[1] / "agents" / "models"
NEW_COLUMN = "rules: opening six"  # plays the part of an option added after the model was trained


def as_saved_before(model: Path, column: str, out: Path) -> Path:
    """``model`` as an earlier version would have saved it, one that did not yet have ``column``: the column
    leaves its layout, and the weights that read it leave every layer that reads the observation."""
    with zipfile.ZipFile(model) as archive:
        meta = json.loads(archive.read(META_FILE))
        tensors = load(archive.read(WEIGHTS_FILE))
    at = columns(meta["layout"]).index(column)
    context_at = at - SLICES["open_rank"].stop  # the rank-shared head's table summary starts after open_rank
    width = meta["observation_dim"] + meta.get("critic_inputs", 0)
    for name, tensor in tensors.items():
        if tensor.ndim == 2 and tensor.shape[1] == width:  # a first layer over the observation (and the critic's)
            tensors[name] = np.delete(tensor, at, axis=1)
        elif name.startswith("action_net.context.0.weight"):
            tensors[name] = np.delete(tensor, context_at, axis=1)
    field = column.split(":")[0] if ":" in column else column.rsplit(" ", 1)[0]  # "rules: x" or "deals_left 0"
    meta["layout"] = [[name, size - (name == field)] for name, size in meta["layout"] if name != column]
    meta["layout"] = [[name, size] for name, size in meta["layout"] if size > 0]
    meta["observation_dim"] -= 1
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(META_FILE, json.dumps(meta))
        archive.writestr(WEIGHTS_FILE, save(tensors))
    return out


def positions(num_players: int, rules: str, seed: int, count: int = 300):
    """Observations and masks of seats to act in random play."""
    rng = np.random.default_rng(seed)
    env = snipsnap_env.env(num_players=num_players, rules=rules)
    obs, masks = [], []
    game = 0
    while len(obs) < count:
        env.reset(seed=seed + game)
        game += 1
        for agent in env.agent_iter():
            seen, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            obs.append(seen["observation"])
            masks.append(seen["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
    return np.array(obs), np.array(masks)


def test_columns_name_every_observation_column_once():
    assert len(COLUMNS) == OBS_DIM == len(set(COLUMNS))
    assert COLUMNS[SLICES["rules"].start] == "rules: chips" and COLUMNS[0] == "hand A" and COLUMNS[20] == "played 8"
    assert column_map(LAYOUT) == (None, [])


@pytest.mark.parametrize("model", ["ppo_distilled_scarne.zip", "ppo_scratch_scarne.zip"])
def test_a_model_saved_before_a_rule_option_plays_as_before_and_refuses_tables_that_use_it(model, tmp_path):
    older = PPOPolicy(as_saved_before(MODELS / model, NEW_COLUMN, tmp_path / model))
    current = PPOPolicy(MODELS / model)
    assert NEW_COLUMN not in columns(json.loads(zipfile.ZipFile(older.path).read(META_FILE))["layout"])
    for num_players in (3, 6):
        obs, mask = positions(num_players, "scarne", seed=num_players)
        np.testing.assert_allclose(older.logits(obs), current.logits(obs), rtol=1e-5, atol=1e-5)
        older.reseed(num_players), current.reseed(num_players)  # the same draws among tied ranks
        np.testing.assert_array_equal(older.act_batch(obs, mask), current.act_batch(obs, mask))
        np.testing.assert_allclose(older.probabilities(obs, mask), current.probabilities(obs, mask), atol=1e-6)
    obs, mask = positions(4, "earl_of_coventry", seed=1)  # a preset that deals with opening six
    with pytest.raises(ValueError, match="trained before this version's rules: opening six"):
        older.act_batch(obs, mask)


@pytest.mark.parametrize("model", ["ppo_distilled_scarne.zip", "ppo_scratch_scarne.zip"])
def test_a_model_saved_before_a_rule_option_stays_on_the_compiled_path_and_refuses_its_tables_there(model, tmp_path):
    """The kernel plays it from its weights, the new column weighted 0: the same leads as the current model, in
    compiled code; a table that sets the option refuses it in one line before any rollout."""
    from agents.model_search import ModelSearch
    from snipsnap_env.kernel_network import network_actions
    from snipsnap_env.vec_env import SnipSnapVecEnv

    older = PPOPolicy(as_saved_before(MODELS / model, NEW_COLUMN, tmp_path / model))
    current = PPOPolicy(MODELS / model)
    assert older.kernel_playable() and current.kernel_playable()
    obs, mask = positions(4, "scarne", seed=3)
    leads = obs[:, SLICES["is_lead"].start] > 0.5
    obs, mask = obs[leads], mask[leads]
    draws = np.random.default_rng(0).random(len(obs))
    which = np.zeros(len(obs), np.int64)
    mask = np.asarray(mask, np.int8)
    np.testing.assert_array_equal(
        network_actions(obs, mask, which, older.networks(), draws),
        network_actions(obs, mask, which, current.networks(), draws),
    )
    ModelSearch(older, samples=4, seed=0).scores(obs[:2], mask[:2])  # plays at a table of the options it knows
    obs, mask = positions(4, "earl_of_coventry", seed=1)
    leads = obs[:, SLICES["is_lead"].start] > 0.5
    with pytest.raises(ValueError, match="trained before this version's rules: opening six"):
        ModelSearch(older, samples=4, seed=0).scores(obs[leads][:2], mask[leads][:2])
    with pytest.raises(ValueError, match="trained before this version's rules: opening six"):
        SnipSnapVecEnv(4, 4, rules="earl_of_coventry", opponents=[older], seed=0)
    SnipSnapVecEnv(4, 4, rules="scarne", opponents=[older], seed=0)


def test_a_model_reading_a_column_this_version_no_longer_makes_is_refused(tmp_path):
    path = as_saved_before(MODELS / "ppo_distilled_scarne.zip", NEW_COLUMN, tmp_path / "older.zip")
    with zipfile.ZipFile(path) as archive:
        meta, weights = json.loads(archive.read(META_FILE)), archive.read(WEIGHTS_FILE)
    meta["layout"] = [
        ["rules: dealer pays" if name == "rules: calls coventry" else name, size] for name, size in meta["layout"]
    ]
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(META_FILE, json.dumps(meta))
        archive.writestr(WEIGHTS_FILE, weights)
    with pytest.raises(ValueError, match=r"no longer makes \(rules: dealer pays\).*retrain"):
        PPOPolicy(path)


def test_the_env_id_names_one_observation_layout():
    """A change to the observation must add a version (and so rename the env): ids never hide a new layout."""
    assert layout_digest() == LAYOUT_DIGESTS[ENV_VERSION], (
        f"the observation layout changed: add version {ENV_VERSION + 1} to observation.LAYOUT_DIGESTS with "
        f"{layout_digest()!r} (the env becomes snipsnap_v{ENV_VERSION + 1}; saved models keep playing)"
    )
    assert snipsnap_env.env(num_players=3).metadata["name"] == ENV_NAME == f"snipsnap_v{ENV_VERSION}"


def test_fine_tuning_refuses_a_model_of_an_earlier_layout_that_plays(tmp_path):
    from train.learn.args import Args

    older = as_saved_before(MODELS / "ppo_distilled_scarne.zip", NEW_COLUMN, tmp_path / "older.zip")
    PPOPolicy(older)  # it plays
    with pytest.raises(ValueError, match=rf"earlier observation \(\d+ columns, this version makes {OBS_DIM}\)"):
        Args(init_from=str(older), run_name="x")


def test_the_docs_version_history_names_every_version():
    from pathlib import Path

    from snipsnap_env.observation import VERSIONS

    page = (Path(__file__).parents[1] / "docs" / "environment.md").read_text()
    for version in VERSIONS:
        assert f"| `snipsnap_v{version}` |" in page, f"docs/environment.md's version history lacks snipsnap_v{version}"


def test_a_model_lacking_a_column_that_is_no_rule_option_is_refused_at_load(tmp_path):
    """Only a rule option's column may be new to a model (it is 0 at the option's default); a model that never saw
    another column (here deals_left) cannot read this version's observation: refused when it loads, not mid-run."""
    layout = [[name, size] for name, size in LAYOUT if name != "deals_left"]
    with pytest.raises(ValueError, match=r"no rule option \(deals_left 0\)"):
        column_map(layout)
    path = as_saved_before(MODELS / "ppo_distilled_scarne.zip", "deals_left 0", tmp_path / "older.zip")
    assert "deals_left" not in dict(json.loads(zipfile.ZipFile(path).read(META_FILE))["layout"])
    with pytest.raises(ValueError, match="no rule option.*retrain"):
        PPOPolicy(path)


def index_table(text: str) -> list[tuple[int, str, int]]:
    """(index, name, size) of each row of a docstring's index table (rows start with a number)."""
    import re

    return [(int(i), name, int(size)) for i, name, size in re.findall(r"^(\d+)\s+(\w+)\s+(\d+)\s", text, re.M)]


def test_the_docstring_tables_are_the_layout_itself():
    """The observation's index table (and the state's, which holds the observation) say what the code makes: a
    field added or resized fails here until its row says so, and no other file holds the sizes by hand."""
    from snipsnap_env import observation, state

    at = 0
    rows = index_table(observation.__doc__)
    fields = list(dict.fromkeys(name.split(":")[0] for name, _ in LAYOUT))  # "rules: chips" is of the rules field
    assert [name for _, name, _ in rows] == fields
    for index, name, size in rows:
        assert index == at and SLICES[name] == slice(at, at + size), name
        at += size
    assert at == OBS_DIM
    assert index_table(state.__doc__) == [(0, "hands", state.HANDS_DIM), (state.HANDS_DIM, "observation", OBS_DIM)]


@pytest.mark.parametrize(
    "job, flags",
    [
        ("evaluate", ["--candidates", "{model}", "--deals", "20"]),
        ("evaluate", ["--candidates", "random", "--opponents", "{model}", "--deals", "20"]),
        ("mixed", ["--agents", "{model}", "random", "--deals", "20"]),
        ("ladder", ["--candidates", "{model}", "--opponents", "random", "--deals", "20"]),
        ("league", ["--agents", "{model}", "random", "--deals", "10", "--tables", "1"]),
        ("matrix", ["--agents", "{model}", "--opponents", "random", "--deals", "20"]),
    ],
)
def test_a_job_refuses_a_model_its_tables_rules_would_stop_before_any_folder(job, flags, tmp_path, capsys):
    """A model saved before a rule option, at a table that uses it: one line and exit 2 before the folder exists
    (it used to fail at the first lead, mid-work, with a traceback and a folder left)."""
    import importlib

    older = as_saved_before(MODELS / "ppo_distilled_scarne.zip", NEW_COLUMN, tmp_path / "older.zip")
    argv = [flag.format(model=f"ppo:{older}") for flag in flags]
    argv += ["--players", "4", "--rules", "earl_of_coventry", "--out", str(tmp_path / "out"), "--no-progress"]
    with pytest.raises(SystemExit) as refused:
        importlib.import_module(f"train.{job}").main(argv)
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "trained before this version's rules: opening six" in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_model_saved_before_a_rule_option_keeps_the_one_call_aec_decision(tmp_path):
    """The AEC env's decision stays one compiled call for an older model (it used to fall back to the general
    path, twice as slow, while kernel_playable() said True), with the same choices; a table that sets the
    option is still refused."""
    older = PPOPolicy(as_saved_before(MODELS / "ppo_distilled_scarne.zip", NEW_COLUMN, tmp_path / "older.zip"))
    current = PPOPolicy(MODELS / "ppo_distilled_scarne.zip")
    assert older._single_fast and older.kernel_playable()
    env = snipsnap_env.env(num_players=4)
    env.reset(seed=5)
    for agent in env.agent_iter(200):
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        older.reseed(1), current.reseed(1)
        action = older(observation)
        assert action == current(observation)
        env.step(action)
    env = snipsnap_env.env(num_players=4, rules="earl_of_coventry")
    env.reset(seed=1)
    with pytest.raises(ValueError, match="trained before this version's rules: opening six"):
        for _ in range(50):
            observation = env.last()[0]
            env.step(older(observation))
