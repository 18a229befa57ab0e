"""Scripts that write one named file (``train.play --record``, ``examples/weakened_model.py --out``) never write
through a link, over an existing file without --overwrite, or over a file the repository tracks."""

import subprocess
import sys
from pathlib import Path

import pytest

from train import play
from train.runner.single_file import FileTaken, check_new_file, write_new_file

ROOT = Path(__file__).resolve().parent.parent


def test_a_new_file_is_written_whole(tmp_path):
    path = write_new_file(tmp_path / "a.txt", "--out", lambda p: p.write_text("x"))
    assert path.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_an_existing_file_is_refused_without_overwrite_and_kept(tmp_path):
    (tmp_path / "a.txt").write_text("precious")
    with pytest.raises(FileTaken, match="exists.*--overwrite"):
        write_new_file(tmp_path / "a.txt", "--out", lambda p: p.write_text("x"))
    assert (tmp_path / "a.txt").read_text() == "precious"
    write_new_file(tmp_path / "a.txt", "--out", lambda p: p.write_text("x"), overwrite=True)
    assert (tmp_path / "a.txt").read_text() == "x"


def test_a_link_is_refused_even_with_overwrite(tmp_path):
    (tmp_path / "precious.txt").write_text("precious")
    (tmp_path / "link.gif").symlink_to(tmp_path / "precious.txt")
    with pytest.raises(FileTaken, match="link"):
        check_new_file(tmp_path / "link.gif", "--record", overwrite=True)
    assert (tmp_path / "precious.txt").read_text() == "precious"


def test_a_tracked_file_is_refused_even_with_overwrite():
    with pytest.raises(FileTaken, match="tracks"):
        check_new_file(ROOT / "docs" / "deal.gif", "--record", overwrite=True)


def test_a_failed_write_leaves_the_old_file_and_no_partial_one(tmp_path):
    (tmp_path / "a.txt").write_text("old")

    def crash(path):
        path.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_new_file(tmp_path / "a.txt", "--out", crash, overwrite=True)
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"] and (tmp_path / "a.txt").read_text() == "old"


def test_play_refuses_to_record_over_a_tracked_file_or_through_a_link(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        play.main(["--players", "3", "--record", str(ROOT / "docs" / "deal.gif")])
    assert exit_.value.code == 2 and "tracks" in capsys.readouterr().err
    (tmp_path / "precious.txt").write_text("precious")
    (tmp_path / "link.gif").symlink_to(tmp_path / "precious.txt")
    with pytest.raises(SystemExit) as exit_:
        play.main(["--players", "3", "--record", str(tmp_path / "link.gif")])
    assert exit_.value.code == 2 and (tmp_path / "precious.txt").read_text() == "precious"


@pytest.mark.parametrize("args", [["--out", "agents/models/ppo_scarne.zip", "--overwrite"], ["--noise", "inf"]])
@pytest.mark.slow
def test_the_weakened_copy_refuses_the_shipped_model_and_infinite_noise(tmp_path, args):
    pytest.importorskip("torch")
    out = ["--out", str(tmp_path / "w.zip")] if "--out" not in args else []
    before = (ROOT / "agents" / "models" / "ppo_scarne.zip").read_bytes()
    result = subprocess.run([sys.executable, "examples/weakened_model.py", *out, *args], cwd=ROOT,
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert (ROOT / "agents" / "models" / "ppo_scarne.zip").read_bytes() == before and not (tmp_path / "w.zip").exists()
