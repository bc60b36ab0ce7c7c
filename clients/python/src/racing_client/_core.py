"""What the sync and the async client share: settings, the endpoints as requests, the ETag
cache, pacing by the `RateLimit` headers, and reading an answer into a document, a retry
or an error. The two clients only add the I/O."""

from __future__ import annotations

import datetime
import email.utils
import json
import os
import random
import threading
import time
from collections import OrderedDict
import dataclasses
from dataclasses import dataclass
from typing import Any, Generic, Mapping, TypeVar
from urllib.parse import quote

import httpx

from . import models
from ._decode import decode
from .errors import ApiError, ConfigurationError, DecodeError, RateLimited, error_class

__version__ = "0.1.0"

D = TypeVar("D", bound=models.Document)

DEFAULT_URL = "http://127.0.0.1:8080"
RETRY_STATUSES = (429, 503)


@dataclass(frozen=True)
class Settings:
    """How a client talks to the service; see `Racing` for each."""

    api_key: str
    base_url: str
    timeout: float = 10.0
    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 60.0
    cache_size: int = 256
    pace: bool = True
    strict: bool = False

    @staticmethod
    def make(api_key: str | None, base_url: str | None, **options: Any) -> Settings:
        """Settings from the arguments, else `RACING_API_KEY` and `RACING_URL`."""
        key = api_key or os.environ.get("RACING_API_KEY")
        if not key:
            raise ConfigurationError("no API key: pass api_key= or set RACING_API_KEY")
        url = (base_url or os.environ.get("RACING_URL") or DEFAULT_URL).rstrip("/")
        return Settings(api_key=key, base_url=url, **options)

    def headers(self) -> dict[str, str]:
        """The headers of every request."""
        return {
            "X-API-Key": self.api_key,
            "Accept": "application/json",
            "User-Agent": f"racing-client-python/{__version__}",
        }

    def backoff_delay(self, attempt: int) -> float:
        """Seconds before retry `attempt` (1, 2, ...): doubling from `backoff` up to
        `max_backoff`, with jitter so that many clients refused together do not come back
        together."""
        ceiling = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return random.uniform(ceiling / 2, ceiling)


@dataclass(frozen=True)
class Call(Generic[D]):
    """One GET of the API: its path, query and the document it answers."""

    path: str
    params: dict[str, str]
    model: type[D]
    as_of: int | None = None

    @property
    def key(self) -> str:
        """The cache key: the path and the sorted query."""
        return self.path + "?" + "&".join(f"{k}={v}" for k, v in sorted(self.params.items()))

    def at_least(self, min_seq: int | None) -> Call[D]:
        """The same call answered only once the service holds the log up to `min_seq` (a
        publish's sequence): it waits for it, up to its limit, then a 503 that the client
        retries after its `Retry-After`."""
        if min_seq is None:
            return self
        return dataclasses.replace(self, params={**self.params, "min_seq": _text(min_seq)})


def _text(value: Any) -> str:
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def call(model: type[D], path: str, **params: Any) -> Call[D]:
    """A `Call` with the parameters given (those `None` left out); `from_` is `from`."""
    query = {k.rstrip("_"): _text(v) for k, v in params.items() if v is not None}
    as_of = params.get("as_of")
    return Call(path=path, params=query, model=model, as_of=as_of)


def _segment(value: Any) -> str:
    return quote(_text(value), safe="")


class Endpoints:
    """Every GET of the API as a `Call`, so both clients build them the same way."""

    @staticmethod
    def index() -> Call[models.ApiIndex]:
        return call(models.ApiIndex, "/api/v1/")

    @staticmethod
    def meetings(from_date: Any = None, to_date: Any = None) -> Call[models.Meetings]:
        return call(models.Meetings, "/api/v1/meetings", from_=from_date, to=to_date)

    @staticmethod
    def horses(name: str, limit: int | None = None) -> Call[models.HorseSearch]:
        return call(models.HorseSearch, "/api/v1/horses", name=name, limit=limit)

    @staticmethod
    def horse(horse_no: str, as_of: int | None = None) -> Call[models.Profile]:
        return call(models.Profile, f"/api/v1/horses/{_segment(horse_no)}", as_of=as_of)

    @staticmethod
    def form(horse_no: str, limit: int | None = None, as_of: int | None = None) -> Call[models.Form]:
        path = f"/api/v1/horses/{_segment(horse_no)}/form"
        return call(models.Form, path, limit=limit, as_of=as_of)

    @staticmethod
    def results(date: Any, venue: str | None = None, as_of: int | None = None) -> Call[models.ResultsByDate]:
        path = f"/api/v1/results/{_segment(date)}"
        return call(models.ResultsByDate, path, venue=venue, as_of=as_of)

    @staticmethod
    def result(
        date: Any, race_number: int, venue: str | None = None, as_of: int | None = None
    ) -> Call[models.RaceResult]:
        path = f"/api/v1/results/{_segment(date)}/{_segment(race_number)}"
        return call(models.RaceResult, path, venue=venue, as_of=as_of)

    @staticmethod
    def racecard(date: Any, venue: str | None = None, as_of: int | None = None) -> Call[models.RaceCard]:
        return call(models.RaceCard, f"/api/v1/racecards/{_segment(date)}", venue=venue, as_of=as_of)

    @staticmethod
    def odds(
        date: Any, race_number: int, venue: str | None = None, as_of: int | None = None
    ) -> Call[models.RaceOdds]:
        path = f"/api/v1/odds/{_segment(date)}/{_segment(race_number)}"
        return call(models.RaceOdds, path, venue=venue, as_of=as_of)

    @staticmethod
    def odds_history(
        date: Any,
        race_number: int,
        venue: str | None = None,
        since: int | None = None,
        limit: int | None = None,
    ) -> Call[models.OddsHistory]:
        path = f"/api/v1/odds/{_segment(date)}/{_segment(race_number)}/history"
        return call(models.OddsHistory, path, venue=venue, since=since, limit=limit)

    @staticmethod
    def jockeys(name: str | None = None) -> Call[models.JockeyList]:
        return call(models.JockeyList, "/api/v1/jockeys", name=name)

    @staticmethod
    def jockey(person_id: str) -> Call[models.PersonRecord]:
        return call(models.PersonRecord, f"/api/v1/jockeys/{_segment(person_id)}")

    @staticmethod
    def trainers(name: str | None = None) -> Call[models.TrainerList]:
        return call(models.TrainerList, "/api/v1/trainers", name=name)

    @staticmethod
    def trainer(person_id: str) -> Call[models.PersonRecord]:
        return call(models.PersonRecord, f"/api/v1/trainers/{_segment(person_id)}")

    @staticmethod
    def horse_analysis(
        horse_no: str, from_date: Any = None, to_date: Any = None, as_of: int | None = None
    ) -> Call[models.Analysis]:
        path = f"/api/v1/horses/{_segment(horse_no)}/analysis"
        return call(models.Analysis, path, from_=from_date, to=to_date, as_of=as_of)

    @staticmethod
    def jockey_analysis(
        person_id: str, from_date: Any = None, to_date: Any = None, as_of: int | None = None
    ) -> Call[models.Analysis]:
        path = f"/api/v1/jockeys/{_segment(person_id)}/analysis"
        return call(models.Analysis, path, from_=from_date, to=to_date, as_of=as_of)

    @staticmethod
    def trainer_analysis(
        person_id: str, from_date: Any = None, to_date: Any = None, as_of: int | None = None
    ) -> Call[models.Analysis]:
        path = f"/api/v1/trainers/{_segment(person_id)}/analysis"
        return call(models.Analysis, path, from_=from_date, to=to_date, as_of=as_of)

    @staticmethod
    def changes(since: int | str | None = None, limit: int | None = None) -> Call[models.Changes]:
        return call(models.Changes, "/api/v1/changes", since=since, limit=limit)


@dataclass
class _Cached:
    etag: str
    body: bytes
    immutable: bool


class Cache:
    """The last answers with an `ETag`, least recently used dropped first: their validator
    goes in `If-None-Match`, and a 304 answers with the copy kept here. An `as_of` answer,
    `immutable`, is served from here without asking again."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[str, _Cached] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> _Cached | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: str, entry: _Cached) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


def _params(header: str | None) -> dict[str, str]:
    """The `key=value` parameters of the first item of a structured header
    (`"default";r=73;t=1`)."""
    if not header:
        return {}
    found = {}
    for part in header.split(",")[0].split(";")[1:]:
        name, _, value = part.strip().partition("=")
        found[name] = value.strip()
    return found


def rate_limit(headers: httpx.Headers) -> models.RateLimit | None:
    """The `RateLimit` and `RateLimit-Policy` headers, if the answer had them."""
    now = _params(headers.get("ratelimit"))
    policy = _params(headers.get("ratelimit-policy"))
    try:
        return models.RateLimit(
            remaining=int(now["r"]),
            reset=float(now["t"]),
            limit=int(policy["q"]) if "q" in policy else None,
            window=float(policy["w"]) if "w" in policy else None,
        )
    except (KeyError, ValueError):
        return None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """`Retry-After` in seconds (it may be a number of seconds or an HTTP date), from
    httpx's or websockets' headers."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _int_header(headers: httpx.Headers, name: str) -> int | None:
    try:
        return int(headers[name])
    except (KeyError, ValueError):
        return None


@dataclass(frozen=True)
class Retry:
    """Try the call again after `delay` seconds."""

    delay: float


class Core:
    """The state a client keeps between requests (cache, pacing) and the rules for answers."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.cache = Cache(settings.cache_size)
        self._not_before = 0.0
        self._lock = threading.Lock()

    def url(self, path: str) -> str:
        return self.settings.base_url + path

    def cached(self, c: Call[D]) -> D | None:
        """The document from the cache, without a request, if it can never change."""
        entry = self.cache.get(c.key)
        if entry is None or not entry.immutable:
            return None
        meta = models.Meta(
            status=0, racing_seq=c.as_of, as_of=c.as_of, etag=entry.etag, rate_limit=None, attempts=0
        )
        return self._document(c, entry.body, meta)

    def request_headers(self, c: Call[Any]) -> dict[str, str]:
        entry = self.cache.get(c.key)
        return {"If-None-Match": entry.etag} if entry else {}

    def wait(self) -> float:
        """Seconds to wait before the next request so that it is not refused: when the last
        answer said the quota was spent, the time for one request to come back."""
        if not self.settings.pace:
            return 0.0
        with self._lock:
            return max(0.0, self._not_before - time.monotonic())

    def _note_quota(self, limit: models.RateLimit | None) -> None:
        if limit is None or limit.remaining > 0:
            return
        if limit.limit and limit.window:
            one = limit.window / limit.limit
        else:
            one = limit.reset
        with self._lock:
            self._not_before = max(self._not_before, time.monotonic() + min(one, limit.reset))

    def transport_retry(self, attempt: int) -> Retry | None:
        """A retry after a network error, while retries are left."""
        if attempt > self.settings.max_retries:
            return None
        return Retry(self.settings.backoff_delay(attempt))

    def answer(self, c: Call[D], response: httpx.Response, attempt: int) -> D | Retry:
        """A document, a `Retry`, or raises the answer's error."""
        limit = rate_limit(response.headers)
        self._note_quota(limit)
        status = response.status_code
        if status in (200, 304):
            meta = models.Meta(
                status=status,
                racing_seq=_int_header(response.headers, "racing-seq"),
                as_of=c.as_of,
                etag=response.headers.get("etag"),
                rate_limit=limit,
                attempts=attempt,
                request_id=response.headers.get("x-request-id"),
            )
            if status == 304:
                entry = self.cache.get(c.key)
                if entry is None:
                    raise DecodeError(f"{c.path}: 304 for a document the client does not hold")
                return self._document(c, entry.body, meta)
            body = response.content
            document = self._document(c, body, meta)
            if meta.etag:
                immutable = "immutable" in response.headers.get("cache-control", "")
                self.cache.put(c.key, _Cached(meta.etag, body, immutable))
            return document
        wait = retry_after(response.headers)
        if status in RETRY_STATUSES and attempt <= self.settings.max_retries:
            if wait is None or wait <= self.settings.max_retry_after:
                # Honour the service's word, with a little jitter so that a crowd told the
                # same second does not come back in the same millisecond.
                delay = (
                    self.settings.backoff_delay(attempt) if wait is None else wait + random.uniform(0, 0.1)
                )
                return Retry(delay)
        raise error_of(response, wait)

    def _document(self, c: Call[D], body: bytes, meta: models.Meta) -> D:
        try:
            data = json.loads(body)
        except ValueError as e:
            raise DecodeError(f"{c.path}: the answer is not JSON: {e}") from None
        document = decode(c.model, data, strict=self.settings.strict, where=c.model.__name__)
        document.meta = meta
        return document


def error_of(response: httpx.Response, wait: float | None = None) -> ApiError:
    """The typed error of an error answer, with the API's `error` and `message`."""
    status = response.status_code
    error, message = "", response.reason_phrase
    try:
        body = response.json()
        error, message = str(body["error"]), str(body["message"])
    except (ValueError, KeyError, TypeError):
        pass
    cls = error_class(status, error)
    if wait is None:
        wait = retry_after(response.headers)
    if status == 429 and cls is not RateLimited:
        cls = RateLimited
    return cls(
        status,
        error or f"http_{status}",
        message,
        retry_after=wait,
        request_id=response.headers.get("x-request-id"),
        checkpoint=_int_header(response.headers, "racing-checkpoint"),
    )


class ClientBase:
    """The settings and state both clients are made of; see `Racing` for the arguments."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 10.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_retry_after: float = 60.0,
        cache_size: int = 256,
        pace: bool = True,
        strict: bool = False,
    ) -> None:
        self._core = Core(
            Settings.make(
                api_key,
                base_url,
                timeout=timeout,
                max_retries=max_retries,
                backoff=backoff,
                max_backoff=max_backoff,
                max_retry_after=max_retry_after,
                cache_size=cache_size,
                pace=pace,
                strict=strict,
            )
        )

    @property
    def settings(self) -> Settings:
        """The settings in use."""
        return self._core.settings
