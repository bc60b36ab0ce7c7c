"""`live()` when its reader gives up: a read cancelled by `asyncio.wait_for`, at the
heartbeat's interval or sooner, before or after a `LiveError` on the same client, ends at
once, ends the stream and leaves nothing running; `aclose()` and a new `live()` on the same
client work after it, and a new one with `since=last_seq` takes up after the last frame."""

from __future__ import annotations

import asyncio
import time

from conftest import HEARTBEAT_SECS
from test_live import _history

import racing_client
from racing_client import OddsUpdate, Snapshot

# A date without racing: its stream is heartbeats only, which `live()` does not yield, so a
# read of it waits until it is cancelled.
QUIET = "2030-01-01"
# How long after its timeout a cancelled read may take to end.
SLACK = 2


async def _read_cancelled(racing, timeout: float) -> float:
    """Reads a quiet stream under `asyncio.wait_for(..., timeout)`; checks that the stream
    has ended and closes it. How long the read took to give up."""
    stream = racing.live(QUIET)
    start = time.monotonic()
    try:
        frame = await asyncio.wait_for(stream.__anext__(), timeout)
    except asyncio.TimeoutError:
        pass
    else:
        raise AssertionError(f"a quiet stream yielded {frame!r}")
    elapsed = time.monotonic() - start
    assert stream.connections == 1, stream.connections
    # The cancellation ended the stream: the next read says so at once.
    try:
        await asyncio.wait_for(stream.__anext__(), SLACK)
    except StopAsyncIteration:
        pass
    else:
        raise AssertionError("the stream went on after a cancelled read")
    await stream.aclose()
    return elapsed


async def _nothing_left_running(before: set[asyncio.Task]) -> None:
    """Waits (at most `SLACK` seconds) until no task is left but those of `before`: no read
    of a stream and no task of its connection outlives the stream."""
    deadline = time.monotonic() + SLACK
    while True:
        others = asyncio.all_tasks() - before
        if not others:
            return
        assert time.monotonic() < deadline, f"still running: {others}"
        await asyncio.sleep(0.02)


async def _first_snapshot(racing) -> Snapshot:
    """The first frame of a new `live()` of today's meeting: the client still streams."""
    card = await racing.racecard()
    async with racing.live(card.date) as stream:
        frame = await asyncio.wait_for(stream.__anext__(), 20)
    assert isinstance(frame, Snapshot), frame
    return frame


def test_a_read_cancelled_at_the_heartbeat_interval_or_sooner_ends_at_once(service):
    # The heartbeat of a quiet stream comes one interval after it connected, milliseconds
    # after a timeout of that interval that started just before it: the event loop, woken
    # that late from so long a wait, sees both in one turn. One read at a time, so that
    # nothing else wakes the loop in between, as in a program that reads one stream.
    # Shorter timeouts end before any heartbeat.
    timeouts = [HEARTBEAT_SECS] * 2 + [HEARTBEAT_SECS / 2, 0.2]

    async def run():
        before = asyncio.all_tasks()
        async with racing_client.AsyncRacing(service.key, service.url, strict=True) as racing:
            elapsed = [await _read_cancelled(racing, t) for t in timeouts]
            await _nothing_left_running(before)
            await _first_snapshot(racing)
            await _nothing_left_running(before)
            return elapsed

    elapsed = asyncio.run(asyncio.wait_for(run(), 2 * HEARTBEAT_SECS + 30))
    for timeout, took in zip(timeouts, elapsed):
        assert timeout <= took < timeout + SLACK, (timeout, took)


def test_a_read_cancelled_after_a_live_error_on_the_same_client_ends_at_once(service):
    async def run():
        before = asyncio.all_tasks()
        async with racing_client.AsyncRacing(service.key, service.url, strict=True) as racing:
            try:
                async with racing.live("2026-13-45") as stream:
                    await asyncio.wait_for(stream.__anext__(), 20)
            except racing_client.LiveError as e:
                error = e
            else:
                raise AssertionError("a subscription to no date was taken")
            await _nothing_left_running(before)
            elapsed = [await _read_cancelled(racing, HEARTBEAT_SECS) for _ in range(2)]
            await _nothing_left_running(before)
            await _first_snapshot(racing)
            return error, elapsed

    error, elapsed = asyncio.run(asyncio.wait_for(run(), 2 * HEARTBEAT_SECS + 30))
    assert error.error == "bad_request", error
    assert all(HEARTBEAT_SECS <= took < HEARTBEAT_SECS + SLACK for took in elapsed), elapsed


def test_a_new_live_after_a_cancelled_read_takes_up_after_the_last_frame_once(service):
    async def run():
        before = asyncio.all_tasks()
        async with racing_client.AsyncRacing(service.key, service.url, strict=True) as racing:
            card = await racing.racecard()
            stream = racing.live(card.date)
            got = [await asyncio.wait_for(stream.__anext__(), 20)]
            # Read on until a read is cancelled while it waits: the frames already buffered
            # come at once, the demo's next price takes longer than 10 ms.
            for _ in range(1000):
                try:
                    got.append(await asyncio.wait_for(stream.__anext__(), 0.01))
                except asyncio.TimeoutError:
                    break
            else:
                raise AssertionError("no read waited 10 ms in 1000")
            last_seq = stream.last_seq
            await stream.aclose()
            await _nothing_left_running(before)
            async with racing.live(card.date, since=last_seq) as resumed:
                update = await asyncio.wait_for(resumed.__anext__(), 30)
                duplicates = resumed.duplicates
            races = [r.race_number for r in card.races]
            expected = await _history(racing, card.date, races, last_seq, update.seq)
            return got, last_seq, update, duplicates, expected

    got, last_seq, update, duplicates, expected = asyncio.run(asyncio.wait_for(run(), 60))
    assert last_seq == max(f.seq for f in got)
    # The next move after the last frame yielded, neither one already had nor one later.
    assert isinstance(update, OddsUpdate) and duplicates == 0, (update, duplicates)
    assert [m.seq for m in expected] == [update.seq], (last_seq, update.seq, [m.seq for m in expected])
