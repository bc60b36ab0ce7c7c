"""Rate limits, revalidation and paging, against the real service: a 429 retried after its
`Retry-After`, a client that paces itself by `RateLimit`, a 304 answered from the cache,
and the odds history and change feed followed to their end."""

from __future__ import annotations

import asyncio
import time

import pytest
from conftest import deadline_poll

import racing_client


def test_a_429_is_retried_after_its_retry_after(service):
    key = service.create_key("retried", rate=1, burst=2)
    with racing_client.Racing(key, service.url, pace=False) as racing:
        answers = []
        for _ in range(6):
            started = time.monotonic()
            answers.append((racing.meetings(), time.monotonic() - started))
    retried = [(doc, took) for doc, took in answers if doc.meta.attempts > 1]
    # Six requests at once on a burst of 2 and 1 a second: some were refused, and every one
    # was answered in the end.
    assert retried, [doc.meta for doc, _ in answers]
    assert all(doc.meta.status in (200, 304) for doc, _ in answers)
    # The service said `Retry-After: 1`: the retry waited for it.
    assert all(took >= 0.9 for _, took in retried), [took for _, took in retried]


def test_a_429_past_the_retries_is_a_rate_limited_error(service):
    key = service.create_key("refused", rate=1, burst=2)
    with racing_client.Racing(key, service.url, pace=False, max_retries=0) as racing:
        with pytest.raises(racing_client.RateLimited) as refused:
            for _ in range(10):
                racing.meetings()
    assert refused.value.status == 429 and refused.value.error == "rate_limited"
    assert refused.value.retry_after and refused.value.retry_after >= 1
    assert refused.value.message


def test_a_paced_client_waits_for_its_quota_and_is_never_refused(service):
    key = service.create_key("paced", rate=1, burst=2)
    with racing_client.Racing(key, service.url) as racing:
        started = time.monotonic()
        docs = [racing.meetings() for _ in range(5)]
        took = time.monotonic() - started
    assert [d.meta.attempts for d in docs] == [1] * 5
    # Two in the burst at most, then one a second.
    assert took >= 2.5, took
    assert docs[-1].meta.rate_limit is not None


def test_an_unchanged_document_is_revalidated_with_a_304(service):
    with racing_client.Racing(service.key, service.url, strict=True) as racing:
        first = racing.racecard()
        again = racing.racecard()
        assert (first.meta.status, again.meta.status) == (200, 304)
        assert again.meta.from_cache and again == first
        assert again.meta.etag == first.meta.etag and again.racing_seq == first.racing_seq
        # A document that changes is fetched again, never served stale: today's first race
        # has its prices moving.
        before = racing.odds(first.date, 1)

        def moved():
            now = racing.odds(first.date, 1)
            return now if now.seq != before.seq else None

        after = deadline_poll("race 1's odds moved", 30, moved, every=0.3)
        assert after.meta.status == 200 and after.meta.etag != before.meta.etag
        # An answer as of a point of the log is immutable: the second read needs no request.
        past = racing.odds(first.date, 1, as_of=before.seq)
        cached = racing.odds(first.date, 1, as_of=before.seq)
        assert past.seq == before.seq and past.odds == before.odds
        assert cached == past and cached.meta.status == 0 and cached.as_of == before.seq


def test_odds_history_is_followed_page_by_page_to_its_end(service):
    with racing_client.Racing(service.key, service.url, strict=True) as racing:
        today = racing.racecard().date
        whole = racing.odds_history_page(today, 1, limit=10000)
        assert whole.next is None and len(whole.moves) >= 7
        end = whole.moves[-1].seq
        paged = [m for m in racing.odds_history(today, 1, page_size=3) if m.seq <= end]
        assert [m.seq for m in paged] == [m.seq for m in whole.moves]
        assert paged == whole.moves
        # From a point on: only what came after it.
        middle = whole.moves[3].seq
        after = [m.seq for m in racing.odds_history(today, 1, since=middle, page_size=2) if m.seq <= end]
        assert after == [m.seq for m in whole.moves[4:]]


def test_the_change_feed_is_followed_to_its_end(service):
    async def follow():
        async with racing_client.AsyncRacing(service.key, service.url, strict=True) as racing:
            first = await racing.changes_page(limit=10000)
            paged = [c async for c in racing.changes(page_size=700)]
            return first, paged

    first, paged = asyncio.run(asyncio.wait_for(follow(), 60))
    assert len(paged) > 700, len(paged)
    seqs = [c.seq for c in paged]
    assert seqs == sorted(seqs)
    end = min(first.changes[-1].seq, paged[-1].seq)
    if first.next is not None:
        # The page may end among the changes of its last position (`next` is "SEQ.N"):
        # compare the positions it holds whole.
        end = min(end, first.changes[-1].seq - 1)
    assert [c for c in paged if c.seq <= end] == [c for c in first.changes if c.seq <= end]
