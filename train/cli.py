"""The command-line vocabulary every job in ``train/`` shares: one flag name per idea, checked the same way.

=================  ===========================================================================
flag               meaning
=================  ===========================================================================
``--players``      players at the table, 3..8 (a list where a job sweeps table sizes)
``--rules``        a rules preset
``--opponents``    the opponents' pool: agent names, one drawn per seat per deal
``--seed``         the seed every random stream of the job derives from (0 or more)
``--deals``        paired deals to evaluate on
``--out``          the folder results are written to
``--runs``         the folder training runs live in (``<runs>/<run-name>``)
=================  ===========================================================================

Dataclass jobs (``train_ppo``) get their flags from the fields via :func:`parse`; the others add them with
:func:`add_table_flags` and :func:`add_flag`.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing

from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS


def players(text: str) -> int:
    """An argparse type: a table size 3..8."""
    value = whole(text)
    if not MIN_PLAYERS <= value <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"{value} players; allowed: {MIN_PLAYERS} to {MAX_PLAYERS}")
    return value


def whole(text: str) -> int:
    """An argparse type: a whole number."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def at_least(minimum: int):
    """An argparse type: a whole number of at least ``minimum``."""

    def check(text: str) -> int:
        value = whole(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value}; allowed: a whole number of at least {minimum}")
        return value

    check.__name__ = f"at_least_{minimum}"
    return check


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{value}; allowed: a number above 0")
    return value


FLAGS = {
    "players": dict(type=players, default=6, help="players at the table, 3..8"),
    "rules": dict(default="scarne", choices=sorted(PRESETS), help="rules preset"),
    "opponents": dict(nargs="+", default=["random"], help="the opponents' pool: agent names"),
    "seed": dict(type=at_least(0), default=0, help="seed of every random stream of the job"),
    "deals": dict(type=at_least(2), default=20_000, help="paired deals to evaluate on"),
    "out": dict(default="results", help="folder for the results"),
    "runs": dict(default="runs", help="folder of training runs"),
}


def add_flag(parser: argparse.ArgumentParser, name: str, **overrides) -> None:
    """Add the shared flag ``--<name>`` with this job's default or help where they differ."""
    options = {**FLAGS[name], **overrides}
    parser.add_argument("--" + name, **options)


def add_table_flags(parser: argparse.ArgumentParser, **defaults) -> None:
    """``--players``, ``--rules`` and ``--seed``, with optional per-job defaults."""
    for name in ("players", "rules", "seed"):
        add_flag(parser, name, **({"default": defaults[name]} if name in defaults else {}))


def new_parser(description: str | None) -> argparse.ArgumentParser:
    """An ArgumentParser that shows a job's docstring (with its examples) as its --help text."""
    return argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)


def add_dataclass_flags(cls, parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """A flag per field of dataclass ``cls``; a field's ``flag`` metadata names its flag."""
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        kind = hints[field.name]
        flag = "--" + field.metadata.get("flag", field.name.replace("_", "-"))
        help_text = field.metadata.get("help", "")
        common = dict(dest=field.name, default=field.default, help=help_text)
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
        elif typing.get_origin(kind) is tuple:
            parser.add_argument(flag, nargs="+", type=typing.get_args(kind)[0], **common)
        else:
            base = next((t for t in typing.get_args(kind) if t is not type(None)), kind)  # Optional[X] -> X
            parser.add_argument(flag, type=base, **common)
    return parser


def from_namespace(cls, namespace: argparse.Namespace, parser: argparse.ArgumentParser):
    """The dataclass ``cls`` from parsed flags (its fields only); its own checks fail as usage errors."""
    values = {field.name: getattr(namespace, field.name) for field in dataclasses.fields(cls)}
    try:
        return cls(**{key: tuple(value) if isinstance(value, list) else value for key, value in values.items()})
    except ValueError as error:  # the dataclass's own checks: say it the command-line way, no traceback
        parser.error(str(error))


def parse(cls, argv=None, description: str | None = None):
    """An instance of dataclass ``cls`` from the command line."""
    parser = add_dataclass_flags(cls, new_parser(description))
    return from_namespace(cls, parser.parse_args(argv), parser)


def arg(default, help: str, flag: str | None = None):
    """A dataclass field with a help text (and a flag name when it is not the field's own)."""
    metadata = {"help": help, **({"flag": flag} if flag else {})}
    return dataclasses.field(default=default, metadata=metadata)
