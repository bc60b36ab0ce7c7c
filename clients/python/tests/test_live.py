"""`live()` against the real service: snapshots first, a start from an HTTP read's
`Racing-Seq`, and a resume through a cut connection with every update of the meeting
received exactly once and in order, checked against the service's odds history; the race
day's topics (statuses, scratchings, results, cards) in the same order and resumed alike."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import time

from conftest import CuttableProxy, Service, free_port

import racing_client
from racing_client import CardFrame, OddsUpdate, RaceResultFrame, Scratching, Snapshot, StatusChange
from racing_client.models import parse_timestamp

STATUSES = {"open", "suspended", "off", "finished", "abandoned", "void"}

# Every topic of the stream's events, in one `seq` order; not the market, whose frames
# go out at most once a second as it stands, outside that order.
EVENT_TOPICS = [t for t in racing_client.TOPICS if t != "market"]


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


async def _published_after(racing, date, races, position: int, count: int) -> list:
    """The meeting's odds moves after `position`, once the demo has published `count` of
    them (at most 30 s)."""
    deadline = time.monotonic() + 30
    while True:
        moves = await _history(racing, date, races, position, 2**62)
        if len(moves) >= count:
            return moves
        assert time.monotonic() < deadline, "the demo published nothing for 30 s"
        await asyncio.sleep(0.3)


@contextlib.asynccontextmanager
async def _cuttable(service):
    """A client through a `CuttableProxy` in front of `service`, quick to reconnect, and a
    client straight to it; closed, proxy and all, at the end."""
    proxy = CuttableProxy(int(service.url.rsplit(":", 1)[1]))
    through = await proxy.start()
    racing = racing_client.AsyncRacing(service.key, through, strict=True, backoff=0.2, max_backoff=1)
    direct = racing_client.AsyncRacing(service.key, service.url, strict=True)
    try:
        yield proxy, racing, direct
    finally:
        await racing.aclose()
        await direct.aclose()
        await proxy.close()


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

    before = datetime.datetime.now(datetime.timezone.utc)
    card, snapshots, update = asyncio.run(asyncio.wait_for(run(), 60))
    after = datetime.datetime.now(datetime.timezone.utc)
    assert all(isinstance(s, Snapshot) for s in snapshots)
    assert {s.race_number for s in snapshots} == {r.race_number for r in card.races}
    assert isinstance(update, OddsUpdate) and update.seq > max(s.seq for s in snapshots)
    # `lag` is the client's clock at reading less NATS's at storing: the two clocks may
    # disagree (scripts/test-at moves this one, not nats-server's), so each is checked
    # against its own.
    assert update.received_at is not None and before <= update.received_at <= after
    assert update.lag == update.received_at - parse_timestamp(update.published_at)


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
    assert [(f.venue, f.published_at, f.occurred_at, f.odds) for f in got] == [
        (m.venue, m.published_at, m.occurred_at, m.odds) for m in expected
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


def test_live_follows_the_race_day_topics_in_one_seq_order_with_the_odds(service):
    async def run():
        async with racing_client.AsyncRacing(service.key, service.url, strict=True) as racing:
            card = await racing.racecard()
            got = []
            # From the start of the log: today's declarations (cards, scratchings, each race
            # opened with its prices), then the first race's live prices.
            async with racing.live(card.date, since=0, topics=EVENT_TOPICS) as stream:
                races = {r.race_number for r in card.races}
                while not all(
                    {f.race_number for f in got if isinstance(f, kind)} >= races
                    for kind in (StatusChange, OddsUpdate)
                ):
                    got.append(await _next(stream))
            return card, got

    card, got = asyncio.run(asyncio.wait_for(run(), 60))
    seqs = [f.seq for f in got]
    assert seqs == sorted(set(seqs)), "not in strictly increasing seq"
    assert all(f.date == card.date and f.venue == card.venue for f in got)
    kinds = {type(f) for f in got}
    assert {CardFrame, Scratching, StatusChange, OddsUpdate} <= kinds, kinds
    races = {r.race_number: r for r in card.races}
    for f in got:
        if isinstance(f, StatusChange):
            assert f.status in STATUSES and f.lag is not None
        elif isinstance(f, CardFrame):
            # The race as declared; today's card over HTTP is the same race, less any
            # runner scratched since.
            assert f.card.race_number == f.race_number
            assert f.card.race_name == races[f.race_number].race_name
            declared = {r.horse_no for r in f.card.runners}
            assert {r.horse_no for r in races[f.race_number].runners} <= declared
        elif isinstance(f, Scratching):
            assert f.horse_no not in {r.horse_no for r in races[f.race_number].runners}
    # Each race is declared before it is opened, and opened before it is priced.
    for race in races:
        first = [type(f) for f in got if f.race_number == race]
        assert first[0] is CardFrame and first.index(StatusChange) < first.index(OddsUpdate), first


def test_live_resumes_every_topic_through_a_cut_connection_with_no_gap_or_duplicate(service):
    async def run():
        async with _cuttable(service) as (proxy, racing, direct):
            card = await direct.racecard()
            races = [r.race_number for r in card.races]
            got = []
            async with racing.live(card.date, since=0, topics=EVENT_TOPICS) as stream:
                # Cut in the middle of today's declarations, on a race-day frame.
                while len(got) < 5:
                    got.append(await _next(stream))
                proxy.cut()
                cut_at = got[-1].seq
                # Meanwhile the service goes on publishing odds that no connection of the
                # client can have had (past what it had read, and buffered, at the cut).
                position = (await direct.odds(card.date, 1)).racing_seq
                missed = await _published_after(direct, card.date, races, position, 2)
                proxy.restore()
                while got[-1].seq < missed[-1].seq:
                    got.append(await _next(stream, 30))
                connections, duplicates = stream.connections, stream.duplicates
            # The same stream read again on one connection, as far as the resumed one went.
            expected = []
            async with direct.live(card.date, since=0, topics=EVENT_TOPICS) as stream:
                while not expected or expected[-1].seq < got[-1].seq:
                    expected.append(await _next(stream))
            return cut_at, got, expected, connections, duplicates, proxy.accepted

    cut_at, got, expected, connections, duplicates, accepted = asyncio.run(asyncio.wait_for(run(), 120))
    assert connections >= 2 and accepted >= 2, (connections, accepted)
    assert not isinstance(got[4], OddsUpdate), "the cut was not on a race-day frame"
    after = [type(f) for f in got if f.seq > cut_at]
    assert {CardFrame, StatusChange, OddsUpdate} <= set(after), after
    # Exactly once, in order: frame for frame what one unbroken connection gives.
    assert [f.seq for f in got] == [f.seq for f in expected]
    assert got == expected
    assert duplicates == 0


def test_live_yields_each_race_s_status_and_result_as_it_is_run():
    # A demo of its own whose races take seconds: each goes off, is finished and has its
    # result while the test watches.
    service = Service(demo=True, env={"RACING_DEMO_RACE_SECS": "6"})

    async def run():
        async with racing_client.AsyncRacing(service.key, service.url, strict=True) as racing:
            card = await racing.racecard()
            got, odds_only = [], []
            async with (
                racing.live(card.date, topics=["status", "results"]) as stream,
                racing.live(card.date) as plain,
            ):
                while not any(isinstance(f, RaceResultFrame) for f in got):
                    got.append(await _next(stream, 30))
                while not odds_only or odds_only[-1].seq < got[-1].seq:
                    odds_only.append(await _next(plain, 30))
            result = got[-1]
            http = await racing.result(card.date, result.race_number, result.venue)
            return card, got, odds_only, http

    try:
        service.start()
        card, got, odds_only, http = asyncio.run(asyncio.wait_for(run(), 90))
    finally:
        service.remove()
    seqs = [f.seq for f in got]
    assert seqs == sorted(set(seqs)), "not in strictly increasing seq"
    # Only what was asked for: no snapshot or odds without the topic `odds`.
    assert {type(f) for f in got} == {StatusChange, RaceResultFrame}, got
    result = got[-1]
    assert result.result == http and result.result.race_number == result.race_number
    assert result.result.date == card.date and result.venue == http.venue
    statuses = [f.status for f in got if isinstance(f, StatusChange) and f.race_number == result.race_number]
    assert statuses[-2:] == ["off", "finished"], statuses
    assert {f.status for f in got if isinstance(f, StatusChange)} <= STATUSES
    # Without topics, the same meeting at the same time is odds only, as before topics.
    assert {type(f) for f in odds_only} <= {Snapshot, OddsUpdate}, {type(f) for f in odds_only}


def test_live_refuses_an_unknown_topic_before_connecting():
    # Nothing listens there: a stream that tried to connect would fail otherwise.
    nowhere = f"http://127.0.0.1:{free_port()}"

    async def run():
        async with racing_client.AsyncRacing("k", nowhere, max_backoff=0.1) as racing:
            for topics, error, says in (
                (["odds", "weather"], ValueError, "unknown live topic(s) 'weather'"),
                (["Status"], ValueError, "unknown live topic(s) 'Status'"),
                ([], ValueError, "at least one"),
                ("status", TypeError, "a list of names"),
            ):
                try:
                    racing.live("2026-01-01", topics=topics, max_reconnects=0)
                except error as e:
                    assert says in str(e), str(e)
                else:
                    raise AssertionError(f"topics {topics!r} were taken")
            stream = racing.live("2026-01-01", topics=iter(["status", "odds", "status"]), max_reconnects=0)
            assert stream._topics == ["status", "odds"]
            await stream.aclose()

    asyncio.run(asyncio.wait_for(run(), 30))


def test_live_resumes_after_a_race_day_frame_with_the_next_frames_once(service):
    # A date of its own on the demo's service, where the test is the feeder: a status
    # change is the last frame before the cut, so the resume must start after it.
    date, race = "2027-06-15", 5
    where = {"date": date, "race_number": race, "venue": "Sha Tin"}
    before = [
        ("RaceStatusChanged", {**where, "status": "open"}),
        ("OddsUpdated", {**where, "odds": [{"horse_no": "A001", "win_odds": 4.0, "place_odds": 1.8}]}),
        ("RaceStatusChanged", {**where, "status": "suspended", "reason": "A002 withdrawn: lame"}),
    ]
    during = [
        ("RunnerScratched", {**where, "horse_no": "A002"}),
        ("RaceStatusChanged", {**where, "status": "open"}),
        ("OddsUpdated", {**where, "odds": [{"horse_no": "A001", "win_odds": 3.5}]}),
    ]
    topics = ["odds", "status", "scratchings"]

    async def run():
        async with _cuttable(service) as (proxy, racing, direct):
            got = []
            async with racing.live(date, race, since=0, topics=topics) as stream:
                await asyncio.to_thread(service.publish, before)
                while len(got) < len(before):
                    got.append(await _next(stream))
                proxy.cut()
                await asyncio.to_thread(service.publish, during)
                proxy.restore()
                while len(got) < len(before) + len(during):
                    got.append(await _next(stream, 30))
                connections, duplicates = stream.connections, stream.duplicates
            async with direct.live(date, race, since=0, topics=topics) as stream:
                expected = [await _next(stream) for _ in got]
            return got, expected, connections, duplicates

    got, expected, connections, duplicates = asyncio.run(asyncio.wait_for(run(), 60))
    assert connections >= 2 and duplicates == 0, (connections, duplicates)
    assert [type(f) for f in got] == [
        StatusChange,
        OddsUpdate,
        StatusChange,
        Scratching,
        StatusChange,
        OddsUpdate,
    ]
    assert got == expected
    assert [f.seq for f in got] == sorted({f.seq for f in got})
    assert (got[2].status, got[2].reason, got[3].horse_no, got[4].status, got[4].reason) == (
        "suspended",
        "A002 withdrawn: lame",
        "A002",
        "open",
        None,
    )
    assert got[1].odds[0].place_odds == 1.8 and got[5].odds[0].place_odds is None


def test_a_conflated_resume_yields_the_race_day_events_then_its_snapshot(service):
    # A conflated subscription resumes its odds as one snapshot of the race, whose `seq` is
    # the race's last move, and replays the race-day events after `since` exactly, before
    # the snapshot: none is lost or counted a duplicate, on the first connection
    # (`since=0`) and on the one after a cut from the snapshot's `seq`.
    date, race = "2027-06-16", 4
    where = {"date": date, "race_number": race, "venue": "Sha Tin"}
    before = [
        ("RaceStatusChanged", {**where, "status": "open"}),
        ("OddsUpdated", {**where, "odds": [{"horse_no": "A001", "win_odds": 4.0}]}),
    ]
    during = [
        ("RaceStatusChanged", {**where, "status": "suspended", "reason": "A002 withdrawn: lame"}),
        ("RunnerScratched", {**where, "horse_no": "A002"}),
        ("OddsUpdated", {**where, "odds": [{"horse_no": "A001", "win_odds": 3.5}]}),
    ]
    topics = ["odds", "status", "scratchings"]

    def day(frames):
        return [f for f in frames if isinstance(f, (Scratching, StatusChange))]

    async def run():
        async with _cuttable(service) as (proxy, racing, direct):
            last = await asyncio.to_thread(service.publish, before)
            # Applied before the subscription, so that its snapshot holds the move: on a
            # busy machine the projector may not have committed them when the replay reads.
            await asyncio.to_thread(service.applied, last)
            first, after = [], []
            async with racing.live(date, race, since=0, topics=topics, conflate_ms=200) as stream:
                while not any(isinstance(f, Snapshot) for f in first):
                    first.append(await _next(stream))
                cut_at = stream.last_seq
                proxy.cut()
                await asyncio.to_thread(service.publish, during)
                proxy.restore()
                while len(day(after)) < 2:
                    after.append(await _next(stream, 30))
                return first, cut_at, after, stream.connections, stream.duplicates

    first, cut_at, after, connections, duplicates = asyncio.run(asyncio.wait_for(run(), 90))
    assert [type(f) for f in first] == [StatusChange, Snapshot], first
    assert first[1].seq > first[0].seq and cut_at == first[1].seq
    assert day(first)[0].status == "open"
    assert connections >= 2
    assert [type(f) for f in day(after)] == [StatusChange, Scratching], after
    assert (day(after)[0].status, day(after)[1].horse_no) == ("suspended", "A002")
    assert cut_at < day(after)[0].seq < day(after)[1].seq
    assert duplicates == 0
