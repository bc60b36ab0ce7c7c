"""Jockeys and trainers: the lists of them and each one's record."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from ._base import Document, Model, _columns, _frame, _row


@dataclass(kw_only=True)
class PersonRow(Model):
    """One person in a list of jockeys or trainers."""

    id: str
    name: str
    rides: int


@dataclass(kw_only=True)
class JockeyList(Document):
    """Every jockey with a ride, by name."""

    jockeys: list[PersonRow]

    def to_pandas(self) -> Any:
        """One row per jockey."""
        return _frame((_row(p) for p in self.jockeys), _columns(PersonRow))


@dataclass(kw_only=True)
class TrainerList(Document):
    """Every trainer with a runner that rode, by name."""

    trainers: list[PersonRow]

    def to_pandas(self) -> Any:
        """One row per trainer."""
        return _frame((_row(p) for p in self.trainers), _columns(PersonRow))


@dataclass(kw_only=True)
class SeasonDoc(Model):
    """A person's figures in one Hong Kong season (September to August)."""

    season: str
    """e.g. `2019/20`."""
    rides: int
    wins: int
    seconds: int
    thirds: int


@dataclass(kw_only=True)
class RideDoc(Model):
    """One ride in a person's record."""

    date: datetime.date
    venue: str
    race_number: int
    horse_no: str
    horse_name: str
    position: int | None
    status: str | None
    win_odds: float | None


@dataclass(kw_only=True)
class PersonRecord(Document):
    """A jockey's or a trainer's record."""

    id: str
    name: str
    rides: int
    wins: int
    seconds: int
    thirds: int
    win_pct: float
    top3_pct: float
    seasons: list[SeasonDoc]
    """Newest first."""
    recent: list[RideDoc]
    """The 20 newest rides."""

    def to_pandas(self) -> Any:
        """One row per recent ride."""
        return _frame((_row(r) for r in self.recent), _columns(RideDoc))
