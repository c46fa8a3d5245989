"""Command-line flags generated from the settings' fields (``sc2dask/settings.py``).

Every field becomes ``--its-name`` with its rule as help. A flag left out is None,
"from config", so YAML files and ``DASK_SC2DASK__...`` variables are never silently
overridden by a flag's default.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing

from .. import settings


def add_setting_flags(parser: argparse.ArgumentParser, cls) -> list[str]:
    """Add a flag per field of settings section ``cls``; returns the field names, for
    ``given``."""
    group = parser.add_argument_group(
        f"{cls.section} settings (sc2dask.{cls.section} in sc2dask.yaml)"
    )
    hints = typing.get_type_hints(cls)
    names = []
    for field in dataclasses.fields(cls):
        rule: settings.Rule = field.metadata["rule"]
        flag = "--" + field.name.replace("_", "-")
        kind = _base_type(hints[field.name])
        default = "unset" if field.default is None else field.default
        help_text = f"{rule.help} (package default {default})"
        if kind is bool:
            group.add_argument(
                flag,
                dest=field.name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=help_text,
            )
        elif typing.get_origin(kind) is typing.Literal:
            group.add_argument(
                flag, dest=field.name, choices=typing.get_args(kind), default=None, help=help_text
            )
        else:
            group.add_argument(
                flag,
                dest=field.name,
                type=_parser(kind),
                default=None,
                metavar=rule.metavar or _metavar(kind),
                help=help_text,
            )
        names.append(field.name)
    return names


def given(args: argparse.Namespace, names: list[str]) -> dict:
    """The flags of ``names`` that were given (the others stay "from config")."""
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def _base_type(hint):
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
    return hint


def _parser(kind):
    def parse(text: str):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {'a whole number' if kind is int else 'a number'}"
            ) from None

    return parse if kind in (int, float) else str  # names: "a,b", split by settings.load


def _metavar(kind) -> str:
    if typing.get_origin(kind) is tuple:
        return "NAME,..."
    return {int: "N", float: "X", str: "TEXT"}.get(kind, "VALUE")
