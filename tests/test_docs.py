"""The documents users read stay true to the code and to the team's specification."""

from __future__ import annotations

from pathlib import Path

import pytest

from snipsnap_env.observation import OBS_DIM, SLICES
from snipsnap_env.rules import PRESETS

ROOT = Path(__file__).resolve().parent.parent


def test_rules_copy_matches_the_teams_specification():
    shared = ROOT.parent / "shared" / "RULES.md"
    if not shared.exists():
        pytest.skip("no shared/RULES.md beside this checkout")
    assert (ROOT / "docs" / "RULES.md").read_text() == shared.read_text(), "docs/RULES.md is out of date"


def test_readme_observation_table_matches_the_encoder():
    readme = (ROOT / "README.md").read_text()
    for name, part in SLICES.items():
        assert f"| {part.start} | {name} | {part.stop - part.start} |" in readme, name
    assert f"fixed size {OBS_DIM}" in readme


def test_readme_lists_every_preset():
    readme = (ROOT / "README.md").read_text()
    for name in PRESETS:
        assert f"| `{name}` |" in readme, name


def test_ci_runs_the_readme_test_command():
    assert "<!-- test-command -->" in (ROOT / "README.md").read_text()
    assert "test-command" in (ROOT / ".ci" / "run").read_text()


def test_the_code_passes_the_linter():
    import shutil
    import subprocess
    import sys

    if shutil.which("ruff") is None and subprocess.run([sys.executable, "-m", "ruff", "--version"]).returncode:
        pytest.skip("ruff is not installed (it comes with the dev extras)")
    result = subprocess.run([sys.executable, "-m", "ruff", "check", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
