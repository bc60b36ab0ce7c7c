//! live() through the worst a connection meets, on a service of its own where the test is
//! the feeder: a kill -9 of the whole service (and its NATS) and a start again on the same
//! data, and a network that goes silent with the connection still open. After each, every
//! update comes once, in order: the stream is the race's odds history, move for move. Each
//! over the socket and over Server-Sent Events.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Racing } from "racing-client";

import { Service } from "./service.mjs";
import { nextFrame, Relay } from "./support.mjs";

let service;

before(async () => {
  // Heartbeats each second (the Service's setting): a silent connection is known in 5 s.
  service = new Service({ demo: false });
  await service.start();
});

after(() => service.remove());

/** The race's odds history over HTTP, whole. */
async function history(racing, date, race) {
  const moves = [];
  for await (const move of racing.oddsHistory(date, race)) moves.push(move);
  return moves;
}

function client(baseUrl) {
  return new Racing({ apiKey: service.key, baseUrl, backoffMs: 200, maxBackoffMs: 1000 });
}

for (const [transport, race, silentRace] of [
  ["ws", 4, 2],
  ["sse", 5, 3],
]) {
  test(`live() over ${transport} resumes through a kill -9 and restart of the service with every update once in order`, async () => {
    const date = "2026-12-02";
    const racing = client(service.url);
    service.publishOdds(date, race, [3.0, 3.5, 4.0]);
    const got = [];
    const stream = racing.live({ date, race, since: 0, transport });
    try {
      while (got.length < 3) got.push(await nextFrame(stream));
      // Published while the stream reads: some of these are on their way, or unread, when
      // the service dies.
      service.publishOdds(date, race, [4.5, 5.0, 5.5, 6.0, 6.5]);
      got.push(await nextFrame(stream));
      await service.kill();
      await service.start();
      service.publishOdds(date, race, [7.0, 7.5]);
      while (got.length < 10) got.push(await nextFrame(stream, 60_000));
      assert.ok(stream.connections >= 2, `connections ${stream.connections}`);
      assert.equal(stream.duplicates, 0);
    } finally {
      await stream.close();
    }
    const moves = await history(racing, date, race);
    assert.ok(
      got.every((f) => f.type === "odds"),
      got.map((f) => f.type).join(),
    );
    assert.deepEqual(
      got.map((f) => f.seq),
      moves.map((m) => m.seq),
    );
    assert.deepEqual(
      got.map((f) => f.odds[0].win_odds),
      [3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5],
    );
  });

  test(`live() over ${transport} drops a connection silent for three heartbeats and resumes with no gap or repeat`, async () => {
    const date = "2026-12-03";
    const race = silentRace;
    const relay = new Relay(service.port);
    const racing = client(await relay.start());
    const got = [];
    const stream = racing.live({ date, race, since: 0, transport });
    try {
      service.publishOdds(date, race, [2.0, 2.2]);
      while (got.length < 2) got.push(await nextFrame(stream));
      // The network drops everything, the connection stays open, and the service goes on;
      // a new connection would pass, once the stream gives the silent one up.
      relay.freeze();
      const frozenAt = Date.now();
      service.publishOdds(date, race, [2.4, 2.6]);
      while (got.length < 4) got.push(await nextFrame(stream, 30_000));
      const silent = Date.now() - frozenAt;
      // Heartbeats are 1 s apart: given up after three and a margin (5 s), not before.
      assert.ok(silent >= 5000, `resumed after ${silent} ms`);
      // Two sessions: the silent one, given up, and one new. An attempt between that failed
      // (an answer that did not come in time on a loaded machine) is tried again, and only
      // the relay counts it: a CI run once saw three connections for two sessions.
      assert.equal(
        stream.connections,
        2,
        `the relay took ${relay.accepted} connections; the last failure: ${stream.lastError}`,
      );
      assert.equal(stream.duplicates, 0);
    } finally {
      await stream.close();
      await relay.close();
    }
    const moves = await history(client(service.url), date, race);
    assert.deepEqual(
      got.map((f) => f.seq),
      moves.map((m) => m.seq),
    );
    assert.deepEqual(
      got.map((f) => f.odds[0].win_odds),
      [2.0, 2.2, 2.4, 2.6],
    );
  });
}
