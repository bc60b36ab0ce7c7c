"""Odds: a race's current prices and market, and its odds history."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Iterable

from ._base import Document, Model, _columns, _frame, _row


@dataclass(kw_only=True)
class RunnerOdds(Model):
    """A runner's prices: win, place or both."""

    horse_no: str
    win_odds: float | None = None
    """Decimal, stake included; `None` for a runner given a place price only."""
    place_odds: float | None = None
    """Decimal, stake included; `None` for a runner never given one."""


@dataclass(kw_only=True)
class RunnerMarket(Model):
    """A runner's current prices, and what the market reads of them."""

    horse_no: str
    scratched: bool | None = None
    """`True` where scratched from the race (left out otherwise): it keeps its last prices,
    and no book, favourite or mover counts it."""
    win_odds: float | None = None
    place_odds: float | None = None
    win_prob: float | None = None
    """Implied probability of the win price: 1 / `win_odds`."""
    place_prob: float | None = None
    first_win_odds: float | None = None
    """Its first win price in this market."""
    win_move_pct: float | None = None
    """The win price's move since `first_win_odds`, in percent (below 0: backed)."""
    win_move_15m_pct: float | None = None
    """The same since the start of the market clock's minute less 15 minutes."""
    win_move_5m_pct: float | None = None
    """The same over the last 5 minutes."""


@dataclass(kw_only=True)
class Market(Model):
    """The market of a race's current prices."""

    clock: str | None = None
    """The latest `occurred_at` of the race's price moves, in UTC to the millisecond."""
    win_book_pct: float | None = None
    """The sum of 1 / win odds over the runners not scratched, in percent."""
    place_book_pct: float | None = None
    favourites: list[str]
    steamers: list[str]
    """The runners whose win price shortened most over the last 15 minutes."""
    drifters: list[str]
    """The runners whose win price lengthened most over the last 15 minutes."""


@dataclass(kw_only=True)
class Book(Model):
    """The book of a race's prices after an odds move."""

    win_book_pct: float | None = None
    place_book_pct: float | None = None
    favourites: list[str]


@dataclass(kw_only=True)
class RaceOdds(Document):
    """The current odds of a race, and its status where it was given one."""

    date: datetime.date
    venue: str | None
    """`None` while no venue of the race is known."""
    meetings: list[str] | None = None
    race_number: int
    seq: int
    """Stream sequence of the race's latest odds update."""
    status: str | None = None
    """As `CardRace.status`."""
    status_at: str | None = None
    status_reason: str | None = None
    odds: list[RunnerMarket]
    market: Market

    def to_pandas(self) -> Any:
        """One row per runner, with its market figures."""
        return _frame(
            (_row(o, race_number=self.race_number, seq=self.seq) for o in self.odds),
            _columns(RunnerMarket, "race_number", "seq"),
        )


@dataclass(kw_only=True)
class OddsMove(Model):
    """One odds update of a race, as it went live."""

    seq: int
    published_at: str
    """When JetStream stored it, in UTC to the millisecond."""
    occurred_at: str
    """When its prices were given at their source (the event's `occurred_at`), in UTC to the
    millisecond: for a past race's moves published later, the race's time."""
    venue: str | None
    """`None` for odds given for the race at every venue of the date."""
    odds: list[RunnerOdds]
    """The runners it priced."""
    market: Book
    """The book of the race's prices after it."""


@dataclass(kw_only=True)
class OddsHistory(Document):
    """A page of a race's odds history, oldest first; `next` is the following page's `since`."""

    date: datetime.date
    race_number: int
    moves: list[OddsMove]
    next: int | None

    def to_pandas(self) -> Any:
        """One row per runner priced in a move: seq, published_at, occurred_at, venue,
        horse_no, win_odds, place_odds."""
        return odds_frame(self.moves)


def odds_frame(moves: Iterable[OddsMove]) -> Any:
    """A pandas DataFrame of odds moves, one row per runner priced (for the moves of
    `odds_history()`, which spans pages)."""
    return _frame(
        (
            _row(o, seq=m.seq, published_at=m.published_at, occurred_at=m.occurred_at, venue=m.venue)
            for m in moves
            for o in m.odds
        ),
        _columns(RunnerOdds, "seq", "published_at", "occurred_at", "venue"),
    )
