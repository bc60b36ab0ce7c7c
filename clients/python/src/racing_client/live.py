"""The live stream, odds and the race day: a WebSocket session (or, with `transport="sse"`,
the same frames as Server-Sent Events over plain HTTP) that reconnects after any drop and
resumes after the last `seq` it yielded, so that the caller sees every update and race-day
event once and in order."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
from typing import Any, AsyncIterator, Iterable, Tuple, Union

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from . import models
from ._core import Settings, error_of, retry_after
from ._decode import decode
from .errors import ApiError, ConnectionFailed, DecodeError, LiveError, Unauthorized, error_class

log = logging.getLogger("racing_client.live")

Target = Tuple[Union[datetime.date, str], Union[int, None]]
"""What a stream follows: a meeting's date and a race number, or `None` for every race."""

# Close code of a policy violation: a revoked or expired key (fatal), or a reader that fell
# too far behind too often (resumable).
_CLOSE_POLICY = 1008
_MAX_FRAME = 16 * 1024 * 1024

TRANSPORTS = ("ws", "sse")
"""How a stream is carried: the WebSocket, or Server-Sent Events (`GET /api/v1/live`)."""

# Seconds an event stream may say nothing, comments included, before it counts as lost.
_SSE_SILENCE = 30.0

TOPICS = ("odds", "status", "scratchings", "results", "cards", "market")
"""What a stream may follow (`live(topics=...)`): the service's names, in its order."""

EVENTS: dict[str, type[models.StreamFrame]] = {
    "odds": models.OddsUpdate,
    "status": models.StatusChange,
    "scratching": models.Scratching,
    "result": models.RaceResultFrame,
    "card": models.CardFrame,
    "retraction": models.Retraction,
}
"""The class of each frame `type` of one event of the stream: odds and the race day, in one
`seq` order, so that one `last_seq` resumes them all."""


class LiveStream:
    """An async iterator of live frames; see `AsyncRacing.live()`.

    `last_seq` is the position it resumes after, every topic alike; `connections` counts
    the connections it opened, `reconnects` those after the first; `duplicates` counts
    updates at or below `last_seq`, and race-day frames at or below the last race-day frame,
    that a server sent again and the stream dropped (none, with this service). A race's
    snapshot moves `last_seq` to its last move without making the race-day events before
    that move duplicates: this service replays a resume's race-day events before its
    snapshots, and a server that sends them after, below the snapshot's `seq`, is read alike.
    Close it with `aclose()`, or use it as `async with racing.live(...) as stream:`. A read
    that is cancelled (a timeout around `__anext__()`) ends the stream then and there, its
    connection dropped; `live(..., since=stream.last_seq)` takes up after it.
    """

    def __init__(
        self,
        settings: Settings,
        targets: list[Target],
        *,
        since: int | None,
        heartbeats: bool,
        max_reconnects: int | None,
        topics: Iterable[str] | None = None,
        transport: str = "ws",
        conflate_ms: int | None = None,
    ) -> None:
        if not targets:
            raise ValueError("live() needs at least one date to follow")
        if transport not in TRANSPORTS:
            raise ValueError(f"transport is one of {', '.join(TRANSPORTS)}, not {transport!r}")
        if transport == "sse" and len(targets) != 1:
            raise ValueError("transport='sse' follows one target: a stream for each")
        if conflate_ms is not None and not 0 <= conflate_ms <= 120_000:
            raise ValueError(f"conflate_ms is from 0 to 120000, not {conflate_ms}")
        self._transport = transport
        self._conflate_ms = conflate_ms
        self._settings = settings
        self._targets = [(_date_text(d), r) for d, r in targets]
        self._topics = _topics(topics)
        self._heartbeats = heartbeats
        self._max_reconnects = max_reconnects
        self.last_seq: int | None = since
        # The last race-day event's position: what a race-day frame is a duplicate of.
        self._day_seq: int | None = since
        self.connections = 0
        self.reconnects = 0
        self.duplicates = 0
        self._welcomed = False
        self._restart = False
        self._frames = self._run()

    def __aiter__(self) -> LiveStream:
        return self

    async def __anext__(self) -> models.Frame:
        return await self._frames.__anext__()

    async def aclose(self) -> None:
        """Ends the stream and its connection."""
        await self._frames.aclose()

    async def __aenter__(self) -> LiveStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _url(self) -> str:
        base = self._settings.base_url
        scheme, _, rest = base.partition("://")
        return {"https": "wss", "http": "ws"}.get(scheme, scheme) + "://" + rest + "/ws/live/odds"

    async def _run(self) -> AsyncIterator[models.Frame]:
        if self._transport == "sse":
            async with contextlib.aclosing(self._run_sse()) as frames:
                async for frame in frames:
                    yield frame
            return
        failures = 0
        while True:
            wait: float | None = None
            try:
                socket = await connect(
                    self._url(),
                    additional_headers=self._settings.headers(),
                    open_timeout=self._settings.timeout,
                    max_size=_MAX_FRAME,
                    close_timeout=2,
                )
            except InvalidStatus as e:
                status = e.response.status_code
                if status not in (429, 503):
                    raise _refusal(e) from None
                wait = retry_after(e.response.headers)
                socket = None
            except (OSError, asyncio.TimeoutError, InvalidHandshake) as e:
                log.info("live odds: cannot connect: %r", e)
                socket = None
            if socket is not None:
                self.connections += 1
                self.reconnects = self.connections - 1
                self._welcomed = False
                cancelled = False
                try:
                    # Closed with this generator, not later by the event loop's finalizer.
                    async with contextlib.aclosing(self._session(socket)) as frames:
                        async for frame in frames:
                            yield frame
                except asyncio.CancelledError:
                    # The reader gave up (a timeout, a cancelled task): drop the connection
                    # and leave with no await, so that nothing of the stream runs once the
                    # cancellation is through. (`asyncio.wait_for` before 3.12 waits for
                    # that; cancelled meanwhile, it would leave the generator running, and
                    # the caller's `aclose()` would find it so.)
                    cancelled = True
                    socket.transport.abort()
                    raise
                except ConnectionClosed as e:
                    close = e.rcvd
                    if close is not None and close.code == _CLOSE_POLICY and "API key" in close.reason:
                        raise Unauthorized(401, "unauthorized", close.reason) from None
                    log.info("live odds: connection lost (%s); resuming after seq %s", e, self.last_seq)
                except asyncio.TimeoutError:
                    log.info("live odds: nothing heard for three heartbeats; reconnecting")
                except OSError as e:
                    log.info("live odds: connection broke: %r", e)
                finally:
                    if not cancelled:
                        await socket.close()
                if self._welcomed:
                    # It worked until it dropped: the next try is a first one again.
                    failures = 0
            failures += 1
            if self._max_reconnects is not None and failures > self._max_reconnects:
                raise ConnectionFailed(f"live odds: {failures} connections in a row failed")
            delay = self._settings.backoff_delay(failures)
            if wait is not None and wait <= self._settings.max_retry_after:
                delay = max(delay, wait)
            await asyncio.sleep(delay)

    async def _session(self, socket: ClientConnection) -> AsyncIterator[models.Frame]:
        """One connection's frames: the welcome, the subscriptions (with `since` when there
        is a position to resume after), then snapshots and updates."""
        welcome = json.loads(await _recv(socket, self._settings.timeout))
        if welcome.get("type") != "welcome":
            raise DecodeError(f"live odds: expected a welcome, got {welcome.get('type')!r}")
        self._welcomed = True
        heartbeat = float(welcome.get("heartbeat_ms", 5000)) / 1000
        resume = self.last_seq
        for date, race in self._targets:
            message: dict[str, Any] = {"type": "subscribe", "date": date}
            if race is not None:
                message["race_number"] = race
            if self._topics is not None:
                message["topics"] = self._topics
            if self._conflate_ms is not None:
                message["conflate_ms"] = self._conflate_ms
            if resume is not None:
                message["since"] = resume
            await socket.send(json.dumps(message))
        # A service whose log is behind our position (a store restored, a new stream)
        # answers the resume with snapshots: their sequences start the count afresh.
        self._restart = resume is not None and int(welcome.get("seq", 0)) < resume
        silence = 3 * heartbeat + 2
        while True:
            frame = self._frame(json.loads(await _recv(socket, silence)))
            if frame is not None:
                yield frame

    def _frame(self, data: dict[str, Any]) -> models.Frame | None:
        """What the stream yields of one frame of the service's, if anything; the position
        it resumes after moves on with it."""
        kind = data.get("type")
        # A replay's frames are outside the live order: not the stream's to yield.
        event = None if data.get("replay") else EVENTS.get(kind)
        if event is not None:
            update = decode(event, data, strict=self._settings.strict)
            update.received_at = datetime.datetime.now(datetime.timezone.utc)
            # Conflated odds of different races may come out of `seq` order: they move
            # nothing, and the race day's frames alone carry the position.
            conflated = kind == "odds" and bool(self._conflate_ms)
            if kind != "odds":
                # A snapshot's `seq` is its race's last move: a server may send the
                # race-day events of a resume that came before that move after the
                # snapshot, below its `seq`. They are duplicates only at or below the
                # last race-day event had.
                if self._day_seq is not None and update.seq <= self._day_seq:
                    self.duplicates += 1
                    return None
                self._day_seq = update.seq
                self.last_seq = max(self.last_seq or 0, update.seq)
            elif not conflated:
                if self.last_seq is not None and update.seq <= self.last_seq:
                    self.duplicates += 1
                    return None
                self.last_seq = update.seq
            return update
        if kind == "snapshot":
            snapshot = decode(models.Snapshot, data, strict=self._settings.strict)
            if self._restart or self.last_seq is None:
                self.last_seq = snapshot.seq
                if self._restart:
                    self._day_seq = None
                self._restart = False
            else:
                self.last_seq = max(self.last_seq, snapshot.seq)
            return snapshot
        if kind == "market":
            # Conflated, at most once a second a race: the market as it stands, with the
            # race's latest odds position, outside the order of the events.
            market = decode(models.MarketUpdate, data, strict=self._settings.strict)
            market.received_at = datetime.datetime.now(datetime.timezone.utc)
            return market
        if kind == "heartbeat" and self._heartbeats:
            return decode(models.Heartbeat, data, strict=self._settings.strict)
        if kind == "error":
            raise LiveError(0, str(data.get("error")), str(data.get("message")))
        return None

    def _query(self) -> dict[str, str]:
        """The event stream's query: the one target, its topics and its conflation."""
        (date, race), = self._targets
        query = {"date": date}
        if race is not None:
            query["race_number"] = str(race)
        if self._topics is not None:
            query["topics"] = ",".join(self._topics)
        if self._conflate_ms is not None:
            query["conflate_ms"] = str(self._conflate_ms)
        return query

    async def _run_sse(self) -> AsyncIterator[models.Frame]:
        """The stream as Server-Sent Events: each connection resumes with `Last-Event-ID`,
        the last position yielded, as the socket's `since`."""
        failures = 0
        timeout = httpx.Timeout(self._settings.timeout, read=_SSE_SILENCE)
        async with httpx.AsyncClient(headers=self._settings.headers(), timeout=timeout) as http:
            while True:
                wait: float | None = None
                headers = {} if self.last_seq is None else {"Last-Event-ID": str(self.last_seq)}
                resume = self.last_seq
                try:
                    async with http.stream(
                        "GET", self._settings.base_url + "/api/v1/live", params=self._query(), headers=headers
                    ) as response:
                        if response.status_code != 200:
                            await response.aread()
                            if response.status_code not in (429, 503):
                                raise error_of(response)
                            wait = retry_after(response.headers)
                        else:
                            self.connections += 1
                            self.reconnects = self.connections - 1
                            self._welcomed = False
                            async for frame in self._events(response, resume):
                                yield frame
                except (httpx.TransportError, httpx.StreamError) as e:
                    log.info("live odds (event stream): connection lost (%r); resuming after seq %s", e, self.last_seq)
                if self._welcomed:
                    failures = 0
                failures += 1
                if self._max_reconnects is not None and failures > self._max_reconnects:
                    raise ConnectionFailed(f"live odds: {failures} connections in a row failed")
                delay = self._settings.backoff_delay(failures)
                if wait is not None and wait <= self._settings.max_retry_after:
                    delay = max(delay, wait)
                await asyncio.sleep(delay)

    async def _events(self, response: httpx.Response, resume: int | None) -> AsyncIterator[models.Frame]:
        """The frames of one event stream, until it ends or closes."""
        event, data = "", []
        async for line in response.aiter_lines():
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    event = value
                elif name == "data":
                    data.append(value)
                continue
            if not event:
                continue
            payload = json.loads("\n".join(data))
            event, data = "", []
            if payload.get("type") == "welcome":
                self._welcomed = True
                self._restart = resume is not None and int(payload.get("seq", 0)) < resume
            elif "code" in payload and "reason" in payload and "type" not in payload:
                reason = str(payload["reason"])
                if payload["code"] == _CLOSE_POLICY and "API key" in reason:
                    raise Unauthorized(401, "unauthorized", reason)
                log.info("live odds (event stream): closed (%s); resuming after seq %s", reason, self.last_seq)
                return
            else:
                frame = self._frame(payload)
                if frame is not None:
                    yield frame


async def _recv(socket: ClientConnection, seconds: float) -> Any:
    """The next message, or `asyncio.TimeoutError` after `seconds` without one.

    The read is the only await, and the timer drops the connection rather than cancel it.
    Not `asyncio.wait_for(socket.recv(), seconds)`: before Python 3.12 that reads in a task
    of its own and, when its caller is cancelled in the turn of the event loop in which a
    message comes, returns the message and loses the cancellation. A quiet stream's
    heartbeat comes one interval after it connected, in the very turn in which a caller's
    `asyncio.wait_for(stream.__anext__(), interval)` gives up: the read would go on for
    ever (heartbeats are not yielded), and that `wait_for` would wait on it."""
    silent = False

    def expire() -> None:
        nonlocal silent
        silent = True
        socket.transport.abort()

    timer = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        return await socket.recv()
    except ConnectionClosed:
        if silent:
            raise asyncio.TimeoutError from None
        raise
    finally:
        timer.cancel()


def _refusal(e: InvalidStatus) -> ApiError:
    """The error of a refused upgrade, from its `{error, message}` body."""
    status = e.response.status_code
    error, message = f"http_{status}", "the live odds upgrade was refused"
    try:
        body = json.loads(e.response.body or b"")
        error, message = str(body["error"]), str(body["message"])
    except (ValueError, KeyError, TypeError):
        pass
    return error_class(status, error)(status, error, message)


def _topics(topics: Iterable[str] | None) -> list[str] | None:
    """The topics to subscribe to, checked against the service's names (`None`: its
    default, odds only), so that a misspelt one fails here rather than on the socket."""
    # One name is a string, itself an iterable of one-letter "topics".
    if topics is None:
        return None
    if isinstance(topics, str):
        raise TypeError(f"topics is a list of names, such as [{topics!r}], not one name")
    names = list(dict.fromkeys(topics))
    if not names:
        raise ValueError(f"topics needs at least one of {', '.join(TOPICS)}")
    unknown = [t for t in names if t not in TOPICS]
    if unknown:
        raise ValueError(
            f"unknown live topic(s) {', '.join(map(repr, unknown))}: the service follows {', '.join(TOPICS)}"
        )
    return names


def _date_text(date: datetime.date | str) -> str:
    return date.isoformat() if isinstance(date, datetime.date) else str(date)
