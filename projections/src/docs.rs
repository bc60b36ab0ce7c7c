//! The documents the API serves, as they are rendered once into the read models. The field
//! order and presence are the contract (interface.md 2.1 to 2.4 and api-contract.md); the
//! handlers send these bytes as they are. With the `openapi` feature each type that renders
//! a document also derives its schema, from the same fields and their doc comments, so the
//! API's description cannot drift from what it serves.

use std::borrow::Cow;

use racing_events::{CardRunner, Lbw, RaceCard, RaceResult, ResultRunner};
use serde::Serialize;

/// Bytes of the strong `ETag` that heads every stored document.
pub const ETAG_LEN: usize = 34;

/// Bytes ahead of every stored document: its `ETag`, then the stream sequence its
/// content was last changed at (big-endian).
pub const HEAD_LEN: usize = ETAG_LEN + 8;

/// The strong `ETag` of the bytes `sent` as the header carries it: their 128-bit xxh3 in
/// hex, quoted. Stored ahead of each document when it is rendered, so that a GET sends
/// it without hashing the body again.
pub fn etag(sent: &[u8]) -> [u8; ETAG_LEN] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = xxhash_rust::xxh3::xxh3_128(sent).to_be_bytes();
    let mut tag = [b'"'; ETAG_LEN];
    for (i, byte) in hash.iter().enumerate() {
        tag[1 + 2 * i] = HEX[usize::from(byte >> 4)];
        tag[2 + 2 * i] = HEX[usize::from(byte & 0xf)];
    }
    tag
}

mod form;
#[cfg(test)]
mod tests;

#[cfg(feature = "openapi")]
pub use form::FormJson;
pub use form::{FormDoc, FormEntry};

/// A stored document as read: its `ETag`, the sequence it was last changed at and its
/// bytes, sharing the store's buffer. Dereferences to the bytes (for a form, the framed
/// record of [`FormDoc`]).
#[derive(Debug, Clone)]
pub struct Doc {
    stored: sled::IVec,
}

impl Doc {
    /// The stored value, checked to hold its head; `None` when it is too short to.
    pub(crate) fn new(stored: sled::IVec) -> Option<Doc> {
        (stored.len() >= HEAD_LEN).then_some(Doc { stored })
    }

    /// The `ETag` of the whole document, quoted.
    pub fn etag(&self) -> &[u8] {
        &self.stored[..ETAG_LEN]
    }

    /// The stream sequence of the document's content: the log up to here had been
    /// applied when it last changed, and it has answered the same since. A WebSocket
    /// `since` of it resumes right after what the document holds.
    pub fn seq(&self) -> u64 {
        let mut seq = [0; 8];
        seq.copy_from_slice(&self.stored[ETAG_LEN..HEAD_LEN]);
        u64::from_be_bytes(seq)
    }

    /// The stored value whole: the `ETag` in its first [`ETAG_LEN`] bytes, the sequence,
    /// then the document from [`HEAD_LEN`], for sending from the store's own buffer.
    pub fn into_stored(self) -> sled::IVec {
        self.stored
    }
}

impl std::ops::Deref for Doc {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.stored[HEAD_LEN..]
    }
}

/// A document's stored value: the `ETag` of what a GET of it sends, `seq` (the stream
/// sequence it reflects), then `doc` (which, for a form, is the framed record, and a GET
/// sends its JSON).
pub(crate) fn seal(form: bool, doc: &[u8], seq: u64) -> Vec<u8> {
    let sent = if form {
        FormDoc::body(doc, None).unwrap_or_default()
    } else {
        Cow::Borrowed(doc)
    };
    let mut stored = Vec::with_capacity(HEAD_LEN + doc.len());
    stored.extend_from_slice(&etag(&sent));
    stored.extend_from_slice(&seq.to_be_bytes());
    stored.extend_from_slice(doc);
    stored
}

/// The document of a stored value (the bytes after its head).
pub(crate) fn unseal(stored: &[u8]) -> &[u8] {
    stored.get(HEAD_LEN..).unwrap_or_default()
}

/// The first byte of a stored alias ([`alias`]); a sealed document starts with its
/// `ETag`'s quote.
const ALIAS: u8 = b'@';

/// What the key of a document without a venue holds where that document is a venue's
/// (the day's main meeting's): the venue, and the sequence at which this answer last
/// changed, by the alias or by the venue's document. One copy of each document is
/// stored; the key without a venue names it.
pub(crate) fn alias(seq: u64, venue: &str) -> Vec<u8> {
    let mut stored = Vec::with_capacity(9 + venue.len());
    stored.push(ALIAS);
    stored.extend_from_slice(&seq.to_be_bytes());
    stored.extend_from_slice(venue.as_bytes());
    stored
}

/// The sequence and venue of a stored alias ([`alias`]); `None` for a sealed document.
pub(crate) fn alias_of(stored: &[u8]) -> Option<(u64, &[u8])> {
    let rest = stored.strip_prefix(&[ALIAS])?;
    let (seq, venue) = rest.split_first_chunk::<8>()?;
    Some((u64::from_be_bytes(*seq), venue))
}

/// The key of the document an alias stored under `key` names: the key without a venue
/// ends with the empty venue, so the venue's key is it with the venue after it.
pub(crate) fn alias_target(key: &[u8], venue: &[u8]) -> Vec<u8> {
    [key, venue].concat()
}

/// The stored document an alias (of sequence `seq`) answers with, from its venue's
/// stored document: the same `ETag` and bytes, and the later of the two sequences.
pub(crate) fn aliased(seq: u64, target: sled::IVec) -> sled::IVec {
    let Some(head) = target.get(ETAG_LEN..HEAD_LEN) else {
        return target;
    };
    if head >= &seq.to_be_bytes()[..] {
        return target;
    }
    let mut stored = target.to_vec();
    stored[ETAG_LEN..HEAD_LEN].copy_from_slice(&seq.to_be_bytes());
    stored.into()
}

/// What a stored document answers, its `ETag` and its bytes, without the sequence it was
/// sealed at: the same for two stores that hold the same document, however each batched
/// the log. An alias answers as the venue it names.
pub fn answered(stored: &[u8]) -> Vec<u8> {
    if let Some((_, venue)) = alias_of(stored) {
        return [&[ALIAS], venue].concat();
    }
    [
        stored.get(..ETAG_LEN).unwrap_or_default(),
        stored.get(HEAD_LEN..).unwrap_or_default(),
    ]
    .concat()
}

/// Whether two stored values answer the same: the same `ETag` and document, whatever
/// sequence each was sealed at.
pub(crate) fn same_answer(a: &[u8], b: &[u8]) -> bool {
    a.get(..ETAG_LEN) == b.get(..ETAG_LEN) && a.get(HEAD_LEN..) == b.get(HEAD_LEN..)
}

/// `lbw_lengths` of a runner: present exactly when `lbw` is, `null` inside where `lbw` is
/// no number of lengths.
pub(crate) fn lbw_lengths(lbw: Option<&str>) -> Option<Option<f64>> {
    lbw.map(|l| Lbw::parse(l).and_then(|l| l.lengths()))
}

/// Everything of a date's meetings that a date document needs.
pub(crate) struct Meeting<T> {
    pub venue: String,
    pub races: Vec<T>,
}

/// All results of a date (interface.md 2.3): races in ascending race number.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ResultsByDate, examples(json!({
    "date": "2026-11-18", "venue": "Happy Valley",
    "races": [{
        "race_number": 1, "race_name": "KITE HANDICAP", "distance": 1200, "going": "GOOD",
        "runners": [
            {"position": 1, "horse_no": "E271", "horse_name": "GOLDEN SIXTY",
             "jockey": "Z Purton", "trainer": "F C Lor", "finish_time": "1:09.45",
             "win_odds": 3.5, "status": null, "dead_heat": true, "lbw": "-",
             "lbw_lengths": 0.0, "running_positions": [3, 2, 1], "actual_weight": 133,
             "declared_weight": 1198, "draw": 4},
            {"position": null, "horse_no": "H123", "horse_name": "LUCKY STAR",
             "jockey": "K Teetan", "trainer": "J Size", "finish_time": null,
             "win_odds": 45.0, "status": "PU", "dead_heat": false, "lbw": "---",
             "lbw_lengths": null, "running_positions": [9, 12], "actual_weight": 118,
             "declared_weight": 1087, "draw": 11}
        ],
        "class": "Class 3"
    }]
}))))]
pub struct ResultsDoc<'a> {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Racecourse of this meeting.
    venue: &'a str,
    /// Only on a date with more than one meeting: every venue of the day, so a client
    /// can ask for the others with `?venue=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    meetings: Option<&'a [String]>,
    /// The meeting's races, ascending race number.
    races: &'a [ResultRace<'a>],
}

/// One race of the results of a date.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResultRace<'a> {
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: i64,
    /// e.g. `KITE HANDICAP`.
    race_name: &'a str,
    /// Race distance in metres.
    distance: i64,
    /// Track condition, e.g. `GOOD`, `GOOD TO FIRM`.
    going: &'a str,
    /// Placed runners by position, then the rest as the feed listed them.
    runners: Vec<ResultRunnerDoc<'a>>,
    /// Race class, e.g. `Class 4`, `Group 1`. Left out where the result gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    class: Option<&'a str>,
}

/// The result of one race: the race result of interface.md 2.3 with the meeting's date
/// and venue.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RaceResult, examples(json!({
    "date": "2026-11-18", "venue": "Happy Valley", "race_number": 1,
    "race_name": "KITE HANDICAP", "distance": 1200, "going": "GOOD",
    "runners": [
        {"position": 1, "horse_no": "E271", "horse_name": "GOLDEN SIXTY",
         "jockey": "Z Purton", "trainer": "F C Lor", "finish_time": "1:09.45",
         "win_odds": 3.5, "status": null, "dead_heat": true},
        {"position": 1, "horse_no": "CA206", "horse_name": "ROMANTIC WARRIOR",
         "jockey": "J McDonald", "trainer": "C S Shum", "finish_time": "1:09.45",
         "win_odds": 2.1, "status": null, "dead_heat": true, "lbw": "-",
         "lbw_lengths": 0.0, "running_positions": [5, 4, 1], "actual_weight": 126,
         "declared_weight": 1120, "draw": 7}
    ],
    "class": "Class 3"
}))))]
pub struct SingleRace<'a> {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Racecourse.
    venue: &'a str,
    /// Only on a date with more than one meeting: every venue of the day.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    meetings: Option<&'a [String]>,
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: i64,
    /// Race name.
    race_name: &'a str,
    /// Race distance in metres.
    distance: i64,
    /// Track condition.
    going: &'a str,
    /// Placed runners by position, then the rest as the feed listed them.
    runners: &'a [ResultRunnerDoc<'a>],
    /// Race class, e.g. `Class 4`, `Group 1`. Left out where the result gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    class: Option<&'a str>,
}

/// One runner of a race result (interface.md 2.3, plus `status` and `dead_heat`, then the
/// runner's record where the feed gave it: a field not given is left out).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ResultRunner))]
pub struct ResultRunnerDoc<'a> {
    /// Finishing position from 1 (shared in a dead heat); `null` for no placing.
    #[cfg_attr(feature = "openapi", schema(required = true, minimum = 1))]
    position: Option<i64>,
    /// Brand number.
    horse_no: &'a str,
    /// Registered name.
    horse_name: &'a str,
    /// Jockey who rode.
    jockey: &'a str,
    /// Trainer.
    trainer: &'a str,
    /// Finishing time, `m:ss.cc`; `null` where there is none.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    finish_time: Option<&'a str>,
    /// Final decimal win odds, stake included; `null` where there are none.
    #[cfg_attr(feature = "openapi", schema(required = true, minimum = 1))]
    win_odds: Option<f64>,
    /// `null` for a normal finisher, otherwise the official code (`PU`, `WV-A`, ...).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    status: Option<&'a str>,
    /// Whether the position is shared with another runner.
    dead_heat: bool,
    /// Lengths behind the winner as officially written: `-` for the winner, `NOSE`, `SH`
    /// (short head), `HD` (head), `N` (neck), lengths with an optional fraction (`3/4`,
    /// `1-1/4`, `10-3/4`), or a code with no margin (`ML`, `DIST`, `---`). Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, pattern = "^[0-9A-Z/-]{1,8}$")
    )]
    lbw: Option<&'a str>,
    /// `lbw` as a number of lengths behind the winner: `-` is 0, `1-1/4` is 1.25; `NOSE`,
    /// `SH`, `HD`, `N` are 0.05, 0.1, 0.2, 0.3. `null` where `lbw` is no number of lengths
    /// (`ML`, `DIST`, `---`). Present exactly when `lbw` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, required = false, minimum = 0))]
    lbw_lengths: Option<Option<f64>>,
    /// The runner's position at each call of the race, in order (1 to 6 positions of 1 to
    /// 99); the last is at the finish. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>, required = false, nullable = false, min_items = 1, max_items = 6))]
    running_positions: Option<&'a [i64]>,
    /// Weight carried, in pounds (90 to 160). Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 90, maximum = 160)
    )]
    actual_weight: Option<i64>,
    /// The horse's own body weight declared before the race, in pounds (700 to 1500).
    /// Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 700, maximum = 1500)
    )]
    declared_weight: Option<i64>,
    /// Barrier draw, 1 to 99. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 1, maximum = 99)
    )]
    draw: Option<i64>,
}

/// The race card of a date (interface.md 2.4): races in ascending race number,
/// scratched runners removed.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RaceCard, examples(json!({
    "date": "2026-11-21", "venue": "Sha Tin",
    "races": [{
        "race_number": 1, "race_name": "THE SHA TIN TROPHY", "distance": 1600,
        "class": "Group 3",
        "runners": [
            {"horse_no": "E271", "horse_name": "GOLDEN SIXTY", "jockey": "Z Purton",
             "trainer": "F C Lor", "draw": 4, "weight": 133},
            {"horse_no": "CA206", "horse_name": "ROMANTIC WARRIOR",
             "jockey": "J McDonald", "trainer": "C S Shum", "draw": 7, "weight": 126}
        ]
    }]
}))))]
pub struct CardDoc<'a> {
    /// Meeting date, `YYYY-MM-DD`; for `/racecards/today`, the day it is in the service's
    /// time zone.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Racecourse.
    venue: &'a str,
    /// Only on a date with more than one meeting: every venue of the day.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    meetings: Option<&'a [String]>,
    /// The meeting's races, ascending race number.
    races: &'a [CardRace<'a>],
}

/// One race of a race card.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardRace<'a> {
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: i64,
    /// Race name.
    race_name: &'a str,
    /// Race distance in metres.
    distance: i64,
    /// Race class, carried as a string (`Class 4`, `Group 1`, `Griffin`).
    class: &'a str,
    /// Declared runners, scratched ones removed.
    runners: Vec<CardRunnerDoc<'a>>,
}

/// A declared runner of a race card (interface.md 2.4).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = CardRunner))]
pub struct CardRunnerDoc<'a> {
    /// Brand number.
    horse_no: &'a str,
    /// Registered name.
    horse_name: &'a str,
    /// Declared jockey.
    jockey: &'a str,
    /// Trainer.
    trainer: &'a str,
    /// Barrier draw, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    draw: i64,
    /// Weight carried, in pounds.
    weight: i64,
}

impl<'a> CardRunnerDoc<'a> {
    fn new(r: &'a CardRunner) -> Self {
        CardRunnerDoc {
            horse_no: &r.horse_no,
            horse_name: &r.horse_name,
            jockey: &r.jockey,
            trainer: &r.trainer,
            draw: r.draw,
            weight: r.weight,
        }
    }
}

/// A horse's profile (interface.md 2.1), these fields in this order: the fields of 2.1,
/// then pedigree, import type, ratings and season stakes where the feed gave them (a field
/// not given is left out).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Profile, examples(json!({
    "horse_no": "E271", "horse_name": "GOLDEN SIXTY", "country_of_origin": "AUS",
    "colour": "Bay", "sex": "Gelding", "age": 9, "trainer": "F C Lor",
    "owner": "Stewart Leung", "total_stakes": 150218500, "starts": 32, "wins": 27,
    "places": 2, "sire": "Street Cry", "dam": "Clinque", "dam_sire": "Casual Lies",
    "import_type": "PPG", "current_rating": 126, "season_start_rating": 131,
    "season_stakes": 12500000
}))))]
pub struct ProfileDoc<'a> {
    /// Brand number, the same value as in the path.
    horse_no: &'a str,
    /// Registered name.
    horse_name: &'a str,
    /// Short country code, e.g. `NZ`, `AUS`, `IRE`.
    country_of_origin: &'a str,
    /// Coat colour, e.g. `Bay`, `Chestnut`.
    colour: &'a str,
    /// e.g. `Gelding`, `Horse`, `Mare`.
    sex: &'a str,
    /// Age in years.
    age: i64,
    /// Current trainer.
    trainer: &'a str,
    /// Current owner.
    owner: &'a str,
    /// Career prize money in whole Hong Kong dollars (HK$).
    total_stakes: i64,
    /// Career starts.
    starts: i64,
    /// Career wins.
    wins: i64,
    /// Career placings.
    places: i64,
    /// Sire's name. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    sire: Option<&'a str>,
    /// Dam's name. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    dam: Option<&'a str>,
    /// Name of the dam's sire. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    dam_sire: Option<&'a str>,
    /// How the horse came to Hong Kong: `PP` (private purchase), `PPG` (private purchase
    /// griffin), `ISG` (international sale griffin), `VIS` (visiting); 1 to 8 upper-case
    /// letters. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, pattern = "^[A-Z]{1,8}$")
    )]
    import_type: Option<&'a str>,
    /// Current handicap rating, 0 to 200. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 0, maximum = 200)
    )]
    current_rating: Option<i64>,
    /// Handicap rating at the start of the season, 0 to 200. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 0, maximum = 200)
    )]
    season_start_rating: Option<i64>,
    /// Prize money this season in whole Hong Kong dollars (HK$). Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false, minimum = 0))]
    season_stakes: Option<i64>,
}

/// The current win odds of a race; the WebSocket's `snapshot` is this document with a
/// `type` in front.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RaceOdds, examples(json!({
    "date": "2026-11-21", "venue": "Sha Tin", "race_number": 1, "seq": 2770,
    "odds": [{"horse_no": "CA206", "win_odds": 2.1}, {"horse_no": "E271", "win_odds": 3.5}]
}))))]
pub struct OddsDoc<'a> {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Racecourse whose race this is: the odds given for it and those given without a
    /// venue (for the race of that number at every venue), each runner at its latest
    /// price. `null` while no venue of the race is known (no card, result or odds naming
    /// one): the odds given without a venue.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    venue: Option<&'a str>,
    /// Only on a date with more than one meeting: every venue of the day.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    meetings: Option<&'a [String]>,
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: u8,
    /// Stream sequence of the latest odds update of the race: resume the WebSocket from
    /// here with `since`.
    seq: u64,
    /// Every runner with a price, in horse-number order.
    odds: Vec<RunnerOddsDoc<'a>>,
}

/// A runner's current win odds.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RunnerOdds))]
pub struct RunnerOddsDoc<'a> {
    /// Brand number.
    horse_no: &'a str,
    /// Decimal odds, stake included (at least 1.0): a winning 1-dollar bet returns this.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    win_odds: f64,
}

fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    // The documents are strings, integers and finite floats: serialising cannot fail.
    serde_json::to_vec(v).unwrap_or_default()
}

fn result_race(r: &RaceResult) -> ResultRace<'_> {
    let mut runners: Vec<&ResultRunner> = r.runners.iter().collect();
    // Placed runners by position, then the rest as the feed listed them (stable sort).
    runners.sort_by_key(|x| x.position.unwrap_or(i64::MAX));
    ResultRace {
        race_number: r.race_number,
        race_name: &r.race_name,
        distance: r.distance,
        going: &r.going,
        runners: runners
            .into_iter()
            .map(|x| ResultRunnerDoc {
                position: x.position,
                horse_no: &x.horse_no,
                horse_name: &x.horse_name,
                jockey: &x.jockey,
                trainer: &x.trainer,
                finish_time: x.finish_time.as_deref(),
                win_odds: x.win_odds,
                status: x.status.as_deref(),
                dead_heat: x.dead_heat,
                lbw: x.lbw.as_deref(),
                lbw_lengths: lbw_lengths(x.lbw.as_deref()),
                running_positions: x.running_positions.as_deref(),
                actual_weight: x.actual_weight,
                declared_weight: x.declared_weight,
                draw: x.draw,
            })
            .collect(),
        class: r.class.as_deref(),
    }
}

/// The documents of one date, each with the key it is stored under.
pub(crate) struct Rendered {
    /// `(venue or None for the day's main meeting, bytes)`.
    pub days: Vec<(Option<String>, Vec<u8>)>,
    /// `(race number, venue or None, bytes)`.
    pub races: Vec<(u8, Option<String>, Vec<u8>)>,
}

/// The meeting that answers when no venue is asked for: the most races, then the first
/// venue in alphabetical order, so the choice never depends on arrival order.
pub(crate) fn main_meeting<T>(meetings: &[Meeting<T>]) -> usize {
    let mut best = 0;
    for (i, m) in meetings.iter().enumerate() {
        if m.races.len() > meetings[best].races.len() {
            best = i;
        }
    }
    best
}

/// Every venue of the day, on a date with more than one meeting: the `meetings` field.
pub(crate) fn venues<T>(meetings: &[Meeting<T>]) -> Option<Vec<String>> {
    (meetings.len() > 1).then(|| meetings.iter().map(|m| m.venue.clone()).collect())
}

/// Renders the results documents of a date. `meetings` are in venue order, races in
/// ascending race number.
pub(crate) fn render_results(
    date: &str,
    meetings: &[Meeting<RaceResult>],
) -> Result<Rendered, crate::StoreError> {
    let listed = venues(meetings);
    let main = main_meeting(meetings);
    let mut out = Rendered {
        days: Vec::new(),
        races: Vec::new(),
    };
    for (i, m) in meetings.iter().enumerate() {
        let races: Vec<ResultRace<'_>> = m.races.iter().map(result_race).collect();
        let day = to_json(&ResultsDoc {
            date,
            venue: &m.venue,
            meetings: listed.as_deref(),
            races: &races,
        });
        for race in &races {
            let single = to_json(&SingleRace {
                date,
                venue: &m.venue,
                meetings: listed.as_deref(),
                race_number: race.race_number,
                race_name: race.race_name,
                distance: race.distance,
                going: race.going,
                runners: &race.runners,
                class: race.class,
            });
            let n = crate::fold::race_no(race.race_number)?;
            if i == main
                || !meetings[main]
                    .races
                    .iter()
                    .any(|r| r.race_number == race.race_number)
            {
                out.races.push((n, None, single.clone()));
            }
            out.races.push((n, Some(m.venue.clone()), single));
        }
        if i == main {
            out.days.push((None, day.clone()));
        }
        out.days.push((Some(m.venue.clone()), day));
    }
    Ok(out)
}

/// Renders the race-card documents of a date, without the scratched runners.
pub(crate) fn render_cards(
    date: &str,
    meetings: &[Meeting<RaceCard>],
    scratched: impl Fn(&RaceCard, &str) -> bool,
) -> Rendered {
    let listed = venues(meetings);
    let main = main_meeting(meetings);
    let mut out = Rendered {
        days: Vec::new(),
        races: Vec::new(),
    };
    for (i, m) in meetings.iter().enumerate() {
        let races: Vec<CardRace<'_>> = m
            .races
            .iter()
            .map(|c| CardRace {
                race_number: c.race_number,
                race_name: &c.race_name,
                distance: c.distance,
                class: &c.class,
                runners: c
                    .runners
                    .iter()
                    .filter(|r| !scratched(c, &r.horse_no))
                    .map(CardRunnerDoc::new)
                    .collect(),
            })
            .collect();
        let day = to_json(&CardDoc {
            date,
            venue: &m.venue,
            meetings: listed.as_deref(),
            races: &races,
        });
        if i == main {
            out.days.push((None, day.clone()));
        }
        out.days.push((Some(m.venue.clone()), day));
    }
    out
}

/// Renders a horse profile document: the fields of interface.md 2.1, in that order.
pub(crate) fn render_profile(p: &racing_events::HorseProfile) -> Vec<u8> {
    to_json(&ProfileDoc {
        horse_no: &p.horse_no,
        horse_name: &p.horse_name,
        country_of_origin: &p.country_of_origin,
        colour: &p.colour,
        sex: &p.sex,
        age: p.age,
        trainer: &p.trainer,
        owner: &p.owner,
        total_stakes: p.total_stakes,
        starts: p.starts,
        wins: p.wins,
        places: p.places,
        sire: p.sire.as_deref(),
        dam: p.dam.as_deref(),
        dam_sire: p.dam_sire.as_deref(),
        import_type: p.import_type.as_deref(),
        current_rating: p.current_rating,
        season_start_rating: p.season_start_rating,
        season_stakes: p.season_stakes,
    })
}

/// Renders one applied `OddsUpdated` as the odds journal keeps it: `{date, venue,
/// race_number, seq, published_at, odds}`, the runners as the feed gave them. A live
/// `odds` frame is this with its `type` first, so what a replay reads from the journal is
/// byte for byte what went live.
pub fn render_odds_move(
    date: &str,
    venue: Option<&str>,
    race_number: u8,
    seq: u64,
    published_at: &str,
    odds: &[racing_events::RunnerOdds],
) -> Vec<u8> {
    #[derive(Serialize)]
    struct Move<'a> {
        date: &'a str,
        venue: Option<&'a str>,
        race_number: u8,
        seq: u64,
        published_at: &'a str,
        odds: &'a [racing_events::RunnerOdds],
    }
    to_json(&Move {
        date,
        venue,
        race_number,
        seq,
        published_at,
        odds,
    })
}

/// RFC 3339 text of the time JetStream stored a message, in nanoseconds since the epoch:
/// an odds move's `published_at`.
pub fn published_at(unix_nanos: i128) -> String {
    jiff::Timestamp::from_nanosecond(unix_nanos)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Renders the current odds of a race at `venue` (`None` where no venue of the race is
/// known): `{date, venue, meetings?, race_number, seq, odds: [{horse_no, win_odds}]}`,
/// runners in horse-number order. The WebSocket's `snapshot` is this document with a
/// `type` in front.
pub(crate) fn render_odds(
    date: &str,
    venue: Option<&str>,
    meetings: Option<&[String]>,
    race_number: u8,
    race: &crate::fold::RaceOdds,
) -> Vec<u8> {
    to_json(&OddsDoc {
        date,
        venue,
        meetings,
        race_number,
        seq: race.seq,
        odds: race
            .runners
            .iter()
            .map(|(h, (o, _))| RunnerOddsDoc {
                horse_no: h,
                win_odds: *o,
            })
            .collect(),
    })
}
