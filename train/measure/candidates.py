"""The agents a measuring job names (``random``, ``ppo``, ``ppo:<model.zip>``, ``pimc:<worlds>``, ...): made from
their names, checked before any work, and the model files behind them, by SHA-256, that results are keyed by."""

from __future__ import annotations

import agents
from agents.spec import is_spec
from snipsnap_env.kernel import POLICIES

from ..runner.cli import MAX_WORLDS, rollout_count


def make_candidate(spec: str, seed: int, opponents: tuple[str, ...] = (), trust_model: bool = False):
    """``name``, ``ppo:path/to/model.zip``, ``pimc:<samples>`` or an agent spec (``package.module:attr``,
    ``path/to/file.py:attr``: :mod:`agents.spec`); pimc models the opponents as they play
    when they are one policy the kernel plays, else as random. ``trust_model`` lets ``ppo:`` load a
    Stable-Baselines3 zip (which runs the file's pickled code)."""
    name, colon, option = spec.partition(":")
    if name == "ppo":
        if colon and not option:
            raise ValueError(
                f"candidate {spec!r} names no model file: write ppo:<model.zip> ('ppo' alone is the shipped model)"
            )
        return agents.make("ppo", path=option or None, seed=seed, trust=trust_model)
    if name == "pimc":  # pimc:<samples>, or pimc:<samples>@<seed>: its draws seeded by the information state
        samples, at, state_seed = option.partition("@")
        if colon and not (samples.isascii() and samples.isdigit() and 1 <= int(samples) <= MAX_WORLDS):
            raise ValueError(
                f"candidate {spec!r}: the samples of pimc:<samples> must be a whole number from 1 to {MAX_WORLDS:,}, "
                "e.g. pimc:128"
            )
        if at and not (state_seed.isascii() and state_seed.isdigit() and int(state_seed) < 2**32):
            raise ValueError(
                f"candidate {spec!r}: the seed of pimc:<samples>@<seed> (its draws seeded by the information "
                "state) must be a whole number from 0 to 2**32 - 1, e.g. pimc:128@0"
            )
        model = opponents[0] if len(set(opponents)) == 1 and opponents[0] in POLICIES else "random"
        return agents.make("pimc", samples=int(samples or 128), opponent_model=model, seed=seed,
                           state_seed=int(state_seed) if at else None)  # fmt: skip
    if is_spec(spec):  # an agent of the user's own: package.module:attr or path/to/file.py:attr
        return agents.make(spec, seed=seed)
    if colon:
        raise ValueError(
            f"candidate {spec!r}: only ppo:<model.zip> and pimc:<samples> take an option; an agent of your own is "
            "package.module:attr or path/to/file.py:attr"
        )
    return agents.make(name, seed=seed)


def model_files(policies: dict) -> dict[str, str]:
    """The SHA-256 of the model file behind each learned agent among ``policies`` (spec → made policy: ``ppo``,
    ``ppo_scratch``, ``ppo:<file>``): what results are keyed by, so that a file replaced under the same name
    makes new settings, never a reason to reuse the old model's results."""
    from ..runner.manifest import sha256

    paths = {spec: getattr(policy, "path", None) for spec, policy in policies.items()}
    return {spec: sha256(path) for spec, path in paths.items() if path is not None}


def made(specs, trust_model: bool = False, tables=()) -> dict:
    """Each of ``specs`` made once (seed 0), so that a bad name or model file is refused before any work — and a
    model that cannot play one of ``tables`` ((rules, players) pairs: a rule option added after it was trained)."""
    policies = {spec: make_candidate(spec, 0, trust_model=trust_model) for spec in dict.fromkeys(specs)}
    check_tables(policies.values(), tables)
    return policies


def check_tables(policies, tables) -> None:
    """A ValueError naming the model and the option when one of ``policies`` cannot play one of ``tables``."""
    for policy in policies:
        if hasattr(policy, "check_table"):
            for rules, players in tables:
                policy.check_table(rules, players)


def add_variance_flag(job) -> None:
    """``--variance-reduction [ROLLOUTS]``: control variates (train.measure.variance), shared by every job that
    evaluates."""
    from .variance import DEFAULT_SAMPLES

    job.add_argument(
        "--variance-reduction",
        nargs="?",
        type=rollout_count,
        const=DEFAULT_SAMPLES,
        default=0,
        metavar="ROLLOUTS",
        help=f"control variates from kernel rollouts of the true deal at every lead whose odds are known (AIVAT): "
        f"an unbiased estimate with a narrower CI, ROLLOUTS per legal lead (default {DEFAULT_SAMPLES}); "
        "the plain difference stays beside it",
    )
