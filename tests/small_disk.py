"""A job on a real full disk, then again with the space back: run inside a private mount namespace of its own
(``unshare --mount``), it mounts a small tmpfs at FOLDER and, for each number of bytes left free, fills the disk
but for them, runs the job, frees the disk, and runs the same command again. It prints a JSON list: per amount
free, the first run's exit status and last line, the rerun's exit status and stderr's tail, and the files of the
rerun's folder whose bytes differ from those of a run on a disk that never filled (wall time held apart).

    unshare --mount --propagation private python tests/small_disk.py FOLDER JOB_JSON
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import HELD_APART  # this folder is the script's first entry of sys.path

FREE = (0, 1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18)  # bytes left free: every fail point


def fill(disk: Path, leave: int) -> Path:
    """A file that takes all of ``disk`` but ``leave`` bytes."""
    filler = disk / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 16))
                f.flush()
        except OSError:
            pass
    size = filler.stat().st_size  # the disk full: give back ``leave`` bytes from its end (truncating frees pages)
    os.truncate(filler, max(0, size - leave))
    return filler


def files(out: Path, compare: list[str] | None) -> dict[str, bytes]:
    """The folder's files (those named in ``compare``, or all but wall time's) by name."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
            and (p.name in compare if compare else p.name not in HELD_APART)}  # fmt: skip


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=600)


def main(folder: str, spec: str) -> None:
    disk = Path(folder)
    # {"argv": the job's words, {out} where its output folder goes; "results": its results' folder inside that;
    #  "compare": the files held to the bytes of a clean run (null: all but wall time's)}
    job = json.loads(spec)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)], check=True)

    def command(out: str) -> list[str]:
        return [word.replace("{out}", str(disk / out)) for word in job["argv"]]

    clean = run(command("clean"))
    assert clean.returncode == 0, clean.stderr[-2000:]
    reference = files(disk / "clean" / job["results"], job["compare"])
    shutil.rmtree(disk / "clean")  # each run on the whole disk: what one amount leaves never fills the next
    report = []
    for leave in FREE:
        out = f"free_{leave}"
        filler = fill(disk, leave)
        first = run(command(out))
        filler.unlink()
        again = run(command(out))
        for flag in ("--resume", "--overwrite"):  # a refusal that names the command to run: that one, as told
            if again.returncode == 2 and flag in again.stderr:
                again = run([*command(out), flag])
        kept = files(disk / out / job["results"], job["compare"]) if again.returncode == 0 else {}
        differ = sorted(set(reference) ^ set(kept) | {n for n in kept if kept[n] != reference.get(n)})
        shutil.rmtree(disk / out, ignore_errors=True)
        said = (first.stderr.strip().splitlines() or [""])[-1]
        report.append({"free": leave, "first": first.returncode, "said": said, "again": again.returncode,
                       "err": again.stderr[-2000:], "differ": differ})  # fmt: skip
    print(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:])
