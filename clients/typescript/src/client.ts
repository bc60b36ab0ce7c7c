//! `Racing`, the client: every operation of the API as a method with the parameters and
//! the answer its OpenAPI description gives, iterators that follow `next` through the
//! odds history and the change feed, and `live()`.

import type { components, operations, paths } from "./generated/openapi.js";
import type { Change, OddsMove } from "./generated/names.js";
import { LiveStream, type LiveOptions } from "./live.js";
import { Requester, type Call, type WithMeta } from "./request.js";
import { settings, type ClientOptions, type Settings } from "./settings.js";
import { SocketTransport } from "./socket.js";
import { SseTransport } from "./sse.js";
import { Webhooks } from "./webhooks.js";

/** A position of the change feed: a `seq`, or a page's `next` (`"SEQ.N"`). */
type ChangeSince = components["schemas"]["ChangeSince"] | number;

/** What every call takes besides its parameters. */
export interface CallOptions {
  /** Cancels the call, its retries and its waits: it rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The API's paths whose GET answers a JSON document. */
export type DocumentPath = {
  [P in keyof paths]: paths[P]["get"] extends {
    responses: { 200: { content: { "application/json": unknown } } };
  }
    ? P
    : never;
}[keyof paths];

type Get<P extends keyof paths> = paths[P]["get"];

/** The document the GET of path `P` answers. */
export type Answer<P extends DocumentPath> =
  Get<P> extends {
    responses: { 200: { content: { "application/json": infer D } } };
  }
    ? D
    : never;

type PathParameters<P extends DocumentPath> =
  Get<P> extends { parameters: { path: infer X } } ? X : undefined;
type QueryParameters<P extends DocumentPath> =
  Get<P> extends { parameters: { query?: infer X } } ? X : undefined;

/** The parameters of the GET of path `P`: `path` (the segments), `query`, `signal`. */
export type GetParameters<P extends DocumentPath> = (PathParameters<P> extends undefined
  ? { path?: undefined }
  : { path: PathParameters<P> }) & { query?: QueryParameters<P> } & CallOptions;

/** The query parameters of operation `K`, as the API names them (`as_of`, `from`). */
export type Query<K extends keyof operations> = NonNullable<operations[K]["parameters"]["query"]>;

type Document<K extends keyof operations> = operations[K]["responses"] extends {
  200: { content: { "application/json": infer D } };
}
  ? D
  : never;

/** The method of `Racing` that calls each operation of the API, by its `operationId`. */
export const OPERATIONS = {
  api_index: "index",
  meetings: "meetings",
  horse_search: "horses",
  horse_profile: "horse",
  horse_form: "form",
  horse_analysis: "horseAnalysis",
  results_by_date: "results",
  race_result: "result",
  racecard_today: "racecard",
  racecard_by_date: "racecard",
  race_odds: "odds",
  odds_history: "oddsHistoryPage",
  jockeys: "jockeys",
  jockey: "jockey",
  jockey_analysis: "jockeyAnalysis",
  trainers: "trainers",
  trainer: "trainer",
  trainer_analysis: "trainerAnalysis",
  changes: "changesPage",
  odds_socket: "live",
  live_events: "live",
  webhook_list: "webhooks",
  webhook_create: "webhooks",
  webhook_read: "webhooks",
  webhook_remove: "webhooks",
  webhook_rotate: "webhooks",
  webhook_test: "webhooks",
  webhook_deliveries: "webhooks",
  webhook_replay: "webhooks",
  webhook_race_day_event: "webhooks",
  webhook_ping: "webhooks",
  openapi_json: "openapi",
  asyncapi_json: "asyncapi",
  docs_page: "docs",
} as const satisfies { [K in keyof operations]: keyof Racing };

/** The query without the options that are not parameters, and `as_of` apart. */
function split(query: unknown): { query: Record<string, string>; asOf: number | null; signal?: AbortSignal } {
  const out: Record<string, string> = {};
  let signal: AbortSignal | undefined;
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (name === "signal") signal = value as AbortSignal;
    else if (value !== undefined && value !== null) out[name] = String(value);
  }
  const asOf = out.as_of === undefined ? null : Number(out.as_of);
  return { query: out, asOf, signal };
}

/** The path of `template` with each `{name}` replaced by its value, encoded. */
function fill(template: string, values: unknown): string {
  const given = (values ?? {}) as Record<string, unknown>;
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = given[name];
    if (value === undefined || value === null) throw new TypeError(`${template}: no value for {${name}}`);
    return encodeURIComponent(String(value));
  });
}

/** A client of the racing API.
 *
 * `apiKey` defaults to `RACING_API_KEY`, `baseUrl` to `RACING_URL`, else
 * `http://127.0.0.1:8080`. A 429 or 503 is retried up to `maxRetries` times, after the
 * `Retry-After` the service gave (if it is at most `maxRetryAfterMs`), else after a backoff
 * doubling from `backoffMs` to `maxBackoffMs`, with jitter; network errors the same way.
 * With `pace` (the default) the client also waits, before a request, for the quota the
 * last answer's `RateLimit` said was spent, so that a steady caller is not refused at all.
 * The last `cacheSize` documents are kept with their `ETag` and revalidated with
 * `If-None-Match`; an `as_of` answer, which never changes, is not asked for again.
 *
 * Every document comes with `meta` (`racingSeq`, `etag`, `rateLimit`, `attempts`, ...).
 * Errors are `ApiError`s (`NotFound`, `BadRequest`, `RateLimited`, ...) with the API's
 * `error` code and `message`. */
export class Racing {
  readonly settings: Settings;
  /** The key's webhook endpoints (`verify()` checks what they are sent). */
  readonly webhooks: Webhooks;
  private readonly requests: Requester;

  constructor(options: ClientOptions = {}) {
    this.settings = settings(options);
    this.requests = new Requester(this.settings);
    this.webhooks = new Webhooks(this.settings);
  }

  /** The GET of any path of the API that answers JSON, typed by its OpenAPI description:
   * `racing.get("/api/v1/results/{date}/{race_number}", { path: { date, race_number } })`. */
  get<P extends DocumentPath>(
    path: P,
    ...[parameters]: PathParameters<P> extends undefined
      ? [parameters?: GetParameters<P>]
      : [parameters: GetParameters<P>]
  ): Promise<WithMeta<Answer<P>>> {
    const { query, asOf } = split(parameters?.query);
    const call: Call = { path: fill(path, parameters?.path), query, asOf };
    return this.requests.get<Answer<P>>(call, parameters?.signal);
  }

  // --- Documents -----------------------------------------------------------------------

  /** The API's index: links to the reference, the live socket and every endpoint. */
  index(options: CallOptions = {}): Promise<WithMeta<Document<"api_index">>> {
    return this.get("/api/v1/", options);
  }

  /** Which dates have racing (by default 30 days back to 14 ahead). */
  meetings(query: Query<"meetings"> & CallOptions = {}): Promise<WithMeta<Document<"meetings">>> {
    return this.get("/api/v1/meetings", { query, signal: query.signal });
  }

  /** Horses by part of a name, whatever the case. */
  horses(
    name: string,
    query: Omit<Query<"horse_search">, "name"> & CallOptions = {},
  ): Promise<WithMeta<Document<"horse_search">>> {
    return this.get("/api/v1/horses", { query: { ...query, name }, signal: query.signal });
  }

  /** A horse's profile. */
  horse(
    horseNo: string,
    query: Query<"horse_profile"> & CallOptions = {},
  ): Promise<WithMeta<Document<"horse_profile">>> {
    return this.get("/api/v1/horses/{horse_no}", {
      path: { horse_no: horseNo },
      query,
      signal: query.signal,
    });
  }

  /** A horse's form, newest first; `limit` keeps the newest N. */
  form(
    horseNo: string,
    query: Query<"horse_form"> & CallOptions = {},
  ): Promise<WithMeta<Document<"horse_form">>> {
    return this.get("/api/v1/horses/{horse_no}/form", {
      path: { horse_no: horseNo },
      query,
      signal: query.signal,
    });
  }

  /** A horse's records by condition over `from` to `to` (by default every race). */
  horseAnalysis(
    horseNo: string,
    query: Query<"horse_analysis"> & CallOptions = {},
  ): Promise<WithMeta<Document<"horse_analysis">>> {
    return this.get("/api/v1/horses/{horse_no}/analysis", {
      path: { horse_no: horseNo },
      query,
      signal: query.signal,
    });
  }

  /** Every result of a date. */
  results(
    date: string,
    query: Query<"results_by_date"> & CallOptions = {},
  ): Promise<WithMeta<Document<"results_by_date">>> {
    return this.get("/api/v1/results/{date}", { path: { date }, query, signal: query.signal });
  }

  /** The result of one race. */
  result(
    date: string,
    raceNumber: number,
    query: Query<"race_result"> & CallOptions = {},
  ): Promise<WithMeta<Document<"race_result">>> {
    return this.get("/api/v1/results/{date}/{race_number}", {
      path: { date, race_number: raceNumber },
      query,
      signal: query.signal,
    });
  }

  /** The race card of a date; `"today"` (the default) is today in the service's time zone. */
  racecard(
    date = "today",
    query: Query<"racecard_by_date"> & CallOptions = {},
  ): Promise<WithMeta<Document<"racecard_by_date">>> {
    if (date === "today") return this.get("/api/v1/racecards/today", { query, signal: query.signal });
    return this.get("/api/v1/racecards/{date}", { path: { date }, query, signal: query.signal });
  }

  /** The current win and place odds of a race, with its market. */
  odds(
    date: string,
    raceNumber: number,
    query: Query<"race_odds"> & CallOptions = {},
  ): Promise<WithMeta<Document<"race_odds">>> {
    return this.get("/api/v1/odds/{date}/{race_number}", {
      path: { date, race_number: raceNumber },
      query,
      signal: query.signal,
    });
  }

  /** One page of a race's odds history: moves after `since`, at most `limit`, and `next`. */
  oddsHistoryPage(
    date: string,
    raceNumber: number,
    query: Query<"odds_history"> & CallOptions = {},
  ): Promise<WithMeta<Document<"odds_history">>> {
    return this.get("/api/v1/odds/{date}/{race_number}/history", {
      path: { date, race_number: raceNumber },
      query,
      signal: query.signal,
    });
  }

  /** Every odds move of a race after `since`, oldest first, following `next` to the end. */
  async *oddsHistory(
    date: string,
    raceNumber: number,
    options: { venue?: string; since?: number; pageSize?: number } & CallOptions = {},
  ): AsyncGenerator<OddsMove, void> {
    let since: number | undefined = options.since;
    for (;;) {
      const page = await this.oddsHistoryPage(date, raceNumber, {
        venue: options.venue,
        since,
        limit: options.pageSize,
        signal: options.signal,
      });
      yield* page.moves;
      if (page.next === null) return;
      since = page.next;
    }
  }

  /** Every jockey with a ride; `name` keeps those whose name contains it. */
  jockeys(query: Query<"jockeys"> & CallOptions = {}): Promise<WithMeta<Document<"jockeys">>> {
    return this.get("/api/v1/jockeys", { query, signal: query.signal });
  }

  /** A jockey's record. */
  jockey(id: string, options: CallOptions = {}): Promise<WithMeta<Document<"jockey">>> {
    return this.get("/api/v1/jockeys/{id}", { path: { id }, signal: options.signal });
  }

  /** A jockey's records by condition, and by trainer. */
  jockeyAnalysis(
    id: string,
    query: Query<"jockey_analysis"> & CallOptions = {},
  ): Promise<WithMeta<Document<"jockey_analysis">>> {
    return this.get("/api/v1/jockeys/{id}/analysis", { path: { id }, query, signal: query.signal });
  }

  /** Every trainer with a runner that rode; `name` keeps those whose name contains it. */
  trainers(query: Query<"trainers"> & CallOptions = {}): Promise<WithMeta<Document<"trainers">>> {
    return this.get("/api/v1/trainers", { query, signal: query.signal });
  }

  /** A trainer's record. */
  trainer(id: string, options: CallOptions = {}): Promise<WithMeta<Document<"trainer">>> {
    return this.get("/api/v1/trainers/{id}", { path: { id }, signal: options.signal });
  }

  /** A trainer's records by condition, and by jockey. */
  trainerAnalysis(
    id: string,
    query: Query<"trainer_analysis"> & CallOptions = {},
  ): Promise<WithMeta<Document<"trainer_analysis">>> {
    return this.get("/api/v1/trainers/{id}/analysis", { path: { id }, query, signal: query.signal });
  }

  /** One page of the change feed: changes after `since` (a `seq`, or a page's `next`). */
  changesPage(
    query: Omit<Query<"changes">, "since"> & { since?: ChangeSince } & CallOptions = {},
  ): Promise<WithMeta<Document<"changes">>> {
    const { since, ...rest } = query;
    return this.get("/api/v1/changes", {
      query: { ...rest, since: since === undefined ? undefined : String(since) },
      signal: query.signal,
    });
  }

  /** Every document change after `since`, in `seq` order, following `next` to the end of
   * the feed (then poll again later from the last change's `seq`). */
  async *changes(
    options: { since?: ChangeSince; pageSize?: number } & CallOptions = {},
  ): AsyncGenerator<Change, void> {
    let since = options.since;
    for (;;) {
      const page = await this.changesPage({ since, limit: options.pageSize, signal: options.signal });
      yield* page.changes;
      if (page.next === null) return;
      since = page.next;
    }
  }

  /** The service's OpenAPI description. */
  openapi(options: CallOptions = {}): Promise<WithMeta<Record<string, unknown>>> {
    return this.get("/api/v1/openapi.json", { signal: options.signal });
  }

  /** The live socket's AsyncAPI description. */
  asyncapi(options: CallOptions = {}): Promise<WithMeta<Record<string, unknown>>> {
    return this.get("/api/v1/asyncapi.json", { signal: options.signal });
  }

  /** The API's reference, the HTML page. */
  docs(options: CallOptions = {}): Promise<string> {
    const { signal } = options;
    return this.requests.text({ path: "/api/v1/docs", query: {}, asOf: null }, signal);
  }

  // --- Live ----------------------------------------------------------------------------

  /** The live stream of a meeting or race: its frames as an async iterator that
   * reconnects after any drop and resumes after the last `seq` it yielded, so that each
   * event comes once and in order. See `LiveOptions`. */
  live(options: LiveOptions): LiveStream {
    const transport =
      options.transport === "sse" ? new SseTransport(this.settings) : new SocketTransport(this.settings);
    return new LiveStream(transport, this.settings, options);
  }
}
