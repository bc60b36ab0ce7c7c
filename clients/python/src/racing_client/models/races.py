"""Races: the results of a date or a race, the race cards with each runner's form, and
the meetings."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from ._base import Document, Model, _columns, _frame, _json, _row, _runners_frame


@dataclass(kw_only=True)
class ResultRunner(Model):
    """One runner of a race result."""

    position: int | None
    horse_no: str
    horse_name: str
    jockey: str
    trainer: str
    finish_time: str | None
    win_odds: float | None
    status: str | None
    dead_heat: bool
    lbw: str | None = None
    lbw_lengths: float | None = None
    running_positions: list[int] | None = None
    actual_weight: int | None = None
    declared_weight: int | None = None
    draw: int | None = None


@dataclass(kw_only=True)
class ResultRace(Model):
    """One race of the results of a date."""

    race_number: int
    race_name: str
    distance: int
    going: str
    runners: list[ResultRunner]
    class_: str | None = _json("class", None)


@dataclass(kw_only=True)
class ResultsByDate(Document):
    """All results of a date, ascending race number."""

    date: datetime.date
    venue: str
    meetings: list[str] | None = None
    """Only on a date with more than one meeting: every venue of the day."""
    races: list[ResultRace]

    def to_pandas(self) -> Any:
        """One row per runner, with its race's date, venue, number, name, distance, going and class."""
        return _runners_frame(self, ResultRace, ResultRunner)


@dataclass(kw_only=True)
class RaceResult(Document):
    """The result of one race."""

    date: datetime.date
    venue: str
    meetings: list[str] | None = None
    race_number: int
    race_name: str
    distance: int
    going: str
    runners: list[ResultRunner]
    class_: str | None = _json("class", None)

    def to_pandas(self) -> Any:
        """One row per runner, with the race's date, venue and number."""
        return _frame(
            (_row(r, date=self.date, venue=self.venue, race_number=self.race_number) for r in self.runners),
            _columns(ResultRunner, "date", "venue", "race_number"),
        )


@dataclass(kw_only=True)
class Record(Model):
    """Runs, wins and places (the first three) of some runs."""

    runs: int
    wins: int
    places: int


@dataclass(kw_only=True)
class GoingRecord(Model):
    """A runner's record on one going."""

    going: str
    runs: int
    wins: int
    places: int


@dataclass(kw_only=True)
class Strike(Model):
    """A jockey's or a trainer's rides and wins over a span, and the strike rate."""

    rides: int
    wins: int
    strike_rate: float
    """Wins in percent of rides, one decimal place."""


@dataclass(kw_only=True)
class RunnerForm(Model):
    """A runner's form as of its race's date: only results of earlier dates count."""

    figures: str
    """The last six races, newest last (`1`-`9`, `0` tenth or worse, letters for codes,
    `/` between seasons)."""
    runs: int
    days_since_run: int | None
    c: bool
    """It has won at this racecourse."""
    d: bool
    """It has won over this distance."""
    cd: bool
    """It has won at this racecourse over this distance, in one race."""
    course: Record
    distance: Record
    going: list[GoingRecord]
    """Its record on each going it has raced on, in the going's name order."""
    jockey_14d: Strike
    trainer_14d: Strike


@dataclass(kw_only=True)
class CardRunner(Model):
    """A declared runner of a race card."""

    horse_no: str
    horse_name: str
    jockey: str
    trainer: str
    draw: int
    weight: int
    """Pounds carried."""
    form: RunnerForm | None = None
    """Its form as of the race's date."""


@dataclass(kw_only=True)
class CardRace(Model):
    """One race of a race card."""

    race_number: int
    race_name: str
    distance: int
    class_: str = _json("class")
    status: str | None = None
    """`open`, `suspended`, `off`, `finished`, `abandoned` or `void`; `None` for a race never
    given a status."""
    status_at: str | None = None
    """When the race took its status, RFC 3339."""
    status_reason: str | None = None
    """Why, where the feed said."""
    runners: list[CardRunner]


@dataclass(kw_only=True)
class RaceCard(Document):
    """The race card of a date, scratched runners removed."""

    date: datetime.date
    venue: str
    meetings: list[str] | None = None
    races: list[CardRace]

    def to_pandas(self) -> Any:
        """One row per declared runner, with its race's fields."""
        return _runners_frame(self, CardRace, CardRunner)


@dataclass(kw_only=True)
class MeetingRow(Model):
    """One meeting: a venue's racing on a date."""

    date: datetime.date
    venue: str
    races: int
    """Races with a card or a result."""
    card: bool
    results: int
    """Races with a result."""


@dataclass(kw_only=True)
class Meetings(Document):
    """The meetings of a range of dates, by date, then venue: a page of at most 366 days,
    `next` the `from` of the following one (`None` on the last)."""

    from_: datetime.date = _json("from")
    to: datetime.date
    meetings: list[MeetingRow]
    next: datetime.date | None

    def to_pandas(self) -> Any:
        """One row per meeting."""
        return _frame((_row(m) for m in self.meetings), _columns(MeetingRow))
