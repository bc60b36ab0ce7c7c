//! What `live()` needs of a transport, and nothing more: open a session that follows some
//! targets from a position, then hand over its frames one at a time. The WebSocket is one
//! (socket.ts), Server-Sent Events another (sse.ts), so that the order,
//! resume and reconnect rules of live.ts hold for every transport alike.

import type { Topic } from "./generated/names.js";

/** What a stream follows: a meeting's date, and one race of it or (`race` left out) all. */
export interface Target {
  /** The meeting's date, `YYYY-MM-DD`. */
  readonly date: string;
  /** One race of it; every race when left out. */
  readonly race?: number;
}

/** What a session is opened for. */
export interface SessionRequest {
  readonly targets: readonly Target[];
  /** The topics of each target; the service's default (odds) when left out. */
  readonly topics?: readonly Topic[];
  /** Resume after this position: every frame after it, none at or before it. */
  readonly since: number | null;
  /** Odds moves of a race within this many milliseconds as one frame (0: every move);
   * the service's default (every move) when left out. */
  readonly conflateMs?: number;
}

/** A frame as the service sent it: a JSON object with a `type`. */
export interface RawFrame {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** One open session of a transport. */
export interface Session {
  /** The latest position the service had relayed when the session opened, where it says
   * (a position past it cannot be resumed from: the service's log was reset). */
  readonly position: number | null;
  /** How often the service sends a heartbeat on a quiet session, in milliseconds. */
  readonly heartbeatMs: number;
  /** The next frame; `null` once the session is over. It rejects with a `Silent` after
   * `silenceMs` without any frame, and with the transport's error when it broke. */
  next(silenceMs: number): Promise<RawFrame | null>;
  /** Ends the session (idempotent). */
  close(): void;
}

/** A way of following the live stream. `open()` rejects with an `ApiError` when the
 * service refused the session (a 429 or 503 to be waited out, anything else final), and
 * with any other error when it could not be reached. */
export interface Transport {
  open(request: SessionRequest, signal: AbortSignal): Promise<Session>;
}

/** A session that was quiet for longer than its heartbeats allow: dropped, to be resumed. */
export class Silent extends Error {
  override name = "Silent";
}
