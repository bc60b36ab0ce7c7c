//! The live stream over the service's WebSocket (`/ws/live/odds`): a session opens with
//! the `welcome`, sends a `subscribe` for each target (with `since` when resuming), then
//! hands over the frames as they come.

import { openWebSocket } from "#websocket";

import { DecodeError, Unauthorized } from "./errors.js";
import type { Subscribe } from "./generated/names.js";
import { deadline, errorOf } from "./request.js";
import { headers, type Settings } from "./settings.js";
import { Silent, type RawFrame, type Session, type SessionRequest, type Transport } from "./transport.js";
import type { WebSocketLike } from "./websocket.js";

/** The socket's path on the service. */
export const SOCKET_PATH = "/ws/live/odds";

/** Close code of a policy violation: a revoked or expired key (final), or a reader that
 * fell too far behind too often (resumed). */
const CLOSE_POLICY = 1008;

/** Frames a session holds that its reader has not taken. A reader slower than the stream
 * for this long drops the connection and resumes after what it took, rather than hold an
 * ever longer queue: the resume brings the rest again, with no gap. */
const MAX_QUEUED = 4096;

/** The connection broke or the service closed it: resumed on a new one. */
export class Dropped extends Error {
  override name = "Dropped";
}

/** The `subscribe` message of one target of `request`. */
export function subscribe(target: SessionRequest["targets"][number], request: SessionRequest): Subscribe {
  const message: Subscribe = { type: "subscribe", date: target.date };
  if (target.race !== undefined) message.race_number = target.race;
  if (request.topics !== undefined) message.topics = [...request.topics];
  if (request.since !== null) message.since = request.since;
  if (request.conflateMs !== undefined) message.conflate_ms = request.conflateMs;
  return message;
}

/** The live stream's WebSocket transport. */
export class SocketTransport implements Transport {
  constructor(private readonly settings: Settings) {}

  /** The socket's URL: the service's, `ws:` for `http:` and `wss:` for `https:`. */
  url(): string {
    return this.settings.baseUrl.replace(/^http(s?):/, "ws$1:") + SOCKET_PATH;
  }

  async open(request: SessionRequest, signal: AbortSignal): Promise<Session> {
    const socket = await openWebSocket(this.url(), headers(this.settings));
    const session = new SocketSession(socket, signal);
    try {
      await session.opened(this.settings.timeoutMs);
    } catch (e) {
      session.close();
      throw await this.refusal(e, signal);
    }
    try {
      const welcome = await session.next(this.settings.timeoutMs);
      if (welcome?.type !== "welcome") {
        throw new DecodeError(`live: expected a welcome, got ${JSON.stringify(welcome?.type)}`);
      }
      session.welcomed(welcome);
      for (const target of request.targets) session.send(subscribe(target, request));
      return session;
    } catch (e) {
      session.close();
      throw e;
    }
  }

  /** Why an upgrade failed. A WebSocket tells a script no status, so the service is asked
   * the same with a plain GET: a 401 is a refused key (final), a 429 or a 503 a wait. A
   * browser cannot read that answer from another origin: there, as after any other
   * failure, the error is `cause`, and the stream tries again. */
  private async refusal(cause: unknown, signal: AbortSignal): Promise<unknown> {
    try {
      const answer = await this.settings.fetch(this.settings.baseUrl + SOCKET_PATH, {
        headers: headers(this.settings),
        signal: deadline(this.settings.timeoutMs, signal),
      });
      const body = await answer.text();
      if ([401, 429, 503].includes(answer.status)) {
        return errorOf(answer.status, answer.statusText, answer.headers, body);
      }
    } catch {
      // Not reachable either: the upgrade's own error says it.
    }
    return cause;
  }
}

/** One connection's frames, queued as they come until the stream takes them. */
class SocketSession implements Session {
  position: number | null = null;
  heartbeatMs = 5000;
  private readonly queue: RawFrame[] = [];
  private ended: { error: unknown } | null = null;
  private wake: (() => void) | null = null;
  private open = false;
  private readonly abort = () => this.close();

  constructor(
    private readonly socket: WebSocketLike,
    private readonly signal: AbortSignal,
  ) {
    socket.addEventListener("open", () => {
      this.open = true;
      this.notify();
    });
    socket.addEventListener("message", (event) => this.received(event.data));
    socket.addEventListener("close", (event) => {
      if (event.code === CLOSE_POLICY && event.reason.includes("API key")) {
        this.end(new Unauthorized({ status: 401, error: "unauthorized", message: event.reason }));
      } else {
        this.end(
          new Dropped(
            `live: the connection closed (${event.code}${event.reason ? ": " + event.reason : ""})`,
          ),
        );
      }
    });
    socket.addEventListener("error", () => this.end(new Dropped("live: the connection failed")));
    signal.addEventListener("abort", this.abort, { once: true });
  }

  /** Resolves once the socket is open; rejects if it closed or failed first. */
  async opened(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.open) {
      if (this.ended !== null) throw this.ended.error ?? new Dropped("live: closed before it opened");
      await this.until(deadline - Date.now(), "live: the connection did not open in time");
    }
  }

  /** Takes what the welcome says. */
  welcomed(welcome: RawFrame): void {
    if (typeof welcome.seq === "number") this.position = welcome.seq;
    if (typeof welcome.heartbeat_ms === "number" && welcome.heartbeat_ms > 0)
      this.heartbeatMs = welcome.heartbeat_ms;
  }

  send(message: Subscribe): void {
    this.socket.send(JSON.stringify(message));
  }

  async next(silenceMs: number): Promise<RawFrame | null> {
    const deadline = Date.now() + silenceMs;
    for (;;) {
      const frame = this.queue.shift();
      if (frame !== undefined) return frame;
      if (this.ended !== null) {
        if (this.ended.error === null) return null;
        throw this.ended.error;
      }
      await this.until(deadline - Date.now(), `live: nothing heard for ${silenceMs} ms`);
    }
  }

  close(): void {
    this.end(null);
  }

  /** Waits for the socket to say something, or rejects with a `Silent` after `ms`, or with
   * the abort's reason. */
  private until(ms: number, silent: string): Promise<void> {
    if (this.signal.aborted) return Promise.reject(this.signal.reason);
    return new Promise((done, fail) => {
      const timer = setTimeout(
        () => {
          this.wake = null;
          fail(new Silent(silent));
        },
        Math.max(0, ms),
      );
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        if (this.signal.aborted) fail(this.signal.reason);
        else done();
      };
    });
  }

  private notify(): void {
    this.wake?.();
  }

  private received(data: unknown): void {
    if (this.ended !== null) return;
    let frame: unknown;
    try {
      frame = JSON.parse(String(data));
    } catch {
      this.end(new DecodeError("live: a frame that is not JSON"));
      return;
    }
    if (typeof frame !== "object" || frame === null || typeof (frame as RawFrame).type !== "string") {
      this.end(new DecodeError("live: a frame without a type"));
      return;
    }
    this.queue.push(frame as RawFrame);
    if (this.queue.length > MAX_QUEUED) {
      this.end(new Dropped(`live: ${MAX_QUEUED} frames not taken; resuming after the last one taken`));
      this.queue.length = 0;
    }
    this.notify();
  }

  /** Ends the session: `error` null when the stream itself closed it. The frames already
   * queued are still handed over first. */
  private end(error: unknown): void {
    if (this.ended === null) this.ended = { error };
    // The stream's signal outlives its sessions: one listener a session would pile up.
    this.signal.removeEventListener("abort", this.abort);
    if (this.socket.readyState <= 1) {
      try {
        this.socket.close(1000);
      } catch {
        // Closing a socket that is still connecting throws in some implementations.
      }
    }
    this.notify();
  }
}
