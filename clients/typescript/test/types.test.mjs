//! The checked-in types are what the service's own documents make, and the client knows
//! every operation of the API and every frame of the socket: a document changed in Rust
//! fails here until `npm run generate` makes the types again.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { FRAME_TYPES, OPERATIONS, Racing, TOPICS } from "racing-client";

import { demo } from "./support.mjs";
import { FILES, render } from "../tools/types.mjs";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");

async function served(path) {
  const service = await demo();
  const answer = await fetch(service.url + path);
  assert.equal(answer.status, 200, path);
  return answer.json();
}

test("the generated types are those the service's OpenAPI and AsyncAPI documents make", async () => {
  const files = await render(await served("/openapi.json"), await served("/asyncapi.json"));
  for (const [name, path] of Object.entries(FILES)) {
    const checkedIn = readFileSync(join(PACKAGE, path), "utf8");
    assert.ok(checkedIn === files[name], `${path} differs from the service's: run \`npm run generate\``);
  }
});

test("every operation of the API has a method of the client", async () => {
  const openapi = await served("/openapi.json");
  // Its paths, and the deliveries it sends (`webhooks`), which `racing.webhooks` verifies.
  const ids = [...Object.values(openapi.paths), ...Object.values(openapi.webhooks)].flatMap((item) =>
    Object.values(item).map((op) => op.operationId),
  );
  assert.deepEqual(Object.keys(OPERATIONS).sort(), ids.sort());
  const racing = new Racing({ apiKey: "k" });
  for (const method of Object.values(OPERATIONS)) {
    if (method === "webhooks") assert.equal(typeof racing.webhooks.verify, "function", method);
    else assert.equal(typeof Racing.prototype[method], "function", method);
  }
});

test("every frame the socket sends is one live() yields or the session's own", async () => {
  const asyncapi = await served("/asyncapi.json");
  const sent = Object.values(asyncapi.operations)
    .filter((op) => op.action === "receive")
    .map((op) => op.messages[0].$ref.split("/").at(-1));
  // The rest are the session's business, never yielded.
  assert.deepEqual(sent.sort(), [...FRAME_TYPES, "welcome", "pong", "error", "replay_end"].sort());
  assert.deepEqual([...TOPICS], asyncapi.components.schemas.Topic.enum);
});
