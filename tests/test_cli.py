"""Every job speaks one command-line vocabulary, and every example command in the docs parses as written."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JOBS = [
    "main",
    "train_ppo",
    "evaluate",
    "ladder",
    "matrix",
    "mixed",
    "behaviour",
    "play",
    "serve",
    "bench_aec",
    "bench_batch",
    "bench_critic",
    "bench_search",
    "oracle",
    "convert_model",
    "curves",
]
SHARED = {"--players", "--rules", "--opponents", "--seed", "--deals", "--out", "--runs"}
RETIRED = {"--num-players", "--out-dir", "--results", "--eval-deals-final", "--backend"}


def example_commands(text: str) -> list[tuple[str, list[str]]]:
    """``python -m train.<job> args`` lines (joined over trailing backslashes) as (job, argv)."""
    text = text.replace("\\\n", " ")
    found = []
    for match in re.finditer(r"python -m train\.(\w+)([^\n`#]*)", text):
        argv = shlex.split(match.group(2))
        if "--help" not in argv:  # that one prints and exits: nothing to check
            found.append((match.group(1), argv))
    return found


def flags_of(job: str) -> set[str]:
    parser = importlib.import_module(f"train.{job}").parser()
    return {flag for action in parser._actions for flag in action.option_strings}


@pytest.mark.parametrize("job", JOBS)
def test_the_examples_in_a_jobs_help_parse(job):
    module = importlib.import_module(f"train.{job}")
    examples = example_commands(module.__doc__)
    assert examples, f"train.{job} shows no example"
    for name, argv in examples:
        importlib.import_module(f"train.{name}").parser().parse_args(argv)


def test_the_readme_and_docs_commands_parse():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    examples = [example for page in pages for example in example_commands(page.read_text())]
    assert len(examples) > 20
    for name, argv in examples:
        importlib.import_module(f"train.{name}").parser().parse_args(argv)


def test_one_flag_name_per_idea():
    for job in JOBS:
        flags = flags_of(job)
        assert not flags & RETIRED, (job, flags & RETIRED)
    assert {"--players", "--rules", "--seed", "--opponents", "--runs"} <= flags_of("train_ppo")
    assert {"--players", "--rules", "--seed", "--opponents", "--deals", "--out"} <= flags_of("evaluate")
    assert SHARED <= flags_of("main")
    assert {"--players", "--rules", "--seed", "--opponents", "--deals", "--out", "--runs"} <= flags_of("matrix")


@pytest.mark.parametrize(
    "job, argv, message",
    [
        ("evaluate", ["--players", "9"], "9 players; allowed: 3 to 8"),
        ("evaluate", ["--seed", "-1"], "allowed: a whole number from 0 to 4,294,967,295"),
        ("evaluate", ["--deals", "1"], "from 2 to 5,000,000"),
        ("evaluate", ["--deals", "9" * 12], "from 2 to 5,000,000"),
        ("league", ["--tables", "10001"], "from 1 to 10,000"),
        ("exploit", ["--target", "ppo", "--deals", "99999999"], "from 2 to 5,000,000"),
        ("bench_aec", ["--seconds", "0"], "a number of seconds above 0"),
        ("bench_batch", ["--ppo-steps", "-5"], "from 1 to"),
        ("bench_critic", ["--rollouts", "0"], "from 1 to"),
        ("bench_search", ["--samples", "0"], "from 1 to"),
        ("train_ppo", ["--threads", "0"], "threads got 0"),
        ("train_ppo", ["--learning-rate", "-1"], "learning_rate got -1"),
        ("train_ppo", ["--seed", "-1"], "seed got -1"),
    ],
)
def test_bad_flags_are_usage_errors(job, argv, message, capsys):
    module = importlib.import_module(f"train.{job}")
    with pytest.raises(SystemExit) as exit_:
        module.main(argv) if job == "train_ppo" else module.parser().parse_args(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_train_ppo_refusals_are_one_line_before_any_folder(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from train import train_ppo

    runs = ["--runs", str(tmp_path), "--run-name", "r", "--no-progress"]
    for argv, words in (
        (["--vec", "single", "--critic", "observation"], "--vec single trains at one table size"),
        (["--resume"], "holds no training run to resume"),
        (["--init-from", str(tmp_path / "nope.zip")], "no such file"),
    ):
        with pytest.raises(SystemExit) as exit_:
            train_ppo.main([*argv, *runs])
        error = capsys.readouterr().err
        assert exit_.value.code == 2 and words in error, error
        assert error.startswith("python -m train.train_ppo: error: ") and len(error.strip().splitlines()) == 1
        assert not (tmp_path / "r").exists()
