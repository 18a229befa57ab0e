"""The command-line vocabulary every job in ``train/`` shares: one flag name per idea, checked the same way.

=================  ===========================================================================
flag               meaning
=================  ===========================================================================
``--players``      players at the table, 3..8 (a list where a job sweeps table sizes)
``--rules``        a rules preset
``--opponents``    the opponents' pool: agent names, one drawn per seat per deal
``--seed``         the seed every random stream of the job derives from (0 or more)
``--deals``        paired deals to evaluate on
``--out``          the folder results are written to (default ``results/<job>/<settings hash>``)
``--overwrite``    replace what a job of ours wrote in that folder (never anything else)
``--runs``         the folder training runs live in (``<runs>/<run-name>``)
=================  ===========================================================================

Dataclass jobs (``train_ppo``) get their flags from the fields via :func:`parse`; the others add them with
:func:`add_table_flags` and :func:`add_flag`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import numbers
import sys
import typing

from snipsnap_env.install import install_hint
from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS, check_rules_spec


def players(text: str) -> int:
    """An argparse type: a table size 3..8."""
    value = whole(text)
    if not MIN_PLAYERS <= value <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"{value} players; allowed: {MIN_PLAYERS} to {MAX_PLAYERS}")
    return value


def rules_spec(text: str) -> str:
    """An argparse type: a rules preset, or a preset with options (``snipsnap_env.rules.make_rules``)."""
    try:
        return check_rules_spec(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class Number:
    """A rule for a numeric setting, used both as an argparse type (text in) and for a dataclass field (value
    in, through :func:`check_fields`), so that a flag and its Python twin are refused alike, before any work.
    NaN and infinities are never allowed."""

    def __init__(self, kind: type, test, allowed: str):
        self.kind, self.test, self.allowed = kind, test, allowed
        self.__name__ = allowed  # argparse names the type in some messages

    def __call__(self, text: str):
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {self._noun()}") from None
        if not self._fits(value):
            raise argparse.ArgumentTypeError(f"{value}; allowed: {self.allowed}")
        return value

    def _noun(self) -> str:
        return "a whole number" if self.kind is int else "a number"

    def _fits(self, value) -> bool:
        return math.isfinite(value) and bool(self.test(value))

    def check(self, name: str, value):
        """``value`` if it fits the rule, else a ValueError that names the setting, the value and the rule."""
        numeric = isinstance(value, numbers.Integral if self.kind is int else numbers.Real)
        if isinstance(value, bool) or not numeric or not self._fits(value):
            raise ValueError(f"{name} got {value!r}; allowed: {self.allowed}")
        return value


def at_least(minimum: int) -> Number:
    """A whole number of at least ``minimum``."""
    return Number(int, lambda v: v >= minimum, f"a whole number of at least {minimum}")


whole = Number(int, lambda v: True, "a whole number")
positive_float = Number(float, lambda v: v > 0, "a number above 0")
non_negative_float = Number(float, lambda v: v >= 0, "a number of at least 0")
learning_rate_value = Number(float, lambda v: 0 < v <= 1, "a number above 0, at most 1 (larger steps diverge to NaN)")
fraction = Number(float, lambda v: 0 <= v <= 1, "a number from 0 to 1")
port = Number(int, lambda v: 0 <= v <= 65535, "a port from 1 to 65535, or 0 for any free port")
MAX_WORLDS = 4096  # a search's sampled worlds per lead: far past where more stop helping, within memory
worlds = Number(int, lambda v: 1 <= v <= MAX_WORLDS, f"a whole number from 1 to {MAX_WORLDS:,}")
MAX_DEALS = 5_000_000  # a deal's cards, seats and streams take ~1.5 kB while drawn: 5 M deals fit in ~8 GB
deal_count = Number(int, lambda v: 2 <= v <= MAX_DEALS, f"a whole number from 2 to {MAX_DEALS:,}")


def between(low: int, high: int) -> Number:
    """A whole number from ``low`` to ``high``."""
    return Number(int, lambda v: low <= v <= high, f"a whole number from {low:,} to {high:,}")


# Every size a job takes has a bound that keeps its memory and time finite (tests/test_jobs.py holds each flag to
# one); only seeds, which cost nothing, are unbounded.
MAX_POSITIONS = 5_000_000  # positions labelled or observed at once: ~1 kB each with their masks, ~5 GB
MAX_STEPS = 1_000_000_000  # PPO steps: about two days at the default recipe's speed
MAX_ROLLOUTS = 1024  # play-outs per lead: the estimate's noise stops mattering long before
MAX_SIMULATIONS = 100_000  # a tree search's simulations per choice
MAX_WORKERS = 1024  # CPUs of a Ray cluster
MAX_GAMES = 65_536  # games a vector env steps at once (and steps per game in a PPO rollout)
MAX_UNITS = 4096  # a hidden layer's width
MAX_LAYERS = 16  # hidden layers of a network
MAX_SECONDS = 3600.0  # a benchmark's time per measurement
position_count = between(1, MAX_POSITIONS)
step_count = between(1, MAX_STEPS)
rollout_count = between(1, MAX_ROLLOUTS)
game_count = between(1, MAX_GAMES)
MAX_SEED = 2**32 - 1  # what numpy's legacy generator, Stable-Baselines3's set_random_seed and OpenSpiel's bots take
seed_value = Number(int, lambda v: 0 <= v <= MAX_SEED, f"a whole number from 0 to {MAX_SEED:,}")
seconds = Number(float, lambda v: 0 < v <= MAX_SECONDS, f"a number of seconds above 0, at most {MAX_SECONDS:,.0f}")


def check_fields(instance) -> None:
    """Check every field of a dataclass instance whose ``arg(..., check=...)`` names a :class:`Number`
    (each element of a tuple field)."""
    for field in dataclasses.fields(instance):
        rule = field.metadata.get("check")
        if rule is None:
            continue
        value = getattr(instance, field.name)
        for item in value if isinstance(value, tuple) else (value,):
            rule.check(field.name, item)


FLAGS = {
    "players": dict(type=players, default=6, help="players at the table, 3..8"),
    "rules": dict(
        type=rules_spec,
        default="scarne",
        help=f"rules preset ({', '.join(sorted(PRESETS))}), or a preset with options, <preset>:<option>=<value>,... "
        "(e.g. scarne:ranks=3, the small research deck)",
    ),
    "opponents": dict(nargs="+", default=["random"], help="the opponents' pool: agent names"),
    "seed": dict(type=seed_value, default=0, help="seed of every random stream of the job"),
    "deals": dict(type=deal_count, default=20_000, help="paired deals to evaluate on"),
    "out": dict(default=None, help="folder for the results (default: results/<job>/<settings hash>)"),
    "overwrite": dict(
        action="store_true",
        help="replace the results of other settings in --out (only files this job wrote there, never another job's)",
    ),
    "runs": dict(default="runs", help="folder of training runs"),
    "progress": dict(action=argparse.BooleanOptionalAction, default=True, help="show a progress bar"),
    "trust-model": dict(
        action="store_true",
        help="also load ppo:<file> models that are Stable-Baselines3 zips: SB3 unpickles them, which runs any "
        "code in the file, so use this only for files from a source you trust",
    ),
}


def command_line(argv) -> list[str]:
    """The flags a job was given: ``argv`` when called from Python, else the process's own (for provenance)."""
    import sys

    return sys.argv[1:] if argv is None else list(argv)


def add_flag(parser: argparse.ArgumentParser, name: str, **overrides) -> None:
    """Add the shared flag ``--<name>`` with this job's default or help where they differ."""
    options = {**FLAGS[name], **overrides}
    parser.add_argument("--" + name, **options)


def add_job_flags(parser: argparse.ArgumentParser, writes: str, trust: bool = True) -> None:
    """The flags of every job that writes a results folder, meaning the same everywhere: ``--out`` (for
    ``writes``, the files it holds), ``--overwrite``, ``--progress/--no-progress`` and (``trust``: a job that
    plays agents by name) ``--trust-model``."""
    job = (parser.prog or "job").rsplit(".", 1)[-1]
    add_flag(parser, "out", help=f"folder for {writes} (default: results/{job}/<settings hash>)")
    add_flag(parser, "overwrite")
    add_flag(parser, "progress")
    if trust:
        add_flag(parser, "trust-model")


def add_table_flags(parser: argparse.ArgumentParser, **defaults) -> None:
    """``--players``, ``--rules`` and ``--seed``, with optional per-job defaults."""
    for name in ("players", "rules", "seed"):
        add_flag(parser, name, **({"default": defaults[name]} if name in defaults else {}))


class _HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The job's docstring as written (its examples keep their lines), and each flag's default shown (unless
    its help already names it, or there is none to show: a switch that is off, or no value)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


class JobParser(argparse.ArgumentParser):
    """An ArgumentParser whose refusals are one line (``python -m train.<job>: error: ...``, exit status 2):
    the usage block is what ``--help`` is for, and it would bury the one line that matters."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def program(module: str | None) -> str | None:
    """How a person runs the job of ``module`` (``train.league`` → ``python -m train.league``)."""
    if module == "__main__":  # run as python -m train.<job>: the module's own name is in its spec
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module = getattr(spec, "name", None)
    if not module:
        return None
    return f"python -m train.{module.rsplit('.', 1)[-1]}"


def new_parser(description: str | None, module: str | None = None) -> argparse.ArgumentParser:
    """A :class:`JobParser` named as the job is run (``module``: the job's ``__name__``), that shows its
    docstring (with its examples) as its --help text, and the defaults of its flags."""
    return JobParser(prog=program(module), description=description, formatter_class=_HelpFormatter)


def refuse_repeats(flag: str, values) -> None:
    """A ValueError (a refusal, to a job's check) when the list flag ``--<flag>`` names a value twice (a table
    size played and rated twice would count its evidence twice)."""
    repeated = sorted({str(v) for v in values if list(values).count(v) > 1})
    if repeated:
        raise ValueError(f"--{flag} names {', '.join(repeated)} more than once: {' '.join(map(str, values))}")


class Terminated(KeyboardInterrupt):
    """SIGTERM (a timeout, kill, a batch scheduler) handled like Ctrl-C: keep what is done, then stop."""


def on_sigterm(signum, frame):
    """A SIGTERM handler that raises :class:`Terminated`."""
    raise Terminated()


def add_dataclass_flags(cls, parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """A flag per field of dataclass ``cls``; a field's ``flag`` metadata names its flag."""
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        kind = hints[field.name]
        flag = "--" + field.metadata.get("flag", field.name.replace("_", "-"))
        help_text = field.metadata.get("help", "")
        common = dict(dest=field.name, default=field.default, help=help_text)
        if kind is bool and flag[2:] in FLAGS:  # a shared switch: the same action in every job
            parser.add_argument(flag, **{**FLAGS[flag[2:]], **common})
        elif kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
        elif typing.get_origin(kind) is tuple:
            parser.add_argument(flag, nargs="+", type=typing.get_args(kind)[0], **common)
        else:
            base = next((t for t in typing.get_args(kind) if t is not type(None)), kind)  # Optional[X] -> X
            parser.add_argument(flag, type=base, **common)
    return parser


def settings_command(module: str, settings, skip: tuple[str, ...] = ()) -> str:
    """The ``python -m module`` command that makes dataclass ``settings`` (its fields that differ from their
    defaults, as :func:`add_dataclass_flags` names their flags; ``skip`` left out)."""
    words = ["python", "-m", module]
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if field.name in skip or value == field.default:
            continue
        flag = "--" + field.metadata.get("flag", field.name.replace("_", "-"))
        if isinstance(value, bool):
            words.append(flag if value else "--no-" + flag[2:])
        elif isinstance(value, tuple):
            words += [flag, *map(str, value)]
        else:
            words += [flag, str(value)]
    return " ".join(words)


def from_namespace(cls, namespace: argparse.Namespace):
    """The dataclass ``cls`` from parsed flags (its fields only); its own checks raise ValueErrors, which a job's
    check passes on to the runner as refusals."""
    values = {field.name: getattr(namespace, field.name) for field in dataclasses.fields(cls)}
    return cls(**{key: tuple(value) if isinstance(value, list) else value for key, value in values.items()})


def arg(default, help: str, flag: str | None = None, check: Number | None = None):
    """A dataclass field with a help text (and a flag name when it is not the field's own, and the rule its
    values must fit, checked by :func:`check_fields`)."""
    metadata = {"help": help, **({"flag": flag} if flag else {}), **({"check": check} if check else {})}
    return dataclasses.field(default=default, metadata=metadata)


WIDTH = 80  # a terminal's width: no line a job prints (its tables aside) is longer


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, the noun plural unless the count is one: ``counted(1, "seed")`` is "1 seed"."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def say(text: str, **options) -> None:
    """Print ``text`` wrapped at :data:`WIDTH` columns (paths and numbers are never cut); ``options`` are print's."""
    import textwrap

    lines = [textwrap.fill(line, WIDTH, break_long_words=False, break_on_hyphens=False) for line in text.split("\n")]
    print("\n".join(lines), **options)


class _Silent:
    """What :func:`progress_bar` gives without tqdm: the same calls, nothing shown."""

    def __init__(self, iterable=None, **_):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def update(self, n: int = 1) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


def short_name(spec: str, width: int = 16) -> str:
    """An agent's name for a progress bar's postfix: a model file ``ppo:<path>`` by its run folder (or file),
    anything longer than ``width`` cut with an ellipsis."""
    if spec.startswith("ppo:"):
        path = spec[4:].rstrip("/").split("/")
        spec = "ppo:" + (path[-2] if len(path) > 1 and path[-1].endswith("_model.zip") else path[-1])
    return spec if len(spec) <= width else spec[: width - 1] + "…"


BAR_FORMAT = "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"


def progress_bar(iterable=None, **options):
    """A tqdm progress bar (``options`` are tqdm's) that reads in an 80-column terminal: the count, elapsed time,
    ETA and rate come before any postfix and the bar shrinks to fit (keep ``desc`` short: a job prints its
    details on a line of their own first). Its rate is the average since the start (``smoothing=0``), so the ETA
    counts the pauses a job makes as it goes (a training run's evaluations). Without tqdm the job runs the same
    with no bar."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _Silent(iterable, **options)
    options.setdefault("dynamic_ncols", True)
    options.setdefault("smoothing", 0)
    options.setdefault("bar_format", BAR_FORMAT)
    return tqdm(iterable, **options)


def missing_modules(*modules: str) -> list[str]:
    """The modules among ``modules`` that are not installed."""
    import importlib.util

    return [name for name in modules if importlib.util.find_spec(name) is None]


class MissingExtra(ImportError):
    """A job (or a part of one) needs an extra that is not installed."""


def require(extra: str, *modules: str) -> None:
    """A :class:`MissingExtra` (a refusal, to a job's check) naming the extra to install when any of
    ``modules`` is missing, before any work."""
    missing = missing_modules(*modules)
    if missing:
        raise MissingExtra(f"this needs {', '.join(missing)}: {install_hint(extra)}")
