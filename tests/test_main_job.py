"""The main job and runs that train_or_reuse keeps: a finished run reused (and its benchmark shown again) only by
the code that trained it, an interrupted one resumed, one killed before its first trusted checkpoint started over."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sb3_contrib")

from test_train_and_evaluate import SMOKE  # noqa: E402

from train import train_ppo  # noqa: E402
from train.learn import run as training  # noqa: E402


def test_the_main_job_trains_then_benchmarks_and_reuses_a_finished_run(tmp_path, capsys):
    from train import main

    argv = SMOKE + [
        "--total-timesteps",
        "512",
        "--runs",
        str(tmp_path / "runs"),
        "--deals",
        "300",
        "--out",
        str(tmp_path / "results"),
    ]
    rows = main.main(argv)
    names = [row.name for row in rows]
    assert names[:6] == ["random", "random_card", "most_copies", "fewest_copies", "control", "pimc:128"]
    assert rows[-1].name.startswith("ppo:") and rows[-1].deals == 300
    assert (tmp_path / "results" / "results.md").read_text().count("paired difference vs") == 2
    tables = (tmp_path / "results" / "results.json").read_bytes()
    capsys.readouterr()
    assert main.main(argv) == rows  # nothing changed: the run and its benchmark are both reused
    out = " ".join(capsys.readouterr().out.split())
    assert "reusing the finished run" in out and "shown again" in out and "evaluating" not in out
    assert (tmp_path / "results" / "results.json").read_bytes() == tables
    key = tmp_path / "results" / main.BENCHMARK_KEY
    key.write_text(key.read_text().replace('"deals": 300', '"deals": 301'))  # a key this job did not write
    main.main(argv)
    assert "shown again" not in " ".join(capsys.readouterr().out.split())  # played anew


def test_a_finished_run_is_reused_only_by_the_code_that_trained_it(tmp_path, monkeypatch, capsys):
    """After a pull the same settings train another model: the old run is refused by name, never reported as
    this code's, and never resumed by other code."""
    from train.learn import code_version

    argv = SMOKE + ["--total-timesteps", "256", "--runs", str(tmp_path), "--run-name", "r", "--no-progress"]
    train_ppo.main(argv)
    recorded = json.loads((tmp_path / "r" / "args.json").read_text())
    assert recorded["code"] == code_version.code_version(recorded["opponents"])
    assert recorded["code"].startswith("sources ")
    monkeypatch.setattr(code_version, "code_version", lambda played=(): "sources 0123456789abcdef; torch 0.0")
    for again in (["--resume"], ["--total-timesteps", "512", "--resume"]):
        with pytest.raises(SystemExit):
            train_ppo.main(argv + again)
        assert "code: " in capsys.readouterr().err
    assert training.train_or_reuse is not None
    train_ppo.main(argv + ["--overwrite"])
    assert json.loads((tmp_path / "r" / "args.json").read_text())["code"].startswith("sources 0123")


def test_a_run_started_by_train_or_reuse_records_the_settings_as_given(tmp_path):
    """The main job starts a new run itself: its args.json says overwrite false, as the command did."""
    from train.learn.args import Args
    from train.runner.cli import add_dataclass_flags, from_namespace, new_parser

    argv = [*training.TINY_RUN, "--runs", str(tmp_path), "--run-name", "r"]
    args = from_namespace(Args, add_dataclass_flags(Args, new_parser(None)).parse_args(argv))
    training.train_or_reuse(args)
    recorded = json.loads((tmp_path / "r" / "args.json").read_text())
    assert recorded["overwrite"] is False and recorded["resume"] is False


def test_a_run_killed_before_its_checkpoint_was_hashed_trains_again_from_the_start(tmp_path, capsys):
    """Killed between a checkpoint's rename and its hash in the manifest: nothing can be trusted to resume from,
    so train_or_reuse starts the run over (it used to stop with 'no readable checkpoint')."""
    from train.learn.args import Args
    from train.runner.cli import add_dataclass_flags, from_namespace, new_parser
    from train.runner.manifest import PENDING

    argv = [*training.TINY_RUN, "--runs", str(tmp_path), "--run-name", "r"]
    args = from_namespace(Args, add_dataclass_flags(Args, new_parser(None)).parse_args(argv))
    training.train_or_reuse(args)
    run = tmp_path / "r"
    model = (run / "final_model.zip").read_bytes()
    manifest = json.loads((run / "manifest.json").read_text())
    assert any(name.startswith("checkpoints/ppo_") for name in manifest["files"])
    manifest["files"] = {
        name: PENDING if name.startswith("checkpoints/") else digest
        for name, digest in manifest["files"].items()
        if name != "final_model.zip"
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / "final_model.zip").unlink()
    capsys.readouterr()
    with pytest.warns(UserWarning, match="skipping unreadable checkpoint"):
        training.train_or_reuse(args)
    assert "training it from the start" in " ".join(capsys.readouterr().out.split())
    assert (run / "final_model.zip").read_bytes() == model
