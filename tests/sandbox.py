"""A watched job in a sandbox the machine enforces: a mount namespace and a PID namespace of its own, in which
every file system of the machine is seen through an overlay whose writes land in a throwaway tmpfs, never on the
disk; /proc, /sys and /dev read-only but for a fresh /dev/shm; and a private temporary folder. So nothing the job
or any process it starts writes outside its places reaches the disk, while it runs or after it ends — and a
process still running when the job has ended is named, then killed with the namespace. After the job, every
entry of the throwaway layers is held to the job's places: a file, folder or link created (even if removed again:
its folder's copy stays in the layer), changed or removed outside them, a folder's mode, owner, extended
attributes or times changed, is named. Other programs' files (in /tmp, in the home folder) are not the job's to
answer for: their writes go to the disk, the job's go to its layer.

    unshare --mount --pid --fork --mount-proc --propagation private python tests/sandbox.py SPEC.json

``available()`` says whether this machine can (root, or a user namespace, with overlayfs), or why not.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPORT_MARK = "sandbox report: "  # the line of stdout that carries the report
LINGER = 5.0  # seconds a process the job started may take to end after the job itself has ended
_WHITEOUT = 0  # overlayfs marks a removed entry with a character device of number 0/0
_LAYER_XATTRS = re.compile(r"^(trusted|user)\.overlay\.")  # overlayfs' own bookkeeping on copied-up entries
_MULTIPROCESSING_SHM = re.compile(r"^(sem\.|pym-|mp-)")  # multiprocessing's semaphores and shared memory


def command(spec_path: Path) -> list[str]:
    """The command that runs the watched job of ``spec_path`` in the sandbox."""
    return ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "--propagation", "private", sys.executable,
            str(Path(__file__).resolve()), str(spec_path)]  # fmt: skip


def available() -> str:
    """"" when a sandbox can be made here, else the reason (one line): it needs ``unshare`` and the right to make
    a mount namespace with a tmpfs and an overlay in it."""
    if not shutil.which("unshare"):
        return "no unshare command"
    probe = Path(tempfile.mkdtemp(prefix="sandbox-probe-"))
    try:
        for name in ("lower", "upper", "work", "merged"):
            (probe / name).mkdir()
        script = (f"mount -t tmpfs tmpfs {probe}/upper && mkdir {probe}/upper/u {probe}/upper/w && mount -t overlay "
                  f"overlay -o lowerdir={probe}/lower,upperdir={probe}/upper/u,workdir={probe}/upper/w {probe}/merged "
                  f"&& mount -o remount,bind,ro /")  # fmt: skip
        done = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script],
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        return "" if done.returncode == 0 else f"cannot mount an overlay in a namespace ({done.stderr.strip()[:200]})"
    except (OSError, subprocess.SubprocessError) as error:
        return f"cannot start a namespace ({error})"
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def _mount(*words: str) -> None:
    done = subprocess.run(["mount", *words], capture_output=True, text=True)
    if done.returncode:
        raise OSError(f"mount {' '.join(words)}: {done.stderr.strip()}")


def _processes() -> list[tuple[int, str]]:
    """The processes of this namespace but this one (pid 1): (pid, command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except (OSError, IndexError):
                continue
            found.append((int(entry.name), line))
    return found


def _reap() -> None:
    """Collect every ended child (this process is the namespace's init: orphans are its children)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _metadata(path: str) -> tuple:
    """What a folder's copy in the layer must keep of the real folder: mode, owner, the user's attributes."""
    st = os.lstat(path)
    try:
        attributes = {n: os.getxattr(path, n, follow_symlinks=False) for n in os.listxattr(path, follow_symlinks=False)
                      if not _LAYER_XATTRS.match(n)}  # fmt: skip
    except OSError:
        attributes = {}
    return stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, attributes


def layer_changes(layer: Path, root: Path, allowed, started: float) -> list[str]:
    """The entries of the throwaway ``layer`` of the overlay of the real folder ``root`` (seen here as it is on the
    disk: the overlay is the sandbox's view) that ``allowed(path, kind)`` does not allow: in words, by real path."""
    found = []
    for folder, folders, files in os.walk(layer):
        for name in folders + files:
            entry = os.path.join(folder, name)
            relative = os.path.relpath(entry, layer)
            real = root / relative
            st = os.lstat(entry)
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == _WHITEOUT:
                if not allowed(real, "removed"):
                    found.append(f"removed {real}")
                continue
            original = root / relative
            existed = os.path.lexists(original)
            kind = "folder" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "file"
            if kind == "folder" and existed:  # a copy of a real folder: an entry below it changed, or the folder
                if _metadata(entry) != _metadata(str(original)):
                    found.append(f"changed the mode, owner or attributes of the folder {real}")
                elif st.st_mtime < started - 1 and started - 1 > os.lstat(original).st_mtime != st.st_mtime:
                    # (a real folder another program changed since the start, a pytest-of-root getting another
                    # pytest-N, has newer times than the copy the job's writes below it made: not the job's doing)
                    found.append(f"set the times of the folder {real}")
                elif not allowed(real, "folder") and not any(os.scandir(entry)):  # nothing below: an entry made
                    found.append(f"created and removed an entry in {real}")  # and removed again, or times changed
                continue
            if not allowed(real, kind):
                found.append(f"{'changed' if existed else 'created'} {kind if kind != 'file' else ''} {real}".replace(
                    "  ", " "))  # fmt: skip
    return found


#: file systems that hold no files of anyone's (the kernel's views, devices): not overlaid, and not watched
PSEUDO = {"proc", "sysfs", "cgroup", "cgroup2", "devtmpfs", "devpts", "mqueue", "debugfs", "tracefs", "securityfs",
          "pstore", "bpf", "fusectl", "configfs", "hugetlbfs", "autofs", "binfmt_misc", "efivarfs", "rpc_pipefs",
          "nsfs"}  # fmt: skip
KERNEL_VIEWS = (Path("/proc"), Path("/sys"), Path("/dev"))


def mount_points() -> list[tuple[Path, str]]:
    """This namespace's mounts: (mount point, file system type), from /proc/self/mountinfo."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point = fields[4].encode().decode("unicode_escape")  # "\040" for a space
        kind = fields[fields.index("-") + 1]
        found.append((Path(point), kind))
    return found


def copy_on_write(layers: Path) -> tuple[Path, list[tuple[Path, Path]]]:
    """Every file system of the machine seen through an overlay whose writes land in a tmpfs at ``layers``, at
    ``layers/m``; the kernel's views (/proc, /sys, /dev read-only, a fresh /dev/shm) beside it. Returns the new
    root and each overlay's (real mount point, layer of its writes)."""
    _mount("-t", "tmpfs", "-o", "size=8g", "tmpfs", str(layers))
    merged = layers / "m"
    merged.mkdir()
    overlays = []
    points = sorted({p for p, kind in mount_points() if kind not in PSEUDO}, key=lambda p: len(p.parts))
    for i, point in enumerate(p for p in points if not p.is_relative_to(layers) and not any(
            p.is_relative_to(view) for view in KERNEL_VIEWS)):  # fmt: skip
        upper, work = layers / f"u{i}", layers / f"w{i}"
        upper.mkdir()
        work.mkdir()
        target = merged / point.relative_to("/")
        if not target.is_dir():
            continue  # a mount on a file (a container's /etc/hosts): the lower's file stays read-only in view
        _mount("-t", "overlay", "overlay", "-o", f"lowerdir={point},upperdir={upper},workdir={work}", str(target))
        overlays.append((point, upper))
    _mount("-t", "proc", "proc", str(merged / "proc"))
    _mount("--rbind", "/dev", str(merged / "dev"))
    _mount("-o", "remount,bind,ro", str(merged / "dev"))  # no new device files (writing /dev/null still works)
    _mount("-t", "tmpfs", "tmpfs", str(merged / "dev" / "shm"))
    _mount("--rbind", "/sys", str(merged / "sys"))
    subprocess.run(["mount", "-o", "remount,bind,ro", str(merged / "sys")], capture_output=True)
    return merged, overlays


def main(spec_path: str) -> None:
    """As the namespace's first process: make the sandbox, run the watched job in it, report."""
    sys.path.insert(0, str(HERE))
    import job_watch

    spec = json.loads(Path(spec_path).read_text())
    merged, overlays = copy_on_write(Path(spec["layers"]))
    private = Path("/tmp") / f"sbx-{secrets.token_hex(4)}"  # the job's own /tmp, short: Ray's sockets live in it
    (merged / private.relative_to("/")).mkdir(parents=True)
    child_spec = {**spec, "report": str(private / "report.json"), "private_tmp": str(private)}
    (merged / private.relative_to("/") / "spec.json").write_text(json.dumps(child_spec))
    started = time.time()

    def enter() -> None:  # in the child, before it runs the job: the sandbox is its whole file system
        os.chroot(merged)
        os.chdir(spec["cwd"])

    environment = {**os.environ, "TMPDIR": str(private)}
    subprocess.run([sys.executable, str(HERE / "job_watch.py"), str(private / "spec.json")], env=environment,
                   preexec_fn=enter, stdout=sys.stdout, stderr=sys.stderr)  # fmt: skip
    deadline = time.monotonic() + LINGER
    while _processes() and time.monotonic() < deadline:
        _reap()
        time.sleep(0.05)
    left = _processes()
    lingering = [f"pid {pid}: {line[:200]}" for pid, line in left]
    for pid, _ in left:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    _reap()
    places = [Path(os.path.realpath(p)) for p in spec["places"]] + [Path(spec["tmp"]), private]
    projects = [Path(p) for p in spec["projects"]]

    def allowed(path: Path, kind: str) -> bool:
        if any(path.is_relative_to(place) for place in places):  # an atomic write's partial twin beside a place
            return kind != "removed" or not any(path == p for p in places)  # is no place: one left at the end fails
        if kind in ("file", "removed") and any(job_watch._compiled_cache(str(path), p) for p in projects):
            return True
        if kind == "folder":  # a folder on the way to an allowed place or cache: its copy holds what was written
            return any(p.is_relative_to(path) for p in places) or path.name == "__pycache__"
        return False

    changes = []
    for point, upper in overlays:
        changes += layer_changes(upper, point, allowed, started)
    changes += [f"created /dev/shm/{e.name}" for e in os.scandir(merged / "dev" / "shm")
                if not _MULTIPROCESSING_SHM.match(e.name)]  # fmt: skip
    report = merged / private.relative_to("/") / "report.json"
    if not report.exists():  # the watchdog fired, or the job died before it could report
        return  # no report line: the watcher says the job did not finish
    inner = json.loads(report.read_text())
    inner["outside"] = [*inner.get("outside", []), *changes]
    inner["lingering"] = lingering
    # the report as the last line of stdout: no file of the real disk is written from inside the sandbox
    sys.stdout.flush()
    print(REPORT_MARK + json.dumps(inner), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
