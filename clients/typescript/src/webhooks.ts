//! `verify()`: the check a webhook receiver makes of a delivery, by the rules of the
//! Standard Webhooks packages. A delivery is a `POST` whose `webhook-signature` header
//! lists `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`,
//! keyed with the bytes the endpoint's secret (`whsec_` then base64) decodes to. Web
//! Crypto only, so the same in Node and in a browser or a serverless function. And
//! `Webhooks`, the key's endpoints, as `racing.webhooks`.

import { ConnectionFailed, DecodeError, RacingError } from "./errors.js";
import type { Webhook, WebhookDeliveries, WebhookList, WebhookTest } from "./generated/names.js";
import { deadline, errorOf } from "./request.js";
import { backoff, headers, sleep, type Settings } from "./settings.js";

/** How far a delivery's `webhook-timestamp` may be from the clock, either way, in seconds. */
export const TOLERANCE_S = 5 * 60;

/** A delivery that did not verify: a header missing, a timestamp too old or too new, or
 * no signature made with the secret. Answer it 4xx and act on nothing of it. */
export class WebhookVerificationError extends RacingError {
  override name = "WebhookVerificationError";
}

/** What a delivery carries: the event's type, its position, when it was published, and
 * the frame the live stream sends for it (a `ping` carries no event). */
export interface WebhookPayload {
  readonly type: "status" | "scratching" | "result" | "card" | "retraction" | "ping";
  readonly seq: number;
  readonly published_at: string;
  readonly data: Record<string, unknown>;
}

/** The headers of a delivery, as any server framework hands them over. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value.join(" ") : typeof value === "string" ? value : undefined;
  }
  return undefined;
}

function base64(text: string): Uint8Array | null {
  try {
    const raw = atob(text + "=".repeat((4 - (text.length % 4)) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** Compares two byte strings in time that depends on their length alone. */
function same(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let differ = 0;
  for (let i = 0; i < a.length; i++) differ |= a[i]! ^ b[i]!;
  return differ === 0;
}

/** Checks a delivery as its receiver got it: `headers` (any case), `body` as the bytes or
 * text it came as (never parsed and written again), `secret` the endpoint's `whsec_...`.
 * Resolves to the payload, or rejects with a `WebhookVerificationError`. `now` is the
 * clock in Unix seconds (default: now). */
export async function verify(
  headers: WebhookHeaders,
  body: string | Uint8Array,
  secret: string,
  { now }: { now?: number } = {},
): Promise<WebhookPayload> {
  const id = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !stamp || !signatures) throw new WebhookVerificationError("missing required headers");
  const at = Math.trunc(Number(stamp));
  if (!/^\s*\d+(\.\d*)?\s*$/.test(stamp) || !Number.isSafeInteger(at)) {
    throw new WebhookVerificationError("invalid signature headers");
  }
  const clock = now ?? Date.now() / 1000;
  if (at < clock - TOLERANCE_S) throw new WebhookVerificationError("message timestamp too old");
  if (at > clock + TOLERANCE_S) throw new WebhookVerificationError("message timestamp too new");
  const key = base64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  if (key === null || key.length === 0) throw new WebhookVerificationError("the secret is not base64");
  const bytes: Uint8Array = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const prefix = new TextEncoder().encode(`${id}.${at}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  const hmac = await crypto.subtle.importKey(
    "raw",
    key as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const expected = new Uint8Array(await crypto.subtle.sign("HMAC", hmac, signed));
  for (const signature of signatures.split(" ")) {
    const [version, value] = signature.split(",", 2);
    if (version !== "v1" || value === undefined) continue;
    const given = base64(value);
    if (given !== null && same(expected, given)) {
      try {
        return JSON.parse(new TextDecoder().decode(bytes)) as WebhookPayload;
      } catch {
        throw new WebhookVerificationError("the body is not JSON");
      }
    }
  }
  throw new WebhookVerificationError("no matching signature found");
}

/** What `webhooks.create()` takes. */
export interface NewEndpoint {
  /** Where deliveries go: `https` on a public address. */
  url: string;
  /** Any of `results`, `status`, `scratchings`, `cards`. */
  topics: readonly ("results" | "status" | "scratchings" | "cards")[];
  /** One date alone, `YYYY-MM-DD`; every date when left out. */
  date?: string;
}

/** The key's webhook endpoints, as `racing.webhooks`: each method one request of the
 * key's plan, a 429 or 503 waited out and tried again as a read is (the service refused
 * it before doing anything). See docs/api.md, Webhooks. */
export class Webhooks {
  constructor(private readonly settings: Settings) {}

  /** `verify()`: checks a delivery an endpoint was sent. */
  verify(headers: WebhookHeaders, body: string | Uint8Array, secret: string, options: { now?: number } = {}) {
    return verify(headers, body, secret, options);
  }

  /** Makes an endpoint sent every race-day event of `topics` from now on; the answer holds
   * its `secret`, shown this once. */
  create(endpoint: NewEndpoint, options: Signal = {}): Promise<Webhook> {
    return this.send("POST", PATH, options.signal, JSON.stringify(endpoint)) as Promise<Webhook>;
  }

  /** The key's endpoints, without their secrets. */
  list(options: Signal = {}): Promise<WebhookList> {
    return this.send("GET", PATH, options.signal) as Promise<WebhookList>;
  }

  /** One endpoint: enabled or not, and why. */
  get(id: string, options: Signal = {}): Promise<Webhook> {
    return this.send("GET", path(id), options.signal) as Promise<Webhook>;
  }

  /** Removes an endpoint, and what was owed to it. */
  async delete(id: string, options: Signal = {}): Promise<void> {
    await this.send("DELETE", path(id), options.signal);
  }

  /** A new secret (in the answer); the old one signs beside it for 24 hours. */
  rotate(id: string, options: Signal = {}): Promise<Webhook> {
    return this.send("POST", path(id, "rotate"), options.signal) as Promise<Webhook>;
  }

  /** Sends the endpoint a `ping` now; what came of it. */
  test(id: string, options: Signal = {}): Promise<WebhookTest> {
    // The answer waits for the ping's: up to the service's delivery timeout (15 s unless set).
    const waits = Math.max(this.settings.timeoutMs, TEST_MS);
    return this.send("POST", path(id, "test"), options.signal, undefined, waits) as Promise<WebhookTest>;
  }

  /** How far the endpoint has been sent, what is under way, the recent attempts. */
  deliveries(id: string, options: Signal = {}): Promise<WebhookDeliveries> {
    return this.send("GET", path(id, "deliveries"), options.signal) as Promise<WebhookDeliveries>;
  }

  /** Sends every event after `since` again (each with its `webhook-id`), and enables a
   * disabled endpoint. */
  replay(id: string, since: number, options: Signal = {}): Promise<Webhook> {
    const at = `${path(id, "replay")}?since=${encodeURIComponent(String(since))}`;
    return this.send("POST", at, options.signal) as Promise<Webhook>;
  }

  /** The answer's JSON (`null` for none), after the retries a 429 or 503 allows. */
  private async send(
    method: string,
    at: string,
    signal?: AbortSignal,
    body?: string,
    timeoutMs = this.settings.timeoutMs,
  ): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      let answer: Response;
      let text: string;
      try {
        answer = await this.settings.fetch(this.settings.baseUrl + at, {
          method,
          headers:
            body === undefined
              ? headers(this.settings)
              : { ...headers(this.settings), "Content-Type": "application/json" },
          body,
          signal: deadline(timeoutMs, signal),
        });
        text = await answer.text();
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        throw new ConnectionFailed(`${method} ${at}: ${String(e)}`, { cause: e });
      }
      if (answer.ok) {
        if (text === "") return null;
        try {
          return JSON.parse(text);
        } catch {
          throw new DecodeError(`${method} ${at}: the answer is not JSON`);
        }
      }
      const error = errorOf(answer.status, answer.statusText, answer.headers, text);
      const wait = error.retryAfterMs ?? backoff(this.settings, attempt);
      if (
        [429, 503].includes(answer.status) &&
        attempt <= this.settings.maxRetries &&
        wait <= this.settings.maxRetryAfterMs
      ) {
        await sleep(wait, signal);
        continue;
      }
      throw error;
    }
  }
}

/** A call's own options. */
export interface Signal {
  /** Cancels the call. */
  signal?: AbortSignal;
}

const PATH = "/api/v1/webhooks";

/** The longest a test ping's answer is waited for: the service's longest delivery (60 s,
 * `RACING_WEBHOOK_TIMEOUT_SECS`) and a margin. */
const TEST_MS = 65_000;

function path(id: string, action?: string): string {
  return `${PATH}/${encodeURIComponent(id)}${action === undefined ? "" : "/" + action}`;
}
