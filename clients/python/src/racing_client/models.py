"""The API's documents and the live stream's frames, as typed dataclasses.

Each document class has the properties of the `/openapi.json` schema of the same name, in
its order (`class` and `from`, Python keywords, are `class_` and `from_`); the tests check
every schema against these classes, so a field the API gains without the client fails
them. A field the service leaves out where the feed did not give it is `None` here.
Dates are `datetime.date`; instants (`published_at`, `occurred_at`, `status_at`) stay the
text the service sent: RFC 3339 in UTC with `Z`, to the millisecond.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import typing
from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = [
    "RateLimit",
    "Meta",
    "Model",
    "Document",
    "ApiEndpoint",
    "ApiIndex",
    "HorseMatch",
    "HorseSearch",
    "Profile",
    "FormEntry",
    "Form",
    "ResultRunner",
    "ResultRace",
    "ResultsByDate",
    "RaceResult",
    "Record",
    "GoingRecord",
    "Strike",
    "RunnerForm",
    "CardRunner",
    "CardRace",
    "RaceCard",
    "MeetingRow",
    "Meetings",
    "RunnerOdds",
    "RunnerMarket",
    "Market",
    "Book",
    "RaceOdds",
    "OddsMove",
    "OddsHistory",
    "odds_frame",
    "PersonRow",
    "JockeyList",
    "TrainerList",
    "SeasonDoc",
    "RideDoc",
    "PersonRecord",
    "Figures",
    "Row",
    "NumberRow",
    "Analysis",
    "Change",
    "Changes",
    "ErrorBody",
    "NewWebhook",
    "Webhook",
    "WebhookList",
    "WebhookTest",
    "PendingDelivery",
    "WebhookAttempt",
    "WebhookDeliveries",
    "Snapshot",
    "StreamFrame",
    "OddsUpdate",
    "MarketUpdate",
    "StatusChange",
    "Scratching",
    "RaceResultFrame",
    "CardFrame",
    "Retraction",
    "Heartbeat",
    "parse_timestamp",
    "Frame",
]


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


# --- The index ---------------------------------------------------------------------------


@dataclass(kw_only=True)
class ApiEndpoint(Model):
    """One endpoint as the API's index lists it."""

    family: str
    """The reference's tag: `meetings`, `horses`, `results`, `racecards`, `odds`, `people`,
    `changes`."""
    path: str
    """Its path template: each `{name}` is a parameter."""
    summary: str
    docs: str
    """Its section of the HTML reference."""


@dataclass(kw_only=True)
class ApiIndex(Document):
    """The API's index (`/api/v1/`): links to the reference, the socket and every endpoint."""

    about: str
    version: str
    key: str
    """Which of the links need the key."""
    docs: str
    openapi: str
    asyncapi: str
    live_odds: str
    pricing: str
    endpoints: list[ApiEndpoint]


# --- Horses ---------------------------------------------------------------------------


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


# --- Results and cards -------------------------------------------------------------------


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


# --- Odds ------------------------------------------------------------------------------


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


# --- Jockeys and trainers ------------------------------------------------------------------


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


# --- The change feed and errors ----------------------------------------------------------------


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


@dataclass(kw_only=True)
class Change(Model):
    """A document that answers differently from `seq` on."""

    seq: int
    path: str
    """The API path that now answers differently (404 if the document went)."""


@dataclass(kw_only=True)
class Changes(Document):
    """A page of the change feed; `next` is the following page's `since`: a `seq`, or
    `"SEQ.N"` where the page ended inside the changes of one `seq` (after the first N)."""

    changes: list[Change]
    next: int | str | None

    def to_pandas(self) -> Any:
        """One row per change."""
        return _frame((_row(c) for c in self.changes), _columns(Change))


@dataclass(kw_only=True)
class ErrorBody(Model):
    """The body of every error answer."""

    error: str
    """A stable code: `bad_request`, `not_found`, `rate_limited`, ..."""
    message: str
    checkpoint: int | None = None
    """Only on the 503 of a `min_seq` not reached in time: the position the service holds."""


# --- Webhooks -------------------------------------------------------------------------------


@dataclass(kw_only=True)
class NewWebhook(Model):
    """An endpoint to make (`webhooks.create()`)."""

    url: str
    topics: list[str]
    date: datetime.date | None = None


@dataclass(kw_only=True)
class Webhook(Document):
    """One of the key's webhook endpoints. `secret` only in the answer that made or
    rotated it."""

    id: str
    url: str
    topics: list[str]
    date: datetime.date | None = None
    created_at: str
    since: int
    """The log's position when it was made: the events after it are sent."""
    enabled: bool
    disabled_at: str | None = None
    disabled_reason: str | None = None
    secret: str | None = None


@dataclass(kw_only=True)
class WebhookList(Document):
    """The key's endpoints, by id."""

    webhooks: list[Webhook]


@dataclass(kw_only=True)
class WebhookTest(Document):
    """What a `ping` came to."""

    webhook_id: str
    delivered: bool
    response_code: int | None = None
    error: str | None = None
    duration_ms: int


@dataclass(kw_only=True)
class PendingDelivery(Model):
    """The delivery under way: its event, its attempts so far, when the next is due."""

    seq: int
    attempts: int
    next_attempt_at: str


@dataclass(kw_only=True)
class WebhookAttempt(Model):
    """One attempt of a delivery."""

    seq: int
    webhook_id: str
    type: str
    attempt: int
    at: str
    status: str
    """`delivered`, `failed` (another attempt follows) or `given_up`."""
    response_code: int | None = None
    error: str | None = None
    next_attempt_at: str | None = None
    duration_ms: int


@dataclass(kw_only=True)
class WebhookDeliveries(Document):
    """How far an endpoint has been sent, what is under way, and the recent attempts,
    newest first."""

    id: str
    position: int
    pending: PendingDelivery | None = None
    attempts: list[WebhookAttempt]


# --- Live frames ----------------------------------------------------------------------------


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
    Snapshot | OddsUpdate | MarketUpdate | StatusChange | Scratching | RaceResultFrame | CardFrame | Retraction | Heartbeat
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
