"""The Python feeder against the real service and its own NATS: a good batch is applied and
sent again is a duplicate, a bad event is refused here before it is sent, and one only the
service can refuse comes back as this feeder's refusal."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from racing_client import AsyncRacing, Racing
from racing_client.feed import (
    Event,
    Feeder,
    HorseProfile,
    OddsUpdated,
    RunnerOdds,
    check,
    schema,
)

REPO = Path(__file__).resolve().parents[3]


def nats_url(data_dir: Path) -> str:
    """The URL of the NATS a `racing serve` runs under its data directory."""
    for ports in sorted((data_dir / "nats" / "ports").glob("*.ports")):
        return json.loads(ports.read_text())["nats"][0]
    raise AssertionError(f"no ports file under {data_dir}")


async def feeder(service) -> Feeder:
    return await Feeder.connect(
        nats_url(service.data_dir), seed_file=service.data_dir / "credentials" / "feeder.nk"
    )


def profile(horse_no: str, **changes) -> HorseProfile:
    fields = dict(
        horse_no=horse_no,
        horse_name="PYTHON FEED",
        country_of_origin="NZ",
        colour="Bay",
        sex="Gelding",
        age=5,
        trainer="J Size",
        owner="The Syndicate",
        total_stakes=1_000,
        starts=10,
        wins=2,
        places=3,
    )
    fields.update(changes)
    return HorseProfile(**fields)


def test_the_package_carries_the_service_s_schema(service):
    served = httpx.get(service.url + "/feed/schema.json", timeout=10).json()
    assert schema() == served
    kept = json.loads((REPO / "docs" / "feed" / "schema-v1.3.json").read_text())
    assert schema() == kept


def test_a_good_batch_is_applied_and_the_same_again_is_a_duplicate(service):
    async def run():
        events = [Event(profile("PYF1")), Event(OddsUpdated("2026-11-17", 1, [RunnerOdds("PYF1", win_odds=4.5)]))]
        async with await feeder(service) as f:
            first = await f.publish(events, batch=1)
            again = await f.publish(events)
        return first, again

    first, again = asyncio.run(run())
    assert (first.stored, first.duplicate, first.refused) == (2, 0, [])
    assert (again.stored, again.duplicate) == (0, 2)
    # Each event's sequence, in order; sent again, each its first copy's.
    assert len(first.seqs) == 2 and first.seqs[0] < first.seqs[1]
    assert again.seqs == first.seqs and again.last_seq == first.seqs[1]

    def served():
        r = httpx.get(service.url + "/api/v1/horses/PYF1", headers={"X-API-Key": service.key}, timeout=5)
        return r.json() if r.status_code == 200 else None

    deadline = time.monotonic() + 10
    while (body := served()) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert body is not None and body["horse_name"] == "PYTHON FEED"


def test_a_bad_event_is_refused_here_and_one_only_the_service_refuses_comes_back(service):
    bad = Event(profile("PYF2", age=41))
    assert check(bad) == ["data/age: 41 is greater than the maximum of 40"]
    # More wins than starts: the schema cannot say so; the service refuses it.
    late = Event(profile("PYF3", wins=11))
    assert check(late) == []

    async def run():
        async with await feeder(service) as f:
            sent = await f.publish([bad, late])
            published = time.monotonic()
            while True:
                refusals = await f.refusals()
                mine = [r for r in refusals if r.event_id == str(late.event_id)]
                if mine or time.monotonic() - published > 10:
                    return sent, mine, time.monotonic() - published

    sent, mine, took = asyncio.run(run())
    assert sent.stored == 1 and [e for e, _ in sent.refused] == [bad]
    assert len(mine) == 1, "the service's refusal comes back"
    assert mine[0].reason == "wins is more than starts"
    assert mine[0].subject == "racing.horses.PYF3"
    assert mine[0].feeder == "feeder"
    assert took < 5, f"the refusal came after {took:.1f} s"
    # The refused one was never sent: no refusal, no profile.
    r = httpx.get(service.url + "/api/v1/horses/PYF2", headers={"X-API-Key": service.key}, timeout=5)
    assert r.status_code == 404


def test_a_read_with_the_sequence_a_publish_returned_never_answers_the_document_before_it(service):
    async def run():
        async with await feeder(service) as f, AsyncRacing(service.key, service.url) as racing:
            for round in range(1, 31):
                name = f"PYTHON FEED {round}"
                sent = await f.publish([Event(profile("PYF4", horse_name=name))])
                assert sent.seqs == [sent.last_seq]
                horse = await racing.horse("PYF4", min_seq=sent.last_seq)
                assert horse.horse_name == name, f"round {round}"
                assert horse.meta.racing_seq >= sent.last_seq
        return sent.last_seq

    last = asyncio.run(run())
    with Racing(service.key, service.url) as racing:
        assert racing.horse("PYF4", min_seq=last).horse_name == "PYTHON FEED 30"
        assert racing.meetings(min_seq=last).next is None
