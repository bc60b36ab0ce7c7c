//! What the API's descriptions, its index and its handlers share, below all of them: where
//! the descriptions, the index and the live socket are served, the header that carries
//! the key, the tag of the reference, the API's title and version, the WebSocket's
//! protocol in prose, and the anchors of the HTML reference.

/// Where the index is served; the same path without its slash answers it too (see
/// `table::find`).
pub const INDEX_PATH: &str = "/api/v1/";

/// Where the OpenAPI document is served.
pub const OPENAPI_PATH: &str = "/api/v1/openapi.json";
/// Where the HTML reference is served.
pub const DOCS_PATH: &str = "/api/v1/docs";
/// The same two without a key: they hold no data, and a browser sends none.
pub const PUBLIC_PATHS: [&str; 2] = ["/docs", "/openapi.json"];

/// The tag of the reference: the OpenAPI description, its page, the AsyncAPI one and the
/// API's index. Their answers hold no data, so they carry no `Racing-Seq`.
pub const REFERENCE_TAG: &str = "reference";

/// Where the AsyncAPI document is served.
pub const ASYNCAPI_PATH: &str = "/api/v1/asyncapi.json";
/// The same without a key: it holds no data.
pub const ASYNCAPI_PUBLIC_PATH: &str = "/asyncapi.json";

/// Where the feed's JSON Schema is served, without a key: what a feeder publishes.
pub const FEED_SCHEMA_PATH: &str = "/feed/schema.json";
/// Where the feed's AsyncAPI document is served, without a key.
pub const FEED_ASYNCAPI_PATH: &str = "/feed/asyncapi.json";

/// The header that carries the key (case-insensitive, as every HTTP header name).
pub const API_KEY_HEADER: &str = "x-api-key";

/// The live odds WebSocket; the only path that also takes the key as `?api_key=`.
pub const ODDS_SOCKET_PATH: &str = "/ws/live/odds";

/// The API's title, in the OpenAPI and the AsyncAPI documents alike.
pub const TITLE: &str = "racing: horse racing data API";

/// The API's version in its descriptions (`info.version`): the latest release that
/// CHANGELOG.md lists, which says what each one changed (`docs/api.md`, Versions and
/// deprecation). Not the crate's: the API is versioned for its callers.
pub const VERSION: &str = "1.5.0";

/// The anchor of the `GET` operation of `path` in the HTML reference.
pub fn docs_anchor(path: &str) -> String {
    anchor("GET", path)
}

/// The anchor of the operation `method path` in the HTML reference.
pub fn anchor(method: &str, path: &str) -> String {
    let mut a = format!("op-{}", method.to_ascii_lowercase());
    for c in path.chars() {
        a.push(if c.is_ascii_alphanumeric() { c } else { '-' });
    }
    a
}

/// The protocol of `/ws/live/odds`, for its operation's description.
pub const ODDS_SOCKET_DOC: &str = "A WebSocket upgrade (`GET` with `Connection: Upgrade`, \
`Upgrade: websocket`); any other request is a 400. The key goes in `X-API-Key` or as the \
query parameter `api_key` (the only query parameter taken); a missing or wrong key gets the \
401 and no upgrade. Too many open connections for the key (100 by default) is a 429; an \
upgrade while the read models are still being built at start-up is a 503.

All frames are JSON text with a `type`; each is described, with its schema, by the \
AsyncAPI 3.0 document at `/asyncapi.json`. On connect the server sends \
`{\"type\":\"welcome\",\"seq\":S,\"heartbeat_ms\":H}` (S: the latest position relayed) and the \
connection starts subscribed to every race.

Client messages:

- `{\"type\":\"subscribe\",\"date\":D,\"race_number\":N}`: `race_number` optional (the whole \
meeting). The first subscribe replaces the starting everything-subscription; later ones \
add. Without `since` it is answered by a `snapshot` of each race it names; with \
`\"since\": SEQ` it replays every odds update after SEQ for what it names, then goes on live, \
with no gap and no duplicate. Live updates wait up to 250 ms after connecting for the first \
client message, so send a resume at once: a `since` older than an `odds` frame already sent \
on the connection, past the latest update, or more than 100,000 updates back is answered \
with a `snapshot` instead.
- Optional `\"topics\"` on `subscribe`: any of `odds` (the default), `status`, `scratchings`, \
`results`, `cards`. The race-day topics send `status`, `scratching`, `result`, `card` and \
`retraction` frames, each with its event's `seq` and `published_at`, in stream order with the \
odds frames; `since` resumes them too, and they are never conflated away.
- `{\"type\":\"unsubscribe\",\"date\":D,\"race_number\":N}`: the same fields (with \
`topics`, only those stop).
- `{\"type\":\"ping\"}`: answered by `{\"type\":\"pong\"}`.
- `{\"type\":\"replay\",\"date\":D,\"race_number\":N,\"speed\":X}`: plays back the date's \
recorded odds (of one race if `race_number` is given) as `odds` frames exactly as they went \
live, original `seq`, `published_at` and `occurred_at` included, marked `\"replay\":true`; each \
next one the gap between the two moves' `occurred_at` (when their prices were given, not when \
the log stored them) divided by `speed` after the one before (a number from 1 to 100, \
fractions allowed, default 1; long gaps stay long: a meeting at speed 1 lasts as long as it did), then \
`replay_end`. It plays what was recorded up to the latest update when asked; a date without \
odds ends at once. Subscriptions carry on meanwhile and live frames keep their own order; \
replay frames are outside it. One replay at a time per connection (`replay_running`); a \
replay waits for a client that does not read, never dropped or conflated, and takes at most \
half of the frames waiting for the connection, so live frames are never held up.
- `{\"type\":\"replay_stop\"}`: ends the replay under way (its `replay_end` has \
`\"stopped\":true`; `not_replaying` if none).

Server messages:

- `snapshot {date, venue, race_number, seq, status?, status_at?, status_reason?, odds: \
[{horse_no, win_odds?, place_odds?}]}`: the `RaceOdds` \
document with a `type` in front, one for each venue that runs the race (`venue` null where \
none is known yet); before any delta for that race.
- `odds {date, venue, race_number, seq, published_at, occurred_at, odds}`: one per odds \
update; `seq` is its stream sequence, strictly increasing on a connection (among live frames; \
a replay's carry `\"replay\":true`); `published_at` is when the log stored it, `occurred_at` \
when its prices were given at their source (the event's, as the feeder wrote it); `odds` \
lists only the changed prices; `venue` is the update's, null \
for one a feeder gave without a venue, which is for the race of that number at every venue \
of the date.
- `heartbeat {seq}` after `heartbeat_ms` without other traffic.
- `replay_end {date, race_number, moves, stopped}`: a replay is over after `moves` frames \
(`race_number` null for a whole meeting; `stopped` if `replay_stop` ended it).
- `error {error, message}` for a bad client message (`bad_request`, `frame_too_large`, \
`too_many_subscriptions`, `not_subscribed`, `replay_running`, `not_replaying`, \
`rate_limited`); the connection stays open.

Limits: client frames up to 4 KiB (a frame over 64 KiB closes the connection with 1009), \
256 subscriptions per connection. Every client message is a request of the key's plan, \
charged with its HTTP requests; a `since` that replays odds costs one more per 1,000 moves, \
however many, owed with its `subscribe` (over the plan: `rate_limited`, the message not \
acted on). A read of the read models that \
takes longer than the request timeout closes the connection with 1013; resume with \
`since`. A client that falls behind has its pending deltas replaced by one fresh `snapshot` per race (conflation); one that needs this more than 3 times in 60 s \
is closed with 1008, as is one whose socket takes no frame for 10 s. A connection whose key \
is revoked or expires is closed with 1008 within 2 s, with the reason `API key revoked` or \
`API key expired`; when a key's connection cap is lowered below the connections open, the \
newest beyond it are closed with 1008 (`connection limit of the API key lowered`). Shutdown \
closes every socket with 1001.";
