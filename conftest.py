"""Without the training extras, skip the modules that need them instead of failing collection."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("stable_baselines3") is None or importlib.util.find_spec("torch") is None:
    collect_ignore += ["snipsnap_env/vec_env.py", "agents/rank_policy.py"]
