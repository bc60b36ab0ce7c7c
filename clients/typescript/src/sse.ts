//! The live stream as Server-Sent Events (`GET /api/v1/live`), for a client that cannot
//! hold a WebSocket: one target a stream, given as query parameters with `since` when
//! resuming, read from `fetch`'s body. Each event's `data` is the socket's frame; the
//! heartbeats are comments, which keep the session from being taken for silent; a `close`
//! event carries the socket's close code and reason.

import { DecodeError, Unauthorized } from "./errors.js";
import { errorOf } from "./request.js";
import { headers, type Settings } from "./settings.js";
import { Dropped } from "./socket.js";
import { Silent, type RawFrame, type Session, type SessionRequest, type Transport } from "./transport.js";

/** The stream's path on the service. */
export const EVENTS_PATH = "/api/v1/live";

/** Close code of a policy violation (a revoked or expired key, or a reader too slow). */
const CLOSE_POLICY = 1008;

/** The stream's URL for `request`. */
export function eventsUrl(baseUrl: string, request: SessionRequest): string {
  const [target, ...more] = request.targets;
  if (target === undefined || more.length > 0) {
    throw new TypeError('transport "sse" follows one target: open a stream for each');
  }
  const query = new URLSearchParams({ date: target.date });
  if (target.race !== undefined) query.set("race_number", String(target.race));
  if (request.topics !== undefined) query.set("topics", request.topics.join(","));
  if (request.since !== null) query.set("since", String(request.since));
  if (request.conflateMs !== undefined) query.set("conflate_ms", String(request.conflateMs));
  return `${baseUrl}${EVENTS_PATH}?${query}`;
}

/** One event of the stream, as the Server-Sent Events rules read it: its `event`, `data`
 * and `id` fields; a comment alone (a heartbeat) is `null`. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string | null;
}

/** Reads events from a text stream as it comes: `push` a chunk, and take the events it
 * completed (the rules of the HTML standard's event stream parser, for one stream). */
export class EventParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];
  private id: string | null = null;

  /** The events `chunk` completed, `null` for each comment. */
  push(chunk: string): (SseEvent | null)[] {
    this.buffer += chunk;
    const out: (SseEvent | null)[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      // A lone `\r` at the end may be the first half of `\r\n`: wait for the next chunk.
      if (end < 0 || (end === this.buffer.length - 1 && this.buffer[end] === "\r")) break;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer.startsWith("\r\n", end) ? 2 : 1));
      if (line === "") {
        if (this.data.length > 0) {
          out.push({ event: this.event || "message", data: this.data.join("\n"), id: this.id });
        }
        this.event = "";
        this.data = [];
        continue;
      }
      if (line.startsWith(":")) {
        out.push(null);
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") this.event = value;
      else if (field === "data") this.data.push(value);
      else if (field === "id" && !value.includes("\0")) this.id = value;
    }
    return out;
  }
}

/** The live stream's Server-Sent Events transport. */
export class SseTransport implements Transport {
  constructor(private readonly settings: Settings) {}

  async open(request: SessionRequest, signal: AbortSignal): Promise<Session> {
    const url = eventsUrl(this.settings.baseUrl, request);
    // One signal for the request and its body, which lasts as long as the stream: the
    // timeout bounds only the wait for the answer's headers.
    const stop = new AbortController();
    const abort = () => stop.abort(signal.reason);
    if (signal.aborted) abort();
    signal.addEventListener("abort", abort, { once: true });
    const slow = setTimeout(
      () => stop.abort(new Dropped(`live: no answer within ${this.settings.timeoutMs} ms`)),
      this.settings.timeoutMs,
    );
    let answer: Response;
    try {
      answer = await this.settings.fetch(url, {
        headers: { ...headers(this.settings), Accept: "text/event-stream" },
        signal: stop.signal,
      });
    } catch (e) {
      signal.removeEventListener("abort", abort);
      throw stop.signal.aborted ? stop.signal.reason : e;
    } finally {
      clearTimeout(slow);
    }
    if (answer.status !== 200 || answer.body === null) {
      signal.removeEventListener("abort", abort);
      const body = await answer.text().catch(() => "");
      throw errorOf(answer.status, answer.statusText, answer.headers, body);
    }
    const session = new SseSession(answer.body, stop, () => signal.removeEventListener("abort", abort));
    try {
      const welcome = await session.next(this.settings.timeoutMs);
      if (welcome?.type !== "welcome") {
        throw new DecodeError(`live: expected a welcome, got ${JSON.stringify(welcome?.type)}`);
      }
      session.welcomed(welcome);
      return session;
    } catch (e) {
      session.close();
      throw e;
    }
  }
}

/** One stream's frames, read from its body as the session is asked for them. */
class SseSession implements Session {
  position: number | null = null;
  heartbeatMs = 5000;
  private readonly parser = new EventParser();
  private readonly decoder = new TextDecoder();
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly queue: (SseEvent | null)[] = [];
  private pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  private closed = false;

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly stop: AbortController,
    private readonly done: () => void,
  ) {
    this.reader = body.getReader();
  }

  /** Takes what the welcome says. */
  welcomed(welcome: RawFrame): void {
    if (typeof welcome.seq === "number") this.position = welcome.seq;
    if (typeof welcome.heartbeat_ms === "number" && welcome.heartbeat_ms > 0)
      this.heartbeatMs = welcome.heartbeat_ms;
  }

  async next(silenceMs: number): Promise<RawFrame | null> {
    let deadline = Date.now() + silenceMs;
    for (;;) {
      const event = this.queue.shift();
      if (event === null) {
        // A heartbeat: the stream is alive.
        deadline = Date.now() + silenceMs;
        continue;
      }
      if (event !== undefined) return this.frame(event);
      if (this.closed) return null;
      const chunk = await this.read(deadline - Date.now(), silenceMs);
      if (chunk === null) throw new Dropped("live: the stream ended");
      this.queue.push(...this.parser.push(chunk));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stop.abort();
    this.reader.cancel().catch(() => {});
    this.done();
  }

  /** The next chunk of the body as text; `null` at its end. A read that takes longer than
   * `ms` rejects with a `Silent` and is taken up again by the next call. */
  private async read(ms: number, silenceMs: number): Promise<string | null> {
    this.pending ??= this.reader.read();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Silent(`live: nothing heard for ${silenceMs} ms`)), Math.max(0, ms));
    });
    try {
      const { done, value } = await Promise.race([this.pending, silent]);
      this.pending = null;
      return done ? null : this.decoder.decode(value, { stream: true });
    } catch (e) {
      if (e instanceof Silent) throw e;
      this.pending = null;
      if (this.stop.signal.aborted) throw this.stop.signal.reason;
      throw new Dropped("live: the stream broke", { cause: e });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The frame an event carries; a `close` event ends the session as the socket's close
   * would. */
  private frame(event: SseEvent): RawFrame {
    let frame: unknown;
    try {
      frame = JSON.parse(event.data);
    } catch {
      throw new DecodeError(`live: an ${event.event} event whose data is not JSON`);
    }
    if (event.event === "close") {
      const { code, reason } = frame as { code?: number; reason?: string };
      const text = String(reason ?? "");
      if (code === CLOSE_POLICY && text.includes("API key")) {
        throw new Unauthorized({ status: 401, error: "unauthorized", message: text });
      }
      throw new Dropped(`live: the stream closed (${code}${text ? ": " + text : ""})`);
    }
    if (typeof frame !== "object" || frame === null || typeof (frame as RawFrame).type !== "string") {
      throw new DecodeError("live: an event without a frame");
    }
    return frame as RawFrame;
  }
}
