"""The analysis of a horse, a jockey or a trainer: figures by condition."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from ._base import Document, Model, _columns, _frame, _json, _row


@dataclass(kw_only=True)
class Figures(Model):
    """Runs, wins, seconds, thirds, places, strike rate and level-stake profit or loss of
    some runs."""

    runs: int
    wins: int
    seconds: int
    thirds: int
    places: int
    """First, second or third: `wins + seconds + thirds`."""
    strike_rate: float
    """Wins in percent of runs, one decimal place."""
    place_rate: float
    """Places (the first three) in percent of runs."""
    bets: int
    """Runs with recorded win odds."""
    level_stake: float
    """Profit or loss, in units, of a 1-unit win bet on each of `bets`."""


@dataclass(kw_only=True)
class Row(Figures):
    """One row of a breakdown by a named condition (a venue, going, class or person)."""

    value: str


@dataclass(kw_only=True)
class NumberRow(Figures):
    """One row of a breakdown by a numbered condition (a distance in metres, a draw)."""

    value: int


@dataclass(kw_only=True)
class Analysis(Document):
    """A horse's, a jockey's or a trainer's records by condition."""

    subject: str
    """`horse`, `jockey` or `trainer`."""
    id: str
    name: str | None
    from_: datetime.date | None = _json("from")
    to: datetime.date | None
    overall: Figures
    by_venue: list[Row]
    by_distance: list[NumberRow]
    by_going: list[Row]
    by_class: list[Row]
    by_draw: list[NumberRow]
    by_jockey: list[Row] | None = None
    """For a trainer and a horse."""
    by_trainer: list[Row] | None = None
    """For a jockey and a horse."""

    def to_pandas(self) -> Any:
        """One row per row of every breakdown, `by` naming it (`overall`, `venue`,
        `distance`, `going`, `class`, `draw`, `jockey`, `trainer`), then `value` and the
        figures."""
        breakdowns: list[tuple[str, list[Any]]] = [
            ("venue", self.by_venue),
            ("distance", self.by_distance),
            ("going", self.by_going),
            ("class", self.by_class),
            ("draw", self.by_draw),
            ("jockey", self.by_jockey or []),
            ("trainer", self.by_trainer or []),
        ]
        rows = [{"by": "overall", "value": None, **_row(self.overall)}]
        for by, items in breakdowns:
            for item in items:
                row = _row(item)
                rows.append({"by": by, "value": row.pop("value"), **row})
        return _frame(rows, _columns(Figures, "by", "value"))
