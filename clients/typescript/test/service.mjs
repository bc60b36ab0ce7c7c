//! The service the tests talk to: the real `racing` binary, `serve` (with `--demo` or
//! without), on free loopback ports with a data directory of its own. The binary is
//! `RACING_BIN`, else the repository's `target/debug/racing`.

import { spawn, execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Today's first race of the demo stays open this long, so that its prices move all
 * through the run. */
export const RACE_SECS = 900;
/** The demo's heartbeat interval, the service's default. */
export const HEARTBEAT_MS = 5000;

/** The `racing` binary the tests run. */
export function racingBin() {
  const path = process.env.RACING_BIN || join(REPO, "target", "debug", "racing");
  if (!existsSync(path)) {
    throw new Error(`no racing binary at ${path}: build it (cargo build) or set RACING_BIN`);
  }
  return path;
}

/** A free loopback port, as the operating system hands one out. */
export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** Calls `check` until it returns something other than undefined, for at most `ms`. */
export async function poll(what, ms, check, every = 200) {
  const end = Date.now() + ms;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(every);
  }
}

/** A `racing serve` on a loopback port with a data directory of its own; `stop()` or
 * `kill()`, then `start()` again, keep both, as a restart does. */
export class Service {
  constructor({ demo, env = {} }) {
    this.demo = demo;
    this.dataDir = mkdtempSync(join(tmpdir(), "racing-nodetest-"));
    this.key = "nodetest_" + randomBytes(16).toString("hex");
    this.logPath = join(this.dataDir, "service.log");
    this.process = null;
    this.extraEnv = env;
  }

  /** A service another process started, from what `describe()` gave. */
  static attached(described) {
    const service = Object.create(Service.prototype);
    Object.assign(service, described, { process: null, extraEnv: {} });
    return service;
  }

  /** What another process needs to talk to it (`Service.attached`). */
  describe() {
    const { demo, dataDir, key, logPath, port, url } = this;
    return { demo, dataDir, key, logPath, port, url };
  }

  /** Starts it and waits until its read models are built (the API answers 200). */
  async start() {
    if (this.port === undefined) {
      this.port = await freePort();
      this.url = `http://127.0.0.1:${this.port}`;
    }
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RACING_")));
    Object.assign(
      env,
      {
        RACING_DATA_DIR: this.dataDir,
        RACING_LISTEN: `127.0.0.1:${this.port}`,
        RACING_ADMIN_LISTEN: "127.0.0.1:0",
        RACING_API_KEYS: this.key,
        RACING_RATE_LIMIT_PER_SEC: "100000",
        RACING_RATE_LIMIT_BURST: "100000",
        RACING_WS_HEARTBEAT_MS: "1000",
        RACING_LOG: "warn",
      },
      this.extraEnv,
    );
    const log = openSync(this.logPath, "a");
    // A process group of its own, so that its nats-server goes with it.
    const child = spawn(racingBin(), ["serve", ...(this.demo ? ["--demo"] : [])], {
      env,
      detached: true,
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    this.process = child;
    let exited = null;
    child.once("exit", (code, signal) => (exited = code ?? signal));
    // The demo's season is there once today's card is; without it, once the API answers.
    const ready = this.demo ? "/api/v1/racecards/today" : "/api/v1/meetings";
    await poll(
      "the service ready",
      120_000,
      async () => {
        if (exited !== null) throw new Error(`the service exited with ${exited}:\n${this.log()}`);
        try {
          const r = await fetch(this.url + ready, {
            headers: { "X-API-Key": this.key },
            signal: AbortSignal.timeout(2000),
          });
          await r.arrayBuffer();
          return r.status === 200 ? true : undefined;
        } catch {
          return undefined;
        }
      },
      300,
    );
  }

  /** Ends the service and its nats-server at once, as a crash of the machine would: SIGKILL
   * to the whole process group, no close frames, nothing flushed. */
  async kill() {
    const child = this.process;
    this.process = null;
    if (child === null) return;
    const gone = new Promise((done) =>
      child.exitCode !== null || child.signalCode !== null ? done() : child.once("exit", done),
    );
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
    await gone;
    // Its nats-server, in the same group, may take a moment longer to go.
    await poll(
      "the process group gone",
      10_000,
      () => {
        try {
          process.kill(-child.pid, 0);
          return undefined;
        } catch {
          return true;
        }
      },
      50,
    );
  }

  /** Stops it with SIGTERM (live sockets closed with 1001), then ends what is left. */
  async stop() {
    const child = this.process;
    if (child === null) return;
    const gone = new Promise((done) =>
      child.exitCode !== null || child.signalCode !== null ? done() : child.once("exit", done),
    );
    try {
      process.kill(child.pid, "SIGTERM");
    } catch {
      // Already gone.
    }
    await Promise.race([gone, sleep(20_000)]);
    await this.kill();
  }

  /** Stops it and removes its data directory. */
  async remove() {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** Runs a `racing` command against this service's data directory; its output. */
  racing(args, input) {
    return execFileSync(racingBin(), [...args, "--data-dir", this.dataDir], {
      input,
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, RACING_LOG: "warn" },
      stdio: ["pipe", "pipe", "pipe"],
    });
  }

  /** A managed key with a rate of its own (`racing keys create`), once the service
   * accepts it. */
  async createKey(name, rate, burst) {
    const out = this.racing([
      "keys",
      "create",
      "--name",
      name,
      "--rate",
      String(rate),
      "--burst",
      String(burst),
    ]);
    const key = out.trim().split("\n").at(-1);
    await poll("the new key accepted", 15_000, async () => {
      const r = await fetch(this.url + "/api/v1/meetings", { headers: { "X-API-Key": key } });
      await r.arrayBuffer();
      return r.status !== 401 ? true : undefined;
    });
    return key;
  }

  /** Publishes each `[type, data]` as one event (`racing publish`), as a feeder does; the
   * stream sequence of the last (from its `line N: seq S` lines). */
  publish(events) {
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const lines = events.map(([type, data]) =>
      JSON.stringify({ event_id: randomUUID(), type, occurred_at: now, data }),
    );
    const out = this.racing(["publish", "-"], lines.join("\n") + "\n");
    return Math.max(0, ...[...out.matchAll(/: seq (\d+)/g)].map((m) => Number(m[1])));
  }

  /** Waits until the service has applied the log up to `seq`: a read with `min_seq`
   * answers 200 (a 503 says it has not yet, within the read's wait). */
  async applied(seq) {
    await poll(`the log applied up to ${seq}`, 30_000, async () => {
      const r = await fetch(`${this.url}/api/v1/meetings?min_seq=${seq}`, {
        headers: { "X-API-Key": this.key },
      });
      await r.arrayBuffer();
      return r.status === 200 ? true : undefined;
    });
  }

  /** Publishes one `OddsUpdated` per price for runner A001 at Sha Tin. */
  publishOdds(date, raceNumber, prices) {
    this.publish(
      prices.map((price) => [
        "OddsUpdated",
        { date, race_number: raceNumber, venue: "Sha Tin", odds: [{ horse_no: "A001", win_odds: price }] },
      ]),
    );
  }

  /** The last lines of its log. */
  log() {
    try {
      return readFileSync(this.logPath, "utf8").slice(-4000);
    } catch {
      return "";
    }
  }

  /** What the demo banner's `shell:` line exports (`KEY`, `URL`, `DAY`, `RACE`, `HORSE`,
   * `SEQ`), once the service has printed it. */
  async shellVariables() {
    return poll("the demo banner's shell: line", 30_000, () => {
      for (const line of this.log().split("\n")) {
        const at = line.indexOf("shell:");
        if (at < 0) continue;
        const words = line
          .slice(at + "shell:".length)
          .trim()
          .split(/\s+/);
        if (words[0] !== "export") continue;
        return Object.fromEntries(
          words.slice(1).map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
        );
      }
      return undefined;
    });
  }
}

/** A demo service as the suite runs it, not started. */
export function demoService() {
  return new Service({
    demo: true,
    env: {
      RACING_DEMO_RACE_SECS: String(RACE_SECS),
      RACING_WS_HEARTBEAT_MS: String(HEARTBEAT_MS),
      // Webhook endpoints on the tests' own loopback receivers.
      RACING_WEBHOOK_ALLOW_NETWORKS: "127.0.0.0/8",
    },
  });
}
