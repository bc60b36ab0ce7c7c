//! The README's examples, each type-checked against the package's declarations and run as
//! printed against the demo, with the variables its banner's `shell:` line exports: the
//! quick start until it has shown a few frames (it follows the meeting for ever), every
//! other one until it ends by itself.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { transformSync } from "esbuild";

import { blocks, demo } from "./support.mjs";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");
// Inside the package, so that `import ... from "racing-client"` is the package itself.
const EXAMPLES = join(PACKAGE, ".examples");
// The longest an example may take: those that follow a live stream stop after a few frames.
const EXAMPLE_MS = 60_000;
const VARIABLES = ["KEY", "URL", "DAY", "RACE", "HORSE", "SEQ"];

const all = blocks("ts");
const setup = all.find((b) => b.heading === "The examples");
const examples = all.filter((b) => b !== setup);

/** The example as a module: its imports, the setup, then the rest of it. */
function program(example) {
  const lines = example.code.split("\n");
  const imports = lines.filter((l) => l.startsWith("import "));
  const rest = lines.filter((l) => !l.startsWith("import "));
  return [...imports, setup.code, ...rest].join("\n");
}

function name(index, heading) {
  return `${String(index).padStart(2, "0")}-${heading.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
}

/** The environment an example runs in: the demo banner's variables. */
async function environment() {
  const banner = await (await demo()).shellVariables();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RACING_")));
  for (const v of VARIABLES) env[v] = banner[v];
  return env;
}

before(() => {
  rmSync(EXAMPLES, { recursive: true, force: true });
  mkdirSync(EXAMPLES);
  writeFileSync(
    join(EXAMPLES, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: ["node"],
        strict: true,
        noEmit: true,
      },
      include: ["*.ts"],
    }),
  );
  examples.forEach((example, i) => {
    const file = join(EXAMPLES, name(i, example.heading));
    writeFileSync(file + ".ts", program(example));
    writeFileSync(file + ".mjs", transformSync(program(example), { loader: "ts", format: "esm" }).code);
  });
});

test("the first example reads the demo banner's variables", () => {
  assert.ok(setup, "no block under `The examples`");
  for (const v of VARIABLES) assert.ok(setup.code.includes(`process.env.${v}`), v);
  assert.ok(examples.length >= 10, String(examples.length));
});

test("every example type-checks against the package's declarations", async () => {
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  try {
    await promisify(execFile)(process.execPath, [tsc, "-p", EXAMPLES], { timeout: 120_000 });
  } catch (e) {
    assert.fail(`tsc:\n${e.stdout}${e.stderr}`);
  }
});

test("the quick start follows today's meeting", async () => {
  const env = await environment();
  const quick = examples.findIndex((e) => e.heading.startsWith("racing-client"));
  assert.ok(quick >= 0, "no quick start");
  const child = spawn(process.execPath, [join(EXAMPLES, name(quick, examples[quick].heading) + ".mjs")], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  try {
    await new Promise((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`3 frames not shown in ${EXAMPLE_MS} ms:\n${out}${err}`)),
        EXAMPLE_MS,
      );
      child.stdout.on("data", (d) => {
        out += d;
        if (out.split("\n").length > 3) {
          clearTimeout(timer);
          done();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        fail(new Error(`it ended (${code}):\n${out}${err}`));
      });
    });
  } finally {
    child.kill();
  }
  assert.match(out, /^snapshot \d+$/m);
});

// They wait on the demo's live stream far more than they compute: all at once.
describe("every other example", { concurrency: true }, () => {
  for (const [i, example] of examples.entries()) {
    if (example.heading.startsWith("racing-client")) continue;
    test(`the example of ${example.heading} runs as printed`, async () => {
      const env = await environment();
      const file = join(EXAMPLES, name(i, example.heading) + ".mjs");
      let run;
      try {
        run = await promisify(execFile)(process.execPath, [file], { env, timeout: EXAMPLE_MS });
      } catch (e) {
        assert.fail(`${example.heading}:\n${program(example)}\n${e.stdout}${e.stderr}`);
      }
      assert.ok(run.stdout.length > 0, `${example.heading}: printed nothing`);
    });
  }
});
