"""Command-line arguments from a dataclass: each field becomes ``--field-name`` with its default and help."""

from __future__ import annotations

import argparse
import dataclasses
import typing


def parse(cls, argv=None, description: str | None = None):
    """An instance of dataclass ``cls`` from the command line."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        kind = hints[field.name]
        flag = "--" + field.name.replace("_", "-")
        help_text = field.metadata.get("help", "")
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=field.default, help=help_text)
        elif typing.get_origin(kind) is tuple:
            parser.add_argument(flag, nargs="+", default=field.default, type=typing.get_args(kind)[0], help=help_text)
        else:
            base = next((t for t in typing.get_args(kind) if t is not type(None)), kind)  # Optional[X] -> X
            parser.add_argument(flag, type=base, default=field.default, help=help_text)
    values = vars(parser.parse_args(argv))
    try:
        return cls(**{key: tuple(value) if isinstance(value, list) else value for key, value in values.items()})
    except ValueError as error:  # the dataclass's own checks: say it the command-line way, no traceback
        parser.error(str(error))


def arg(default, help: str):
    """A dataclass field with a help text."""
    return dataclasses.field(default=default, metadata={"help": help})
