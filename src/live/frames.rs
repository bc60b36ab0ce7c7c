//! The frames of the live odds protocol as types: what the server serialises, and what a
//! client may send. Each derives its schema (`ToSchema`) from the same fields, so the
//! AsyncAPI description (`src/http/asyncapi.rs`) cannot drift from the bytes on the wire.
//! The `odds` and `snapshot` frames are written from bytes `racing_projections` renders
//! (the odds journal's move, the odds document); their types here mirror those bytes, and
//! the tests hold them to it byte for byte.

use axum::extract::ws::Utf8Bytes;
use racing_projections::OddsMoveDoc;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

/// A frame's `type`: a unit type that serialises as its one value and whose schema allows
/// only that value, so a frame's type says which message of the description it is.
macro_rules! tag {
    ($name:ident = $value:literal) => {
        #[doc = concat!("The `type` of a `", $value, "` frame.")]
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub struct $name;

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let found = std::borrow::Cow::<'de, str>::deserialize(d)?;
                if found == $value {
                    Ok($name)
                } else {
                    Err(serde::de::Error::invalid_value(
                        serde::de::Unexpected::Str(&found),
                        &$value,
                    ))
                }
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some([$value]))
                    .into()
            }
        }

        impl ToSchema for $name {}
    };
}

tag!(WelcomeType = "welcome");
tag!(SnapshotType = "snapshot");
tag!(OddsType = "odds");
tag!(MarketType = "market");
tag!(HeartbeatType = "heartbeat");
tag!(PongType = "pong");
tag!(ErrorType = "error");
tag!(ReplayEndType = "replay_end");
tag!(StatusType = "status");
tag!(ScratchingType = "scratching");
tag!(ResultType = "result");
tag!(CardType = "card");
tag!(RetractionType = "retraction");
tag!(SubscribeType = "subscribe");
tag!(UnsubscribeType = "unsubscribe");
tag!(PingType = "ping");
tag!(ReplayType = "replay");
tag!(ReplayStopType = "replay_stop");

// ---- What the server sends. ----

/// The first frame of a connection: the latest position relayed and the heartbeat interval.
/// The connection starts subscribed to every race.
#[derive(Serialize, ToSchema)]
pub struct WelcomeFrame {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: WelcomeType,
    /// The latest position relayed (an odds update's or a race-day event's) when the
    /// connection opened.
    pub seq: u64,
    /// Milliseconds without other traffic after which a `heartbeat` is sent.
    #[schema(value_type = u64)]
    pub heartbeat_ms: u128,
}

/// The current odds of a race: the `RaceOdds` document with a `type` in front, one for
/// each venue that runs the race (`venue` null where none is known yet), sent before any
/// `odds` frame of that race, in answer to a `subscribe` or in place of updates a slow
/// client fell behind on.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotFrame {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: SnapshotType,
    /// Meeting date, `YYYY-MM-DD`.
    #[schema(format = Date)]
    pub date: String,
    /// Racecourse whose race this is; `null` while no venue of the race is known.
    #[schema(required = true)]
    pub venue: Option<String>,
    /// Only on a date with more than one meeting: every venue of the day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub meetings: Option<Vec<String>>,
    /// Race within the meeting, 1 to 99.
    #[schema(minimum = 1, maximum = 99)]
    pub race_number: u8,
    /// Stream sequence of the latest odds update of the race: resume with `since` from
    /// here.
    pub seq: u64,
    /// The race's status, once a status event was given for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = RaceStatus, nullable = false)]
    pub status: Option<String>,
    /// When the status was given (the event's `occurred_at`), with `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, nullable = false)]
    pub status_at: Option<String>,
    /// Why, where the status event said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub status_reason: Option<String>,
    /// Every runner with a price, in horse-number order, those scratched marked.
    pub odds: Vec<RunnerMarket>,
    /// The market these prices make; left out of the snapshot of a race with no prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub market: Option<Market>,
}

/// A runner's prices with what the market reads of them, as the `RaceOdds` document's
/// `odds` lists them (`docs/api.md`, "The market").
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunnerMarket {
    /// Brand number.
    pub horse_no: String,
    /// `true` for a runner scratched from the race: it keeps its last prices, and the
    /// books, the favourites and the movers leave it out. Left out for a runner that can
    /// still run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schema(required = false)]
    pub scratched: bool,
    /// Decimal win odds, stake included (at least 1.0), where the runner has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, nullable = false)]
    pub win_odds: Option<f64>,
    /// Decimal place odds, stake included (at least 1.0), where the runner has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, nullable = false)]
    pub place_odds: Option<f64>,
    /// Implied probability of the win price: 1 / `win_odds`, 4 decimal places.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1, nullable = false)]
    pub win_prob: Option<f64>,
    /// Implied probability of the place price: 1 / `place_odds`, 4 decimal places.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1, nullable = false)]
    pub place_prob: Option<f64>,
    /// The runner's first win price in this market.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, nullable = false)]
    pub first_win_odds: Option<f64>,
    /// The win price's move since `first_win_odds`, in percent of it (below 0:
    /// shortened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub win_move_pct: Option<f64>,
    /// The win price's move since the start of the clock's minute less 15 minutes, in
    /// percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub win_move_15m_pct: Option<f64>,
    /// The same over the last 5 minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub win_move_5m_pct: Option<f64>,
}

/// The market of a race's current prices: the `RaceOdds` document's `market`.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Market {
    /// The market's clock: the latest `occurred_at` of the race's price moves, in UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, nullable = false)]
    pub clock: Option<String>,
    /// The win market's book: the sum of 1 / win odds over the runners not scratched, in
    /// percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub win_book_pct: Option<f64>,
    /// The place market's book, the same over place odds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub place_book_pct: Option<f64>,
    /// The runners not scratched with the shortest win price.
    pub favourites: Vec<String>,
    /// The runners not scratched whose win price shortened most over the last 15
    /// minutes, at most 3.
    pub steamers: Vec<String>,
    /// The runners not scratched whose win price lengthened most over the last 15
    /// minutes, at most 3.
    pub drifters: Vec<String>,
}

/// The book of a race after an odds update: what its `odds` frame's `market` carries.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Book {
    /// The win market's book after the update: the sum of 1 / win odds over every runner
    /// with a win price that is not scratched, in percent, 2 decimal places.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub win_book_pct: Option<f64>,
    /// The place market's book, the same over place odds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub place_book_pct: Option<f64>,
    /// The runners not scratched with the shortest win price after the update.
    pub favourites: Vec<String>,
}

/// A race's market, at most once a second while its prices move (topic `market`): its
/// current odds document's market and runners, conflated (a client is sent the market as
/// it stands, never a queue of the moves between).
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarketFrame {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: MarketType,
    /// Meeting date, `YYYY-MM-DD`.
    #[schema(format = Date)]
    pub date: String,
    /// Racecourse whose race this is; `null` while no venue of the race is known.
    #[schema(required = true)]
    pub venue: Option<String>,
    /// Race within the meeting, 1 to 99.
    #[schema(minimum = 1, maximum = 99)]
    pub race_number: u8,
    /// Stream sequence of the latest odds update of the race.
    pub seq: u64,
    /// The market.
    pub market: Market,
    /// Every runner with a price and its moves, in horse-number order, those scratched
    /// marked.
    pub odds: Vec<RunnerMarket>,
}

/// One odds update: `seq` is its stream sequence, strictly increasing on a connection
/// among live frames; `odds` lists only the changed prices. A `replay` plays recorded
/// updates back as these same frames, marked `"replay":true`.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OddsFrame {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: OddsType,
    /// Present (and true) only on a frame a `replay` plays back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub replay: Option<bool>,
    /// Meeting date, `YYYY-MM-DD`.
    #[schema(format = Date)]
    pub date: String,
    /// The update's racecourse; `null` for one given without a venue, which is for the
    /// race of that number at every venue of the date.
    #[schema(required = true)]
    pub venue: Option<String>,
    /// Race within the meeting, 1 to 99.
    #[schema(minimum = 1, maximum = 99)]
    pub race_number: u8,
    /// Stream sequence of the update.
    pub seq: u64,
    /// When JetStream stored the update (UTC, to the millisecond): when it was published.
    #[schema(format = DateTime)]
    pub published_at: String,
    /// When the prices were given at their source: the event's `occurred_at` (UTC, to
    /// the millisecond, whatever offset the feeder wrote). For a past race's recorded moves,
    /// published later, this is the race's time and `published_at` the publishing's.
    #[schema(format = DateTime)]
    pub occurred_at: String,
    /// The changed prices, as the feed gave them.
    pub odds: Vec<RunnerPrice>,
    /// The book of the race's prices after the update.
    pub market: Book,
}

/// A runner's prices: at least one of `win_odds` and `place_odds`.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunnerPrice {
    /// Brand number.
    pub horse_no: String,
    /// Decimal win odds, stake included (at least 1.0). Left out only where a place
    /// price is given alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, nullable = false)]
    pub win_odds: Option<f64>,
    /// Decimal place odds, stake included (at least 1.0), where the runner was given one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, nullable = false)]
    pub place_odds: Option<f64>,
}

/// Sent after `heartbeat_ms` without other traffic.
#[derive(Serialize, ToSchema)]
pub struct HeartbeatFrame {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: HeartbeatType,
    /// The latest position relayed (an odds update's or a race-day event's).
    pub seq: u64,
}

/// The answer to a `ping`: every frame queued before it has been sent.
#[derive(Serialize, ToSchema)]
pub struct PongFrame {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: PongType,
}

/// A client message the server did not act on; the connection stays open.
#[derive(Serialize, ToSchema)]
pub struct ErrorFrame<'a> {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: ErrorType,
    /// What went wrong: `bad_request`, `frame_too_large`, `too_many_subscriptions`,
    /// `not_subscribed`, `replay_running`, `not_replaying` or `rate_limited`.
    pub error: &'a str,
    /// The same in words, for a person.
    pub message: &'a str,
}

/// A replay is over, after `moves` frames; `stopped` if `replay_stop` ended it.
#[derive(Serialize, ToSchema)]
pub struct ReplayEndFrame<'a> {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: ReplayEndType,
    /// The date replayed, `YYYY-MM-DD`.
    #[schema(format = Date)]
    pub date: &'a str,
    /// The race replayed; `null` for the whole meeting.
    #[schema(required = true, minimum = 1, maximum = 99)]
    pub race_number: Option<u8>,
    /// How many `odds` frames the replay sent.
    pub moves: u64,
    /// Whether `replay_stop` ended it.
    pub stopped: bool,
}

/// Declares a race-day frame: the six fields every one of them opens with (its type, the
/// race, the event's position and when JetStream stored it), then its own. A macro and not
/// a flattened struct, so that each frame's schema lists every field itself and stays
/// strict (`additionalProperties: false`) in the AsyncAPI document.
macro_rules! race_day_frame {
    ($(#[$meta:meta])* $name:ident, $kind:ty { $($own:tt)* }) => {
        $(#[$meta])*
        #[derive(Serialize, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name<'a> {
            /// Which message this is.
            #[schema(inline)]
            pub r#type: $kind,
            /// Meeting date, `YYYY-MM-DD`.
            #[schema(format = Date)]
            pub date: &'a str,
            /// The event's racecourse; `null` where it gave none.
            #[schema(required = true)]
            pub venue: Option<&'a str>,
            /// Race within the meeting, 1 to 99.
            #[schema(minimum = 1, maximum = 99)]
            pub race_number: u8,
            /// Stream sequence of the event.
            pub seq: u64,
            /// When JetStream stored the event (RFC 3339).
            #[schema(format = DateTime)]
            pub published_at: &'a str,
            $($own)*
        }
    };
}

race_day_frame! {
    /// A race's status changed (topic `status`).
    StatusFrame, StatusType {
        /// The race's status now.
        #[schema(value_type = RaceStatus)]
        pub status: &'a str,
        /// Why, where the event said; left out otherwise.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        pub reason: Option<&'a str>,
    }
}

race_day_frame! {
    /// A runner was scratched (topic `scratchings`).
    ScratchingFrame, ScratchingType {
        /// Brand number of the scratched runner.
        pub horse_no: &'a str,
    }
}

race_day_frame! {
    /// A race's result was published or amended (topic `results`).
    ResultFrame, ResultType {
        /// The race's result document, exactly as HTTP serves it.
        #[schema(value_type = racing_projections::openapi::RaceResult)]
        #[serde(borrow)]
        pub result: &'a RawValue,
    }
}

race_day_frame! {
    /// A race was declared or its card amended (topic `cards`).
    CardFrame, CardType {
        /// The race as the day's card lists it.
        #[schema(value_type = racing_projections::openapi::CardRace)]
        #[serde(borrow)]
        pub card: &'a RawValue,
    }
}

race_day_frame! {
    /// A race's result or card was retracted (topics `results` and `cards`).
    RetractionFrame, RetractionType {
        /// Why, as the event said.
        pub reason: &'a str,
    }
}

/// The schema of a race's status: one of the feed's words for it
/// ([`racing_events::RaceStatus`]), in the order of a race's day.
pub struct RaceStatus;

impl utoipa::PartialSchema for RaceStatus {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "Where the race stands: open, suspended, off, finished, \
                 abandoned or void.",
            ))
            .enum_values(Some(racing_events::RaceStatus::ALL.map(|s| s.as_str())))
            .into()
    }
}

impl ToSchema for RaceStatus {}

// ---- What a client may send. ----

/// What a `subscribe` follows; `odds` when no `topics` are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Topic {
    /// `snapshot` and `odds` frames.
    Odds,
    /// `status` frames.
    Status,
    /// `scratching` frames.
    Scratchings,
    /// `result` frames, and `retraction` of a result.
    Results,
    /// `card` frames, and `retraction` of a card.
    Cards,
    /// `market` frames: a race's market at most once a second while its prices move.
    Market,
}

/// Follow a meeting, or one race of it. The first subscribe replaces the starting
/// everything-subscription; later ones add, and one for a target already followed sets
/// its topics. Without `since`, answered by a `snapshot` of each race it names (topic
/// `odds`); with `since`, every update after it for what it names, then live.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Subscribe {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: SubscribeType,
    /// Meeting date, `YYYY-MM-DD`.
    #[schema(format = Date)]
    pub date: String,
    /// Race within the meeting, 1 to 99; the whole meeting if left out.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 99, nullable = false)]
    pub race_number: Option<i64>,
    /// Resume after this stream sequence (a frame's `seq`, or an HTTP answer's
    /// `Racing-Seq`), with no gap and no duplicate.
    #[serde(default)]
    #[schema(nullable = false)]
    pub since: Option<u64>,
    /// What to follow of the target; `["odds"]` if left out.
    #[serde(default)]
    #[schema(nullable = false)]
    pub topics: Option<Vec<Topic>>,
    /// 0 to 120,000: the odds moves of a race within this many milliseconds go out as one
    /// `odds` frame holding each runner's latest prices, with the `seq` and the book of
    /// the last move it covers (the first move after a quiet window goes at once); at most
    /// one such frame a race a window. 0 (the default) sends every move. Race-day frames
    /// are never conflated. With it, a `since` sends the odds as a snapshot.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 120000, nullable = false)]
    pub conflate_ms: Option<u64>,
}

/// Stop following a meeting, or one race of it.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Unsubscribe {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: UnsubscribeType,
    /// Meeting date, `YYYY-MM-DD`.
    #[schema(format = Date)]
    pub date: String,
    /// Race within the meeting, 1 to 99; the whole meeting if left out.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 99, nullable = false)]
    pub race_number: Option<i64>,
    /// Only these topics stop; the subscription goes when none is left. All of it if left
    /// out.
    #[serde(default)]
    #[schema(nullable = false)]
    pub topics: Option<Vec<Topic>>,
}

/// Answered by `pong` once every frame queued before it has gone out.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Ping {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: PingType,
}

/// Play back a date's recorded odds (of one race if `race_number` is given) as `odds`
/// frames marked `"replay":true`, at the pace their prices were given (`occurred_at`)
/// divided by `speed`, then `replay_end`. One replay at a time per connection.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: ReplayType,
    /// Meeting date, `YYYY-MM-DD`.
    #[schema(format = Date)]
    pub date: String,
    /// Race within the meeting, 1 to 99; the whole meeting if left out.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 99, nullable = false)]
    pub race_number: Option<i64>,
    /// How many times faster than the prices were given: 1 to 100, fractions allowed; 1
    /// if left out.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 100, nullable = false)]
    pub speed: Option<f64>,
}

/// End the replay under way (its `replay_end` has `"stopped":true`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayStop {
    /// Which message this is.
    #[schema(inline)]
    pub r#type: ReplayStopType,
}

/// The `odds` frame of an `OddsUpdated` event: its odds move (as the journal keeps it,
/// [`racing_projections::render_odds_move`]) with its `type` first.
pub fn odds_frame(odds_move: &OddsMoveDoc<'_>) -> Utf8Bytes {
    let body = racing_projections::render_odds_move(odds_move);
    odds_frame_of(&body).unwrap_or_default()
}

/// The `odds` frame of an odds move read from the journal: the same bytes as went live.
pub fn odds_frame_of(body: &[u8]) -> Result<Utf8Bytes, std::str::Utf8Error> {
    framed("{\"type\":\"odds\",", body)
}

/// The `odds` frame of an odds move a `replay` plays back: as it went live, marked
/// `"replay":true` after its `type`.
pub fn replayed_odds_frame_of(body: &[u8]) -> Result<Utf8Bytes, std::str::Utf8Error> {
    framed("{\"type\":\"odds\",\"replay\":true,", body)
}

/// A journal move (`{"date":...}`) with `head` in place of its opening brace.
fn framed(head: &str, body: &[u8]) -> Result<Utf8Bytes, std::str::Utf8Error> {
    let rest = std::str::from_utf8(body.get(1..).unwrap_or_default())?;
    Ok(format!("{head}{rest}").into())
}

/// Serialises a server message; they are plain structs of strings and numbers.
pub(crate) fn frame<T: Serialize>(message: &T) -> Utf8Bytes {
    serde_json::to_string(message).unwrap_or_default().into()
}

#[cfg(test)]
mod tests;
