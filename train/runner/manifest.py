"""A job folder's manifest: the files the job wrote there, each with its SHA-256.

It is what makes a folder safe to share with a person: ``--overwrite`` removes exactly the files listed and
refuses a folder that holds anything else (naming it), a job never writes over a file it did not write, and
a file the job will unpickle later (an SB3 checkpoint, a resume point) is read only if its bytes are the
ones the job wrote. Files a library appends to while the job runs (CSV and TensorBoard logs) are listed
without a hash: they are owned, never executed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

MANIFEST_FILE = "manifest.json"
LOCK_FILE = ".lock"
BOOKKEEPING = (MANIFEST_FILE, LOCK_FILE)  # the folder's own, never foreign (and never a link)
_INFRASTRUCTURE = set(BOOKKEEPING)
PENDING = "pending"  # listed before its write finished: owned, never trusted
_PARTIAL = re.compile(r"^(.+?)\.partial(\.[^./]+)?$")  # write_atomically's temporary name of a file


class Refused(Exception):
    """A job declines to start, before any work, for a reason a person can act on (the message says how).
    Command-line entry points print it as one line and exit with status 2."""


class UntrustedFile(Refused, ValueError):
    """A file the manifest does not vouch for: not written by this job, or changed since (or a damaged
    manifest)."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Manifest:
    """``Manifest(folder)``: the listed files of ``folder`` (read from its manifest.json, if any)."""

    def __init__(self, folder: Path, job: str | None = None):
        self.folder = Path(folder)
        self.path = self.folder / MANIFEST_FILE
        self.exists = self.path.is_file()
        self.job = job  # the job writing now; the folder's owner is :meth:`owner`
        self.recorded_job: str | None = None
        self.files: dict[str, str | None] = self._read() if self.exists else {}

    def owner(self) -> str | None:
        """The job whose files the folder holds: as its manifest records it, or (a manifest written before
        manifests named their job) as its provenance.json's command or a training run's args.json say."""
        if self.recorded_job:
            return self.recorded_job
        provenance = self.folder / "provenance.json"
        if provenance.is_file() and not provenance.is_symlink():
            try:
                found = re.search(r"\btrain\.(\w+)", json.loads(provenance.read_text()).get("command", ""))
                if found:
                    return found.group(1)
            except (ValueError, AttributeError):
                return None
        if "args.json" in self.files and "run_name" in (self.folder / "args.json").read_text(errors="replace"):
            return "train_ppo"
        return None

    def _read(self) -> dict[str, str | None]:
        try:
            document = json.loads(self.path.read_text())
            files = document["files"]
            self.recorded_job = document.get("job") if isinstance(document.get("job"), str) else None
            if not isinstance(files, dict) or not all(isinstance(k, str) for k in files):
                raise TypeError("'files' is not a map of names")
        except (ValueError, KeyError, TypeError) as error:
            raise UntrustedFile(f"{self.path} is damaged ({error}); move the folder away or choose another") from None
        for name in files:
            self._inside(name)  # a forged entry like ../../x must never be removed or trusted
        return files

    def _inside(self, name: str) -> Path:
        path = (self.folder / name).resolve()
        if not path.is_relative_to(self.folder.resolve()) or path == self.folder.resolve():
            raise UntrustedFile(f"{self.path} lists {name!r}, which is not a file inside {self.folder}")
        return path

    def name(self, path: Path) -> str:
        return Path(os.path.relpath(Path(path).resolve(), self.folder.resolve())).as_posix()

    def record(self, path: Path, hashed: bool = True) -> Path:
        """List ``path`` (a file in the folder) as the job's own, with its hash unless ``hashed`` is False."""
        self.files[self.name(path)] = sha256(path) if hashed else None
        self.save()
        return Path(path)

    def record_pending(self, path: Path) -> None:
        """List ``path`` before it is written (no hash yet), so that a write cut short leaves only owned files."""
        if self.name(path) not in self.files:
            self.files[self.name(path)] = PENDING
            self.save()

    def owns(self, path: Path) -> bool:
        return self.name(path) in self.files

    def save(self) -> None:
        partial = self.path.with_name(self.path.name + ".partial")
        if os.path.lexists(partial):  # never write through a planted link
            os.unlink(partial)
        job = self.job or self.recorded_job
        document = ({"job": job} if job else {}) | {"files": dict(sorted(self.files.items()))}
        partial.write_text(json.dumps(document, indent=1) + "\n")
        os.replace(partial, self.path)
        self.exists = True

    def verify(self, path: Path) -> Path:
        """``path``, if the manifest lists it with a hash and its bytes are the ones recorded."""
        name = self.name(path)
        if name not in self.files:
            raise UntrustedFile(f"{name} was not written by this job (it is not in {MANIFEST_FILE})")
        expected = self.files[name]
        if expected in (None, PENDING):
            raise UntrustedFile(f"{name} has no recorded SHA-256 (a log, or a write that did not finish)")
        if sha256(path) != expected:
            raise UntrustedFile(f"{name} has changed since this job wrote it (its SHA-256 differs)")
        return Path(path)

    def _listed_or_partial(self, name: str) -> bool:
        """Listed, the folder's bookkeeping, or a temporary file of either (a write cut short: a full disk can
        stop the very first write of the manifest, leaving ``manifest.json.partial`` and no manifest)."""
        partial = _PARTIAL.match(name)
        owned = set(self.files) | _INFRASTRUCTURE
        return name in owned or bool(partial and partial.group(1) in owned)

    def foreign(self) -> list[str]:
        """The files (and symbolic links) in the folder that the manifest does not list, sorted."""
        found = []
        for root, dirs, files in os.walk(self.folder):
            for item in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
                name = Path(os.path.relpath(os.path.join(root, item), self.folder)).as_posix()
                if not self._listed_or_partial(name):
                    found.append(name)
        return sorted(found)

    def remove_listed(self) -> None:
        """Delete every listed file, its temporary twins and the folders that leaves empty; the manifest then
        lists nothing. Call it only when :meth:`foreign` is empty."""
        parents = set()
        for root, _, files in os.walk(self.folder):
            for item in files:
                name = Path(os.path.relpath(os.path.join(root, item), self.folder)).as_posix()
                if name not in _INFRASTRUCTURE and self._listed_or_partial(name):
                    (self.folder / name).unlink()
                    parents.update(Path(name).parents)
        for parent in sorted(parents - {Path(".")}, key=lambda p: -len(p.parts)):  # deepest first
            if not any((self.folder / parent).iterdir()):
                (self.folder / parent).rmdir()
        self.files = {}
        self.save()
