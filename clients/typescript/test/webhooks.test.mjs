//! Webhooks through the client against the demo: an endpoint made, listed, read, rotated,
//! pinged, its deliveries listed and removed, with the `ping`s the service really sends
//! received on loopback and checked with `verify()`; and `verify()` on the Standard
//! Webhooks specification's own example and on what it must refuse.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { before, test } from "node:test";

import { LimitReached, NotFound, Racing, verify, WebhookVerificationError } from "racing-client";

import { demo } from "./support.mjs";

let service, racing;

before(async () => {
  service = await demo();
  racing = new Racing({ apiKey: service.key, baseUrl: service.url });
});

/** A receiver on loopback: every delivery's headers and body, as they came. */
async function receiver() {
  const got = [];
  const server = createServer((request, answer) => {
    const chunks = [];
    request.on("data", (c) => chunks.push(c));
    request.on("end", () => {
      got.push({ headers: request.headers, body: Buffer.concat(chunks) });
      answer.writeHead(200).end();
    });
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, got, close: () => server.close() };
}

test("verify() accepts the specification's example and refuses what it must", async () => {
  // spec/standard-webhooks.md's example: its secret, id, timestamp, body and signature.
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const body = '{"test": 2432232314}';
  const headers = {
    "Webhook-Id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "Webhook-Timestamp": "1614265330",
    "Webhook-Signature": "v1,bad v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  };
  const now = 1614265330 + 10;
  assert.deepEqual(await verify(headers, body, secret, { now }), { test: 2432232314 });
  assert.deepEqual(await verify(new Headers(headers), new TextEncoder().encode(body), secret, { now }), {
    test: 2432232314,
  });
  const refused = async (h, b, s, at, why) =>
    assert.rejects(
      verify(h, b, s, { now: at }),
      (e) => e instanceof WebhookVerificationError && why.test(e.message),
    );
  await refused(headers, body.replace("2", "3"), secret, now, /no matching signature/);
  await refused(headers, body, "whsec_" + btoa("another secret"), now, /no matching signature/);
  await refused(headers, body, secret, now + 5 * 60 + 20, /too old/);
  await refused(headers, body, secret, now - 5 * 60 - 20, /too new/);
  await refused(
    { ...headers, "Webhook-Signature": "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" },
    body,
    secret,
    now,
    /no matching/,
  );
  const { ["Webhook-Id"]: _, ...noId } = headers;
  await refused(noId, body, secret, now, /missing required headers/);
});

test("an endpoint is made, pinged with deliveries verify() accepts, rotated, listed and removed", async () => {
  const hooks = await receiver();
  try {
    const made = await racing.webhooks.create({ url: hooks.url, topics: ["results", "status"] });
    assert.match(made.secret, /^whsec_/);
    assert.deepEqual(made.topics, ["results", "status"]);
    const listed = await racing.webhooks.list();
    const mine = listed.webhooks.find((w) => w.id === made.id);
    assert.ok(mine, "listed");
    assert.equal(mine.secret, undefined, "a secret is shown once");
    assert.equal((await racing.webhooks.get(made.id)).url, hooks.url);

    const tested = await racing.webhooks.test(made.id);
    assert.equal(tested.delivered, true, JSON.stringify(tested));
    assert.equal(hooks.got.length, 1);
    const [ping] = hooks.got;
    const payload = await racing.webhooks.verify(ping.headers, ping.body, made.secret);
    assert.equal(payload.type, "ping");
    assert.equal(ping.headers["webhook-id"], tested.webhook_id);
    await assert.rejects(
      verify(ping.headers, Buffer.concat([ping.body, Buffer.from(" ")]), made.secret),
      WebhookVerificationError,
    );

    // A rotated endpoint signs with both secrets for a while: either verifies.
    const rotated = await racing.webhooks.rotate(made.id);
    assert.notEqual(rotated.secret, made.secret);
    await racing.webhooks.test(made.id);
    const second = hooks.got[1];
    for (const secret of [rotated.secret, made.secret]) {
      assert.equal((await verify(second.headers, second.body, secret)).type, "ping");
    }
    const deliveries = await racing.webhooks.deliveries(made.id);
    assert.ok(Array.isArray(deliveries.attempts));

    await racing.webhooks.delete(made.id);
    await assert.rejects(racing.webhooks.get(made.id), NotFound);
  } finally {
    hooks.close();
  }
});

test("an endpoint past the plan's number is refused as LimitReached, and a bad URL as a BadRequest", async () => {
  await assert.rejects(
    racing.webhooks.create({ url: "ftp://example.com/x", topics: ["results"] }),
    (e) => e.status === 400 && e.error === "bad_request",
  );
  const made = [];
  try {
    let refused = null;
    for (let i = 0; i < 50 && refused === null; i++) {
      try {
        made.push(await racing.webhooks.create({ url: `http://127.0.0.1:9/${i}`, topics: ["results"] }));
      } catch (e) {
        refused = e;
      }
    }
    assert.ok(refused instanceof LimitReached, String(refused));
    assert.equal(refused.status, 409);
  } finally {
    for (const m of made) await racing.webhooks.delete(m.id);
  }
});
