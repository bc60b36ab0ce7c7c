//! What the test files share: the demo service the runner started (or one of their own
//! when a file runs alone), frames read with a deadline, a JSON Schema validator over the
//! service's own documents, and a TCP relay whose connections a test can freeze.

import { existsSync, readFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after } from "node:test";

import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

import { demoService, poll, Service } from "./service.mjs";

export { HEARTBEAT_MS } from "./service.mjs";

/** The package's README, whose examples the tests run. */
const README = join(dirname(fileURLToPath(import.meta.url)), "..", "README.md");

/** The environment of the demo the runner started (tools/test.mjs). */
const DEMO_FILE = "RACING_TEST_DEMO";

let shared = null;
let own = null;

// A file run alone stops the demo it started once its tests are over.
after(() => own?.remove());

/** The demo: `serve --demo` with today's first race open all run. The runner starts one
 * for every file (and says where in `RACING_TEST_DEMO` as soon as it is ready, so files
 * that need none start at once); a file run alone starts its own. */
export function demo() {
  shared ??= (async () => {
    const file = process.env[DEMO_FILE];
    if (file) {
      const described = await poll("the runner's demo", 180_000, () =>
        existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined,
      );
      if (described.error) throw new Error(`the runner's demo did not start: ${described.error}`);
      return Service.attached(described);
    }
    own = demoService();
    await own.start();
    return own;
  })();
  return shared;
}

/** The next frame of `stream`, or a failure after `ms`. */
export async function nextFrame(stream, ms = 15_000) {
  let timer;
  const late = new Promise((_, fail) => {
    timer = setTimeout(() => fail(new Error(`no frame within ${ms} ms`)), ms);
  });
  try {
    const { value, done } = await Promise.race([stream.next(), late]);
    if (done) throw new Error("the stream ended");
    return value;
  } finally {
    clearTimeout(timer);
  }
}

/** A validator of values against the schemas of a service document (`/openapi.json` or
 * `/asyncapi.json`): `check(value, "#/components/schemas/RaceCard")` throws with the
 * errors when the value does not meet the schema. */
export function validator(document) {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const format of ["int32", "int64", "float", "double"]) ajv.addFormat(format, true);
  ajv.addSchema(document, "doc");
  return (value, pointer) => {
    const validate = ajv.getSchema("doc" + pointer);
    if (validate === undefined) throw new Error(`no schema at ${pointer}`);
    if (!validate(value)) {
      throw new Error(
        `${pointer}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 400)}`,
      );
    }
  };
}

/** A TCP relay in front of a port, on a loopback port of its own, whose connections a
 * test can freeze: held open with nothing passing either way, as a network that silently
 * drops everything does. Connections made after a freeze pass as usual. */
export class Relay {
  constructor(targetPort) {
    this.targetPort = targetPort;
    this.accepted = 0;
    this.pairs = new Set();
    this.server = createServer((client) => {
      this.accepted += 1;
      const upstream = connect(this.targetPort, "127.0.0.1");
      const pair = { client, upstream, frozen: false };
      this.pairs.add(pair);
      const pass = (from, to) =>
        from.on("data", (data) => {
          if (!pair.frozen) to.write(data);
        });
      pass(client, upstream);
      pass(upstream, client);
      for (const [one, other] of [
        [client, upstream],
        [upstream, client],
      ]) {
        one.on("error", () => other.destroy());
        one.on("close", () => {
          other.destroy();
          this.pairs.delete(pair);
        });
      }
    });
  }

  /** Starts listening; the URL to give a client. */
  async start() {
    await new Promise((done) => this.server.listen(0, "127.0.0.1", done));
    return `http://127.0.0.1:${this.server.address().port}`;
  }

  /** Nothing passes any more on the connections open now, either way, ever. */
  freeze() {
    for (const pair of this.pairs) pair.frozen = true;
  }

  async close() {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise((done) => this.server.close(done));
  }
}

/** Every ```LANGUAGE block of the README, in order, with the heading it comes under. */
export function blocks(language) {
  const found = [];
  let heading = "";
  const text = readFileSync(README, "utf8");
  for (const part of text.split(new RegExp("^(```" + language + "\\n[\\s\\S]*?^```)$", "m"))) {
    if (part.startsWith("```" + language + "\n")) {
      found.push({ heading, code: part.slice(language.length + 4, -3) });
    } else {
      heading = [...part.matchAll(/^#+ (.+)$/gm)].at(-1)?.[1] ?? heading;
    }
  }
  return found;
}
