"""The asynchronous client, `AsyncRacing`: `Racing`'s methods as coroutines, and `live()`.

The endpoint methods are written here once: `tools/unasync.py` makes `client.py`'s from
them (`python3 clients/python/tools/unasync.py`; a test fails while client.py is stale)."""

from __future__ import annotations

import asyncio
import datetime
from typing import Any, AsyncIterator, Iterable

import httpx

from . import models
from ._core import Call, ClientBase, D, Retry, error_of
from ._core import Endpoints as E
from .errors import ConnectionFailed
from .live import LiveStream, Target
from .webhooks import AsyncWebhooks


class AsyncRacing(ClientBase):
    """The asynchronous twin of `Racing` (same arguments, same documents, same errors),
    plus `live()`, the live stream of odds and the race day. Use it as
    `async with AsyncRacing() as racing:`."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        **options: Any,
    ) -> None:
        super().__init__(api_key, base_url, **options)
        self._http = httpx.AsyncClient(
            headers=self.settings.headers(), timeout=self.settings.timeout, transport=transport
        )
        self.webhooks = AsyncWebhooks(self._http, self._core)
        """The key's webhook endpoints, as `Racing.webhooks` but coroutines."""

    async def aclose(self) -> None:
        """Closes the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRacing:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def get(self, c: Call[D]) -> D:
        """Runs one `Call` with the client's retries, pacing and cache."""
        cached = self._core.cached(c)
        if cached is not None:
            return cached
        attempt = 0
        while True:
            attempt += 1
            await asyncio.sleep(self._core.wait())
            try:
                response = await self._http.get(
                    self._core.url(c.path), params=c.params, headers=self._core.request_headers(c)
                )
            except httpx.TransportError as e:
                retry = self._core.transport_retry(attempt)
                if retry is None:
                    raise ConnectionFailed(f"{c.path}: {e!r}") from e
                await asyncio.sleep(retry.delay)
                continue
            outcome = self._core.answer(c, response, attempt)
            if isinstance(outcome, Retry):
                await asyncio.sleep(outcome.delay)
                continue
            return outcome

    # --- The live stream ----------------------------------------------------------------

    def live(
        self,
        date: datetime.date | str | None = None,
        race_number: int | None = None,
        *,
        targets: Iterable[Target] | None = None,
        since: int | models.Document | None = None,
        topics: Iterable[str] | None = None,
        heartbeats: bool = False,
        max_reconnects: int | None = None,
        transport: str = "ws",
        conflate_ms: int | None = None,
    ) -> LiveStream:
        """The live odds of a meeting (`date`, default today in Hong Kong as `racing watch`
        takes it), of one race (`race_number`), or of several (`targets`, pairs of a date
        and a race number or `None`), as an async iterator of `Snapshot` and `OddsUpdate`
        frames (and `Heartbeat`s with `heartbeats`).

        `topics` follows the race day too, any of `odds`, `status`, `scratchings`,
        `results` and `cards` (`None`: odds only): `StatusChange`, `Scratching`,
        `RaceResultFrame`, `CardFrame` and `Retraction` frames, in one `seq` order with the
        odds. A name the service does not know is a `ValueError` here.

        Without `since` it starts with a `Snapshot` of each race (topic `odds`); with
        `since` (a sequence, or a document whose `Racing-Seq` is taken: read the odds over
        HTTP, then go live from there) it starts with every update and event after it.
        After any drop it reconnects, with backoff, and resumes every topic after the last
        `seq` it yielded, so each frame is yielded once and in order. It gives up only on a
        refused key, a bad subscription, or after `max_reconnects` reconnections in a row
        that failed (default: never).

        `transport="sse"` takes the same frames as Server-Sent Events over plain HTTP
        (`GET /api/v1/live`, resumed with `Last-Event-ID`), for one target; heartbeats are
        comments there, never yielded. `conflate_ms` (0 to 120,000) has the service send a
        race's odds at most one frame each that many milliseconds, each runner at its
        latest prices; the position then moves with the race day's frames alone.
        """
        if targets is None:
            if date is None:
                date = _today_in_hong_kong()
            targets = [(date, race_number)]
        start = since.racing_seq if isinstance(since, models.Document) else since
        return LiveStream(
            self._core.settings,
            list(targets),
            since=start,
            heartbeats=heartbeats,
            max_reconnects=max_reconnects,
            topics=topics,
            transport=transport,
            conflate_ms=conflate_ms,
        )

    # --- Documents ---------------------------------------------------------------------
    # --- unasync start: tools/unasync.py copies what follows into client.py ---

    async def index(self, *, min_seq: int | None = None) -> models.ApiIndex:
        """The API's index: links to the reference, the live socket and every endpoint."""
        return await self.get(E.index().at_least(min_seq))

    async def meetings(
        self, from_date: Any = None, to_date: Any = None, *, min_seq: int | None = None
    ) -> models.Meetings:
        """Which dates have racing (default: 30 days back to 14 ahead)."""
        return await self.get(E.meetings(from_date, to_date).at_least(min_seq))

    async def horses(
        self, name: str, limit: int | None = None, *, min_seq: int | None = None
    ) -> models.HorseSearch:
        """Horses by part of a name, whatever the case."""
        return await self.get(E.horses(name, limit).at_least(min_seq))

    async def horse(
        self, horse_no: str, *, as_of: int | None = None, min_seq: int | None = None
    ) -> models.Profile:
        """A horse's profile."""
        return await self.get(E.horse(horse_no, as_of).at_least(min_seq))

    async def form(
        self, horse_no: str, limit: int | None = None, *, as_of: int | None = None, min_seq: int | None = None
    ) -> models.Form:
        """A horse's form, newest first; `limit` keeps the newest N."""
        return await self.get(E.form(horse_no, limit, as_of).at_least(min_seq))

    async def horse_analysis(
        self,
        horse_no: str,
        from_date: Any = None,
        to_date: Any = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.Analysis:
        """A horse's records by condition over `from_date` to `to_date` (default: every race)."""
        return await self.get(E.horse_analysis(horse_no, from_date, to_date, as_of).at_least(min_seq))

    async def results(
        self, date: Any, venue: str | None = None, *, as_of: int | None = None, min_seq: int | None = None
    ) -> models.ResultsByDate:
        """Every result of a date."""
        return await self.get(E.results(date, venue, as_of).at_least(min_seq))

    async def result(
        self,
        date: Any,
        race_number: int,
        venue: str | None = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.RaceResult:
        """The result of one race."""
        return await self.get(E.result(date, race_number, venue, as_of).at_least(min_seq))

    async def racecard(
        self,
        date: Any = "today",
        venue: str | None = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.RaceCard:
        """The race card of a date; `"today"` (the default) is today in the service's time zone."""
        return await self.get(E.racecard(date, venue, as_of).at_least(min_seq))

    async def odds(
        self,
        date: Any,
        race_number: int,
        venue: str | None = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.RaceOdds:
        """The current win and place odds of a race, with its market."""
        return await self.get(E.odds(date, race_number, venue, as_of).at_least(min_seq))

    async def odds_history_page(
        self,
        date: Any,
        race_number: int,
        venue: str | None = None,
        *,
        since: int | None = None,
        limit: int | None = None,
        min_seq: int | None = None,
    ) -> models.OddsHistory:
        """One page of a race's odds history."""
        return await self.get(E.odds_history(date, race_number, venue, since, limit).at_least(min_seq))

    async def odds_history(
        self,
        date: Any,
        race_number: int,
        venue: str | None = None,
        *,
        since: int | None = None,
        page_size: int | None = None,
        min_seq: int | None = None,
    ) -> AsyncIterator[models.OddsMove]:
        """Every odds move of a race after `since`, oldest first, following `next` to the end."""
        while True:
            page = await self.odds_history_page(
                date, race_number, venue, since=since, limit=page_size, min_seq=min_seq
            )
            for move in page.moves:
                yield move
            if page.next is None:
                return
            since = page.next

    async def jockeys(self, name: str | None = None, *, min_seq: int | None = None) -> models.JockeyList:
        """Every jockey with a ride; `name` keeps those whose name contains it."""
        return await self.get(E.jockeys(name).at_least(min_seq))

    async def jockey(self, person_id: str, *, min_seq: int | None = None) -> models.PersonRecord:
        """A jockey's record."""
        return await self.get(E.jockey(person_id).at_least(min_seq))

    async def jockey_analysis(
        self,
        person_id: str,
        from_date: Any = None,
        to_date: Any = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.Analysis:
        """A jockey's records by condition, and by trainer."""
        return await self.get(E.jockey_analysis(person_id, from_date, to_date, as_of).at_least(min_seq))

    async def trainers(self, name: str | None = None, *, min_seq: int | None = None) -> models.TrainerList:
        """Every trainer with a runner that rode; `name` keeps those whose name contains it."""
        return await self.get(E.trainers(name).at_least(min_seq))

    async def trainer(self, person_id: str, *, min_seq: int | None = None) -> models.PersonRecord:
        """A trainer's record."""
        return await self.get(E.trainer(person_id).at_least(min_seq))

    async def trainer_analysis(
        self,
        person_id: str,
        from_date: Any = None,
        to_date: Any = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.Analysis:
        """A trainer's records by condition, and by jockey."""
        return await self.get(E.trainer_analysis(person_id, from_date, to_date, as_of).at_least(min_seq))

    async def changes_page(
        self, since: int | str | None = None, limit: int | None = None, *, min_seq: int | None = None
    ) -> models.Changes:
        """One page of the change feed."""
        return await self.get(E.changes(since, limit).at_least(min_seq))

    async def changes(
        self, since: int | str | None = None, *, page_size: int | None = None, min_seq: int | None = None
    ) -> AsyncIterator[models.Change]:
        """Every document change after `since`, in `seq` order, following `next` to the end
        of the feed (then poll again later from the last change's `seq`)."""
        while True:
            page = await self.changes_page(since, page_size, min_seq=min_seq)
            for change in page.changes:
                yield change
            if page.next is None:
                return
            since = page.next

    async def openapi(self) -> dict[str, Any]:
        """The service's OpenAPI description (public, no key needed)."""
        response = await self._http.get(self._core.url("/openapi.json"))
        if response.status_code != 200:
            raise error_of(response)
        return response.json()

    # --- unasync end ---


def _today_in_hong_kong() -> datetime.date:
    # Hong Kong keeps no daylight saving time: UTC+8 all year, no tz database needed.
    return (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=8)).date()
