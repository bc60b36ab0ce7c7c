"""The base classes of the documents (`Model`, `Document`, `Meta`, `RateLimit`) and the
helpers the families share: `to_dict()`'s plain values, pandas frames, JSON names."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import typing
from dataclasses import dataclass, field
from typing import Any, Iterable


@dataclass(frozen=True)
class RateLimit:
    """The key's quota as the last answer gave it (`RateLimit`, `RateLimit-Policy` headers)."""

    remaining: int
    """Requests left before the service refuses with 429."""
    reset: float
    """Seconds until the quota is full again."""
    limit: int | None = None
    """Requests allowed in a window (the burst)."""
    window: float | None = None
    """The window, seconds: `limit / window` is the sustained rate."""


@dataclass(frozen=True)
class Meta:
    """What the HTTP answer said about a document besides its body."""

    status: int
    """200, or 304 when the client's copy was revalidated (0: served from the client's
    cache without a request, for an immutable `as_of` answer)."""
    racing_seq: int | None
    """`Racing-Seq`: the stream sequence the answer reflects; an `as_of` that answers the
    same document again, and a `since` for `live()` that misses nothing after it."""
    as_of: int | None
    """The `as_of` asked for, `None` for the current document."""
    etag: str | None
    """The strong validator the client revalidates with."""
    rate_limit: RateLimit | None
    """The key's quota after this request."""
    attempts: int = 1
    """Requests it took (more than 1 after a 429, a 503 or a network error was retried)."""
    request_id: str | None = None
    """`X-Request-Id`, to quote when asking about an answer."""

    @property
    def from_cache(self) -> bool:
        """Whether the body is the client's cached copy (revalidated with a 304, or immutable)."""
        return self.status in (0, 304)


@dataclass(kw_only=True)
class Model:
    """A JSON object of the API, typed."""

    def to_dict(self) -> dict[str, Any]:
        """The object as the service sent it: JSON names, dates as text, absent fields left out."""
        return _plain(self)


@dataclass(kw_only=True)
class Document(Model):
    """A whole answer of the API, with what its headers said in `meta`."""

    meta: Meta | None = field(default=None, compare=False, repr=False, metadata={"local": True})

    @property
    def racing_seq(self) -> int | None:
        """`Racing-Seq` of the answer (see `Meta.racing_seq`)."""
        return self.meta.racing_seq if self.meta else None

    @property
    def as_of(self) -> int | None:
        """The point of the log the document is as of: the `as_of` asked for, else the
        answer's `Racing-Seq` (which, as an `as_of`, answers the same document again)."""
        if self.meta is None:
            return None
        return self.meta.as_of if self.meta.as_of is not None else self.meta.racing_seq


def _plain(value: Any) -> Any:
    if isinstance(value, Model):
        out = {}
        for f in dataclasses.fields(value):
            if f.metadata.get("local"):
                continue
            v = getattr(value, f.name)
            if v is None and f.default is None:
                continue
            out[f.metadata.get("json", f.name)] = _plain(v)
        return out
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _frame(rows: Iterable[dict[str, Any]], columns: list[str]) -> Any:
    """A DataFrame of `rows`; one with no rows still has `columns`, so that code reading a
    column works on an empty list too."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas: pip install 'racing-client[pandas]'") from None
    rows = list(rows)
    return pandas.DataFrame(rows) if rows else pandas.DataFrame(columns=columns)


@functools.cache
def _fields(kind: type[Model]) -> tuple[tuple[str, str], ...]:
    """(attribute, JSON name) of the fields of `kind` a row holds: not the local ones, nor
    lists of models (a row is flat; those lists have frames of their own)."""
    hints = typing.get_type_hints(kind)
    return tuple(
        (f.name, f.metadata.get("json", f.name))
        for f in dataclasses.fields(kind)
        if not f.metadata.get("local") and not _holds_models(hints[f.name])
    )


def _holds_models(hint: Any) -> bool:
    """Whether a field's type is a list of models (optional or not)."""
    if typing.get_origin(hint) is list:
        return any(isinstance(a, type) and issubclass(a, Model) for a in typing.get_args(hint))
    return any(_holds_models(a) for a in typing.get_args(hint))


def _row(item: Model, **parents: Any) -> dict[str, Any]:
    row = dict(parents)
    for name, json in _fields(type(item)):
        row[json] = getattr(item, name)
    return row


def _columns(kind: type[Model], *parents: str) -> list[str]:
    """The columns of the rows `_row` makes of a `kind` under `parents`, in their order."""
    return list(dict.fromkeys([*parents, *(json for _, json in _fields(kind))]))


def _runners_frame(meeting: Any, race_kind: type[Model], runner_kind: type[Model]) -> Any:
    """A meeting's runners (of its results or its card), each row with its race's fields."""
    return _frame(
        (
            _row(r, **_row(race, date=meeting.date, venue=meeting.venue))
            for race in meeting.races
            for r in race.runners
        ),
        _columns(runner_kind, *_columns(race_kind, "date", "venue")),
    )


def _json(name: str, default: Any = dataclasses.MISSING) -> Any:
    """A field whose JSON name is a Python keyword."""
    if default is dataclasses.MISSING:
        return field(metadata={"json": name})
    return field(default=default, metadata={"json": name})
