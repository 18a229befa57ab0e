"""Model files that are refused in one line before anything is built: sizes that a file's weights cannot back,
non-finite weights, odd metadata; and every checkpoint and model that train_ppo writes, with every critic,
evaluates, converts and rates."""

from __future__ import annotations

import json
import resource
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.model_file import (  # noqa: E402
    META_FILE,
    WEIGHTS_FILE,
    _checked_kwargs,
    _policy_classes,
    load_policy,
    parameter_count,
)
from agents.ppo import SHIPPED_MODEL  # noqa: E402
from snipsnap_env.state import CRITIC_INPUTS, critic_bounds  # noqa: E402
from train import convert_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def changed_model(path: Path, meta_change: dict | None = None, weights: bytes | None = None) -> Path:
    """The shipped model with its metadata updated by ``meta_change`` and/or its weights replaced."""
    with zipfile.ZipFile(SHIPPED_MODEL) as source, zipfile.ZipFile(path, "w") as target:
        for item in source.namelist():
            data = source.read(item)
            if item == META_FILE and meta_change is not None:
                data = json.dumps({**json.loads(data), **meta_change})
            if item == WEIGHTS_FILE and weights is not None:
                data = weights
            target.writestr(item, data)
    return path


@pytest.mark.parametrize(
    "kind, kwargs, critic_inputs",
    [
        ("mlp", {"net_arch": [64, 64]}, 0),
        ("mlp", {"net_arch": {"pi": [32], "vf": [16, 8]}}, 0),
        ("mlp", {"net_arch": []}, 0),
        ("rank_shared", {"net_arch": {"pi": [], "vf": [256, 256]}, "rank_context": 32, "rank_hidden": 64}, 13),
        ("rank_shared", {"net_arch": [40], "rank_context": 7, "rank_hidden": 9}, 104),
        ("rank_shared", {"net_arch": []}, 0),
    ],
)
def test_the_declared_size_of_a_network_is_known_before_it_is_built(kind, kwargs, critic_inputs):
    import gymnasium

    low, high = critic_bounds(critic_inputs)
    network = _policy_classes()[kind](
        gymnasium.spaces.Box(low, high), gymnasium.spaces.Discrete(14), lambda _: 0.0, **_checked_kwargs(kind, kwargs)
    )
    built = sum(tensor.numel() for tensor in network.state_dict().values())
    assert parameter_count(kind, _checked_kwargs(kind, kwargs), critic_inputs) == built


def test_a_small_file_declaring_a_huge_network_is_refused_before_anything_is_built(tmp_path):
    import torch
    from safetensors.torch import save

    tiny = save({"x": torch.zeros(1)})
    for vf, words in (
        ([4096] * 8, r"declares a network of 15\d,\d{3},\d{3} weights; a policy file holds at most"),
        ([4096] * 2, "its weights hold 1 numbers where"),
    ):
        huge = {"policy_kwargs": {"net_arch": {"pi": [], "vf": vf}, "rank_context": 4096, "rank_hidden": 4096}}
        path = changed_model(tmp_path / "huge.zip", huge, tiny)
        assert path.stat().st_size < 4000  # the shipped metadata (its layout, its training record) and 1 weight
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with pytest.raises(ValueError, match=words):
            agents.make("ppo", path=path)
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # kB: nothing near 1 GB built


def test_a_header_that_promises_more_weights_than_the_sizes_is_refused(tmp_path):
    with zipfile.ZipFile(SHIPPED_MODEL) as archive:
        weights = archive.read(WEIGHTS_FILE)
    size = int.from_bytes(weights[:8], "little")
    header = json.loads(weights[8 : 8 + size])
    name = next(key for key in header if key != "__metadata__")
    header[name]["shape"] = [10**6, 10**6]  # a shape no offset range fits
    text = json.dumps(header).encode()
    forged = len(text).to_bytes(8, "little") + text + weights[8 + size :]
    with pytest.raises(ValueError, match="does not fit its shape or the file"):
        load_policy(changed_model(tmp_path / "forged.zip", weights=forged))
    with pytest.raises(ValueError, match="header is larger"):
        load_policy(changed_model(tmp_path / "short.zip", weights=(10**9).to_bytes(8, "little") + b"{}"))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_refused_at_load(tmp_path, value):
    from safetensors.torch import load, save

    with zipfile.ZipFile(SHIPPED_MODEL) as archive:
        tensors = load(archive.read(WEIGHTS_FILE))
    name = sorted(tensors)[3]
    tensors[name].view(-1)[0] = float(value)
    with pytest.raises(ValueError, match="NaN or infinite"):
        agents.make("ppo", path=changed_model(tmp_path / "bad.zip", weights=save(tensors)))


def test_odd_metadata_values_are_one_line_refusals(tmp_path):
    cases = [
        ({"critic_inputs": 104.0}, "critic_inputs 104.0"),
        ({"policy_kwargs": {"net_arch": [8], "rank_hidden": [3]}}, "rank_hidden must be a whole number"),
    ]
    for change, words in cases:
        with pytest.raises(ValueError, match=words):
            agents.make("ppo", path=changed_model(tmp_path / "odd.zip", change))
    deep = tmp_path / "deep.zip"
    with zipfile.ZipFile(deep, "w") as archive:
        archive.writestr(META_FILE, "[" * 100_000 + "]" * 100_000)
        archive.writestr(WEIGHTS_FILE, b"")
    with pytest.raises(ValueError, match="nests too deep"):
        agents.make("ppo", path=deep)


def test_convert_model_says_what_is_wrong_with_its_source_in_one_line(tmp_path, capsys):
    for source, words in (
        (tmp_path / "nope.zip", f"no model file at {tmp_path / 'nope.zip'}\n"),
        (SHIPPED_MODEL, "in snipsnap's model format already"),
    ):
        with pytest.raises(SystemExit) as exit_:
            convert_model.main([str(source), str(tmp_path / "out.zip"), "--trust-model"])
        error = capsys.readouterr().err
        assert exit_.value.code == 2 and words in error and len(error.strip().splitlines()) == 1
        assert "nope.zip.zip" not in error
    assert not (tmp_path / "out.zip").exists()


def test_init_from_a_model_without_policy_kwargs_fine_tunes_the_defaults(tmp_path):
    from train.learn.args import Args

    meta = changed_model(tmp_path / "bare.zip")
    with zipfile.ZipFile(meta) as archive:
        data = json.loads(archive.read(META_FILE))
    data.pop("policy_kwargs")  # the defaults: a rank head (32, 64) and a value network of [128, 128]
    with zipfile.ZipFile(SHIPPED_MODEL) as source, zipfile.ZipFile(meta, "w") as target:
        target.writestr(META_FILE, json.dumps(data))
        target.writestr(WEIGHTS_FILE, source.read(WEIGHTS_FILE))
    with pytest.raises(ValueError, match="weights hold"):  # the shipped weights are a [256, 256] critic's
        Args(init_from=str(meta), run_name="x")
    with pytest.raises(ValueError, match=r"holds a rank_shared policy; this run trains a mlp policy"):
        Args(init_from=str(SHIPPED_MODEL), policy="mlp", critic="observation", run_name="x")


CRITIC_RUN = ["--players", "3", "--ppo-players", "3", "--num-envs", "8", "--n-steps", "8", "--batch-size", "32"]
CRITIC_RUN += [
    "--eval-every",
    "64",
    "--eval-deals",
    "50",
    "--checkpoint-every",
    "64",
    "--no-progress",
    "--threads",
    "1",
]
CRITIC_RUN += ["--total-timesteps", "128", "--critic-rollouts", "2"]


@pytest.mark.training
@pytest.mark.parametrize("critic", ["observation", "state", "rollouts"])
def test_every_checkpoint_and_model_of_every_critic_evaluates_converts_and_rates(tmp_path, critic, capsys):
    from train import evaluate, train_ppo
    from train.learn.critics import CRITICS
    from train.measure import evaluation

    assert critic in CRITICS and len(CRITICS) == 3 and len(CRITIC_INPUTS) == 3
    train_ppo.main([*CRITIC_RUN, "--critic", critic, "--runs", str(tmp_path), "--run-name", "r"])
    run = tmp_path / "r"
    checkpoint = sorted((run / "checkpoints").glob("ppo_*_steps.zip"))[-1]
    converted = tmp_path / "converted.zip"
    convert_model.main([str(checkpoint), str(converted), "--trust-model"])
    files = [f"ppo:{run / 'final_model.zip'}", f"ppo:{run / 'best_model.zip'}", f"ppo:{converted}"]
    rows = evaluation.evaluate(
        ["random", *files, f"ppo:{checkpoint}"], ["random"], 3, deals=40, trust_model=True, quiet=True
    )
    assert [row.name for row in rows] == ["random", *files, f"ppo:{checkpoint}"]
    by_name = {row.name: row.chips_per_deal for row in rows}
    assert by_name[f"ppo:{converted}"] == by_name[f"ppo:{checkpoint}"]  # the same network, converted
    # --trust-model reaches every seat: the checkpoint as the opponents too, from the command line
    argv = ["--candidates", "random", "most_copies", "--opponents", f"ppo:{checkpoint}", "--players", "3"]
    evaluate.main([*argv, "--deals", "20", "--trust-model", "--no-progress", "--out", str(tmp_path / "e")])


def test_a_weakened_copy_changes_only_the_actor_plays_worse_and_has_the_same_bytes_each_time(tmp_path, capsys):
    """examples/weakened_model.py: noise on the actor's weights alone (the critic never plays), a file that says
    where it came from, and — the clock kept out of the zip — the same bytes for the same noise, so results keyed by
    its SHA-256 are found again."""
    import sys

    sys.path.insert(0, str(ROOT / "examples"))
    import weakened_model

    from train.measure.evaluation import evaluate
    from train.runner.manifest import sha256

    first = weakened_model.main(["--model", "ppo", "--noise", "1.0", "--out", str(tmp_path / "a.zip")])
    again = weakened_model.main(["--model", "ppo", "--noise", "1.0", "--out", str(tmp_path / "b.zip")])
    assert sha256(first) == sha256(again)
    (original, _), (weakened, meta) = load_policy(SHIPPED_MODEL), load_policy(first)
    changed = {n for n, t in weakened.state_dict().items() if not t.equal(original.state_dict()[n])}
    assert changed and all(name.startswith(weakened_model.ACTOR) for name in changed)
    assert meta["weakened_from"] == {"model": str(SHIPPED_MODEL), "sha256": sha256(SHIPPED_MODEL), "noise": 1.0,
                                     "seed": 0}  # fmt: skip
    _, worse = evaluate(["ppo", f"ppo:{first}"], ["ppo"], 4, "scarne", 8000, 0, reference="ppo", quiet=True)
    assert worse.diff_vs_reference + worse.diff_ci95 < 0  # in ppo's seat at a table of ppo
    for argv, says in ((["--model", "most_copies"], "a learned agent's name or a model file"),
                       (["--noise", "0"], "--noise got 0.0"), (["--model", str(ROOT / "README.md")], "README.md")):
        with pytest.raises(SystemExit):
            weakened_model.main([*argv, "--out", str(tmp_path / "c.zip")])
        assert says in capsys.readouterr().err


def damaged(path: Path, flag: int = 0, method: int | None = None) -> Path:
    """The shipped model with every member's header (local and central) given ``flag`` bits and ``method``."""
    data = bytearray(SHIPPED_MODEL.read_bytes())
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        while at >= 0:
            data[at + flags_at] |= flag
            if method is not None:
                data[at + flags_at + 2 : at + flags_at + 4] = method.to_bytes(2, "little")
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("flag, method, words", [(1, None, "encrypted"), (0, 93, "compression"),
                                                 (0, 99, "compression")])  # fmt: skip
def test_a_zip_with_encrypted_or_unknown_compression_members_is_a_one_line_refusal(tmp_path, capsys, flag, method,
                                                                                   words):  # fmt: skip
    from train import evaluate

    bad = damaged(tmp_path / "bad.zip", flag, method)
    with pytest.raises(ValueError, match=words) as refused:
        agents.make("ppo", path=bad)
    assert str(bad) in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(SystemExit) as exit_:
        evaluate.main(["--candidates", f"ppo:{bad}", "--deals", "10", "--out", str(tmp_path / "out")])
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and len(error.strip().splitlines()) == 1 and words in error, error
    assert not (tmp_path / "out").exists()
