"""The live stream's frames (`live()`): a race's snapshot, odds updates, the market, and
the race day's events."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from ._base import Model
from .odds import Book, Market, RaceOdds, RunnerMarket, RunnerOdds
from .races import CardRace, RaceResult


@dataclass(kw_only=True)
class Snapshot(RaceOdds):
    """A race's whole odds (`RaceOdds`) on the live stream: replaces what the caller held
    for the race. Sent when a subscription starts, and in place of deltas to a reader that
    fell behind or after the service caught up on an outage."""

    market: Market | None = None  # type: ignore[assignment]
    """Left out of the snapshot of a race with no prices."""

    _ignored = ("type",)


@dataclass(kw_only=True)
class StreamFrame(Model):
    """What every frame of one event of the stream has: its race, its stream position and
    when JetStream stored it. `seq` is strictly increasing across every kind of frame
    `live()` yields, odds and race day alike."""

    date: datetime.date
    venue: str | None
    """The event's racecourse; `None` for one given for the race of that number at every
    venue of the date."""
    race_number: int
    seq: int
    """Stream sequence: a `since` for `live()` resumes after it."""
    published_at: str
    """When JetStream stored the event, RFC 3339 in UTC."""
    received_at: datetime.datetime | None = field(default=None, compare=False, metadata={"local": True})
    """When the client read it (UTC)."""

    _ignored = ("type",)

    @property
    def lag(self) -> datetime.timedelta | None:
        """From JetStream storing the event to the client reading it, as `racing watch` shows it."""
        published = parse_timestamp(self.published_at)
        if published is None or self.received_at is None:
            return None
        return self.received_at - published


@dataclass(kw_only=True)
class OddsUpdate(StreamFrame):
    """One odds update on the live stream (topic `odds`): `odds` lists only the prices
    that changed."""

    occurred_at: str
    """When its prices were given at their source (the event's `occurred_at`), RFC 3339 as
    the feeder wrote it; `published_at` is when JetStream stored it."""
    odds: list[RunnerOdds]
    market: Book
    """The book of the race's prices after it."""

    _ignored = ("type", "replay")


@dataclass(kw_only=True)
class MarketUpdate(Model):
    """A race's whole market (topic `market`), at most once a second while its prices
    move: conflated, the market as it stood when sent."""

    date: datetime.date
    venue: str | None
    race_number: int
    seq: int
    """The race's latest odds update."""
    market: Market
    odds: list[RunnerMarket]
    received_at: datetime.datetime | None = field(default=None, compare=False, metadata={"local": True})
    """When the client read it (UTC)."""

    _ignored = ("type",)


@dataclass(kw_only=True)
class StatusChange(StreamFrame):
    """A race's status changed (topic `status`)."""

    status: str
    """As `CardRace.status`: the race's status now."""
    reason: str | None = None
    """Why, where the feed said."""


@dataclass(kw_only=True)
class Scratching(StreamFrame):
    """A runner was withdrawn (topic `scratchings`)."""

    horse_no: str


@dataclass(kw_only=True)
class RaceResultFrame(StreamFrame):
    """A race's result was published or amended (topic `results`): the whole result, as
    `result()` answered right after the event; an amendment comes again, whole."""

    result: RaceResult


@dataclass(kw_only=True)
class CardFrame(StreamFrame):
    """A race was declared or declared again (topic `cards`): the race as the day's card
    (`racecard()`) listed it right after the event."""

    card: CardRace


@dataclass(kw_only=True)
class Retraction(StreamFrame):
    """The venue's race was withdrawn from every document (topics `results` and `cards`)."""

    reason: str


@dataclass(kw_only=True)
class Heartbeat(Model):
    """The service is there but had nothing to send (only with `live(heartbeats=True)`)."""

    seq: int

    _ignored = ("type",)


Frame = (
    Snapshot | OddsUpdate | MarketUpdate | StatusChange | Scratching | RaceResultFrame | CardFrame
    | Retraction | Heartbeat
)
"""What `live()` yields."""


def parse_timestamp(text: str) -> datetime.datetime | None:
    """An RFC 3339 UTC time such as `2026-11-21T05:55:52.476057038Z` (nanoseconds cut to
    microseconds), or `None` if it is not one."""
    body = text.strip()
    if body.endswith(("Z", "z")):
        body = body[:-1] + "+00:00"
    if "." in body:
        head, rest = body.split(".", 1)
        digits = len(rest) - len(rest.lstrip("0123456789"))
        body = f"{head}.{rest[:digits][:6].ljust(6, '0')}{rest[digits:]}"
    try:
        return datetime.datetime.fromisoformat(body)
    except ValueError:
        return None
