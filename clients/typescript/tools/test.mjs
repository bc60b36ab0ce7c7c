//! The suite: starts the demo (`racing serve --demo`, the binary `RACING_BIN`, else the
//! repository's `target/debug/racing`) and, at the same time, `node --test` over every
//! file of test/, several at once: a file that needs the demo waits until this says where
//! it is, the others start at once. Stops the demo at the end; exits with the tests'
//! status. Run it after `npm run build`: the tests import the package as its users do.

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { demoService } from "../test/service.mjs";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");
// Each file waits on services and sockets far more than it computes.
const CONCURRENCY = 8;

const files = readdirSync(join(PACKAGE, "test"))
  .filter((name) => name.endsWith(".test.mjs"))
  .sort()
  .map((name) => join("test", name));
const scratch = mkdtempSync(join(tmpdir(), "racing-nodetest-run-"));
const described = join(scratch, "demo.json");

const started = Date.now();
const tests = spawn(
  process.execPath,
  ["--test", `--test-concurrency=${CONCURRENCY}`, ...process.argv.slice(2), ...files],
  {
    cwd: PACKAGE,
    env: { ...process.env, RACING_TEST_DEMO: described },
    stdio: "inherit",
  },
);
const ended = new Promise((done) => tests.once("exit", (code, signal) => done(code ?? (signal ? 1 : 0))));

const service = demoService();
try {
  await service.start();
  writeFileSync(described + ".new", JSON.stringify(service.describe()));
  console.error(`# the demo was ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${service.url}`);
} catch (e) {
  writeFileSync(described + ".new", JSON.stringify({ error: String(e) }));
}
renameSync(described + ".new", described);
const status = await ended;
await service.remove();
rmSync(scratch, { recursive: true, force: true });
console.error(`# the suite took ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(status);
