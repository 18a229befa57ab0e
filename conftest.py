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
