//! The current odds of a race, and an odds move as the journal keeps it.

use serde::Serialize;

use super::json::{put_f64, put_list, put_opt_str, put_str, put_strs, put_u64, Fields};
#[cfg(feature = "openapi")]
use super::status::RaceStatusName;

/// The current odds of a race, and its status where it was given one; the WebSocket's
/// `snapshot` is this document with a `type` in front.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RaceOdds, examples(json!({
    "date": "2026-11-21", "venue": "Sha Tin", "race_number": 1, "seq": 2770,
    "status": "open", "status_at": "2026-11-21T04:05:00.000Z",
    "odds": [{"horse_no": "CA206", "win_odds": 2.1, "place_odds": 1.2, "win_prob": 0.4762,
              "place_prob": 0.8333, "first_win_odds": 2.6, "win_move_pct": -19.23,
              "win_move_15m_pct": -8.7, "win_move_5m_pct": 0.0},
             {"horse_no": "E271", "win_odds": 3.5, "win_prob": 0.2857, "first_win_odds": 3.0,
              "win_move_pct": 16.67, "win_move_15m_pct": 16.67, "win_move_5m_pct": 6.06}],
    "market": {"clock": "2026-11-21T04:20:00.000Z", "win_book_pct": 76.19,
               "place_book_pct": 83.33, "favourites": ["CA206"], "steamers": ["CA206"],
               "drifters": ["E271"]}
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
    /// The race's status: left out for a race never given one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = RaceStatusName, required = false))]
    status: Option<&'a str>,
    /// When the race took its status (the `occurred_at` of the event that gave it, or of
    /// the result that finished it); left out with `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = String, format = DateTime, required = false)
    )]
    status_at: Option<&'a str>,
    /// Why, where the feed said; left out where it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    status_reason: Option<&'a str>,
    /// Every runner with a price, in horse-number order, those scratched from the race
    /// marked `scratched`.
    odds: Vec<RunnerOddsDoc<'a>>,
    /// The market the prices of the runners not scratched make.
    market: MarketDoc,
}

/// The market of a race's current prices (`docs/api.md`, "The market").
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Market))]
pub struct MarketDoc {
    /// The market's clock: the latest `occurred_at` of the race's price moves (when the
    /// prices were given at their source), in UTC. The moves over 5 and 15 minutes are
    /// read back from it. Left out where no move gave a win price.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = String, format = DateTime, required = false)
    )]
    clock: Option<String>,
    /// The win book: the sum of 1 / win odds over every runner with a win price that is
    /// not scratched, in percent, 2 decimal places (over 100 by the operator's margin);
    /// left out where no such runner has a win price.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    win_book_pct: Option<f64>,
    /// The place book, the same over place prices; left out where no runner not
    /// scratched has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    place_book_pct: Option<f64>,
    /// The runners not scratched with the shortest win price, joint favourites all listed.
    favourites: Vec<String>,
    /// Steamers: the runners not scratched whose win price shortened most over the last
    /// 15 minutes of the clock (by `win_move_15m_pct`), at most 3, biggest first.
    steamers: Vec<String>,
    /// Drifters: the runners not scratched whose win price lengthened most over the last
    /// 15 minutes, at most 3, biggest first.
    drifters: Vec<String>,
}

/// A runner's current prices: win, place or both; a price the runner was never given is
/// left out.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RunnerMarket))]
pub struct RunnerOddsDoc<'a> {
    /// Brand number.
    horse_no: &'a str,
    /// `true` for a runner scratched from the race: it keeps its last prices here, and
    /// the books, the favourites and the movers leave it out. Left out for a runner that
    /// can still run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "openapi", schema(required = false))]
    scratched: bool,
    /// Decimal win odds, stake included (at least 1.0): a winning 1-dollar bet returns
    /// this.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, nullable = false))]
    win_odds: Option<f64>,
    /// Decimal place odds, stake included (at least 1.0): a placed 1-dollar bet returns
    /// this.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, nullable = false))]
    place_odds: Option<f64>,
    /// Implied probability of the win price: 1 / `win_odds`, 4 decimal places.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1, nullable = false)
    )]
    win_prob: Option<f64>,
    /// Implied probability of the place price: 1 / `place_odds`, 4 decimal places.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 1, nullable = false)
    )]
    place_prob: Option<f64>,
    /// The runner's first win price in this market.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, nullable = false))]
    first_win_odds: Option<f64>,
    /// The win price's move since `first_win_odds`, in percent of it, 2 decimal places:
    /// below 0 shortened (backed), above 0 lengthened.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    win_move_pct: Option<f64>,
    /// The win price's move since the start of the market clock's minute less 15
    /// minutes, in percent of the price then; left out where the runner had no win price then.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    win_move_15m_pct: Option<f64>,
    /// The same over the last 5 minutes of the clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    win_move_5m_pct: Option<f64>,
}

impl OddsDoc<'_> {
    /// The document's JSON, written field by field: the bytes the derived `Serialize`
    /// writes (kept as the reference the tests compare them with), without escaping each
    /// field's name again for every runner of every race a batch moves.
    fn write(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + 160 * self.odds.len());
        let mut f = Fields::new(&mut out);
        put_str(f.field("date"), self.date);
        put_opt_str(f.field("venue"), self.venue);
        if let Some(meetings) = self.meetings {
            put_strs(f.field("meetings"), meetings.iter().map(String::as_str));
        }
        put_u64(f.field("race_number"), u64::from(self.race_number));
        put_u64(f.field("seq"), self.seq);
        for (name, value) in [
            ("status", self.status),
            ("status_at", self.status_at),
            ("status_reason", self.status_reason),
        ] {
            if let Some(value) = value {
                put_str(f.field(name), value);
            }
        }
        put_list(f.field("odds"), &self.odds, |out, runner| runner.write(out));
        let m = &self.market;
        let mut market = Fields::new(f.field("market"));
        if let Some(clock) = &m.clock {
            put_str(market.field("clock"), clock);
        }
        if let Some(pct) = m.win_book_pct {
            put_f64(market.field("win_book_pct"), pct);
        }
        if let Some(pct) = m.place_book_pct {
            put_f64(market.field("place_book_pct"), pct);
        }
        for (name, runners) in [
            ("favourites", &m.favourites),
            ("steamers", &m.steamers),
            ("drifters", &m.drifters),
        ] {
            put_strs(market.field(name), runners.iter().map(String::as_str));
        }
        market.end();
        f.end();
        out
    }
}

impl RunnerOddsDoc<'_> {
    /// The runner's JSON, as its derived `Serialize` writes it ([`OddsDoc::write`]).
    fn write(&self, out: &mut Vec<u8>) {
        let mut f = Fields::new(out);
        put_str(f.field("horse_no"), self.horse_no);
        if self.scratched {
            f.field("scratched").extend_from_slice(b"true");
        }
        for (name, value) in [
            ("win_odds", self.win_odds),
            ("place_odds", self.place_odds),
            ("win_prob", self.win_prob),
            ("place_prob", self.place_prob),
            ("first_win_odds", self.first_win_odds),
            ("win_move_pct", self.win_move_pct),
            ("win_move_15m_pct", self.win_move_15m_pct),
            ("win_move_5m_pct", self.win_move_5m_pct),
        ] {
            if let Some(value) = value {
                put_f64(f.field(name), value);
            }
        }
        f.end();
    }
}

/// A runner's prices as an odds move gives them: win, place or both, each only where
/// given (the schema of a move's runners; the journal keeps them as the feed gave them).
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
#[schema(as = RunnerOdds)]
#[allow(dead_code, reason = "a schema: nothing is made of it")]
pub struct RunnerPriceDoc {
    /// Brand number.
    horse_no: String,
    /// Decimal win odds, stake included (at least 1.0); left out where the move gave
    /// only a place price.
    #[schema(minimum = 1, nullable = false)]
    win_odds: Option<f64>,
    /// Decimal place odds, stake included (at least 1.0), where the move gave one.
    #[schema(minimum = 1, nullable = false)]
    place_odds: Option<f64>,
}

/// Renders one applied `OddsUpdated` as the odds journal keeps it: `{date, venue,
/// race_number, seq, published_at, occurred_at, odds, market}`, the runners as the feed
/// gave them, `market` the book of the race's prices after it:
/// `published_at` when JetStream stored it, `occurred_at` the envelope's, when the prices
/// were given at their source. A live `odds` frame is this with its `type` first, so what
/// a replay reads from the journal is byte for byte what went live.
///
/// Written field by field, each field's name as bytes: the derived `Serialize` (kept as
/// the reference the tests compare these bytes with) escapes every name and string, and
/// the journal and the live feed write this for every price move.
pub fn render_odds_move(m: &OddsMoveDoc<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(192 + 48 * m.odds.len());
    let mut f = Fields::new(&mut out);
    put_str(f.field("date"), m.date);
    put_opt_str(f.field("venue"), m.venue);
    put_u64(f.field("race_number"), u64::from(m.race_number));
    put_u64(f.field("seq"), m.seq);
    put_str(f.field("published_at"), m.published_at);
    put_str(f.field("occurred_at"), m.occurred_at);
    put_list(f.field("odds"), m.odds, |out, runner| {
        let mut r = Fields::new(out);
        put_str(r.field("horse_no"), &runner.horse_no);
        if let Some(win) = runner.win_odds {
            put_f64(r.field("win_odds"), win);
        }
        if let Some(place) = runner.place_odds {
            put_f64(r.field("place_odds"), place);
        }
        r.end();
    });
    let book = m.market;
    let mut market = Fields::new(f.field("market"));
    if let Some(pct) = book.win_book_pct {
        put_f64(market.field("win_book_pct"), pct);
    }
    if let Some(pct) = book.place_book_pct {
        put_f64(market.field("place_book_pct"), pct);
    }
    put_strs(
        market.field("favourites"),
        book.favourites.iter().map(String::as_str),
    );
    market.end();
    f.end();
    out
}

/// An odds move: the race, the event's position, when JetStream stored it and when the
/// prices were given, and the prices.
#[derive(Serialize)]
pub struct OddsMoveDoc<'a> {
    /// Meeting date, `YYYY-MM-DD`.
    pub date: &'a str,
    /// The event's racecourse; `None` (null) for odds of the race of that number at every
    /// venue of the date.
    pub venue: Option<&'a str>,
    /// Race within the meeting.
    pub race_number: u8,
    /// Stream sequence of the event.
    pub seq: u64,
    /// When JetStream stored it (RFC 3339, [`published_at`]).
    pub published_at: &'a str,
    /// When the prices were given at their source.
    pub occurred_at: &'a str,
    /// The prices.
    pub odds: &'a [racing_events::RunnerOdds],
    /// The book of the race's prices after the move.
    pub market: &'a crate::market::Book,
}

/// The time JetStream stored a message, in nanoseconds since the epoch, as the service
/// serves an instant ([`racing_events::Instant`]): an odds move's `published_at`.
pub fn published_at(unix_nanos: i128) -> String {
    racing_events::Instant::of_nanos(unix_nanos)
}

/// The race an odds document is of: its date, venue (`None` where no venue of the race is
/// known), the day's venues where it has more than one, and its number.
pub(crate) struct OddsRace<'a> {
    pub(crate) date: &'a str,
    pub(crate) venue: Option<&'a str>,
    pub(crate) meetings: Option<&'a [String]>,
    pub(crate) race_number: u8,
}

/// Renders the current odds of a race, with its status (`None` for a race never given
/// one) and the runners scratched from it: `{date, venue, meetings?, race_number, seq,
/// status?, status_at?, status_reason?, odds: [{horse_no, scratched?, win_odds?,
/// place_odds?, ...}], market}`, runners in horse-number order, the market over those not
/// scratched. The WebSocket's `snapshot` is this document with a `type` in front.
pub(crate) fn render_odds(
    of: &OddsRace<'_>,
    race: &crate::state::RaceOdds,
    status: Option<&crate::status::Status>,
    scratched: &std::collections::BTreeSet<String>,
) -> Vec<u8> {
    let [status, status_at, status_reason] = crate::status::Status::fields(status);
    // Two runs in order, the win prices' runners then the place prices': the stable sort
    // merges them.
    let mut horses: Vec<&String> = race.runners.keys().chain(race.place.keys()).collect();
    horses.sort();
    horses.dedup();
    let moves = crate::market::moves(&race.trail, &race.runners);
    let (steamers, drifters) =
        crate::market::movers(moves.iter().filter(|(h, _)| !scratched.contains(*h)));
    let clock = (race.trail.clock != 0)
        .then(|| jiff::Timestamp::from_millisecond(race.trail.clock).ok())
        .flatten()
        .map(racing_events::Instant::text);
    OddsDoc {
        date: of.date,
        venue: of.venue,
        meetings: of.meetings,
        race_number: of.race_number,
        seq: race.seq,
        status,
        status_at,
        status_reason,
        odds: horses
            .into_iter()
            .map(|h| {
                let win_odds = race.runners.get(h).map(|(o, _)| *o);
                let place_odds = race.place.get(h).map(|(o, _)| *o);
                let moved = moves.get(h.as_str()).cloned().unwrap_or_default();
                RunnerOddsDoc {
                    horse_no: h,
                    scratched: scratched.contains(h.as_str()),
                    win_odds,
                    place_odds,
                    win_prob: win_odds.map(crate::market::implied),
                    place_prob: place_odds.map(crate::market::implied),
                    first_win_odds: moved.first,
                    win_move_pct: moved.since_first,
                    win_move_15m_pct: moved.last_15m,
                    win_move_5m_pct: moved.last_5m,
                }
            })
            .collect(),
        market: {
            let book = race.book(scratched);
            MarketDoc {
                clock,
                win_book_pct: book.win_book_pct,
                place_book_pct: book.place_book_pct,
                favourites: book.favourites,
                steamers,
                drifters,
            }
        },
    }
    .write()
}

#[cfg(test)]
mod tests {
    use racing_events::RunnerOdds;

    use super::*;
    use crate::docs::json::to_json;
    use crate::market::Book;

    /// The move written field by field is the bytes serde_json writes of the same move
    /// (the derived `Serialize`): venues given and not, strings to escape and not, runners
    /// with either price or both, books with and without their figures.
    #[test]
    fn a_move_is_written_as_serde_writes_it() {
        let runner = |horse_no: &str, win_odds, place_odds| RunnerOdds {
            horse_no: horse_no.to_owned(),
            win_odds,
            place_odds,
        };
        let runners = [
            vec![],
            vec![runner("E271", Some(3.5), None)],
            vec![
                runner("E271", Some(1.0), Some(1.1)),
                runner("G3\"74", None, Some(2.25)),
                runner("G3\\74", Some(2.0), Some(2.25)),
                runner("沙田\u{1f}", Some(1234.5678), None),
                runner("\n\t\u{7f}", Some(12.0), None),
                runner("", Some(1.000_000_000_000_000_2), Some(1e21)),
            ],
        ];
        let books = [
            Book::default(),
            Book {
                win_book_pct: Some(117.65),
                place_book_pct: None,
                favourites: vec!["E271".into()],
            },
            Book {
                win_book_pct: None,
                place_book_pct: Some(301.0),
                favourites: vec!["A1".into(), "B\\2".into(), "C\"3".into()],
            },
            Book {
                win_book_pct: Some(100.0),
                place_book_pct: Some(0.1),
                favourites: Vec::new(),
            },
        ];
        let mut compared = 0;
        for odds in &runners {
            for market in &books {
                for (venue, text) in [(None, "2026-12-07"), (Some("ST\\"), "Sha \"Tin\"\r")] {
                    let m = OddsMoveDoc {
                        date: text,
                        venue,
                        race_number: 11,
                        seq: u64::MAX,
                        published_at: "2026-12-07T09:30:00.123Z",
                        occurred_at: text,
                        odds,
                        market,
                    };
                    let written = render_odds_move(&m);
                    assert_eq!(
                        String::from_utf8_lossy(&written),
                        String::from_utf8_lossy(&to_json(&m))
                    );
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 24);
    }

    /// The odds document written field by field is the bytes of its derived `Serialize`:
    /// with and without a venue, the day's meetings, a status and its parts, runners
    /// scratched or not with each of their figures given or not, strings to escape, and
    /// markets with and without a clock, books and movers.
    #[test]
    fn an_odds_document_is_written_as_serde_writes_it() {
        let meetings = ["Happy \\Valley".to_owned(), "Sha Tin".to_owned()];
        let runner = |horse_no, scratched, figure: Option<f64>| RunnerOddsDoc {
            horse_no,
            scratched,
            win_odds: figure,
            place_odds: figure.map(|f| f / 3.0),
            win_prob: figure.map(crate::market::implied),
            place_prob: None,
            first_win_odds: figure.map(|f| f + 0.5),
            win_move_pct: figure.map(|f| -f),
            win_move_15m_pct: Some(0.0),
            win_move_5m_pct: figure.filter(|f| *f > 2.0),
        };
        let markets = || {
            [
                MarketDoc {
                    clock: None,
                    win_book_pct: None,
                    place_book_pct: None,
                    favourites: Vec::new(),
                    steamers: Vec::new(),
                    drifters: Vec::new(),
                },
                MarketDoc {
                    clock: Some("2026-11-21T04:20:00.000Z".into()),
                    win_book_pct: Some(117.65),
                    place_book_pct: Some(301.0),
                    favourites: vec!["E271".into(), "G\"3".into()],
                    steamers: vec!["A1".into()],
                    drifters: vec!["B\n2".into(), "C3".into(), "D4".into()],
                },
            ]
        };
        let statuses = [
            [None, None, None],
            [Some("off"), Some("2026-11-21T04:25:00.000Z"), None],
            [
                Some("void"),
                Some("2026-11-21T04:25:00.000Z"),
                Some("a \"false\" start"),
            ],
        ];
        let mut compared = 0;
        for (venue, meetings) in [(None, None), (Some("Sha Tin"), Some(&meetings[..]))] {
            for [status, status_at, status_reason] in statuses {
                for mut market in markets() {
                    for odds in [
                        Vec::new(),
                        vec![
                            runner("A1", false, Some(2.5)),
                            runner("B\\2", true, Some(1.0)),
                            runner("C3", false, None),
                            runner("沙田\u{1}", true, Some(1e21)),
                        ],
                    ] {
                        let doc = OddsDoc {
                            date: "2026-11-21",
                            venue,
                            meetings,
                            race_number: 9,
                            seq: 2770,
                            status,
                            status_at,
                            status_reason,
                            odds,
                            market,
                        };
                        assert_eq!(
                            String::from_utf8_lossy(&doc.write()),
                            String::from_utf8_lossy(&to_json(&doc))
                        );
                        compared += 1;
                        market = doc.market;
                    }
                }
            }
        }
        assert_eq!(compared, 24);
    }
}
