"""The flags of ``write`` and ``search``, made from the request fields (``core.requests``).

Each field of ``WriteOptions`` / ``SearchOptions`` becomes a flag named after
it (``half_life_days`` -> ``--half-life-days``), with its description as help:
a yes/no field is a switch, a choice lists its choices, a list is repeated
in the singular (``--tag a --tag b``), and a time in unix seconds also takes
an ISO date or datetime. A flag left out is not passed, so the library's
default holds.
"""

from __future__ import annotations

import argparse
import types
from collections.abc import Sequence
from typing import Any, Literal, Union, get_args, get_origin

from hindsight_redis.core.requests import UNIX_TIME, option_fields
from hindsight_redis.language.when import parse_timestamp


def moment(text: str) -> float:
    """A time flag's value: unix seconds, or an ISO 8601 date or datetime (UTC unless it
    gives an offset)."""
    try:
        return parse_timestamp(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_options(parser: argparse.ArgumentParser, options: type[Any]) -> None:
    """A flag on ``parser`` for each field of the typed dict ``options``."""
    for name, (annotation, info) in option_fields(options).items():
        kind = _without_none(annotation)
        help_text = (info.description or "").rstrip(".")
        if info.default not in (None, False):
            help_text += f" (default: {info.default})"
        flag = "--" + name.replace("_", "-")
        if kind is bool:
            parser.add_argument(flag, dest=name, action="store_true", default=None, help=help_text)
        elif get_origin(kind) is Literal:
            parser.add_argument(flag, dest=name, choices=get_args(kind), help=help_text)
        elif get_origin(kind) in (Sequence, list, tuple):
            singular = flag.removesuffix("s")
            metavar = singular.lstrip("-").upper()
            parser.add_argument(
                singular, dest=name, action="append", metavar=metavar, help=help_text + " (repeat)"
            )
        elif UNIX_TIME in info.metadata:
            help_text += ", or an ISO date/datetime (UTC unless it says)"
            parser.add_argument(flag, dest=name, type=moment, help=help_text)
        elif kind in (int, float):
            parser.add_argument(flag, dest=name, type=kind, help=help_text)
        else:
            parser.add_argument(flag, dest=name, help=help_text)


def given_options(args: argparse.Namespace, options: type[Any]) -> dict[str, Any]:
    """The fields of ``options`` given on the command line (the others keep their defaults)."""
    return {
        name: value
        for name in option_fields(options)
        if (value := getattr(args, name, None)) is not None
    }


def _without_none(annotation: Any) -> Any:
    """``X`` of ``X | None``."""
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [a for a in get_args(annotation) if a is not type(None)]
        if len(kept) == 1:
            return kept[0]
    return annotation
