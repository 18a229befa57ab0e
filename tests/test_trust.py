"""Nothing outside a job's own files is touched, and files from elsewhere run no code: run names stay inside
``--runs``, ``--overwrite`` removes only what the manifest lists, result folders are never written over,
model files load without unpickling, and a resume reads only the pickles its run wrote."""

from __future__ import annotations

import base64
import json
import pickle
import zipfile
from pathlib import Path

import pytest

from train.runner.manifest import Manifest, UntrustedFile
from train.runner.run_folder import FolderTaken, RunFolder, check_folder_name


@pytest.mark.parametrize("name", ["../victim", "/tmp/victim", ".", "..", "a/b", ""])
def test_a_run_name_is_one_plain_folder_name(name):
    with pytest.raises(ValueError, match="one plain folder name"):
        check_folder_name(name)


@pytest.mark.parametrize("name", ["../victim", ".", "nested/run"])
def test_train_ppo_refuses_a_run_name_that_leaves_runs_before_any_work(tmp_path, name, capsys):
    pytest.importorskip("sb3_contrib")
    from train import train_ppo

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "thesis.tex").write_text("years of work")
    with pytest.raises(SystemExit) as exit_:
        train_ppo.main(
            [
                "--runs",
                str(tmp_path / "runs"),
                "--run-name",
                name,
                "--overwrite",
                "--teacher",
                "",
                "--total-timesteps",
                "512",
            ]
        )
    assert exit_.value.code == 2 and "one plain folder name" in capsys.readouterr().err
    assert (victim / "thesis.tex").read_text() == "years of work"


def settings(**extra):
    return {"job": "test", **extra}


def test_overwrite_removes_only_the_runs_own_files_and_refuses_a_folder_with_others(tmp_path):
    folder = tmp_path / "run"
    with RunFolder(folder, settings(), resume=False, overwrite=False) as run:
        run.write(folder / "model.zip", lambda p: p.write_bytes(b"weights"))
        run.write(folder / "checkpoints" / "ppo_1_steps.zip", lambda p: p.write_bytes(b"checkpoint"))
    (folder / "NOTES.md").write_text("what I tried")
    with pytest.raises(FolderTaken, match=r"NOTES\.md") as refused:
        RunFolder(folder, settings(), resume=False, overwrite=True).__enter__()
    assert "did not write" in str(refused.value)
    assert (folder / "model.zip").exists() and (folder / "NOTES.md").exists()  # nothing removed
    (folder / "NOTES.md").unlink()
    with RunFolder(folder, settings(seed=1), resume=False, overwrite=True) as run:
        assert sorted(p.name for p in folder.iterdir()) == [".lock", "args.json", "manifest.json"]
        assert json.loads((folder / "args.json").read_text()) == settings(seed=1)


def test_a_job_never_writes_over_a_file_it_did_not_write(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    with RunFolder(folder, settings(), resume=True, overwrite=False, resume_may_start=True) as run:
        (folder / "matrix.md").write_text("a person's notes, made while the job ran")
        with pytest.raises(FolderTaken, match="was not written by this"):
            run.write(folder / "matrix.md", lambda p: p.write_text("the job's table"))
    assert (folder / "matrix.md").read_text() == "a person's notes, made while the job ran"


def test_a_forged_manifest_cannot_point_outside_its_folder(tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"files": {"../precious.txt": None}}))
    with pytest.raises(UntrustedFile, match="not a file inside"):
        Manifest(folder)
    with pytest.raises(UntrustedFile):
        RunFolder(folder, settings(), resume=False, overwrite=True).__enter__()
    assert outside.read_text() == "keep me"


def test_verify_accepts_only_unchanged_hashed_files_of_the_job(tmp_path):
    folder = tmp_path / "run"
    with RunFolder(folder, settings(), resume=False, overwrite=False) as run:
        point = run.write(folder / "point.pkl", lambda p: p.write_bytes(pickle.dumps({"steps": 1})))
        log = run.record(folder / "progress.csv") if (folder / "progress.csv").write_text("a\n") else None
        assert run.verify(point) == point
        point.write_bytes(pickle.dumps({"steps": 2}))
        with pytest.raises(UntrustedFile, match="has changed since"):
            run.verify(point)
        with pytest.raises(UntrustedFile, match="no recorded SHA-256"):
            run.verify(log)
        (folder / "stranger.pkl").write_bytes(b"")
        with pytest.raises(UntrustedFile, match="not written by this job"):
            run.verify(folder / "stranger.pkl")


def test_matrix_refuses_a_folder_of_someone_elses_files_with_or_without_overwrite(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from train import matrix

    out = tmp_path / "mine"
    (out / "data").mkdir(parents=True)
    (out / "matrix.md").write_text("my own table")
    (out / "notes.txt").write_text("notes")
    (out / "data" / "x.csv").write_text("1,2")
    flags = ["--players", "3", "--agents", "random", "--deals", "50", "--no-progress", "--out", str(out)]
    for extra in ([], ["--overwrite"]):
        with pytest.raises(SystemExit) as exit_:
            matrix.main(flags + extra)
        assert exit_.value.code == 2 and "matrix.md" in capsys.readouterr().err
    assert (out / "matrix.md").read_text() == "my own table" and (out / "data" / "x.csv").exists()


def test_jobs_write_to_a_fresh_folder_by_default_and_never_over_the_committed_results(tmp_path, monkeypatch, capsys):
    from train import evaluate

    monkeypatch.chdir(tmp_path)
    argv = ["--candidates", "random", "most_copies", "--players", "3", "--deals", "40"]
    evaluate.main(argv)
    written = list((tmp_path / "results" / "evaluate").iterdir())
    assert len(written) == 1 and (written[0] / "results.md").exists()
    provenance = json.loads((written[0] / "provenance.json").read_text())
    assert provenance["command"].startswith("python -m train.evaluate --candidates random most_copies")
    assert provenance["commit"] and provenance["date"]
    evaluate.main(argv)  # the same settings again: the same folder
    evaluate.main(argv + ["--seed", "1"])  # other settings: another folder
    assert len(list((tmp_path / "results" / "evaluate").iterdir())) == 2
    committed = Path(__file__).resolve().parent.parent / "docs" / "results" / "headline"
    tracked = lambda: {p.name: p.read_bytes() for p in committed.iterdir() if p.name != ".lock"}  # noqa: E731
    before = tracked()
    with pytest.raises(SystemExit):
        evaluate.main(argv + ["--out", str(committed)])  # other settings than the committed table's
    assert "other settings" in capsys.readouterr().err
    assert tracked() == before


def test_a_damaged_matrix_cell_is_named_and_computed_again(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from train import matrix

    flags = ["--players", "3", "4", "--agents", "random", "--opponents", "random", "--deals", "60", "--no-progress"]
    flags += ["--out", str(tmp_path / "m")]
    matrix.main(flags)
    whole = (tmp_path / "m" / "matrix.json").read_bytes()
    cells = tmp_path / "m" / "cells"
    other_rows = (cells / "scarne_4p_random.json").read_text()
    for damage in ("[{", "[]", other_rows):
        (cells / "scarne_3p_random.json").write_text(damage)
        capsys.readouterr()
        matrix.main(flags)
        assert "scarne_3p_random.json is damaged" in capsys.readouterr().out
        assert (tmp_path / "m" / "matrix.json").read_bytes() == whole


def evil_sb3_zip(path: Path, marker: Path) -> Path:
    """A zip shaped like a Stable-Baselines3 model whose ``data`` carries a pickle that writes ``marker``."""

    class Payload:
        def __reduce__(self):
            return (Path.write_text, (marker, "the payload ran"))

    serialized = base64.b64encode(pickle.dumps(Payload())).decode()
    data = {"policy_class": {":type:": "<class 'type'>", ":serialized:": serialized}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
        archive.writestr("policy.pth", b"")
    return path


def test_a_model_file_with_a_pickled_payload_runs_nothing(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    import agents
    from train import evaluate

    marker = tmp_path / "pwned"
    evil = evil_sb3_zip(tmp_path / "evil.zip", marker)
    with pytest.raises(ValueError, match="trust=True"):
        agents.make("ppo", path=evil)
    with pytest.raises(SystemExit) as exit_:
        evaluate.main(["--candidates", "random", f"ppo:{evil}", "--deals", "10", "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2 and "--trust-model" in capsys.readouterr().err
    assert not marker.exists()


def test_training_never_unpickles_an_opponent(tmp_path, capsys):
    """A Stable-Baselines3 zip as a training opponent (train_ppo --opponents, or the learned best response to a
    --trust-model target) is refused in one line that says how to convert it; its payload never runs."""
    pytest.importorskip("sb3_contrib")
    from train import train_ppo

    marker = tmp_path / "pwned"
    evil = evil_sb3_zip(tmp_path / "evil.zip", marker)
    with pytest.raises(SystemExit):
        train_ppo.main(["--opponents", f"ppo:{evil}", "--runs", str(tmp_path / "runs")])
    assert "python -m train.convert_model" in capsys.readouterr().err
    assert not marker.exists() and not (tmp_path / "runs").exists()


def test_the_project_s_model_format_holds_no_pickle(tmp_path):
    pytest.importorskip("sb3_contrib")
    from agents.model_file import META_FILE, WEIGHTS_FILE
    from agents.ppo import SHIPPED_MODEL

    with zipfile.ZipFile(SHIPPED_MODEL) as archive:
        assert sorted(archive.namelist()) == sorted([META_FILE, WEIGHTS_FILE])
        assert json.loads(archive.read(META_FILE))["policy"] in ("mlp", "rank_shared")
        weights = archive.read(WEIGHTS_FILE)
    header = json.loads(weights[8 : 8 + int.from_bytes(weights[:8], "little")])  # safetensors: JSON + tensors
    assert all(entry["dtype"] == "F32" for name, entry in header.items() if name != "__metadata__")


@pytest.mark.parametrize(
    "meta_change, words",
    [
        ({"policy": "os.system"}, "names the policy kind 'os.system'"),
        ({"policy_kwargs": {"net_arch": [10**9]}}, "sizes from 1 to"),
        ({"policy_kwargs": {"activation_fn": "x"}}, "policy_kwargs must be an object with keys among"),
        ({"observation_dim": 50}, "observation_dim 50 is not the size of its observation layout"),
        ({"layout": "x"}, "not a list of"),
    ],
)
def test_a_model_file_with_odd_metadata_is_refused_in_words(tmp_path, meta_change, words):
    pytest.importorskip("sb3_contrib")
    import agents
    from agents.model_file import META_FILE
    from agents.ppo import SHIPPED_MODEL

    changed = tmp_path / "changed.zip"
    with zipfile.ZipFile(SHIPPED_MODEL) as source, zipfile.ZipFile(changed, "w") as target:
        for item in source.namelist():
            data = source.read(item)
            if item == META_FILE:
                data = json.dumps({**json.loads(data), **meta_change})
            target.writestr(item, data)
    with pytest.raises(ValueError, match=words):
        agents.make("ppo", path=changed)


@pytest.mark.training
def test_a_resume_skips_a_checkpoint_the_run_did_not_write_and_never_unpickles_it(tmp_path):
    pytest.importorskip("sb3_contrib")
    from train import train_ppo
    from train.learn import resume_point
    from train.runner.run_folder import checkpoints

    argv = ["--players", "3", "--ppo-players", "3", "--num-envs", "16", "--n-steps", "16", "--batch-size", "64"]
    argv += ["--eval-every", "256"]
    argv += ["--eval-deals", "50", "--checkpoint-every", "256", "--no-progress", "--threads", "1", "--teacher", ""]
    argv += ["--runs", str(tmp_path), "--run-name", "r"]
    train_ppo.main(argv + ["--total-timesteps", "1024"])
    run = tmp_path / "r"
    newest = checkpoints(run)[0]
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (Path.write_text, (marker, "the payload ran"))

    resume_point.path_for(newest).write_bytes(pickle.dumps(Payload()))  # swapped after the run wrote it
    (run / "final_model.zip").unlink()
    with pytest.warns(UserWarning, match=f"skipping unreadable checkpoint {newest.name}.*changed since"):
        train_ppo.main(argv + ["--total-timesteps", "1280", "--resume"])
    assert not marker.exists()
    # the logs go back to the restored point: no timestep twice, no evaluation going backwards
    with open(run / "progress.csv") as f:
        header, *rows = [line.strip().split(",") for line in f]
    steps = [int(float(row[header.index("time/total_timesteps")])) for row in rows]
    assert steps == sorted(steps) and len(steps) == len(set(steps))
    evaluations = [int(line.split(",")[0]) for line in (run / "eval.csv").read_text().splitlines()[1:]]
    assert evaluations == sorted(evaluations)


def test_the_main_job_refuses_an_out_that_is_a_file_before_training(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from train import main

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as exit_:
        main.main(["--out", str(blocker), "--runs", str(tmp_path / "runs")])
    assert exit_.value.code == 2 and "is a file, not a folder" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()  # nothing trained


def test_a_damaged_manifest_is_a_one_line_refusal(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from train import train_ppo

    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "manifest.json").write_text("{broken")
    with pytest.raises(SystemExit) as exit_:
        train_ppo.main(["--teacher", "", "--total-timesteps", "10", "--runs", str(tmp_path), "--run-name", "r"])
    assert exit_.value.code == 2 and "manifest.json is damaged" in capsys.readouterr().err
