//! The package as its users get it: `npm pack`, installed in a fresh project, imported and
//! type-checked there, and bundled with esbuild for a page (the README's) that headless
//! Chromium opens against the demo, showing a race's price as it moves.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { build } from "esbuild";
import { chromium } from "playwright-core";

import { poll } from "./service.mjs";
import { blocks, demo } from "./support.mjs";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const run = promisify(execFile);

let fresh, tarball;

/** The demo, and today's date there. */
async function demoToday() {
  const service = await demo();
  const answer = await fetch(service.url + "/api/v1/racecards/today", {
    headers: { "X-API-Key": service.key },
  });
  return { service, today: (await answer.json()).date };
}

before(async () => {
  fresh = mkdtempSync(join(tmpdir(), "racing-client-fresh-"));
  // Built already (the runner builds first): pack what is there.
  const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", fresh], {
    cwd: PACKAGE,
  });
  tarball = join(fresh, packed.stdout.trim().split("\n").at(-1));
  writeFileSync(
    join(fresh, "package.json"),
    JSON.stringify({ name: "fresh", private: true, type: "module" }),
  );
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], {
    cwd: fresh,
    timeout: 120_000,
  });
});

after(() => rmSync(fresh, { recursive: true, force: true }));

test("the package holds the built code, its declarations and the README only", async () => {
  const { stdout } = await run("tar", ["-tzf", tarball]);
  const files = stdout.trim().split("\n").sort();
  assert.ok(files.includes("package/dist/index.js") && files.includes("package/dist/index.d.ts"));
  assert.ok(files.includes("package/README.md") && files.includes("package/package.json"));
  const others = files.filter(
    (f) => !f.startsWith("package/dist/") && !/^package\/(README\.md|package\.json)$/.test(f),
  );
  assert.deepEqual(others, []);
  // The version the client sends in User-Agent is the package's.
  const installed = JSON.parse(
    readFileSync(join(fresh, "node_modules", "racing-client", "package.json"), "utf8"),
  );
  const { VERSION } = await import(join(fresh, "node_modules", "racing-client", "dist", "index.js"));
  assert.equal(VERSION, installed.version);
});

test("the installed declarations type a fresh project's code, and refuse a wrong call", async () => {
  writeFileSync(
    join(fresh, "check.ts"),
    `import { Racing, type LiveFrame, type RaceCard, type RaceResult } from "racing-client";
const racing = new Racing({ apiKey: "k" });
const card: RaceCard = await racing.racecard();
const result: RaceResult = await racing.result(card.date, 1, { venue: "Sha Tin", as_of: 1 });
// @ts-expect-error a race number is a number
await racing.result(card.date, "1");
// @ts-expect-error no such query parameter
await racing.results(card.date, { page: 2 });
for await (const frame of racing.live({ date: card.date, topics: ["odds", "results"] })) {
  const f: LiveFrame = frame;
  if (f.type === "result") console.log(f.result.runners.length, result.race_number);
  // @ts-expect-error not a topic
  racing.live({ date: card.date, topics: ["weather"] });
}
`,
  );
  writeFileSync(
    join(fresh, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2022", "DOM"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: [],
        strict: true,
        noEmit: true,
      },
      files: ["check.ts"],
    }),
  );
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  try {
    await run(process.execPath, [tsc, "-p", fresh], { timeout: 120_000 });
  } catch (e) {
    assert.fail(`tsc:\n${e.stdout}${e.stderr}`);
  }
});

test("a fresh project imports the installed package and reads the demo with it in Node", async () => {
  const { service, today } = await demoToday();
  writeFileSync(
    join(fresh, "index.mjs"),
    `import { Racing } from "racing-client";
const racing = new Racing();
const card = await racing.racecard();
const stream = racing.live({ date: card.date, race: 1 });
const { value } = await stream.next();
await stream.close();
console.log(JSON.stringify({ date: card.date, frame: value.type }));
`,
  );
  const { stdout } = await run(process.execPath, ["index.mjs"], {
    cwd: fresh,
    env: { ...process.env, RACING_API_KEY: service.key, RACING_URL: service.url },
    timeout: 30_000,
  });
  assert.deepEqual(JSON.parse(stdout), { date: today, frame: "snapshot" });
});

test("bundled for a browser, the README's page shows a race's price moving in headless Chromium", async () => {
  const { service, today } = await demoToday();
  const [page] = blocks("js").filter((b) => b.heading === "In the browser");
  assert.ok(page, "no ```js block under `In the browser`");
  writeFileSync(join(fresh, "app.js"), page.code);
  const bundle = await build({
    entryPoints: ["app.js"],
    absWorkingDir: fresh,
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  // The browser's own WebSocket: nothing of Node's, nor the `ws` package.
  const inputs = Object.keys(bundle.metafile.inputs);
  assert.ok(
    inputs.some((i) => i.endsWith("racing-client/dist/websocket-browser.js")),
    inputs.join("\n"),
  );
  assert.ok(!inputs.some((i) => /node_modules\/ws\/|websocket-node/.test(i)), inputs.join("\n"));
  const script = bundle.outputFiles[0].contents;
  const server = createServer((request, response) => {
    if (request.url.startsWith("/app.js")) {
      response.writeHead(200, { "content-type": "text/javascript" });
      response.end(script);
    } else {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end('<!doctype html><title>odds</title><script type="module" src="/app.js"></script>');
    }
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
    ],
  });
  try {
    const tab = await browser.newPage();
    const errors = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    const query = new URLSearchParams({ url: service.url, key: service.key, date: today });
    await tab.goto(`http://127.0.0.1:${server.address().port}/?${query}`);
    // The board as it first shows, then as it is once a price has moved twice.
    const board = async () => (await tab.locator("pre").textContent({ timeout: 30_000 })) ?? "";
    const first = await poll("the board shown", 30_000, async () => {
      const text = await board();
      return /^[A-Z]+\d+ \d+(\.\d+)?$/m.test(text) ? text : undefined;
    });
    const seqOf = (text) => Number(/^seq (\d+)$/m.exec(text)?.[1]);
    let moves = 0;
    let last = first;
    await poll(
      "the prices moved twice",
      60_000,
      async () => {
        const now = await board();
        if (
          seqOf(now) > seqOf(last) &&
          now.split("\n").slice(1).join() !== last.split("\n").slice(1).join()
        ) {
          moves += 1;
          last = now;
        }
        return moves >= 2 ? true : undefined;
      },
      250,
    );
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
  }
});
