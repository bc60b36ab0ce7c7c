"""The synchronous client, `Racing`: one connection pool, polite retries, ETag revalidation.

Its endpoint methods are written by `tools/unasync.py` from `AsyncRacing`'s in `aio.py`:
change them there and run it. The rest of this file is written by hand."""

from __future__ import annotations

import time
from typing import Any, Iterator

import httpx

from . import models
from ._core import Call, ClientBase, D, Retry, error_of
from ._core import Endpoints as E
from .errors import ConnectionFailed
from .webhooks import Webhooks


class Racing(ClientBase):
    """A client of the racing API.

    `api_key` defaults to `RACING_API_KEY`, `base_url` to `RACING_URL`, else
    `http://127.0.0.1:8080`. Every request shares one connection pool. A 429 or 503 is
    retried up to `max_retries` times, after the `Retry-After` the service gave (if it is at
    most `max_retry_after` seconds), else after a backoff doubling from `backoff` to
    `max_backoff` seconds, with jitter; network errors are retried the same way. With
    `pace` (the default) the client also waits, before a request, for the quota the last
    answer's `RateLimit` said was spent, so that a steady caller is not refused at all.
    The last `cache_size` documents are kept with their `ETag` and revalidated with
    `If-None-Match`. `strict` makes a field the client does not know an error (tests use it).

    Every method answers a typed document whose `meta` says what the headers did:
    `racing_seq`, `as_of`, `etag`, `rate_limit`, `attempts`. Errors are `ApiError`s
    (`NotFound`, `BadRequest`, `RateLimited`, ...) with the API's `error` and `message`.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        **options: Any,
    ) -> None:
        super().__init__(api_key, base_url, **options)
        self._http = httpx.Client(
            headers=self.settings.headers(), timeout=self.settings.timeout, transport=transport
        )
        self.webhooks = Webhooks(self._http, self._core)
        """The key's webhook endpoints (`create`, `list`, `get`, `delete`, `rotate`, `test`,
        `deliveries`, `replay`); `racing_client.webhooks.verify()` checks a delivery."""

    def close(self) -> None:
        """Closes the connection pool."""
        self._http.close()

    def __enter__(self) -> Racing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, c: Call[D]) -> D:
        """Runs one `Call` with the client's retries, pacing and cache."""
        cached = self._core.cached(c)
        if cached is not None:
            return cached
        attempt = 0
        while True:
            attempt += 1
            time.sleep(self._core.wait())
            try:
                response = self._http.get(
                    self._core.url(c.path), params=c.params, headers=self._core.request_headers(c)
                )
            except httpx.TransportError as e:
                retry = self._core.transport_retry(attempt)
                if retry is None:
                    raise ConnectionFailed(f"{c.path}: {e!r}") from e
                time.sleep(retry.delay)
                continue
            outcome = self._core.answer(c, response, attempt)
            if isinstance(outcome, Retry):
                time.sleep(outcome.delay)
                continue
            return outcome

    # --- Documents ---------------------------------------------------------------------
    # --- generated from aio.py by tools/unasync.py: do not edit ---

    def index(self, *, min_seq: int | None = None) -> models.ApiIndex:
        """The API's index: links to the reference, the live socket and every endpoint."""
        return self.get(E.index().at_least(min_seq))

    def meetings(
        self, from_date: Any = None, to_date: Any = None, *, min_seq: int | None = None
    ) -> models.Meetings:
        """Which dates have racing (default: 30 days back to 14 ahead)."""
        return self.get(E.meetings(from_date, to_date).at_least(min_seq))

    def horses(
        self, name: str, limit: int | None = None, *, min_seq: int | None = None
    ) -> models.HorseSearch:
        """Horses by part of a name, whatever the case."""
        return self.get(E.horses(name, limit).at_least(min_seq))

    def horse(
        self, horse_no: str, *, as_of: int | None = None, min_seq: int | None = None
    ) -> models.Profile:
        """A horse's profile."""
        return self.get(E.horse(horse_no, as_of).at_least(min_seq))

    def form(
        self, horse_no: str, limit: int | None = None, *, as_of: int | None = None, min_seq: int | None = None
    ) -> models.Form:
        """A horse's form, newest first; `limit` keeps the newest N."""
        return self.get(E.form(horse_no, limit, as_of).at_least(min_seq))

    def horse_analysis(
        self,
        horse_no: str,
        from_date: Any = None,
        to_date: Any = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.Analysis:
        """A horse's records by condition over `from_date` to `to_date` (default: every race)."""
        return self.get(E.horse_analysis(horse_no, from_date, to_date, as_of).at_least(min_seq))

    def results(
        self, date: Any, venue: str | None = None, *, as_of: int | None = None, min_seq: int | None = None
    ) -> models.ResultsByDate:
        """Every result of a date."""
        return self.get(E.results(date, venue, as_of).at_least(min_seq))

    def result(
        self,
        date: Any,
        race_number: int,
        venue: str | None = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.RaceResult:
        """The result of one race."""
        return self.get(E.result(date, race_number, venue, as_of).at_least(min_seq))

    def racecard(
        self,
        date: Any = "today",
        venue: str | None = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.RaceCard:
        """The race card of a date; `"today"` (the default) is today in the service's time zone."""
        return self.get(E.racecard(date, venue, as_of).at_least(min_seq))

    def odds(
        self,
        date: Any,
        race_number: int,
        venue: str | None = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.RaceOdds:
        """The current win and place odds of a race, with its market."""
        return self.get(E.odds(date, race_number, venue, as_of).at_least(min_seq))

    def odds_history_page(
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
        return self.get(E.odds_history(date, race_number, venue, since, limit).at_least(min_seq))

    def odds_history(
        self,
        date: Any,
        race_number: int,
        venue: str | None = None,
        *,
        since: int | None = None,
        page_size: int | None = None,
        min_seq: int | None = None,
    ) -> Iterator[models.OddsMove]:
        """Every odds move of a race after `since`, oldest first, following `next` to the end."""
        while True:
            page = self.odds_history_page(
                date, race_number, venue, since=since, limit=page_size, min_seq=min_seq
            )
            for move in page.moves:
                yield move
            if page.next is None:
                return
            since = page.next

    def jockeys(self, name: str | None = None, *, min_seq: int | None = None) -> models.JockeyList:
        """Every jockey with a ride; `name` keeps those whose name contains it."""
        return self.get(E.jockeys(name).at_least(min_seq))

    def jockey(self, person_id: str, *, min_seq: int | None = None) -> models.PersonRecord:
        """A jockey's record."""
        return self.get(E.jockey(person_id).at_least(min_seq))

    def jockey_analysis(
        self,
        person_id: str,
        from_date: Any = None,
        to_date: Any = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.Analysis:
        """A jockey's records by condition, and by trainer."""
        return self.get(E.jockey_analysis(person_id, from_date, to_date, as_of).at_least(min_seq))

    def trainers(self, name: str | None = None, *, min_seq: int | None = None) -> models.TrainerList:
        """Every trainer with a runner that rode; `name` keeps those whose name contains it."""
        return self.get(E.trainers(name).at_least(min_seq))

    def trainer(self, person_id: str, *, min_seq: int | None = None) -> models.PersonRecord:
        """A trainer's record."""
        return self.get(E.trainer(person_id).at_least(min_seq))

    def trainer_analysis(
        self,
        person_id: str,
        from_date: Any = None,
        to_date: Any = None,
        *,
        as_of: int | None = None,
        min_seq: int | None = None,
    ) -> models.Analysis:
        """A trainer's records by condition, and by jockey."""
        return self.get(E.trainer_analysis(person_id, from_date, to_date, as_of).at_least(min_seq))

    def changes_page(
        self, since: int | str | None = None, limit: int | None = None, *, min_seq: int | None = None
    ) -> models.Changes:
        """One page of the change feed."""
        return self.get(E.changes(since, limit).at_least(min_seq))

    def changes(
        self, since: int | str | None = None, *, page_size: int | None = None, min_seq: int | None = None
    ) -> Iterator[models.Change]:
        """Every document change after `since`, in `seq` order, following `next` to the end
        of the feed (then poll again later from the last change's `seq`)."""
        while True:
            page = self.changes_page(since, page_size, min_seq=min_seq)
            for change in page.changes:
                yield change
            if page.next is None:
                return
            since = page.next

    def openapi(self) -> dict[str, Any]:
        """The service's OpenAPI description (public, no key needed)."""
        response = self._http.get(self._core.url("/openapi.json"))
        if response.status_code != 200:
            raise error_of(response)
        return response.json()

    # --- end of generated code ---
