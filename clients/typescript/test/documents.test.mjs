//! Every operation of the API through its method, once, against the demo: each answer is
//! a document that the schema its type was generated from describes, with its `meta`.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { OPERATIONS, Racing } from "racing-client";

import { demo, nextFrame, validator } from "./support.mjs";

let service, racing, vars, check, openapi;

before(async () => {
  service = await demo();
  vars = await service.shellVariables();
  racing = new Racing({ apiKey: service.key, baseUrl: service.url });
  openapi = await (await fetch(service.url + "/openapi.json")).json();
  check = validator(openapi);
});

/** The pointer of the schema of operation `id`'s 200 answer, where it names one. */
function schemaOf(id) {
  for (const item of Object.values(openapi.paths)) {
    for (const op of Object.values(item)) {
      if (op.operationId === id) return op.responses["200"].content?.["application/json"]?.schema?.$ref;
    }
  }
  throw new Error(`no operation ${id}`);
}

test("every operation answers through its method with a document its schema describes", async () => {
  const day = vars.DAY;
  const race = Number(vars.RACE);
  const horse = vars.HORSE;
  const today = (await racing.racecard()).date;
  const [jockey] = (await racing.jockeys()).jockeys;
  const [trainer] = (await racing.trainers()).trainers;
  const name = (await racing.horse(horse)).horse_name.slice(0, 4);
  const calls = {
    api_index: () => racing.index(),
    meetings: () => racing.meetings({ from: day, to: today }),
    horse_search: () => racing.horses(name, { limit: 5 }),
    horse_profile: () => racing.horse(horse),
    horse_form: () => racing.form(horse, { limit: 3 }),
    horse_analysis: () => racing.horseAnalysis(horse, { to: today }),
    results_by_date: () => racing.results(day),
    race_result: () => racing.result(day, race),
    racecard_today: () => racing.racecard(),
    racecard_by_date: () => racing.racecard(today),
    race_odds: () => racing.odds(day, race),
    odds_history: () => racing.oddsHistoryPage(day, race, { limit: 5 }),
    jockeys: () => racing.jockeys({ name: jockey.name.slice(0, 3) }),
    jockey: () => racing.jockey(jockey.id),
    jockey_analysis: () => racing.jockeyAnalysis(jockey.id),
    trainers: () => racing.trainers({ name: trainer.name.slice(0, 3) }),
    trainer: () => racing.trainer(trainer.id),
    trainer_analysis: () => racing.trainerAnalysis(trainer.id, { from: day }),
    changes: () => racing.changesPage({ since: Number(vars.SEQ), limit: 5 }),
    openapi_json: () => racing.openapi(),
    asyncapi_json: () => racing.asyncapi(),
    docs_page: () => racing.docs(),
    odds_socket: async () => {
      const stream = racing.live({ date: today, race: 1 });
      try {
        return await nextFrame(stream);
      } finally {
        await stream.close();
      }
    },
  };
  // The webhooks' operations (webhooks.test.mjs) and the event stream (sse.test.mjs) are
  // called where what they answer is checked.
  const elsewhere = (id) => id.startsWith("webhook_") || id === "live_events";
  assert.deepEqual(
    Object.keys(calls).sort(),
    Object.keys(OPERATIONS)
      .filter((id) => !elsewhere(id))
      .sort(),
  );
  for (const [id, call] of Object.entries(calls)) {
    const answer = await call();
    if (id === "docs_page") {
      assert.match(answer, /<html/i);
      continue;
    }
    if (id === "odds_socket") {
      assert.equal(answer.type, "snapshot");
      continue;
    }
    // 304 for those read once already (the horse, the lists): the kept copy, revalidated.
    assert.ok([200, 304].includes(answer.meta.status), id);
    assert.equal(answer.meta.attempts, 1, id);
    assert.ok(answer.meta.etag, id);
    assert.ok(answer.meta.requestId, id);
    const schema = schemaOf(id);
    if (schema !== undefined) check(answer, schema);
    // Every data answer has its position; the index and the descriptions hold no data.
    if (!["api_index", "openapi_json", "asyncapi_json"].includes(id)) {
      assert.equal(typeof answer.meta.racingSeq, "number", id);
    }
  }
});

test("a document's meta stays out of its JSON and its fields", async () => {
  const result = await racing.result(vars.DAY, Number(vars.RACE));
  assert.equal(Object.keys(result).includes("meta"), false);
  assert.equal(JSON.parse(JSON.stringify(result)).meta, undefined);
  assert.equal(result.race_number, Number(vars.RACE));
  assert.ok(result.runners.length > 0);
});

test("the typed get of a path answers what its method does", async () => {
  const day = vars.DAY;
  const race = Number(vars.RACE);
  const byPath = await racing.get("/api/v1/results/{date}/{race_number}", {
    path: { date: day, race_number: race },
    query: { venue: undefined },
  });
  assert.deepEqual(byPath, await racing.result(day, race));
  const index = await racing.get("/api/v1/");
  assert.equal(index.live_odds, "/ws/live/odds");
});

test("an as_of answer is the document as of that point, and never asked for again", async () => {
  const day = vars.DAY;
  const race = Number(vars.RACE);
  const now = await racing.result(day, race);
  const pinned = await racing.result(day, race, { as_of: now.meta.racingSeq });
  assert.equal(pinned.meta.status, 200);
  assert.equal(pinned.meta.asOf, now.meta.racingSeq);
  assert.deepEqual(pinned, now);
  const again = await racing.result(day, race, { as_of: now.meta.racingSeq });
  assert.equal(again.meta.status, 0);
  assert.equal(again.meta.attempts, 0);
  assert.ok(again.meta.fromCache);
  assert.deepEqual(again, pinned);
});
