//! What `racing watch` knows of a meeting and how it shows it: the frames it reads, the
//! board they build (win and place prices, each race's status, its scratched runners, the
//! latest result), a line per frame for a pipe or a file, and the board drawn for a
//! terminal.

use std::collections::{BTreeMap, BTreeSet};

use crossterm::style::Stylize as _;
use serde::Deserialize;

/// A frame of the live protocol, as far as the watcher reads it.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(super) enum Frame {
    Welcome {
        seq: u64,
    },
    Snapshot {
        #[serde(flatten)]
        at: At,
        odds: Vec<Price>,
        /// The race's status, once one was given.
        #[serde(default)]
        status: Option<String>,
        #[serde(default)]
        status_reason: Option<String>,
    },
    Odds {
        #[serde(flatten)]
        at: At,
        published_at: String,
        /// When the prices were given at their source (a service before it sent none).
        #[serde(default)]
        occurred_at: Option<String>,
        odds: Vec<Price>,
        /// A move played back by a replay, not a live one.
        #[serde(default)]
        replay: bool,
    },
    #[serde(rename = "replay_end")]
    ReplayEnd {
        date: String,
        race_number: Option<u8>,
        moves: u64,
    },
    Status {
        #[serde(flatten)]
        at: At,
        status: String,
        #[serde(default)]
        reason: Option<String>,
    },
    Scratching {
        #[serde(flatten)]
        at: At,
        horse_no: String,
    },
    Result {
        #[serde(flatten)]
        at: At,
        result: ResultDoc,
    },
    Retraction {
        #[serde(flatten)]
        at: At,
        reason: String,
    },
    Heartbeat {
        seq: u64,
    },
    Error {
        #[serde(default)]
        error: String,
        #[serde(default)]
        message: String,
    },
    #[serde(other)]
    Other,
}

/// Which race a frame is about, and where it stands in the stream.
#[derive(Debug, Deserialize)]
pub(super) struct At {
    date: String,
    #[serde(default)]
    venue: Option<String>,
    race_number: u8,
    seq: u64,
}

impl At {
    /// The head of a frame's line: `{kind} {date} race {n} seq {seq}`, the venue after
    /// the race where `venue` is asked for and the frame names one.
    fn line(&self, kind: &str, venue: bool) -> String {
        let venue = if venue {
            after_race(self.venue.as_deref())
        } else {
            String::new()
        };
        format!(
            "{kind} {} race {}{venue} seq {}",
            self.date, self.race_number, self.seq
        )
    }
}

/// A runner's prices in a frame: win, place or both.
#[derive(Debug, Deserialize)]
pub(super) struct Price {
    horse_no: String,
    #[serde(default)]
    win_odds: Option<f64>,
    #[serde(default)]
    place_odds: Option<f64>,
}

/// A race's result document, as far as the watcher shows it.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct ResultDoc {
    #[serde(default)]
    runners: Vec<Placed>,
}

/// One line of a result: placed runners by position, then the rest with their status.
#[derive(Debug, Clone, Deserialize)]
struct Placed {
    #[serde(default)]
    position: Option<i64>,
    horse_no: String,
    #[serde(default)]
    horse_name: String,
    #[serde(default)]
    jockey: String,
    #[serde(default)]
    finish_time: Option<String>,
    #[serde(default)]
    status: Option<String>,
}

/// One runner on the board.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Runner {
    pub(super) win: Option<f64>,
    pub(super) place: Option<f64>,
    /// The win price before the last move, if it moved.
    pub(super) before: Option<f64>,
}

/// What the watcher knows of one race.
#[derive(Debug, Clone, Default)]
pub(super) struct Race {
    pub(super) runners: BTreeMap<String, Runner>,
    /// Its status and the reason given, once one came.
    pub(super) status: Option<(String, Option<String>)>,
    pub(super) scratched: BTreeSet<String>,
}

/// The latest result that came, whichever race: it stays on screen below the board.
#[derive(Debug, Clone)]
struct Shown {
    race: u8,
    venue: Option<String>,
    result: ResultDoc,
}

/// What the watcher knows: per race, each runner's prices, its status and scratchings.
#[derive(Debug, Default)]
pub(super) struct Board {
    pub(super) date: String,
    pub(super) races: BTreeMap<u8, Race>,
    /// The race shown: the one asked for, else the one that moved last.
    pub(super) shown: Option<u8>,
    pub(super) seq: u64,
    /// Milliseconds from publication to arrival of the last move.
    pub(super) lag_ms: Option<i64>,
    /// The horses of the last move, highlighted.
    pub(super) moved: Vec<String>,
    result: Option<Shown>,
    /// The last retraction, for the foot of the board.
    notice: Option<String>,
}

impl Board {
    /// An empty board for the meeting of `date`.
    pub(super) fn new(date: &str) -> Board {
        Board {
            date: date.to_owned(),
            ..Board::default()
        }
    }

    /// Takes a frame in; `true` if it changed what is shown.
    pub(super) fn apply(&mut self, frame: &Frame, fixed: Option<u8>) -> bool {
        let n = match frame {
            Frame::Welcome { seq } | Frame::Heartbeat { seq } => {
                self.seq = self.seq.max(*seq);
                return false;
            }
            Frame::Error { .. } | Frame::ReplayEnd { .. } | Frame::Other => return false,
            Frame::Snapshot { at, .. }
            | Frame::Odds { at, .. }
            | Frame::Status { at, .. }
            | Frame::Scratching { at, .. }
            | Frame::Result { at, .. }
            | Frame::Retraction { at, .. } => {
                self.date.clone_from(&at.date);
                self.seq = self.seq.max(at.seq);
                at.race_number
            }
        };
        let race = self.races.entry(n).or_default();
        match frame {
            Frame::Snapshot {
                odds,
                status,
                status_reason,
                ..
            } => {
                race.runners.clear();
                for p in odds {
                    let runner = Runner {
                        win: p.win_odds,
                        place: p.place_odds,
                        before: None,
                    };
                    race.runners.insert(p.horse_no.clone(), runner);
                }
                if let Some(status) = status {
                    race.status = Some((status.clone(), status_reason.clone()));
                }
            }
            Frame::Odds {
                published_at, odds, ..
            } => {
                self.moved.clear();
                for p in odds {
                    let runner = race.runners.entry(p.horse_no.clone()).or_insert(Runner {
                        win: None,
                        place: None,
                        before: None,
                    });
                    // An entry gives the prices that moved; the other stays as it was.
                    if p.win_odds.is_some() {
                        runner.before = runner.win;
                        runner.win = p.win_odds;
                    }
                    runner.place = p.place_odds.or(runner.place);
                    self.moved.push(p.horse_no.clone());
                }
                // The whole gap in milliseconds: a `Span`'s milliseconds field alone would
                // drop the seconds.
                self.lag_ms = published_at
                    .parse::<jiff::Timestamp>()
                    .ok()
                    .map(|t| jiff::Timestamp::now().as_millisecond() - t.as_millisecond());
                // The race that moved last is the one shown, unless one was asked for.
                self.shown = fixed.or(Some(n));
                return true;
            }
            Frame::Status { status, reason, .. } => {
                race.status = Some((status.clone(), reason.clone()));
            }
            Frame::Scratching { horse_no, .. } => {
                race.scratched.insert(horse_no.clone());
            }
            Frame::Result { at, result } => {
                self.result = Some(Shown {
                    race: n,
                    venue: at.venue.clone(),
                    result: result.clone(),
                });
            }
            Frame::Retraction { at, reason } => {
                if self
                    .result
                    .as_ref()
                    .is_some_and(|r| r.race == n && r.venue == at.venue)
                {
                    self.result = None;
                }
                self.notice = Some(format!(
                    "race {n}{} retracted: {reason}",
                    after_race(at.venue.as_deref())
                ));
            }
            _ => {}
        }
        self.shown = fixed.or(self.shown).or(Some(n));
        true
    }

    /// One line for a frame, for a pipe or a file.
    pub(super) fn line(&self, frame: &Frame) -> Option<String> {
        Some(match frame {
            Frame::Snapshot { at, odds, .. } => {
                let status = self
                    .races
                    .get(&at.race_number)
                    .and_then(|r| r.status.as_ref())
                    .map_or(String::new(), |(s, why)| {
                        format!(" ({})", status_text(s, why.as_deref()))
                    });
                let head = at.line("snapshot", false);
                format!("{head}{status}: {}", prices(odds))
            }
            // A replay plays what was: each move at the time it happened, which for a past
            // race's moves, published into the log later, is not when they were stored.
            Frame::Odds {
                at,
                published_at,
                occurred_at,
                odds,
                replay: true,
            } => format!(
                "{} at {}: {}",
                at.line("replay", false),
                occurred_at.as_ref().unwrap_or(published_at),
                prices(odds)
            ),
            Frame::ReplayEnd {
                date,
                race_number,
                moves,
            } => format!(
                "replay_end {date} race {}: {}",
                race_number.map_or("all".to_owned(), |r| r.to_string()),
                crate::text::count(*moves, "move", "moves"),
            ),
            Frame::Odds { at, odds, .. } => format!(
                "{} lag {} ms: {}",
                at.line("odds", false),
                self.lag_ms.map_or("?".to_owned(), |l| l.to_string()),
                prices(odds)
            ),
            Frame::Status { at, status, reason } => format!(
                "{}: {}",
                at.line("status", false),
                status_text(status, reason.as_deref())
            ),
            Frame::Scratching { at, horse_no } => {
                format!("{}: ~~{horse_no}~~ scratched", at.line("scratching", false))
            }
            Frame::Result { at, result } => {
                let lines: Vec<String> = result.runners.iter().map(Placed::text).collect();
                format!("{}: {}", at.line("result", true), lines.join("; "))
            }
            Frame::Retraction { at, reason } => {
                format!("{}: {reason}", at.line("retraction", true))
            }
            Frame::Error { error, message } => format!("error {error}: {message}"),
            Frame::Welcome { .. } | Frame::Heartbeat { .. } | Frame::Other => return None,
        })
    }

    /// The board drawn for a terminal, `names` beside the horse numbers.
    pub(super) fn draw(&self, names: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        let Some(number) = self.shown else {
            out.push_str(&format!(
                "{}  waiting for prices…  seq {}\r\n",
                self.date, self.seq
            ));
            return out;
        };
        let race = self.races.get(&number).cloned().unwrap_or_default();
        let status = race.status.as_ref().map_or(String::new(), |(s, why)| {
            let text = status_text(&s.to_uppercase(), why.as_deref());
            match s.as_str() {
                "open" => format!("   {}", text.green().bold()),
                _ => format!("   {}", text.red().bold()),
            }
        });
        out.push_str(&format!(
            "{}  {} race {number}{status}   seq {}   lag {}\r\n\r\n",
            "racing watch".bold(),
            self.date,
            self.seq,
            self.lag_ms.map_or("-".to_owned(), |l| format!("{l} ms"))
        ));
        out.push_str(&format!(
            "  {:<7} {:<24} {:>8}   {:>7}\r\n",
            "HORSE", "NAME", "WIN", "PLACE"
        ));
        let mut by_price: Vec<(&String, &Runner)> = race
            .runners
            .iter()
            .filter(|(horse, _)| !race.scratched.contains(*horse))
            .collect();
        // Priced to win first, shortest first; then place-only runners.
        by_price.sort_by(|a, b| match (a.1.win, b.1.win) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (x, y) => y.is_some().cmp(&x.is_some()),
        });
        for (horse, runner) in by_price {
            let arrow = match (runner.win, runner.before) {
                (Some(w), Some(b)) if w < b => "▼",
                (Some(w), Some(b)) if w > b => "▲",
                _ => " ",
            };
            let name = names.get(horse).map_or("", String::as_str);
            let row = format!(
                "  {horse:<7} {name:<24} {:>8} {arrow} {:>7}",
                price(runner.win),
                price(runner.place)
            );
            if self.moved.contains(horse) {
                out.push_str(&format!("{}\r\n", row.yellow().bold()));
            } else {
                out.push_str(&format!("{row}\r\n"));
            }
        }
        for horse in &race.scratched {
            let name = names.get(horse).map_or("", String::as_str);
            let struck = format!("{horse:<7} {name:<24}");
            out.push_str(&format!(
                "  {} {:>8}\r\n",
                struck.crossed_out().dim(),
                "scratched"
            ));
        }
        if let Some(shown) = &self.result {
            out.push_str(&format!(
                "\r\n  {} race {}{}\r\n",
                "RESULT".bold(),
                shown.race,
                after_race(shown.venue.as_deref())
            ));
            for line in &shown.result.runners {
                out.push_str(&format!(
                    "  {:>4}  {:<7} {:<24} {:<18} {}\r\n",
                    line.position.map_or(String::new(), |p| p.to_string()),
                    line.horse_no,
                    line.horse_name,
                    line.jockey,
                    line.finish_time
                        .as_deref()
                        .or(line.status.as_deref())
                        .unwrap_or("")
                ));
            }
        }
        if let Some(notice) = &self.notice {
            out.push_str(&format!("\r\n  {}\r\n", notice.as_str().red()));
        }
        out.push_str("\r\n  Ctrl-C to leave\r\n");
        out
    }
}

impl Placed {
    /// `1 A1 NAME (jockey) 1:09.52`, or `E271 NAME WX` for a runner without a placing.
    fn text(&self) -> String {
        let name = if self.horse_name.is_empty() {
            String::new()
        } else {
            format!(" {}", self.horse_name)
        };
        match self.position {
            Some(p) => format!(
                "{p} {}{name} ({}) {}",
                self.horse_no,
                self.jockey,
                self.finish_time.as_deref().unwrap_or("-")
            ),
            None => format!(
                "{}{name} {}",
                self.horse_no,
                self.status.as_deref().unwrap_or("-")
            ),
        }
    }
}

/// `A1 3.5 place 1.5, B2 8`: each runner's win price, and its place price where given.
fn prices(odds: &[Price]) -> String {
    odds.iter()
        .map(|p| {
            let mut text = p.horse_no.clone();
            if let Some(win) = p.win_odds {
                text.push_str(&format!(" {win}"));
            }
            if let Some(place) = p.place_odds {
                text.push_str(&format!(" place {place}"));
            }
            text
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A price in a board column, `-` where there is none.
fn price(odds: Option<f64>) -> String {
    odds.map_or("-".to_owned(), |o| format!("{o:.1}"))
}

/// `suspended (E271 withdrawn: lame)`, or the status alone.
fn status_text(status: &str, reason: Option<&str>) -> String {
    match reason {
        Some(why) => format!("{status} ({why})"),
        None => status.to_owned(),
    }
}

/// ` (Sha Tin)` after a race number, where the frame names the venue.
fn after_race(venue: Option<&str>) -> String {
    venue.map_or(String::new(), |v| format!(" ({v})"))
}
