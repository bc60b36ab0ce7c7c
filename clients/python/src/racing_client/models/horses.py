"""Horses: a search by name, a horse's profile and its form."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from ._base import Document, Model, _columns, _frame, _json, _row


@dataclass(kw_only=True)
class HorseMatch(Model):
    """A horse a search found."""

    horse_no: str
    """Brand number: `/api/v1/horses/{horse_no}` and its form."""
    horse_name: str
    """Its newest name."""


@dataclass(kw_only=True)
class HorseSearch(Document):
    """The horses a search found: names that start with the text first, then alphabetical."""

    horses: list[HorseMatch]

    def to_pandas(self) -> Any:
        """One row per horse."""
        return _frame((_row(h) for h in self.horses), _columns(HorseMatch))


@dataclass(kw_only=True)
class Profile(Document):
    """A horse's profile; the fields after `places` only where the feed gave them."""

    horse_no: str
    horse_name: str
    country_of_origin: str
    colour: str
    sex: str
    age: int
    trainer: str
    owner: str
    total_stakes: int
    """Career prize money in whole Hong Kong dollars."""
    starts: int
    wins: int
    places: int
    """Deprecated: the first three, wins included, as the feed gave it (from feed v1.3);
    read `wins`, `seconds` and `thirds`."""
    seconds: int | None = None
    thirds: int | None = None
    sire: str | None = None
    dam: str | None = None
    dam_sire: str | None = None
    import_type: str | None = None
    """`PP` (private purchase), `PPG`, `ISG`, ..."""
    current_rating: int | None = None
    season_start_rating: int | None = None
    season_stakes: int | None = None


@dataclass(kw_only=True)
class FormEntry(Model):
    """One race of a horse's form."""

    date: datetime.date
    venue: str
    race_number: int
    distance: int
    """Metres."""
    position: int | None
    """From 1 (shared in a dead heat); `None` for no placing."""
    finish_time: str | None
    """`m:ss.cc`."""
    win_odds: float | None
    """Final decimal win odds, stake included."""
    jockey: str
    status: str | None
    """`None` for a normal finisher, else the official code (`PU`, `WV-A`, ...)."""
    dead_heat: bool
    race_name: str
    going: str
    class_: str | None = _json("class", None)
    trainer: str
    draw: int | None = None
    actual_weight: int | None = None
    """Pounds carried."""
    declared_weight: int | None = None
    """The horse's declared body weight, pounds."""
    lbw: str | None = None
    """Lengths behind the winner as officially written (`-`, `NOSE`, `1-1/4`, ...)."""
    lbw_lengths: float | None = None
    """`lbw` in lengths; `None` where it is no number of lengths (`ML`, `DIST`)."""
    running_positions: list[int] | None = None


@dataclass(kw_only=True)
class Form(Document):
    """A horse's form: every recorded race, newest first."""

    horse_no: str
    horse_name: str
    form: list[FormEntry]

    def to_pandas(self) -> Any:
        """One row per race, with the horse's number and name."""
        return _frame(
            (_row(e, horse_no=self.horse_no, horse_name=self.horse_name) for e in self.form),
            _columns(FormEntry, "horse_no", "horse_name"),
        )
