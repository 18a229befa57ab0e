"""The documents users read stay true to the code and to the team's specification."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from snipsnap_env.observation import OBS_DIM, SLICES
from snipsnap_env.rules import PRESETS

ROOT = Path(__file__).resolve().parent.parent


#: SHA-256 of the specification the engine implements (docs/RULES.md): a change to the rules is a change here too,
#: made with the engine's, so every clone checks its copy (and, on the team's machines, against shared/RULES.md).
RULES_SHA256 = "c651863ec34e2f6bedd5f7db62c2c28b55278055b44e90c30ec769aba5f5dd52"


def test_rules_copy_is_the_specification_the_engine_implements():
    copy = (ROOT / "docs" / "RULES.md").read_bytes()
    assert hashlib.sha256(copy).hexdigest() == RULES_SHA256, "docs/RULES.md changed: update RULES_SHA256"
    shared = ROOT.parent / "shared" / "RULES.md"
    if shared.exists():  # the team's own checkout: the copy follows the specification
        assert copy == shared.read_bytes(), "docs/RULES.md is out of date with shared/RULES.md"


def test_the_docs_observation_table_matches_the_encoder():
    page = (ROOT / "docs" / "environment.md").read_text()
    for name, part in SLICES.items():
        assert f"| {part.start} | {name} | {part.stop - part.start} |" in page, name
    assert f"fixed size {OBS_DIM}" in page


def test_the_docs_list_every_preset():
    page = (ROOT / "docs" / "environment.md").read_text()
    for name in PRESETS:
        assert f"| `{name}` |" in page, name


def test_the_readme_is_a_short_front_door_whose_links_all_work():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 220
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert local and all((ROOT / link).exists() for link in local), [
        link for link in local if not (ROOT / link).exists()
    ]


def test_the_docs_site_builds_strictly(tmp_path):
    """A broken link, a page missing from the nav or a missing file fails the build (mkdocs.yml: strict)."""
    if subprocess.run([sys.executable, "-m", "mkdocs", "--version"], capture_output=True).returncode:
        pytest.skip('mkdocs is not installed (it comes with the docs extra: pip install -e ".[docs]")')
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    done = subprocess.run(
        build, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    )
    assert done.returncode == 0, done.stderr


def test_every_committed_results_folder_says_where_it_came_from():
    folders = [path for path in (ROOT / "docs" / "results").iterdir() if path.is_dir()]
    assert len(folders) >= 5
    for folder in folders:
        provenance = json.loads((folder / "provenance.json").read_text())
        assert provenance["command"].startswith(("python -m train.", "python examples/")), folder
        assert re.fullmatch(r"[0-9a-f]{40}", provenance["commit"]) and provenance["date"][:4] == "2026", folder


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


def test_the_default_trainings_time_and_length_read_the_same_everywhere():
    """train_ppo --help, the Training page and the README state one time for the default training, and the README
    the steps it really runs (PPO finishes the rollout that reaches the total)."""
    from train import train_ppo
    from train.learn.args import Args

    first_example = next(line for line in train_ppo.__doc__.splitlines() if "python -m train.train_ppo " in line)
    training = next(line for line in (ROOT / "docs" / "training.md").read_text().splitlines()
                    if line.startswith("python -m train.train_ppo ") and "#" in line)  # fmt: skip
    readme = (ROOT / "README.md").read_text()
    main_paragraph = readme[readme.index("It trains a PPO agent") :].split("\n\n")[0]
    texts = (" ".join(text.split()) for text in (first_example, training, main_paragraph))
    times = [re.search(r"about ([\w ]+?) minutes?", text).group(1) for text in texts]
    assert len(set(times)) == 1, times
    args = Args()
    rollout = args.num_envs * len(args.ppo_players) * args.n_steps
    runs = -(-args.total_timesteps // rollout) * rollout
    assert f"{runs:,} lead choices" in " ".join(main_paragraph.split()), runs


def test_every_observation_size_written_in_the_docs_is_the_encoders():
    """Sizes are written out in prose and shapes across the docs: each one must be today's (a rule option grows
    the observation, and a stale number is the first thing a newcomer copies)."""
    from snipsnap_env.state import HANDS_DIM, STATE_DIM

    written = []
    for page in [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]:
        text = page.read_text()
        written += [(page.name, int(n), OBS_DIM) for n in re.findall(r'"observation": \((\d+),\)', text)]
        written += [(page.name, int(n), OBS_DIM) for n in re.findall(r"observation tensor is the env's (\d+)", text)]
        written += [(page.name, int(n), STATE_DIM) for n in re.findall(r"(\d+)-column critic state", text)]
    source = (ROOT / "snipsnap_env" / "state.py").read_text()
    said = re.findall(r"STATE_DIM = HANDS_DIM \+ OBS_DIM  # (\d+)", source)
    written += [("state.py", int(n), STATE_DIM) for n in said]
    written += [("state.py", int(n), HANDS_DIM) for n in re.findall(r"gives \((\d+),\) or \(B, \d+\)", source)]
    assert len(written) >= 4, written
    wrong = [(page, said, size) for page, said, size in written if said != size]
    assert not wrong, f"sizes written that are not the encoder's (page, written, actual): {wrong}"


@pytest.mark.parametrize("checklist", ["**The checklist today**", "**The checklist for a scripted agent**"])
def test_the_recipes_for_a_rules_option_and_an_agent_name_files_and_names_that_exist(checklist):
    """docs/design.md's checklists (a new rules option, a new scripted agent): every file each names exists and
    holds the name it says."""
    page = (ROOT / "docs" / "design.md").read_text()
    start = page.index(checklist)
    checked, path = [], None
    for token in re.findall(r"`([^`]+)`", page[start : page.index("What follows by itself", start)]):
        if re.fullmatch(r"(snipsnap_env|agents|docs|tests)/[\w/]+\.\w+", token):  # the name's file: the last named
            path = token
            assert (ROOT / path).exists(), f"docs/design.md's checklist names {path}, which does not exist"
        elif path and re.fullmatch(r"[A-Za-z_]\w*", token) and (token.isupper() or "_" in token):
            assert token in (ROOT / path).read_text(), f"docs/design.md's checklist says {path} holds {token}"
            checked.append(token)
    assert len(checked) >= 6, checked


def test_the_agents_page_describes_every_agent_the_registry_makes():
    import agents

    page = (ROOT / "docs" / "agents.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \|", page, flags=re.MULTILINE)
    assert sorted(rows) == sorted(agents.names())


def test_the_readmes_quick_start_runs_as_written_and_shows_the_deals_chips():
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## Quick start")
    code = readme[readme.index("```python\n", start) + len("```python\n") : readme.index("```\n", start + 20)]
    runs = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
            for _ in range(2)]  # fmt: skip
    assert all(done.returncode == 0 for done in runs), runs[0].stderr[-2000:]
    chips = ast.literal_eval(runs[0].stdout.strip().splitlines()[-1])
    assert len(chips) == 6 and sum(chips.values()) == 0 and any(chips.values()), chips
    assert runs[1].stdout == runs[0].stdout  # "same seed → same deal", as its comment says
    shown = code[code.index("print(chips)") :].split("#", 1)[1].strip().rstrip(".}").rstrip(", ")
    assert all(pair.strip() in runs[0].stdout for pair in shown.strip("{").split(", ") if pair != "..."), shown


def test_the_readmes_main_job_number_is_the_range_the_committed_seeds_span():
    """The README states the main job's trained-agent row as the range of the recipe's seeds on its benchmark
    (docs/results/seeds_main_range), and no one machine's run as if another machine would print it."""
    document = json.loads((ROOT / "docs" / "results" / "seeds_main_range" / "results.json").read_text())
    entry = document["by_size"]["6"]["recipes"]["default"]
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"+{entry['min']:.2f} to +{entry['max']:.2f} over most_copies" in readme, (entry["min"], entry["max"])
    assert f"{len(entry['seeds'])} training seeds" in readme
    assert f"+{entry['seeds'][0]:.2f}" not in readme.split("## Quick start")[0]  # seed 0's digits: one CPU's sample
    # one more seed's 95% prediction interval (normal approximation), in the README and the results alike
    stats = pytest.importorskip("scipy.stats")  # rliable's dependency, with the training extras
    seeds = np.asarray(entry["seeds"])
    half = stats.t.ppf(0.975, len(seeds) - 1) * seeds.std(ddof=1) * np.sqrt(1 + 1 / len(seeds))
    interval = f"{seeds.mean() - half:+.2f} to {seeds.mean() + half:+.2f}"
    assert f"one more seed: {interval}, a 95% prediction interval" in readme, interval
    results = " ".join((ROOT / "docs" / "results.md").read_text().split())
    assert f"is **{interval}**" in results, interval


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` names a module of ours, or a name inside one."""
    import importlib
    import importlib.util

    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found = importlib.util.find_spec(".".join(parts[:end]))
        except (ImportError, ValueError):
            found = None
        if found:
            thing = importlib.import_module(".".join(parts[:end]))
            for attribute in parts[end:]:
                if not hasattr(thing, attribute):
                    return False
                thing = getattr(thing, attribute)
            return True
    return False


def test_every_path_and_module_the_docs_name_exists():
    """A file (``train/measure/ratings.py``) or module (``train.measure.variance.control``) named in the README or
    docs/ exists: files move, and the pages that name them must move with them."""
    missing = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()
        for token in re.findall(r"`((?:train|snipsnap_env|agents|tests|docs|examples|\.ci)/[\w./-]*\w)", text):
            if not (ROOT / token).exists():
                missing.append(f"{page.name}: {token}")
        for token in re.findall(r"`(?:python -m )?((?:train|snipsnap_env|agents)\.[\w.]*\w)", text):
            if not _resolves(token):
                missing.append(f"{page.name}: {token}")
    assert not missing, missing


def test_the_single_seat_envs_arguments_table_is_its_signature():
    """docs/environment.md's single-seat section lists every argument of ``SingleSeatEnv`` with its default."""
    import inspect

    from snipsnap_env.single_agent import SingleSeatEnv

    page = (ROOT / "docs" / "environment.md").read_text()
    section = page[page.index("## One seat: the gymnasium env") : page.index("## The batched engine")]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, flags=re.MULTILINE))
    parameters = inspect.signature(SingleSeatEnv).parameters
    assert set(rows) == set(parameters), set(rows) ^ set(parameters)
    for name, parameter in parameters.items():
        shown = rows[name].strip().strip("`")
        default = parameter.default
        assert shown == (f'"{default}"' if isinstance(default, str) else str(default)), (name, shown, default)
    assert "env.unwrapped.action_masks()" in section


@pytest.mark.slow
def test_the_single_seat_maskable_ppo_example_runs_as_written():
    pytest.importorskip("sb3_contrib")
    page = (ROOT / "docs" / "environment.md").read_text()
    block = page[page.index("<!-- single-seat-example -->") : page.index("<!-- /single-seat-example -->")]
    code = block[block.index("```python\n") + len("```python\n") : block.rindex("```")]
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rank, legal = re.search(r"led rank (\d+); legal were (\[[\d, ]+\])", done.stdout).groups()
    assert int(rank) in ast.literal_eval(legal)


def test_the_licence_citation_and_changelog_agree_with_pyproject():
    """LICENSE is the MIT text pyproject.toml names; CITATION.cff cites pyproject's version, as does the package and
    the changelog's newest entry; the env card's version history points to the changelog."""
    import tomllib

    import snipsnap_env

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "MIT"}
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "Permission is hereby granted, free of charge" in licence
    citation = (ROOT / "CITATION.cff").read_text()
    fields = dict(re.findall(r'^(\S[\w-]*): "?([^"\n]*)"?$', citation, flags=re.MULTILINE))
    assert fields["cff-version"].startswith("1.2") and fields["title"].startswith("snipsnap")
    assert fields["license"] == "MIT" and "authors:" in citation and "preferred-citation:" in citation
    versions = re.findall(r'^\s+version: "([^"]+)"$', citation, flags=re.MULTILINE)
    assert fields["version"] == project["version"] and versions == [project["version"]]
    assert snipsnap_env.__version__ == project["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = [v for v in re.findall(r"^## (\S+)", changelog, flags=re.MULTILINE) if v != "Unreleased"]
    assert released[0] == project["version"]  # what is merged since the release is under "Unreleased", above it
    assert "CHANGELOG.md" in (ROOT / "docs" / "environment.md").read_text().split("## Version history")[1]
