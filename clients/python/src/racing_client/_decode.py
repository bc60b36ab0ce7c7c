"""Turns the service's JSON into the dataclasses of `racing_client.models`, checking types."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import types
import typing
from typing import Any, TypeVar

from .errors import DecodeError

T = TypeVar("T")


def json_name(f: dataclasses.Field) -> str:
    """The JSON property a field is read from (`class_` reads `class`)."""
    return f.metadata.get("json", f.name)


@functools.lru_cache(maxsize=None)
def wire_fields(cls: type) -> tuple[tuple[dataclasses.Field, Any], ...]:
    """The fields a document is read from, with their resolved types (not `meta`)."""
    hints = typing.get_type_hints(cls)
    return tuple(
        (f, hints[f.name]) for f in dataclasses.fields(cls) if f.init and not f.metadata.get("local")
    )


def decode(cls: type[T], data: Any, *, strict: bool = False, where: str = "") -> T:
    """Reads `data` as a `cls`. A missing required field or a value of the wrong type is a
    `DecodeError`; with `strict`, so is a field the client does not know (a test runs the
    client strict, so that a field the API gained without the client fails it)."""
    return _value(cls, data, strict, where or cls.__name__)


def _value(tp: Any, data: Any, strict: bool, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is None:
            return None
        # Several: the first that reads it (`int | str` reads 7 as 7 and "7.1" as "7.1").
        for arg in args[:-1]:
            try:
                return _value(arg, data, strict, where)
            except DecodeError:
                pass
        return _value(args[-1], data, strict, where)
    if origin is list:
        if not isinstance(data, list):
            raise DecodeError(f"{where}: expected a list, got {type(data).__name__}")
        (item,) = typing.get_args(tp)
        return [_value(item, x, strict, f"{where}[{i}]") for i, x in enumerate(data)]
    if dataclasses.is_dataclass(tp):
        return _object(tp, data, strict, where)
    if tp is datetime.date:
        if not isinstance(data, str):
            raise DecodeError(f"{where}: expected a date, got {data!r}")
        try:
            return datetime.date.fromisoformat(data)
        except ValueError:
            raise DecodeError(f"{where}: not a YYYY-MM-DD date: {data!r}") from None
    if tp is float:
        # JSON does not tell 2 from 2.0; bool is an int in Python and is not a number here.
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return float(data)
    elif tp is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
    elif tp in (str, bool):
        if isinstance(data, tp):
            return data
    elif tp is Any:
        return data
    else:
        raise DecodeError(f"{where}: unsupported type {tp}")
    raise DecodeError(f"{where}: expected {tp.__name__}, got {data!r}")


def _object(cls: type, data: Any, strict: bool, where: str) -> Any:
    if not isinstance(data, dict):
        raise DecodeError(f"{where}: expected an object, got {type(data).__name__}")
    known = set()
    values = {}
    for f, tp in wire_fields(cls):
        name = json_name(f)
        known.add(name)
        if name in data:
            values[f.name] = _value(tp, data[name], strict, f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise DecodeError(f"{where}: required field `{name}` is missing")
    if strict:
        unknown = sorted(set(data) - known - set(getattr(cls, "_ignored", ())))
        if unknown:
            raise DecodeError(f"{where}: fields the client does not know: {', '.join(unknown)}")
    return cls(**values)
