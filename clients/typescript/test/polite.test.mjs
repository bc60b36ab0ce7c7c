//! Rate limits, revalidation, paging, errors and cancellation, against the demo: a 429
//! waited out after its `Retry-After`, a client that paces itself by `RateLimit`, a 304
//! answered from the cache, the odds history and the change feed followed to their end,
//! and each kind of error with the service's own code.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import {
  BadRequest,
  ConfigurationError,
  ConnectionFailed,
  NotFound,
  Racing,
  RateLimited,
  Unauthorized,
} from "racing-client";

import { freePort, poll } from "./service.mjs";
import { demo } from "./support.mjs";

let service;

before(async () => {
  service = await demo();
});

function client(options = {}) {
  return new Racing({ apiKey: service.key, baseUrl: service.url, ...options });
}

test("a 429 is waited out after its Retry-After", async () => {
  const key = await service.createKey("ts-retried", 1, 2);
  const racing = client({ apiKey: key, pace: false });
  const answers = [];
  for (let i = 0; i < 6; i++) {
    const started = Date.now();
    const doc = await racing.meetings();
    answers.push({ meta: doc.meta, took: Date.now() - started });
  }
  const retried = answers.filter((a) => a.meta.attempts > 1);
  // Six requests at once on a burst of 2 and 1 a second: some were refused, and every one
  // was answered in the end.
  assert.ok(retried.length > 0, JSON.stringify(answers));
  assert.ok(answers.every((a) => [200, 304].includes(a.meta.status)));
  // The service said `Retry-After: 1`: each retry waited for it.
  assert.ok(
    retried.every((a) => a.took >= 900),
    JSON.stringify(retried.map((a) => a.took)),
  );
});

test("a 429 past the retries is a RateLimited error with the service's code", async () => {
  const key = await service.createKey("ts-refused", 1, 2);
  const racing = client({ apiKey: key, pace: false, maxRetries: 0 });
  const refused = await (async () => {
    for (let i = 0; i < 10; i++) {
      try {
        await racing.meetings();
      } catch (e) {
        return e;
      }
    }
    return null;
  })();
  assert.ok(refused instanceof RateLimited, String(refused));
  assert.equal(refused.status, 429);
  assert.equal(refused.error, "rate_limited");
  assert.ok(refused.retryAfterMs >= 1000, String(refused.retryAfterMs));
  assert.ok(refused.message.length > 0);
});

test("a paced client waits for its quota and is never refused", async () => {
  const key = await service.createKey("ts-paced", 1, 2);
  const racing = client({ apiKey: key });
  const started = Date.now();
  const docs = [];
  for (let i = 0; i < 5; i++) docs.push(await racing.meetings());
  const took = Date.now() - started;
  assert.deepEqual(
    docs.map((d) => d.meta.attempts),
    [1, 1, 1, 1, 1],
  );
  // Two in the burst at most, then one a second.
  assert.ok(took >= 2500, String(took));
  assert.ok(docs.at(-1).meta.rateLimit !== null);
});

test("an unchanged document is revalidated with a 304 and served from the cache", async () => {
  const racing = client();
  const first = await racing.racecard();
  const again = await racing.racecard();
  assert.deepEqual([first.meta.status, again.meta.status], [200, 304]);
  assert.ok(again.meta.fromCache);
  assert.deepEqual(again, first);
  assert.equal(again.meta.etag, first.meta.etag);
  assert.equal(again.meta.racingSeq, first.meta.racingSeq);
  // A document that changes is fetched again, never served stale: today's first race
  // has its prices moving.
  const before = await racing.odds(first.date, 1);
  const after = await poll("race 1's odds moved", 30_000, async () => {
    const now = await racing.odds(first.date, 1);
    return now.seq !== before.seq ? now : undefined;
  });
  assert.equal(after.meta.status, 200);
  assert.notEqual(after.meta.etag, before.meta.etag);
});

test("the cache holds as many documents as the caller sized it for", async () => {
  const racing = client({ cacheSize: 1 });
  const day = (await service.shellVariables()).DAY;
  await racing.results(day);
  await racing.racecard();
  // The card pushed the results out: asked again, they come whole.
  assert.equal((await racing.results(day)).meta.status, 200);
  assert.equal((await racing.results(day)).meta.status, 304);
  const none = client({ cacheSize: 0 });
  await none.results(day);
  assert.equal((await none.results(day)).meta.status, 200);
});

test("the odds history is followed page by page to its end", async () => {
  const racing = client();
  const today = (await racing.racecard()).date;
  const whole = await racing.oddsHistoryPage(today, 1, { limit: 10000 });
  assert.equal(whole.next, null);
  assert.ok(whole.moves.length >= 7, String(whole.moves.length));
  const end = whole.moves.at(-1).seq;
  const paged = [];
  for await (const move of racing.oddsHistory(today, 1, { pageSize: 3 })) {
    if (move.seq <= end) paged.push(move);
  }
  assert.deepEqual(paged, whole.moves);
  // From a point on: only what came after it.
  const middle = whole.moves[3].seq;
  const after = [];
  for await (const move of racing.oddsHistory(today, 1, { since: middle, pageSize: 2 })) {
    if (move.seq <= end) after.push(move.seq);
  }
  assert.deepEqual(
    after,
    whole.moves.slice(4).map((m) => m.seq),
  );
});

test("the change feed is followed to its end", async () => {
  const racing = client();
  const first = await racing.changesPage({ limit: 10000 });
  const paged = [];
  for await (const change of racing.changes({ pageSize: 700 })) paged.push(change);
  assert.ok(paged.length > 700, String(paged.length));
  const seqs = paged.map((c) => c.seq);
  assert.deepEqual(
    seqs,
    [...seqs].sort((a, b) => a - b),
  );
  let end = Math.min(first.changes.at(-1).seq, paged.at(-1).seq);
  // The page may end among the changes of its last position (`next` is "SEQ.N"):
  // compare the positions it holds whole.
  if (first.next !== null) end = Math.min(end, first.changes.at(-1).seq - 1);
  assert.deepEqual(
    paged.filter((c) => c.seq <= end),
    first.changes.filter((c) => c.seq <= end),
  );
});

test("each error carries the service's status, code and message", async () => {
  const racing = client();
  await assert.rejects(racing.horse("Z999"), (e) => {
    assert.ok(e instanceof NotFound);
    assert.deepEqual([e.status, e.error, e.message], [404, "not_found", "no horse Z999"]);
    assert.ok(e.requestId);
    return true;
  });
  await assert.rejects(racing.results("2026-02-30"), (e) => {
    assert.ok(e instanceof BadRequest);
    assert.deepEqual([e.status, e.error], [400, "bad_request"]);
    assert.match(e.message, /date/);
    return true;
  });
  await assert.rejects(client({ apiKey: "not-a-key" }).meetings(), (e) => {
    assert.ok(e instanceof Unauthorized);
    assert.deepEqual([e.status, e.error], [401, "unauthorized"]);
    return true;
  });
});

test("a client without a key is refused before any request", () => {
  const saved = process.env.RACING_API_KEY;
  delete process.env.RACING_API_KEY;
  try {
    assert.throws(() => new Racing({ baseUrl: service.url }), ConfigurationError);
    process.env.RACING_API_KEY = service.key;
    assert.equal(new Racing({ baseUrl: service.url }).settings.apiKey, service.key);
  } finally {
    if (saved === undefined) delete process.env.RACING_API_KEY;
    else process.env.RACING_API_KEY = saved;
  }
});

test("a service out of reach is a ConnectionFailed after the retries", async () => {
  const nowhere = `http://127.0.0.1:${await freePort()}`;
  const racing = new Racing({ apiKey: "k", baseUrl: nowhere, maxRetries: 2, backoffMs: 20 });
  await assert.rejects(racing.meetings(), ConnectionFailed);
});

test("an aborted signal cancels a request, and a retry's wait", async () => {
  const racing = client();
  const aborted = AbortSignal.abort();
  await assert.rejects(racing.racecard("today", { signal: aborted }), { name: "AbortError" });
  // Refused with `Retry-After: 1`, then cancelled while it waits.
  const key = await service.createKey("ts-cancelled", 1, 1);
  const slow = client({ apiKey: key, pace: false });
  await slow.meetings();
  const controller = new AbortController();
  const started = Date.now();
  const pending = slow.meetings({ signal: controller.signal });
  setTimeout(() => controller.abort(), 200);
  await assert.rejects(pending, { name: "AbortError" });
  assert.ok(Date.now() - started < 900, String(Date.now() - started));
});
