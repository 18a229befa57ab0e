"""Provenance names the code that ran: the repository's commit, ``-dirty`` and the changed files when the tree
differs from it (an edited engine, a new untracked module), never a clean commit for modified code."""

import shutil
import subprocess
from pathlib import Path

import pytest

from train.runner import results_folder
from train.runner.results_folder import changed_files, commit, provenance

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repository(tmp_path):
    root = tmp_path / "repo"
    (root / "snipsnap_env").mkdir(parents=True)
    (root / "docs" / "results").mkdir(parents=True)
    (root / "snipsnap_env" / "engine.py").write_text("RULES = 1\n")
    (root / "docs" / "results" / "table.md").write_text("| a |\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return root


def test_the_root_is_the_repository_not_the_train_package():
    assert (results_folder.ROOT / "pyproject.toml").is_file() and (results_folder.ROOT / "snipsnap_env").is_dir()


def test_a_clean_tree_names_its_commit(repository):
    assert len(commit(repository)) == 40 and changed_files(repository) == []


def test_an_edited_source_file_makes_the_commit_dirty_and_is_named(repository):
    (repository / "snipsnap_env" / "engine.py").write_text("RULES = 2\n")
    assert commit(repository).endswith("-dirty")
    assert changed_files(repository) == ["snipsnap_env/engine.py"]


def test_an_untracked_file_makes_it_dirty_too(repository):
    (repository / "snipsnap_env" / "kernel.py").write_text("FAST = True\n")
    assert commit(repository).endswith("-dirty")
    assert changed_files(repository) == ["snipsnap_env/kernel.py"]


def test_the_committed_tables_being_remade_are_no_change_of_code(repository):
    (repository / "docs" / "results" / "table.md").write_text("| b |\n")
    assert not commit(repository).endswith("-dirty")


def test_provenance_lists_the_changed_files_of_a_dirty_tree(repository, monkeypatch):
    monkeypatch.setattr(results_folder, "ROOT", repository)
    monkeypatch.setattr(results_folder.commit, "__defaults__", (repository,))
    monkeypatch.setattr(results_folder.changed_files, "__defaults__", (repository,))
    assert "changed_files" not in provenance("evaluate", [])
    (repository / "snipsnap_env" / "engine.py").write_text("RULES = 3\n")
    record = provenance("evaluate", ["--deals", "10"])
    assert record["commit"].endswith("-dirty") and record["changed_files"] == ["snipsnap_env/engine.py"]


def test_an_interrupted_rerun_after_a_change_of_code_says_its_tables_are_the_earlier_runs(tmp_path, monkeypatch):
    """Evaluate into a folder, change the code (another commit), run the same command there and interrupt it: the
    provenance names the earlier run's commit as the tables' maker, not the new run's; a finished rerun does not."""
    import json

    from train import evaluate
    from train.runner import job

    argv = ["--players", "3", "--candidates", "random", "--deals", "20", "--out", str(tmp_path / "o"), "--no-progress"]
    evaluate.main(argv)
    first = json.loads((tmp_path / "o" / "provenance.json").read_text())
    monkeypatch.setattr(results_folder, "commit", lambda root=None: "f" * 40)

    def interrupt():
        raise KeyboardInterrupt

    monkeypatch.setattr(job, "work_started", [interrupt])
    with pytest.raises(SystemExit):
        evaluate.main(argv)
    second = json.loads((tmp_path / "o" / "provenance.json").read_text())
    assert second["commit"] == "f" * 40 and "unfinished" in second
    assert second["earlier"]["commit"] == first["commit"] and second["earlier"]["date"] == first["date"]
    with pytest.raises(SystemExit):  # interrupted again: the tables are still the first run's
        evaluate.main(argv)
    assert json.loads((tmp_path / "o" / "provenance.json").read_text())["earlier"]["commit"] == first["commit"]
    monkeypatch.setattr(job, "work_started", [])
    evaluate.main(argv)
    finished = json.loads((tmp_path / "o" / "provenance.json").read_text())
    assert "unfinished" not in finished and "earlier" not in finished and "seconds" in finished
