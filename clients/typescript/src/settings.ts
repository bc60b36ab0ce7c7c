//! How a client talks to the service: the options a caller gives, resolved once against
//! the environment (`RACING_API_KEY`, `RACING_URL`) and the defaults.

import { ConfigurationError } from "./errors.js";

/** The client's version, sent in `User-Agent` where the platform lets a script set it. */
export const VERSION = "0.1.0";

/** Where a client goes when neither the options nor `RACING_URL` say. */
export const DEFAULT_URL = "http://127.0.0.1:8080";

/** What `new Racing(options)` takes; every field may be left out. */
export interface ClientOptions {
  /** The API key; else `RACING_API_KEY` (in Node). */
  apiKey?: string;
  /** The service; else `RACING_URL` (in Node), else `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** The longest one request may take, in milliseconds (10,000). */
  timeoutMs?: number;
  /** How often a 429, a 503 or a network error is tried again (4). */
  maxRetries?: number;
  /** The first wait of the backoff, in milliseconds, doubling each retry (500). */
  backoffMs?: number;
  /** The longest wait of the backoff (30,000 ms). */
  maxBackoffMs?: number;
  /** The longest `Retry-After` waited out; a longer one is an error at once (60,000 ms). */
  maxRetryAfterMs?: number;
  /** How many documents are kept with their `ETag` to revalidate (256; 0 keeps none). */
  cacheSize?: number;
  /** Wait for the quota the last answer's `RateLimit` said was spent, rather than be
   * refused (true). */
  pace?: boolean;
  /** The `fetch` to use (the platform's own by default). */
  fetch?: typeof globalThis.fetch;
}

/** The options resolved: every field has its value. */
export interface Settings {
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxRetryAfterMs: number;
  readonly cacheSize: number;
  readonly pace: boolean;
  readonly fetch: typeof globalThis.fetch;
}

/** A variable of the process's environment, where there is one (Node; not a browser). */
export function environment(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env?.[name] || undefined;
}

/** The settings of `options`, with the environment and the defaults filling the rest. */
export function settings(options: ClientOptions = {}): Settings {
  const apiKey = options.apiKey ?? environment("RACING_API_KEY");
  if (!apiKey) {
    throw new ConfigurationError("no API key: pass { apiKey } or set RACING_API_KEY");
  }
  const baseUrl = (options.baseUrl ?? environment("RACING_URL") ?? DEFAULT_URL).replace(/\/+$/, "");
  const fetch = options.fetch ?? globalThis.fetch;
  if (typeof fetch !== "function") {
    throw new ConfigurationError("no fetch: this platform has none; pass { fetch }");
  }
  return {
    apiKey,
    baseUrl,
    timeoutMs: options.timeoutMs ?? 10_000,
    maxRetries: options.maxRetries ?? 4,
    backoffMs: options.backoffMs ?? 500,
    maxBackoffMs: options.maxBackoffMs ?? 30_000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    cacheSize: options.cacheSize ?? 256,
    pace: options.pace ?? true,
    // Called as a method of globalThis: a browser's fetch refuses any other `this`.
    fetch: fetch === globalThis.fetch ? (input, init) => globalThis.fetch(input, init) : fetch,
  };
}

/** The headers of every request: the key, what is accepted, who asks. */
export function headers(s: Settings): Record<string, string> {
  return {
    "X-API-Key": s.apiKey,
    Accept: "application/json",
    "User-Agent": `racing-client-typescript/${VERSION}`,
  };
}

/** Milliseconds before retry `attempt` (1, 2, ...): doubling from `backoffMs` up to
 * `maxBackoffMs`, jittered over its upper half so that many clients refused together do
 * not come back together. */
export function backoff(s: Settings, attempt: number): number {
  const ceiling = Math.min(s.maxBackoffMs, s.backoffMs * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((done, fail) => {
    if (signal?.aborted) {
      fail(signal.reason);
      return;
    }
    const abort = () => {
      clearTimeout(timer);
      fail(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", abort);
        done();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", abort, { once: true });
  });
}
