"""`live()` against the real service: snapshots first, a start from an HTTP read's
`Racing-Seq`, and a resume through a cut connection with every update of the meeting
received exactly once and in order, checked against the service's odds history."""

from __future__ import annotations

import asyncio
import time

from conftest import CuttableProxy, Service, free_port

import racing_client
from racing_client import OddsUpdate, Snapshot


async def _next(stream, seconds: float = 20):
    return await asyncio.wait_for(stream.__anext__(), seconds)


async def _history(racing, date, races, since: int, until: int) -> list:
    """Every odds move of the meeting's races after `since`, up to `until`, by `seq`."""
    moves = {}
    for race in races:
        try:
            async for move in racing.odds_history(date, race, since=since):
                if move.seq <= until:
                    moves[move.seq] = move
        except racing_client.NotFound:
            pass  # a race without odds yet
    return [moves[s] for s in sorted(moves)]


def test_live_starts_with_a_snapshot_of_each_race_then_updates(service):
    async def run():
        async with racing_client.AsyncRacing(service.key, service.url, strict=True) as racing:
            card = await racing.racecard()
            async with racing.live(card.date) as stream:
                snapshots = [await _next(stream) for _ in card.races]
                update = await _next(stream)
                while isinstance(update, Snapshot):
                    update = await _next(stream)
            return card, snapshots, update

    card, snapshots, update = asyncio.run(asyncio.wait_for(run(), 60))
    assert all(isinstance(s, Snapshot) for s in snapshots)
    assert {s.race_number for s in snapshots} == {r.race_number for r in card.races}
    assert isinstance(update, OddsUpdate) and update.seq > max(s.seq for s in snapshots)
    assert update.lag is not None and update.lag.total_seconds() < 30


def test_live_resumes_through_a_cut_connection_with_every_update_once_in_order(service):
    async def run():
        port = int(service.url.rsplit(":", 1)[1])
        proxy = CuttableProxy(port)
        through = await proxy.start()
        direct = racing_client.AsyncRacing(service.key, service.url, strict=True)
        racing = racing_client.AsyncRacing(service.key, through, strict=True, backoff=0.2, max_backoff=1)
        try:
            card = await direct.racecard()
            races = [r.race_number for r in card.races]
            # Start from an HTTP read: every update after it, none in it.
            start = await racing.odds(card.date, 1)
            got = []
            async with racing.live(card.date, since=start) as stream:
                while len(got) < 3:
                    got.append(await _next(stream))
                proxy.cut()
                cut_at = got[-1].seq
                # The service goes on publishing while the client is cut off: wait until it
                # has published at least three updates the client has not seen.
                deadline = time.monotonic() + 30
                while True:
                    missed = await _history(direct, card.date, races, cut_at, 2**62)
                    if len(missed) >= 3:
                        break
                    assert time.monotonic() < deadline, "the demo published nothing for 30 s"
                    await asyncio.sleep(0.3)
                proxy.restore()
                while got[-1].seq < missed[-1].seq:
                    got.append(await _next(stream, 30))
                connections = stream.connections
                duplicates = stream.duplicates
            expected = await _history(direct, card.date, races, start.racing_seq, got[-1].seq)
            return start, got, missed, expected, connections, duplicates, proxy.accepted
        finally:
            await racing.aclose()
            await direct.aclose()
            await proxy.close()

    start, got, missed, expected, connections, duplicates, accepted = asyncio.run(
        asyncio.wait_for(run(), 120)
    )
    assert all(isinstance(f, OddsUpdate) for f in got), [type(f).__name__ for f in got]
    assert connections >= 2 and accepted >= 2, (connections, accepted)
    # Exactly once, in order: what the stream gave is the meeting's history after the HTTP
    # read, through the cut, move for move.
    assert [f.seq for f in got] == [m.seq for m in expected]
    assert [(f.venue, f.published_at, f.odds) for f in got] == [
        (m.venue, m.published_at, m.odds) for m in expected
    ]
    assert got[0].seq > start.racing_seq
    assert {m.seq for m in missed} <= {f.seq for f in got}
    assert duplicates == 0


def test_live_with_a_bad_key_is_refused_without_retrying(service):
    async def run():
        async with racing_client.AsyncRacing("not-a-key", service.url) as racing:
            async with racing.live("2026-01-01") as stream:
                await _next(stream)

    try:
        asyncio.run(asyncio.wait_for(run(), 30))
    except racing_client.Unauthorized as e:
        assert e.status == 401 and e.error == "unauthorized"
    else:
        raise AssertionError("a bad key was not refused")


def test_live_resumes_across_a_restart_of_the_service_with_every_update_once_in_order():
    # A service of its own, without the demo: the test is the feeder.
    service = Service(demo=False)
    date, race = "2026-12-02", 4

    async def run():
        racing = racing_client.AsyncRacing(service.key, service.url, strict=True, backoff=0.2, max_backoff=1)
        try:
            got = []
            async with racing.live(date, race, since=0) as stream:
                while len(got) < 3:
                    got.append(await _next(stream))
                # The service stops (its sockets closed with 1001) and starts again on the
                # same data; meanwhile, and after, a feeder publishes.
                await asyncio.to_thread(service.stop)
                await asyncio.to_thread(service.start)
                await asyncio.to_thread(service.publish_odds, date, race, [5.0, 5.5])
                while len(got) < 5:
                    got.append(await _next(stream, 30))
                publishing = asyncio.create_task(
                    asyncio.to_thread(service.publish_odds, date, race, [6.0, 6.5])
                )
                while len(got) < 7:
                    got.append(await _next(stream, 30))
                await publishing
                connections, duplicates = stream.connections, stream.duplicates
            history = [m async for m in racing.odds_history(date, race)]
            return got, history, connections, duplicates
        finally:
            await racing.aclose()

    try:
        service.start()
        service.publish_odds(date, race, [3.0, 3.5, 4.0])
        got, history, connections, duplicates = asyncio.run(asyncio.wait_for(run(), 150))
    finally:
        service.remove()
    assert all(isinstance(f, OddsUpdate) for f in got), [type(f).__name__ for f in got]
    # Resumed where it stopped: nothing sent twice, so nothing for the client to drop.
    assert connections >= 2 and duplicates == 0, (connections, duplicates)
    assert [f.seq for f in got] == [m.seq for m in history]
    assert [f.odds[0].win_odds for f in got] == [3.0, 3.5, 4.0, 5.0, 5.5, 6.0, 6.5]


def test_live_gives_up_after_max_reconnects_failed_connections_in_a_row():
    async def run():
        # Nothing listens there.
        nowhere = f"http://127.0.0.1:{free_port()}"
        async with racing_client.AsyncRacing("k", nowhere, backoff=0.05, max_backoff=0.1) as racing:
            async with racing.live("2026-01-01", max_reconnects=2) as stream:
                await _next(stream)

    try:
        asyncio.run(asyncio.wait_for(run(), 30))
    except racing_client.ConnectionFailed as e:
        assert "3 connections in a row failed" in str(e)
    else:
        raise AssertionError("live() went on without a service")
