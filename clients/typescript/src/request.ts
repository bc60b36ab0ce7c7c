//! One GET of the API, politely: paced by the `RateLimit` headers, retried after a 429 or
//! a 503 (after its `Retry-After`) and after a network error, revalidated with the `ETag`
//! of the copy kept, and read into a document that carries what the headers said.

import { Cache } from "./cache.js";
import { apiError, ApiError, ConnectionFailed, DecodeError } from "./errors.js";
import { backoff, headers, sleep, type Settings } from "./settings.js";

/** What the `RateLimit` and `RateLimit-Policy` headers of an answer said. */
export interface RateLimit {
  /** Requests left in the quota now. */
  readonly remaining: number;
  /** Milliseconds until the quota is full again. */
  readonly resetMs: number;
  /** The quota: this many requests (the burst) ... */
  readonly limit: number | null;
  /** ... per this many milliseconds. */
  readonly windowMs: number | null;
}

/** What the HTTP answer said about a document besides its body. */
export interface Meta {
  /** 200; 304 when the kept copy was revalidated; 0 when an immutable `as_of` answer came
   * from the cache without a request. */
  readonly status: number;
  /** `Racing-Seq`: the position of the log the answer reflects; an `as_of` that answers
   * the same document again, and a `since` for `live()` that misses nothing after it. */
  readonly racingSeq: number | null;
  /** The `as_of` asked for, if one was. */
  readonly asOf: number | null;
  /** The answer's `ETag`. */
  readonly etag: string | null;
  /** What is left of the key's quota, when the answer said. */
  readonly rateLimit: RateLimit | null;
  /** How many requests it took (1 unless retried; 0 from the cache alone). */
  readonly attempts: number;
  /** The answer's `X-Request-Id`. */
  readonly requestId: string | null;
  /** Whether the body is the copy the client kept (a 304, or an immutable answer). */
  readonly fromCache: boolean;
}

/** A document with `meta`, a property left out of `JSON.stringify` and of comparisons. */
export type WithMeta<T> = T & { readonly meta: Meta };

/** One GET: its path (with its segments encoded), its query, and the `as_of` it asks for. */
export interface Call {
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly asOf: number | null;
}

/** The statuses retried after `Retry-After` or a backoff. */
const RETRIED = [429, 503];

/** The `key=value` parameters of the first item of a structured header
 * (`"default";r=73;t=1`). */
function parameters(header: string | null): Map<string, string> {
  const found = new Map<string, string>();
  if (!header) return found;
  const [first = ""] = header.split(",");
  for (const part of first.split(";").slice(1)) {
    const at = part.indexOf("=");
    if (at > 0) found.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return found;
}

function number(text: string | undefined | null): number | null {
  if (text === undefined || text === null || text.trim() === "") return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/** The `RateLimit` and `RateLimit-Policy` headers, if the answer had them. */
export function rateLimit(h: Headers): RateLimit | null {
  const now = parameters(h.get("ratelimit"));
  const policy = parameters(h.get("ratelimit-policy"));
  const remaining = number(now.get("r"));
  const reset = number(now.get("t"));
  if (remaining === null || reset === null) return null;
  const limit = number(policy.get("q"));
  const window = number(policy.get("w"));
  return {
    remaining,
    resetMs: reset * 1000,
    limit,
    windowMs: window === null ? null : window * 1000,
  };
}

/** `Retry-After` in milliseconds: a number of seconds or an HTTP date. */
export function retryAfter(h: Headers): number | null {
  const value = h.get("retry-after");
  if (value === null) return null;
  const seconds = number(value);
  if (seconds !== null) return Math.max(0, seconds * 1000);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, when - Date.now());
}

/** The error of an error answer, from its `{error, message}` body when it has one. */
export function errorOf(status: number, statusText: string, h: Headers, body: string): ApiError {
  let error = `http_${status}`;
  let message = statusText || `HTTP ${status}`;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed && "message" in parsed) {
      error = String(parsed.error);
      message = String(parsed.message);
    }
  } catch {
    // Not the API's body (a proxy's page, say): the status says what there is to say.
  }
  return apiError({
    status,
    error,
    message,
    retryAfterMs: retryAfter(h),
    requestId: h.get("x-request-id"),
  });
}

/** A signal that aborts when `signal` does or after `ms`, whichever comes first. */
export function deadline(ms: number, signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  return signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
}

/** The state a client keeps between requests (the cache, the pace) and the rules for
 * answers. */
export class Requester {
  readonly cache: Cache;
  private notBefore = 0;

  constructor(readonly settings: Settings) {
    this.cache = new Cache(settings.cacheSize);
  }

  /** The document `call` answers, with its `meta`. */
  async get<T>(call: Call, signal?: AbortSignal): Promise<WithMeta<T>> {
    const { body, meta } = await this.exchange(call, signal);
    return document<T>(call, body, meta);
  }

  /** The text `call` answers (a page of HTML), by the same rules as a document. */
  async text(call: Call, signal?: AbortSignal): Promise<string> {
    return (await this.exchange(call, signal)).body;
  }

  /** The body `call` answers (from the cache where the service says it is current),
   * after the pace and the retries; an error answer is thrown. */
  private async exchange(call: Call, signal?: AbortSignal): Promise<{ body: string; meta: Meta }> {
    const key = cacheKey(call);
    const kept = this.cache.get(key);
    if (kept?.immutable) {
      const meta: Meta = {
        status: 0,
        racingSeq: call.asOf,
        asOf: call.asOf,
        etag: kept.etag,
        rateLimit: null,
        attempts: 0,
        requestId: null,
        fromCache: true,
      };
      return { body: kept.body, meta };
    }
    for (let attempt = 1; ; attempt++) {
      await sleep(this.wait(), signal);
      const entry = this.cache.get(key);
      let answer: Response;
      let body: string;
      try {
        answer = await this.settings.fetch(this.url(call), {
          headers: entry
            ? { ...headers(this.settings), "If-None-Match": entry.etag }
            : headers(this.settings),
          signal: deadline(this.settings.timeoutMs, signal),
        });
        body = await answer.text();
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (attempt > this.settings.maxRetries) {
          throw new ConnectionFailed(`${call.path}: ${String(e)}`, { cause: e });
        }
        await sleep(backoff(this.settings, attempt), signal);
        continue;
      }
      const { status, headers: h } = answer;
      const limit = rateLimit(h);
      this.note(limit);
      if (status === 200 || status === 304) {
        const meta: Meta = {
          status,
          racingSeq: number(h.get("racing-seq")),
          asOf: call.asOf,
          etag: h.get("etag"),
          rateLimit: limit,
          attempts: attempt,
          requestId: h.get("x-request-id"),
          fromCache: status === 304,
        };
        if (status === 304) {
          if (entry === undefined) {
            throw new DecodeError(`${call.path}: 304 for a document the client does not hold`);
          }
          return { body: entry.body, meta };
        }
        if (meta.etag) {
          const immutable = (h.get("cache-control") ?? "").includes("immutable");
          this.cache.put(key, { etag: meta.etag, body, immutable });
        }
        return { body, meta };
      }
      const error = errorOf(status, answer.statusText, h, body);
      const wait = error.retryAfterMs;
      if (RETRIED.includes(status) && attempt <= this.settings.maxRetries) {
        if (wait === null) {
          await sleep(backoff(this.settings, attempt), signal);
          continue;
        }
        if (wait <= this.settings.maxRetryAfterMs) {
          // The service's word, with a little jitter so that a crowd told the same second
          // does not come back in the same millisecond.
          await sleep(wait + Math.random() * 100, signal);
          continue;
        }
      }
      throw error;
    }
  }

  /** The URL of `call`. */
  url(call: Call): string {
    const query = new URLSearchParams(call.query).toString();
    return this.settings.baseUrl + call.path + (query ? "?" + query : "");
  }

  /** Milliseconds to wait before the next request so that it is not refused: when the
   * last answer said the quota was spent, the time for one request to come back. */
  private wait(): number {
    return this.settings.pace ? Math.max(0, this.notBefore - Date.now()) : 0;
  }

  private note(limit: RateLimit | null): void {
    if (limit === null || limit.remaining > 0) return;
    const one = limit.limit && limit.windowMs ? limit.windowMs / limit.limit : limit.resetMs;
    this.notBefore = Math.max(this.notBefore, Date.now() + Math.min(one, limit.resetMs));
  }
}

/** The cache's key of a call: the path and the sorted query. */
function cacheKey(call: Call): string {
  const query = Object.entries(call.query)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  return call.path + "?" + query;
}

/** The body read as a document, with `meta` beside its fields. */
function document<T>(call: Call, body: string, meta: Meta): WithMeta<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    throw new DecodeError(`${call.path}: the answer is not JSON: ${String(e)}`);
  }
  if (typeof parsed !== "object" || parsed === null) {
    throw new DecodeError(`${call.path}: the answer is not a JSON object`);
  }
  Object.defineProperty(parsed, "meta", { value: meta, enumerable: false });
  return parsed as WithMeta<T>;
}
