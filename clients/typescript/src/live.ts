//! `live()`: the live stream of odds and the race day as an async iterator that reconnects
//! after any drop and resumes after the last `seq` it yielded, so that its reader sees
//! every update and race-day event once and in order. The rules here hold whatever the
//! transport (transport.ts): the WebSocket (socket.ts) or Server-Sent Events (sse.ts).

import type {
  CardFrame,
  HeartbeatFrame,
  MarketFrame,
  OddsFrame,
  ResultFrame,
  RetractionFrame,
  ScratchingFrame,
  SnapshotFrame,
  StatusFrame,
  Topic,
} from "./generated/names.js";
import { ApiError, ConnectionFailed, DecodeError, LiveError, RateLimited, Unavailable } from "./errors.js";
import type { Meta } from "./request.js";
import { backoff, sleep, type Settings } from "./settings.js";
import type { RawFrame, Session, Target, Transport } from "./transport.js";

/** What a stream may follow (`topics`): the service's names, in its order. */
export const TOPICS = [
  "odds",
  "status",
  "scratchings",
  "results",
  "cards",
  "market",
] as const satisfies readonly Topic[];

// A topic the service gains fails the build here until TOPICS has it.
type Missing = Exclude<Topic, (typeof TOPICS)[number]>;
const everyTopic: [Missing] extends [never] ? true : Missing = true;
void everyTopic;

/** A frame of one event of the stream: odds and the race day, in one `seq` order, so that
 * one position resumes them all. */
export type EventFrame =
  OddsFrame | StatusFrame | ScratchingFrame | ResultFrame | CardFrame | RetractionFrame;

/** Every frame `live()` yields: the events, a race's whole odds (`snapshot`), its market
 * (`market`, conflated, outside the order of the events) and, when asked for, the
 * heartbeats of a quiet stream. */
export type LiveFrame = EventFrame | SnapshotFrame | MarketFrame | HeartbeatFrame;

/** The `type` of each event frame. */
export const EVENT_TYPES = [
  "odds",
  "status",
  "scratching",
  "result",
  "card",
  "retraction",
] as const satisfies readonly EventFrame["type"][];

/** The `type` of every frame `live()` may yield. */
export const FRAME_TYPES = [
  ...EVENT_TYPES,
  "snapshot",
  "market",
  "heartbeat",
] as const satisfies readonly LiveFrame["type"][];

const EVENTS: ReadonlySet<string> = new Set(EVENT_TYPES);

/** What `racing.live(options)` takes. */
export interface LiveOptions {
  /** The meeting to follow, `YYYY-MM-DD` (with `race`, one race of it). */
  date?: string;
  /** One race of `date`; every race of it when left out. */
  race?: number;
  /** Several meetings or races at once, instead of `date` and `race`. */
  targets?: readonly Target[];
  /** What to follow (`TOPICS`); odds alone when left out. */
  topics?: readonly Topic[];
  /** Start after this position: a `seq` kept from an earlier stream, or a document read
   * over HTTP (its `Racing-Seq`): every frame after it, none in it. Without it, a
   * `snapshot` of each race first. */
  since?: number | { readonly meta: Meta } | null;
  /** Yield the heartbeats of a quiet stream too (false). */
  heartbeats?: boolean;
  /** Give up (`ConnectionFailed`) after this many failed connections in a row; never
   * when left out. */
  maxReconnects?: number;
  /** Ends the stream: a pending `next()` rejects with the signal's reason. */
  signal?: AbortSignal;
  /** How the stream is carried: the WebSocket (`"ws"`, the default) or Server-Sent Events
   * over plain HTTP (`"sse"`, `GET /api/v1/live`, one target a stream), for where a
   * socket cannot be held. The frames, their order and the resume are the same. */
  transport?: "ws" | "sse";
  /** Odds moves of a race within this many milliseconds (0 to 120,000) as one `odds`
   * frame holding each runner's latest prices, at most one a race a window; 0 sends every
   * move, and the race day's frames are never conflated. Conflated odds of different races
   * may come out of `seq` order: they move nothing, and the race day's frames alone carry
   * the position a reconnect resumes from (its odds come again as a `snapshot`). */
  conflateMs?: number;
}

/** The longest conflation window the service takes. */
export const MAX_CONFLATE_MS = 120_000;

function conflationOf(ms: number | undefined): number | undefined {
  if (ms === undefined) return undefined;
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_CONFLATE_MS) {
    throw new RangeError(`conflateMs is an integer from 0 to ${MAX_CONFLATE_MS}, not ${ms}`);
  }
  return ms;
}

/** The targets, topics and position of `options`, checked before any connection. */
function targetsOf(options: LiveOptions): Target[] {
  const targets =
    options.targets ?? (options.date !== undefined ? [{ date: options.date, race: options.race }] : []);
  if (targets.length === 0) throw new TypeError("live() needs a date (or targets) to follow");
  return targets.map(({ date, race }) => (race === undefined ? { date } : { date, race }));
}

/** The topics to subscribe to, checked against the service's names, so that a misspelt
 * one fails here rather than on the socket. */
function topicsOf(topics: readonly Topic[] | undefined): Topic[] | undefined {
  if (topics === undefined) return undefined;
  if (typeof topics === "string") {
    throw new TypeError(`topics is a list of names, such as ["${topics}"], not one name`);
  }
  const names = [...new Set(topics)];
  if (names.length === 0) throw new RangeError(`topics needs at least one of ${TOPICS.join(", ")}`);
  const unknown = names.filter((t) => !(TOPICS as readonly string[]).includes(t));
  if (unknown.length > 0) {
    throw new RangeError(
      `unknown live topic(s) ${unknown.join(", ")}: the service follows ${TOPICS.join(", ")}`,
    );
  }
  return names;
}

function position(since: LiveOptions["since"]): number | null {
  if (since === undefined || since === null) return null;
  if (typeof since === "number") return since;
  const seq = since.meta?.racingSeq ?? null;
  if (seq === null)
    throw new TypeError("since: a number, or a document read with this client (its Racing-Seq)");
  return seq;
}

/** An async iterator of live frames; see `Racing.live()`.
 *
 * `lastSeq` is the position it resumes after, every topic alike; `connections` counts the
 * connections it opened, `reconnects` those after the first; `duplicates` counts updates at
 * or below `lastSeq`, and race-day frames at or below the last race-day frame, that a
 * service sent again and the stream dropped (none, with this service). A race's snapshot
 * moves `lastSeq` to its last move without making the race-day events before that move
 * duplicates: this service replays a resume's race-day events before its snapshots, and a
 * service that sends them after, below the snapshot's `seq`, is read alike. End it with `close()`, by leaving a `for await` loop, or with `signal`. */
export class LiveStream implements AsyncIterableIterator<LiveFrame> {
  /** The position it resumes after: the last event's `seq` it yielded. */
  lastSeq: number | null;
  /** Connections opened. */
  connections = 0;
  /** Connections opened after the first. */
  reconnects = 0;
  /** Frames a service sent again, dropped. */
  duplicates = 0;
  /** Why the last connection ended, or failed to open. */
  lastError: unknown = null;

  readonly targets: readonly Target[];
  readonly topics: readonly Topic[] | undefined;
  readonly conflateMs: number | undefined;
  /** The last race-day event's position: what a race-day frame is a duplicate of. */
  private daySeq: number | null;
  private readonly stop = new AbortController();
  private readonly frames: AsyncGenerator<LiveFrame, undefined>;
  private closed = false;

  constructor(
    private readonly transport: Transport,
    private readonly settings: Settings,
    private readonly options: LiveOptions = {},
  ) {
    this.targets = targetsOf(options);
    this.topics = topicsOf(options.topics);
    this.conflateMs = conflationOf(options.conflateMs);
    if (options.transport !== undefined && options.transport !== "ws" && options.transport !== "sse") {
      throw new RangeError(`transport is "ws" or "sse", not ${JSON.stringify(options.transport)}`);
    }
    if (options.transport === "sse" && this.targets.length !== 1) {
      throw new TypeError('transport "sse" follows one target: open a stream for each');
    }
    this.lastSeq = position(options.since);
    this.daySeq = this.lastSeq;
    const signal = options.signal;
    if (signal?.aborted) this.stop.abort(signal.reason);
    signal?.addEventListener("abort", () => this.stop.abort(signal.reason), { once: true });
    this.frames = this.run();
  }

  [Symbol.asyncIterator](): LiveStream {
    return this;
  }

  next(): Promise<IteratorResult<LiveFrame, undefined>> {
    return this.frames.next();
  }

  /** Ends the stream and its connection; what `for await` calls when a loop is left. */
  async return(): Promise<IteratorResult<LiveFrame, undefined>> {
    await this.close();
    return { done: true, value: undefined };
  }

  /** Ends the stream and its connection; a `next()` waiting meanwhile ends the loop. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    await this.frames.return(undefined);
  }

  /** Connects, reconnects after each drop with a jittered backoff (or the `Retry-After`
   * of a refusal), and yields each connection's frames. */
  private async *run(): AsyncGenerator<LiveFrame, undefined> {
    const signal = this.stop.signal;
    let failures = 0;
    for (;;) {
      let wait: number | null = null;
      let session: Session | null = null;
      try {
        session = await this.transport.open(
          {
            targets: this.targets,
            topics: this.topics,
            since: this.lastSeq,
            conflateMs: this.conflateMs,
          },
          signal,
        );
      } catch (e) {
        if (signal.aborted) return this.stopped();
        if (e instanceof ApiError) {
          // A refused key or subscription is final; a full service is waited for.
          if (!(e instanceof RateLimited || e instanceof Unavailable)) throw e;
          wait = e.retryAfterMs;
        }
        if (e instanceof DecodeError) throw e;
        this.lastError = e;
      }
      if (session !== null) {
        this.connections += 1;
        this.reconnects = this.connections - 1;
        try {
          yield* this.session(session);
        } catch (e) {
          if (signal.aborted) return this.stopped();
          if (e instanceof ApiError || e instanceof DecodeError) throw e;
          this.lastError = e;
        } finally {
          session.close();
        }
        // It worked until it dropped: the next try is a first one again.
        failures = 0;
      }
      failures += 1;
      if (this.options.maxReconnects !== undefined && failures > this.options.maxReconnects) {
        throw new ConnectionFailed(`live: ${failures} connections in a row failed`, {
          cause: this.lastError,
        });
      }
      let delay = backoff(this.settings, failures);
      if (wait !== null && wait <= this.settings.maxRetryAfterMs) delay = Math.max(delay, wait);
      try {
        await sleep(delay, signal);
      } catch {
        return this.stopped();
      }
    }
  }

  /** The end of a stream that was stopped: quietly when closed, with the caller's reason
   * when its signal aborted. */
  private stopped(): undefined {
    if (this.closed) return undefined;
    throw this.stop.signal.reason;
  }

  /** One session's frames, less what the stream already yielded. */
  private async *session(session: Session): AsyncGenerator<LiveFrame, undefined> {
    // A service whose log is behind the position resumed from (a store restored, a new
    // stream) answers with snapshots, whose positions start the count afresh.
    let restart = this.lastSeq !== null && session.position !== null && session.position < this.lastSeq;
    const silence = 3 * session.heartbeatMs + 2000;
    for (;;) {
      const frame = await session.next(silence);
      if (frame === null) return undefined;
      // A replay's frames are outside the live order: not the stream's to yield.
      if (frame.replay === true) continue;
      const type = frame.type;
      if (type === "odds" && this.conflateMs) {
        // Conflated: out of `seq` order between races, so no position.
        seqOf(frame);
        yield frame as unknown as OddsFrame;
      } else if (EVENTS.has(type)) {
        const seq = seqOf(frame);
        // A snapshot's `seq` is its race's last move: a service may send the race-day
        // events of a resume that came before that move after the snapshot, below its
        // `seq`. They are duplicates only at or below the last race-day event had.
        const floor = type === "odds" ? this.lastSeq : this.daySeq;
        if (floor !== null && seq <= floor) {
          this.duplicates += 1;
          continue;
        }
        if (type !== "odds") this.daySeq = seq;
        this.lastSeq = Math.max(this.lastSeq ?? 0, seq);
        yield frame as unknown as EventFrame;
      } else if (type === "snapshot") {
        const seq = seqOf(frame);
        if (restart || this.lastSeq === null) {
          this.lastSeq = seq;
          if (restart) this.daySeq = null;
          restart = false;
        } else {
          this.lastSeq = Math.max(this.lastSeq, seq);
        }
        yield frame as unknown as SnapshotFrame;
      } else if (type === "market") {
        // Conflated, at most once a second a race: the market as it stands, with the
        // race's latest odds position, outside the order of the events.
        yield frame as unknown as MarketFrame;
      } else if (type === "heartbeat") {
        if (this.options.heartbeats) yield frame as unknown as HeartbeatFrame;
      } else if (type === "error") {
        throw new LiveError({ status: 0, error: String(frame.error), message: String(frame.message) });
      }
      // Anything else (`pong`, `replay_end`, a frame a newer service sends) is the
      // session's own business.
    }
  }
}

function seqOf(frame: RawFrame): number {
  const seq = frame.seq;
  if (typeof seq !== "number" || !Number.isSafeInteger(seq)) {
    throw new DecodeError(`live: a ${frame.type} frame without a seq`);
  }
  return seq;
}
