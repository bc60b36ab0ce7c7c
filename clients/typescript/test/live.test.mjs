//! live() against the demo: snapshots then updates in `seq` order, each frame as the
//! socket's AsyncAPI description has it, the race day's topics in the same order, a start
//! from an HTTP read, and the ways a stream ends: a refused key, a misspelt topic, no
//! service, a caller's signal, `close()`.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { ConnectionFailed, EVENT_TYPES, Racing, Unauthorized } from "racing-client";

import { freePort } from "./service.mjs";
import { demo, HEARTBEAT_MS, nextFrame, validator } from "./support.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const EVENT_TOPICS = ["odds", "status", "scratchings", "results", "cards"];

let service, racing, check, today;

before(async () => {
  service = await demo();
  racing = new Racing({ apiKey: service.key, baseUrl: service.url });
  check = validator(await (await fetch(service.url + "/asyncapi.json")).json());
  today = (await racing.racecard()).date;
});

/** The schema of a frame's `type` in the AsyncAPI document. */
const SCHEMAS = {
  snapshot: "SnapshotFrame",
  odds: "OddsFrame",
  market: "MarketFrame",
  status: "StatusFrame",
  scratching: "ScratchingFrame",
  result: "ResultFrame",
  card: "CardFrame",
  retraction: "RetractionFrame",
  heartbeat: "HeartbeatFrame",
};

function valid(frame) {
  check(frame, `#/components/schemas/${SCHEMAS[frame.type]}`);
  return frame;
}

test("live() yields a race's snapshot, then its updates in seq order", async () => {
  const stream = racing.live({ date: today, race: 1 });
  const frames = [];
  try {
    while (frames.length < 4) frames.push(valid(await nextFrame(stream)));
  } finally {
    await stream.close();
  }
  assert.equal(frames[0].type, "snapshot");
  assert.deepEqual(
    frames.slice(1).map((f) => f.type),
    ["odds", "odds", "odds"],
  );
  const seqs = frames.map((f) => f.seq);
  assert.ok(
    seqs.every((s, i) => i === 0 || s > seqs[i - 1]),
    String(seqs),
  );
  assert.equal(stream.lastSeq, seqs.at(-1));
  assert.equal(stream.connections, 1);
  assert.ok(frames.every((f) => f.date === today && f.race_number === 1));
});

test("live() follows the race day's topics in one seq order with the odds", async () => {
  const card = await racing.racecard();
  const races = new Set(card.races.map((r) => r.race_number));
  const got = [];
  // From the start of the log: today's declarations (cards, scratchings, each race
  // opened with its prices), then the first race's live prices.
  const stream = racing.live({ date: today, since: 0, topics: EVENT_TOPICS });
  try {
    const seen = (type) => new Set(got.filter((f) => f.type === type).map((f) => f.race_number));
    while (![...races].every((r) => seen("status").has(r) && seen("odds").has(r))) {
      got.push(valid(await nextFrame(stream)));
    }
  } finally {
    await stream.close();
  }
  const seqs = got.map((f) => f.seq);
  assert.ok(
    seqs.every((s, i) => i === 0 || s > seqs[i - 1]),
    "not in strictly increasing seq",
  );
  const kinds = new Set(got.map((f) => f.type));
  for (const kind of ["card", "status", "odds"]) assert.ok(kinds.has(kind), [...kinds].join());
  assert.ok(
    got.every((f) => EVENT_TYPES.includes(f.type)),
    "only events after since",
  );
  // Each race is declared before it is opened, and opened before it is priced.
  for (const race of races) {
    const types = got.filter((f) => f.race_number === race).map((f) => f.type);
    assert.equal(types[0], "card", `race ${race}: ${types}`);
    assert.ok(types.indexOf("status") < types.indexOf("odds"), `race ${race}: ${types}`);
  }
});

test("live() starts after an HTTP read with every move after it and none in it", async () => {
  const odds = await racing.odds(today, 1);
  const stream = racing.live({ date: today, race: 1, since: odds });
  let first;
  try {
    first = valid(await nextFrame(stream, 30_000));
  } finally {
    await stream.close();
  }
  assert.equal(first.type, "odds");
  assert.ok(first.seq > odds.meta.racingSeq, `${first.seq} after ${odds.meta.racingSeq}`);
});

test("live() yields the heartbeats of a quiet stream when asked", async () => {
  // A date with nothing on it: only heartbeats come.
  const stream = racing.live({ date: "2030-01-01", heartbeats: true });
  try {
    const frame = valid(await nextFrame(stream, 3 * HEARTBEAT_MS));
    assert.equal(frame.type, "heartbeat");
  } finally {
    await stream.close();
  }
});

test("live() with a bad key is refused without retrying", async () => {
  const stream = new Racing({ apiKey: "not-a-key", baseUrl: service.url }).live({ date: today });
  await assert.rejects(nextFrame(stream), (e) => {
    assert.ok(e instanceof Unauthorized, String(e));
    assert.deepEqual([e.status, e.error], [401, "unauthorized"]);
    return true;
  });
  assert.equal(stream.connections, 0);
});

test("live() refuses an unknown topic before connecting", async () => {
  // Nothing listens there: a stream that tried to connect would fail otherwise.
  const nowhere = new Racing({ apiKey: "k", baseUrl: `http://127.0.0.1:${await freePort()}` });
  for (const [topics, error, says] of [
    [["odds", "weather"], RangeError, "unknown live topic(s) weather"],
    [["Status"], RangeError, "unknown live topic(s) Status"],
    [[], RangeError, "at least one"],
    ["status", TypeError, "a list of names"],
  ]) {
    assert.throws(
      () => nowhere.live({ date: "2026-01-01", topics }),
      (e) => {
        assert.ok(e instanceof error, String(e));
        assert.ok(e.message.includes(says), e.message);
        return true;
      },
    );
  }
  assert.throws(() => nowhere.live({}), TypeError);
  const stream = nowhere.live({ date: "2026-01-01", topics: ["status", "odds", "status"] });
  assert.deepEqual(stream.topics, ["status", "odds"]);
  await stream.close();
});

test("live() gives up after maxReconnects failed connections in a row", async () => {
  const nowhere = `http://127.0.0.1:${await freePort()}`;
  const racing = new Racing({ apiKey: "k", baseUrl: nowhere, backoffMs: 50, maxBackoffMs: 100 });
  const stream = racing.live({ date: "2026-01-01", maxReconnects: 2 });
  await assert.rejects(nextFrame(stream), (e) => {
    assert.ok(e instanceof ConnectionFailed, String(e));
    assert.match(e.message, /3 connections in a row failed/);
    return true;
  });
});

test("a caller's signal ends a waiting stream at once, and close() too", async () => {
  const controller = new AbortController();
  const quiet = racing.live({ date: "2030-01-01", signal: controller.signal });
  const pending = quiet.next();
  setTimeout(() => controller.abort(), 300);
  const started = Date.now();
  await assert.rejects(pending, { name: "AbortError" });
  assert.ok(Date.now() - started < 2000);
  assert.deepEqual(await quiet.next(), { done: true, value: undefined });

  const closed = racing.live({ date: "2030-01-01" });
  const waiting = closed.next();
  setTimeout(() => closed.close(), 300);
  assert.deepEqual(await waiting, { done: true, value: undefined });
});

test("live() in Node uses Node's own WebSocket where Node has one", async () => {
  // Node 20 has it behind a flag; from Node 22 it is there by default.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--experimental-websocket", "--no-warnings", join(HERE, "builtin-websocket.mjs")],
    { env: { ...process.env, URL: service.url, KEY: service.key, DAY: today }, timeout: 30_000 },
  );
  const said = JSON.parse(stdout);
  assert.ok(said.opened >= 1, stdout);
  assert.equal(said.frames[0], "snapshot");
  assert.deepEqual(said.frames.slice(1), ["odds", "odds"]);
});

test("a conflated live() yields the race-day events, then the snapshot", async () => {
  // A conflated subscription from a position gets each race's odds as one snapshot, whose
  // `seq` is the race's last move, and the race-day events after the position exactly,
  // before the snapshot: none is counted a duplicate of anything the stream had.
  const where = { date: "2027-06-17", race_number: 4, venue: "Sha Tin" };
  const last = service.publish([
    ["RaceStatusChanged", { ...where, status: "open" }],
    ["OddsUpdated", { ...where, odds: [{ horse_no: "A001", win_odds: 4.0 }] }],
  ]);
  // Applied before the subscription, so that its snapshot holds the move: on a busy
  // machine the projector may not have committed them when the replay reads.
  await service.applied(last);
  const stream = racing.live({
    date: where.date,
    race: where.race_number,
    since: 0,
    conflateMs: 200,
    topics: ["odds", "status", "scratchings"],
  });
  try {
    const first = [await nextFrame(stream), await nextFrame(stream)];
    assert.deepEqual(
      first.map((f) => f.type),
      ["status", "snapshot"],
    );
    assert.ok(first[0].seq < first[1].seq, "the status came before the snapshot's move");
    assert.equal(first[0].status, "open");
    assert.equal(stream.duplicates, 0);
  } finally {
    await stream.close();
  }
});
