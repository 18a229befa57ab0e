"""Where a measuring job writes: a folder it owns (train.runner.run_folder's rules), with its provenance.

Without ``--out`` a job writes to ``results/<job>/<settings hash>/``: a fresh folder per settings, never the
committed tables (which live in ``docs/results/``). The same settings again rewrite their own
folder; other settings in a folder are refused unless ``--overwrite``, and a folder holding files that no
job of ours wrote is refused either way, naming them. Every folder gets ``provenance.json``: the command,
the commit and the date that made it, and once the job has finished its wall time (``seconds``). Wall time is
kept there only, so that a seeded job's tables are the same bytes every time it runs.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import hashlib
import json
import shlex
import subprocess
import time
from pathlib import Path

from snipsnap_env.install import install_hint

from .run_folder import FolderTaken, Refused, RunFolder

PROVENANCE_FILE = "provenance.json"
ROOT = Path(__file__).resolve().parents[2]  # the repository (train/runner/ is two folders down)


class CannotWrite(Refused, ValueError):
    """The output folder cannot be created or written."""


def default_out(job: str, settings: dict) -> Path:
    """``results/<job>/<first 10 hex digits of the settings' SHA-256>``."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return Path("results") / job / digest


def commit(root: Path = ROOT) -> str:
    """The repository's commit, ``-dirty`` when :func:`changed_files` names any; "unknown" outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode:
            return "unknown"
        return head.stdout.strip() + ("-dirty" if changed_files(root) else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def changed_files(root: Path = ROOT) -> list[str]:
    """The files of the repository that differ from its commit: modified, staged, deleted and untracked (not
    ignored) ones, but for the committed result tables, which no job reads (a remake copies each table in while
    the next job starts)."""
    try:
        status = subprocess.run(
            # --no-optional-locks: a read, never a write of the repository's index (git status refreshes it, under
            # a lock a job stopped by a file-size limit once left behind, and every later git command refused)
            ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=all", "--", ".",
             ":(exclude)docs/results"],  # fmt: skip
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return sorted(line[3:] for line in status.stdout.splitlines() if line.strip()) if not status.returncode else []


def provenance(job: str, argv: list[str] | None) -> dict:
    """What made a folder: the command (``argv`` of ``python -m train.<job>``; None: called from Python),
    the commit and the date (UTC)."""
    command = f"python -m train.{job} {shlex.join(argv)}".strip() if argv is not None else f"train.{job} from Python"
    record = {
        "command": command,
        "commit": commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    changed = changed_files() if record["commit"].endswith("-dirty") else []
    return record | ({"changed_files": changed} if changed else {})


@contextlib.contextmanager
def results_folder(out, job: str, settings: dict, overwrite: bool = False, argv: list[str] | None = None):
    """``with results_folder(out, job, settings) as folder:`` the job's output folder (``out``, or
    :func:`default_out`), locked and checked before any work, with its provenance written."""
    path = Path(out) if out else default_out(job, settings)
    started = time.perf_counter()
    record = provenance(job, argv)
    if settings.get("models"):  # the files behind its agents (models and agents of the user's own), by SHA-256
        record["models"] = settings["models"]
    folder = RunFolder(
        path, settings, resume=not overwrite, overwrite=overwrite, job=job, name_flag="--out", resume_may_start=True
    )
    try:
        folder.__enter__()
        started_record = record | _earlier(folder, path / PROVENANCE_FILE)
        folder.write(path / PROVENANCE_FILE, lambda p: p.write_text(json.dumps(started_record, indent=1)))
    except OSError as error:
        folder.__exit__(None, None, None)
        if isinstance(error, Refused):
            raise
        raise CannotWrite(f"cannot write results to {path}: {error.strerror or error}") from None
    try:
        yield folder
        record["seconds"] = round(time.perf_counter() - started, 1)
        if folder.timings:  # kept here only, so that the job's tables are the same bytes every run
            record["timings"] = folder.timings
        folder.write(path / PROVENANCE_FILE, lambda p: p.write_text(json.dumps(record, indent=1)))
    finally:
        folder.__exit__(None, None, None)


def _earlier(folder, path: Path) -> dict:
    """What a run's provenance says while it works in a folder that holds an earlier run's files: that it has not
    finished, and what made those files (the earlier provenance), so that an interrupted rerun after a change of
    code never shows old tables under the new run's commit. Nothing when the folder holds no earlier run."""
    if not path.exists() or not folder.manifest.owns(path):
        return {}
    try:
        earlier = json.loads(path.read_text())
    except (OSError, ValueError):  # unreadable: nothing known of what made the tables
        earlier = {}
    if "unfinished" in earlier:  # that run was interrupted too: the tables are still the one before it's
        earlier = earlier.get("earlier", {})
    kept = {key: earlier[key] for key in ("command", "commit", "date", "changed_files") if key in earlier}
    return {
        "unfinished": "this run has not finished: the tables here are the earlier run's (below) until it does",
        "earlier": kept,
    }


def csv_of(rows: list[dict]):
    """A writer for ``folder.write``: ``rows`` (dicts with the same keys) as a CSV file with a header."""

    def write(path: Path) -> None:
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)

    return write


def pyplot():
    """matplotlib's pyplot on the Agg backend, or None (and a note) where matplotlib is not installed: the
    tables are the results, the plots come with the train extra."""
    try:
        import matplotlib
    except ImportError:
        print(f"(no plot: matplotlib comes with the train extra, {install_hint('train')})")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def refuse_foreign(folder, subfolder: str) -> None:
    """Refuse, in one line, a ``subfolder`` of kept results (a league's tables, a matrix's cells) that holds files
    this job did not write: they would be neither trusted nor replaced."""
    foreign = [name for name in folder.manifest.foreign() if name.startswith(subfolder + "/")]
    if foreign:
        listed = ", ".join(foreign[:4]) + (f" and {len(foreign) - 4} more" if len(foreign) > 4 else "")
        raise FolderTaken(
            f"{folder.path} holds files this {folder.job} did not write ({listed}); move them away and run again"
        )


def read_json(path: Path) -> object:
    """The JSON value in the file ``path``; a file that is not JSON, or nests too deep for Python to read
    (a RecursionError otherwise), is a ValueError naming it."""
    try:
        return json.loads(Path(path).read_text())
    except RecursionError:
        raise ValueError(f"{path} nests too deep to be one of this project's files") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not text") from None


def kept(folder, path: Path, check, again: str):
    """The JSON value a job kept in ``path`` (in ``folder``) to resume from, if the folder's manifest lists it
    with the SHA-256 it was written with and ``check(value)`` passes (it raises a ValueError saying what is
    wrong); None when it is absent. Any other is named, with why, and made ``again`` (the words say how)."""
    if not path.exists():
        return None
    try:
        folder.verify(path)
        value = read_json(path)
        check(value)
        return value
    except (ValueError, KeyError) as error:  # UntrustedFile and JSONDecodeError are ValueErrors
        print(f"{path} is damaged ({error}); {again}")
        return None
