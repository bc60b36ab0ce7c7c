//! Writes src/generated from a service's `/openapi.json` and `/asyncapi.json`: those of
//! `--url URL` when given, else of a `racing serve` this starts for the purpose (the binary
//! `RACING_BIN`, else the repository's `target/debug/racing`) and stops again.
//!
//!     npm run generate                 # a service of its own
//!     npm run generate -- --url http://127.0.0.1:8080

import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { Service } from "../test/service.mjs";
import { FILES, render } from "./types.mjs";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A public document of the service, as parsed JSON. */
export async function served(url, path) {
  const answer = await fetch(url + path);
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
  return answer.json();
}

const { values } = parseArgs({ options: { url: { type: "string" } } });
let service = null;
let url = values.url;
try {
  if (url === undefined) {
    service = new Service({ demo: false });
    await service.start();
    url = service.url;
  }
  const files = await render(await served(url, "/openapi.json"), await served(url, "/asyncapi.json"));
  for (const [name, path] of Object.entries(FILES)) {
    writeFileSync(join(PACKAGE, path), files[name]);
    console.log(`wrote ${path}`);
  }
} finally {
  await service?.remove();
}
