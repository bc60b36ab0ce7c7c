"""`live(..., transport="sse")` against the real service: the socket's frames as
Server-Sent Events, resumed through a cut connection with `Last-Event-ID`, frame for frame
what one unbroken socket gives."""

from __future__ import annotations

import asyncio

import pytest
from test_live import EVENT_TOPICS, _cuttable, _next, _published_after

import racing_client
from racing_client import CardFrame, OddsUpdate, StatusChange


def test_the_event_stream_resumes_every_topic_through_a_cut_with_the_sockets_frames(service):
    async def run():
        async with _cuttable(service) as (proxy, racing, direct):
            card = await direct.racecard()
            races = [r.race_number for r in card.races]
            got = []
            async with racing.live(card.date, since=0, topics=EVENT_TOPICS, transport="sse") as stream:
                while len(got) < 5:
                    got.append(await _next(stream))
                proxy.cut()
                cut_at = got[-1].seq
                position = (await direct.odds(card.date, 1)).racing_seq
                missed = await _published_after(direct, card.date, races, position, 2)
                proxy.restore()
                while got[-1].seq < missed[-1].seq:
                    got.append(await _next(stream, 30))
                connections, duplicates = stream.connections, stream.duplicates
            # The same, on one socket.
            expected = []
            async with direct.live(card.date, since=0, topics=EVENT_TOPICS) as stream:
                while not expected or expected[-1].seq < got[-1].seq:
                    expected.append(await _next(stream))
            return cut_at, got, expected, connections, duplicates

    cut_at, got, expected, connections, duplicates = asyncio.run(asyncio.wait_for(run(), 120))
    assert connections >= 2, connections
    after = [type(f) for f in got if f.seq > cut_at]
    assert {CardFrame, StatusChange, OddsUpdate} <= set(after), after
    assert [f.seq for f in got] == [f.seq for f in expected], "no gap, no repeat"
    assert got == expected
    assert duplicates == 0


def test_the_event_stream_takes_one_target_and_a_conflation_in_range(service):
    racing = racing_client.AsyncRacing(service.key, service.url)
    with pytest.raises(ValueError):
        racing.live(targets=[("2026-11-21", 1), ("2026-11-21", 2)], transport="sse")
    with pytest.raises(ValueError):
        racing.live("2026-11-21", conflate_ms=120_001)
    with pytest.raises(ValueError):
        racing.live("2026-11-21", transport="carrier-pigeon")
    asyncio.run(racing.aclose())
