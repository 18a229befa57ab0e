"""Without the training extras, skip the modules that need them instead of failing collection; and Ctrl-C raises
KeyboardInterrupt in the tests even when the suite was started in the background."""

import importlib.util
import signal

collect_ignore = []
if importlib.util.find_spec("stable_baselines3") is None or importlib.util.find_spec("torch") is None:
    collect_ignore += ["snipsnap_env/vec_env.py", "agents/rank_policy.py"]

# A shell without job control starts background commands (`pytest &`, nohup) with SIGINT ignored, and Python then
# installs no KeyboardInterrupt handler: the tests of the jobs' Ctrl-C path would see the signal vanish.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_report_header(config):
    """One line on how the conformance test watches jobs: in the sandbox the machine enforces, or (where it cannot
    make one) by snapshots and audit hooks only — never silently the weaker way."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
    import sandbox

    why = sandbox.available()
    return "job sandbox: mount and PID namespaces, copy-on-write overlays" if not why else (
        f"job sandbox: UNAVAILABLE ({why}); jobs are watched by snapshots and audit hooks only")
