"""The conformance test (tests/test_jobs.py) catches a job that breaks the runner's promises by what it does: jobs
that write outside their folder, ignore signals inside their work, or leave an agent flag unchecked are planted in
a copy of the project (its train/ and tests/ of its own, everything else linked), the conformance test is run
there, and it must fail each of them for that reason — and pass a planted job that keeps every promise."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HEAD = '''
    """A planted job: {what}."""

    import signal as sig
    import time
    from pathlib import Path

    from .runner.cli import add_flag, add_job_flags, new_parser
    from .runner.job import Job, Plan


    def parser():
        job = new_parser(__doc__, __name__)
        add_flag(job, "seed")
        add_flag(job, "deals", default=10)
        job.add_argument("--a", default="random", help="an agent")
        job.add_argument("--data", default="", help="a file it reads")
        add_job_flags(job, "result.txt", trust=False)
        return job


    def check(args):
        def work(folder):
            for _ in range(20):  # a second of work, in steps a signal can end
                time.sleep(0.05)
            read = Path(args.data).read_text() if args.data and Path(args.data).is_file() else ""
'''
TAIL = """
            return folder.write(folder.path / "result.txt", lambda p: p.write_text(f"{{args.seed}} {{args.a}}{{read}}"))

        return Plan(work, {{"seed": args.seed, "deals": args.deals, "a": args.a}}, args.out, args.overwrite)


    def example(folder):
        data = Path(folder) / "data.txt"
        data.write_text("the input's bytes")
        return ["--deals", "20", "--data", str(data)]


    JOB = Job(parser, check, example=example)
    main = JOB.main
"""
PLANTED = {
    "zz_planted_good": ("keeps every promise", ""),
    "zz_planted_strays": (
        "writes beside its folder and in the working folder",
        """
            Path("stray.txt").write_text("a file no flag names")
            (folder.path.parent / "beside.txt").write_text("next to --out")""",
    ),
    "zz_planted_deaf": (
        "ignores SIGINT and SIGTERM inside its work, and puts the handlers back before it ends",
        """
            handlers = {s: sig.getsignal(s) for s in (sig.SIGINT, sig.SIGTERM)}
            for s in handlers:
                sig.signal(s, sig.SIG_IGN)
            time.sleep(2)
            for s, handler in handlers.items():
                sig.signal(s, handler)""",
    ),
    "zz_planted_child": (
        "writes outside through a child process (the audit hook sees no open)",
        """
            import subprocess

            subprocess.run(["sh", "-c", "echo x > ../stray_child.txt"], check=True)""",
    ),
    "zz_planted_c_code": (
        "writes outside through C code (sqlite3 opens its file itself)",
        """
            import sqlite3

            sqlite3.connect("stray.db").execute("create table t (x)").connection.commit()""",
    ),
    "zz_planted_at_exit": (
        "writes outside in an exit handler, after its work and the watcher's report",
        """
            import atexit

            atexit.register(lambda: Path("stray_at_exit.txt").write_text("written on the way out"))""",
    ),
    "zz_planted_fallback": (
        "plays the agent --a names, or random for a name it does not know (so no name is ever refused)",
        """
            import agents

            agents.make(args.a if args.a in agents.names() else "random", seed=args.seed)""",
    ),
    "zz_planted_empties_input": (
        "empties the input file it was given",
        """
            Path(args.data).write_text("")""",
    ),
    "zz_planted_hides_a_write": (
        "rewrites its input with bytes of the same length and puts its modification time back",
        """
            import os

            times = os.stat(args.data)
            Path(args.data).write_text(read.upper())
            os.utime(args.data, ns=(times.st_atime_ns, times.st_mtime_ns))""",
    ),
    "zz_planted_named_after_out": (
        "writes a file beside its folder named after it (out.json)",
        """
            Path(str(folder.path) + ".json").write_text("{}")""",
    ),
    "zz_planted_pycache": (
        "writes into a __pycache__ of the working folder",
        """
            Path("__pycache__").mkdir(exist_ok=True)
            Path("__pycache__/stray.txt").write_text("not bytecode")""",
    ),
    "zz_planted_at_import": ("writes a file as its module is imported (below)", ""),
    "zz_planted_user_cache": (
        "writes into the user's cache folder",
        """
            (Path.home() / ".cache").mkdir(exist_ok=True)
            (Path.home() / ".cache" / "zz_planted_stray.txt").write_text("a cache entry no flag names")""",
    ),
    "zz_planted_shared_memory": (
        "writes into /dev/shm",
        """
            Path("/dev/shm/zz_planted_stray.txt").write_text("shared memory no flag names")""",
    ),
    "zz_planted_detached": (
        "starts a detached process that writes beside the working folder 90 s after the job has ended",
        """
            import subprocess

            subprocess.Popen(["sh", "-c", "sleep 90; echo late > ../late.txt"], start_new_session=True)""",
    ),
    "zz_planted_far": (
        "writes two folders above the working folder through a child process",
        """
            import subprocess

            subprocess.run(["sh", "-c", "echo x > ../../zz_far_stray.txt"], check=True)""",
    ),
    "zz_planted_var_tmp": (
        "writes into /var/tmp through a child process",
        """
            import subprocess

            subprocess.run(["sh", "-c", "echo x > /var/tmp/zz_planted_var.txt"], check=True)""",
    ),
    "zz_planted_git_config": (
        "runs git config into the repository",
        """
            import subprocess

            import agents

            repository = Path(agents.__file__).resolve().parent.parent
            subprocess.run(["git", "-C", str(repository), "config", "zz.planted", "1"], check=True)""",
    ),
    "zz_planted_brief_child": (
        "creates a file in the working folder and removes it again, through a child process",
        """
            import subprocess

            subprocess.run(["sh", "-c", "echo x > brief.txt; rm brief.txt"], check=True)""",
    ),
    "zz_planted_brief_libc": (
        "creates a file in the working folder and removes it again, through libc (no audit event)",
        """
            import ctypes
            import os

            libc = ctypes.CDLL(None, use_errno=True)
            os.close(libc.creat(b"brief_libc.txt", 0o644))
            libc.unlink(b"brief_libc.txt")""",
    ),
    "zz_planted_child_folder": (
        "makes a folder beside the working folder through a child process",
        """
            import subprocess

            subprocess.run(["mkdir", "../zz_stray_folder"], check=True)""",
    ),
    "zz_planted_child_link": (
        "makes a symbolic link beside the working folder through a child process",
        """
            import subprocess

            subprocess.run(["ln", "-s", "/etc/hostname", "../zz_stray_link"], check=True)""",
    ),
    "zz_planted_chmod_input": (
        "changes the mode of its input's folder through a child process",
        """
            import subprocess

            subprocess.run(["chmod", "700", str(Path(args.data).parent)], check=True)""",
    ),
    "zz_planted_xattr": (
        "sets an extended attribute on its input's folder",
        """
            import os

            os.setxattr(Path(args.data).parent, "user.zz_planted", b"1")""",
    ),
    "zz_planted_folder_times": (
        "sets the times of its input's folder",
        """
            import os

            os.utime(Path(args.data).parent, (0, 0))""",
    ),
    "zz_planted_partial_beside_out": (
        "leaves <out>.partial.json beside its folder",
        """
            Path(str(folder.path) + ".partial.json").write_text("{}")""",
    ),
    "zz_planted_pyc_name": (
        "writes a file named as bytecode into a __pycache__ of the working folder",
        """
            Path("__pycache__").mkdir(exist_ok=True)
            Path("__pycache__/zz_stray.cpython-311.pyc").write_bytes(b"not bytecode")""",
    ),
    "zz_planted_on_overwrite": (
        "writes beside its folder only when run with --overwrite",
        """
            if args.overwrite:
                (folder.path.parent / "zz_overwrite_stray.txt").write_text("only under --overwrite")""",
    ),
    "zz_planted_unchecked": (
        "plays the agent --a names without checking the name first",
        """
            import agents

            agents.make(args.a, seed=args.seed)""",
    ),
}
#: what a planted job does as it is imported (pytest's collection imports every job too, in the project's copy)
AT_IMPORT = {"zz_planted_at_import": '\nPath("stray_at_import.txt").write_text("written as the module loads")\n'}
#: places outside every test's folder that planted jobs write, removed after the test
MACHINE_STRAYS = (Path.home() / ".cache" / "zz_planted_stray.txt", Path("/dev/shm") / "zz_planted_stray.txt",
                  Path("/var/tmp/zz_planted_var.txt"))  # fmt: skip (reached only where no sandbox holds them)
#: test of tests/test_jobs.py → the planted job it must fail, and words its failure says
EXPECTED = {
    "test_a_job_writes_only_where_told_leaves_the_signals_alone_and_stops_inside_its_work": {
        "zz_planted_strays": "stray.txt",
        "zz_planted_deaf": "set signal handlers itself",
        "zz_planted_child": "created ",
        "zz_planted_c_code": "stray.db",
        "zz_planted_at_exit": "stray_at_exit.txt",
        "zz_planted_fallback": "made agents named by flags not declared in JOB.agents",
        "zz_planted_empties_input": "data.txt",
        "zz_planted_hides_a_write": "data.txt",
        "zz_planted_at_import": "stray_at_import.txt",
        "zz_planted_user_cache": "zz_planted_stray.txt",
        "zz_planted_shared_memory": "/dev/shm/zz_planted_stray.txt",
        "zz_planted_named_after_out": "out.json",
        "zz_planted_pycache": "__pycache__/stray.txt",
        "zz_planted_detached": "left processes running",
        "zz_planted_far": "zz_far_stray.txt",
        "zz_planted_var_tmp": "/var/tmp/zz_planted_var.txt",
        "zz_planted_git_config": ".git/config",
        "zz_planted_brief_child": "created and removed an entry in",
        "zz_planted_brief_libc": "created and removed an entry in",
        "zz_planted_child_folder": "zz_stray_folder",
        "zz_planted_child_link": "zz_stray_link",
        "zz_planted_chmod_input": "mode, owner or attributes",
        "zz_planted_xattr": "mode, owner or attributes",
        "zz_planted_folder_times": "set the times of the folder",
        "zz_planted_partial_beside_out": "out.partial.json",
        "zz_planted_pyc_name": "zz_stray.cpython-311.pyc",
        "zz_planted_on_overwrite": "zz_overwrite_stray.txt",
    },
    "test_every_flag_given_a_bad_value_is_refused_in_one_line_or_runs_without_a_traceback": {
        "zz_planted_unchecked": "--a no_such_agent",
    },
}


def project_copy(where: Path) -> Path:
    """The project with a train/ and tests/ of its own (its files linked, or copied where they find the project
    by their own path), the planted jobs in its train/."""
    copy = where / "project"
    copy.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in ("train", "tests", ".git", "runs", "results", ".pytest_cache"):
            (copy / entry.name).symlink_to(entry)
    (copy / "train").mkdir()
    for entry in (ROOT / "train").iterdir():
        if entry.name != "__pycache__":
            (copy / "train" / entry.name).symlink_to(entry)
    shutil.copytree(ROOT / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__", "golden"))
    for name, (what, body) in PLANTED.items():
        source = textwrap.dedent(HEAD.format(what=what) + body + TAIL.format())
        (copy / "train" / f"{name}.py").write_text(source + AT_IMPORT.get(name, ""))
    return copy


def outcomes(report: Path) -> dict[str, str | None]:
    """Each test's id → None (passed or skipped) or its failure's message and text."""
    found = {}
    for case in ElementTree.parse(report).iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        found[case.get("name")] = None if failure is None else f"{failure.get('message')}\n{failure.text}"
    return found


@pytest.mark.slow
def test_the_conformance_test_fails_planted_jobs_that_break_a_promise_and_passes_one_that_keeps_them(tmp_path):
    copy = project_copy(tmp_path)
    report = tmp_path / "report.xml"
    command = [sys.executable, "-m", "pytest", "tests/test_jobs.py", "tests/test_job_flags.py", "-m",
               "slow or not slow", "-k", "zz_planted", "-p", "no:cacheprovider", f"--junitxml={report}",
               "-q"]  # fmt: skip
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    try:
        done = subprocess.run(command, cwd=copy, env=environment, capture_output=True, text=True, timeout=1200)
    finally:
        for stray in MACHINE_STRAYS:
            stray.unlink(missing_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "config", "--unset", "zz.planted"], capture_output=True)
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    results = outcomes(report)
    assert done.returncode == 1, done.stdout[-3000:]  # some tests failed, none crashed the run
    good = {test: failure for test, failure in results.items() if "[zz_planted_good]" in test}
    failed = "\n\n".join(f"{t}:\n{f[-4000:]}" for t, f in good.items() if f)
    assert len(good) >= 8 and not failed, failed
    for test, planted in EXPECTED.items():
        for name, words in planted.items():
            failure = results.get(f"{test}[{name}]")
            assert failure is not None, f"{test} passed train.{name}, a job that {PLANTED[name][0]}"
            assert words in failure, (test, name, failure[-2000:])
