//! `racing watch`: a live odds client in the terminal. It subscribes over the WebSocket
//! like any client and shows a race's runners and prices updating in place, the last move
//! highlighted, with the stream sequence and how long each update took to arrive. When
//! standard output is not a terminal it writes one line per frame instead. With
//! `--replay` it plays back the moves recorded for a meeting or a race instead, one line
//! each, and ends with the replay.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::Args;
use crossterm::style::Stylize as _;
use futures::{SinkExt as _, StreamExt as _};
use serde::Deserialize;
use tokio_tungstenite::tungstenite::Message;

/// Flags of `racing watch`.
#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// The service's address.
    #[arg(long, env = "RACING_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// An API key (the demo prints one).
    #[arg(long, env = "RACING_API_KEY", hide_env_values = true)]
    pub key: String,
    /// Meeting date, YYYY-MM-DD; default today in Hong Kong.
    #[arg(long)]
    pub date: Option<String>,
    /// Race to show; default whichever race of the meeting prices last moved in.
    #[arg(long)]
    pub race: Option<u8>,
    /// Resume after this stream sequence (from an earlier run, or the `seq` of
    /// `/api/v1/odds/{date}/{race}`): every move after it is shown, none twice.
    #[arg(long)]
    pub since: Option<u64>,
    /// Play back the moves recorded for the date (or `--race`) at this speed, 1 to 100
    /// times as fast as they went live, one line each, and end with the replay.
    #[arg(long, value_name = "SPEED", conflicts_with = "since")]
    pub replay: Option<f64>,
}

/// A frame of the live odds protocol, as far as the watcher reads it.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Frame {
    Welcome {
        seq: u64,
    },
    Snapshot {
        date: String,
        race_number: u8,
        seq: u64,
        odds: Vec<Price>,
    },
    Odds {
        date: String,
        race_number: u8,
        seq: u64,
        published_at: String,
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

#[derive(Debug, Deserialize)]
struct Price {
    horse_no: String,
    win_odds: f64,
}

/// One runner on the board.
#[derive(Debug, Clone, PartialEq)]
struct Runner {
    odds: f64,
    /// The price before the last move, if it moved.
    before: Option<f64>,
}

/// What the watcher knows: per race, each runner's price.
#[derive(Debug, Default)]
struct Board {
    date: String,
    races: BTreeMap<u8, BTreeMap<String, Runner>>,
    /// The race shown: the one asked for, else the one that moved last.
    shown: Option<u8>,
    seq: u64,
    /// Milliseconds from publication to arrival of the last move.
    lag_ms: Option<i64>,
    /// The horses of the last move, highlighted.
    moved: Vec<String>,
}

impl Board {
    /// Takes a frame in; `true` if it changed what is shown.
    fn apply(&mut self, frame: &Frame, fixed: Option<u8>) -> bool {
        match frame {
            Frame::Welcome { seq } | Frame::Heartbeat { seq } => {
                self.seq = self.seq.max(*seq);
                false
            }
            Frame::Snapshot {
                date,
                race_number,
                seq,
                odds,
            } => {
                self.date.clone_from(date);
                let race = self.races.entry(*race_number).or_default();
                race.clear();
                for p in odds {
                    race.insert(
                        p.horse_no.clone(),
                        Runner {
                            odds: p.win_odds,
                            before: None,
                        },
                    );
                }
                self.seq = self.seq.max(*seq);
                self.shown = fixed.or(self.shown).or(Some(*race_number));
                true
            }
            Frame::Odds {
                date,
                race_number,
                seq,
                published_at,
                odds,
                ..
            } => {
                self.date.clone_from(date);
                let race = self.races.entry(*race_number).or_default();
                self.moved.clear();
                for p in odds {
                    let before = race.get(&p.horse_no).map(|r| r.odds);
                    race.insert(
                        p.horse_no.clone(),
                        Runner {
                            odds: p.win_odds,
                            before,
                        },
                    );
                    self.moved.push(p.horse_no.clone());
                }
                self.seq = *seq;
                self.lag_ms = published_at
                    .parse::<jiff::Timestamp>()
                    .ok()
                    .map(|t| (jiff::Timestamp::now() - t).get_milliseconds());
                self.shown = fixed.or(Some(*race_number));
                true
            }
            Frame::Error { .. } | Frame::ReplayEnd { .. } | Frame::Other => false,
        }
    }

    /// One line for a frame, for a pipe or a file.
    fn line(&self, frame: &Frame) -> Option<String> {
        let prices = |odds: &[Price]| {
            odds.iter()
                .map(|p| format!("{} {}", p.horse_no, p.win_odds))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match frame {
            Frame::Snapshot {
                date,
                race_number,
                seq,
                odds,
            } => Some(format!(
                "snapshot {date} race {race_number} seq {seq}: {}",
                prices(odds)
            )),
            Frame::Odds {
                date,
                race_number,
                seq,
                published_at,
                odds,
                replay: true,
            } => Some(format!(
                "replay {date} race {race_number} seq {seq} at {published_at}: {}",
                prices(odds)
            )),
            Frame::Odds {
                date,
                race_number,
                seq,
                odds,
                ..
            } => Some(format!(
                "odds {date} race {race_number} seq {seq} lag {} ms: {}",
                self.lag_ms.map_or("?".to_owned(), |l| l.to_string()),
                prices(odds)
            )),
            Frame::ReplayEnd {
                date,
                race_number,
                moves,
            } => Some(format!(
                "replay_end {date} race {}: {}",
                race_number.map_or("all".to_owned(), |r| r.to_string()),
                crate::text::count(*moves, "move", "moves"),
            )),
            Frame::Error { error, message } => Some(format!("error {error}: {message}")),
            _ => None,
        }
    }

    /// The board drawn for a terminal, `names` beside the horse numbers.
    fn draw(&self, names: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        let Some(race) = self.shown else {
            out.push_str(&format!(
                "{}  waiting for prices…  seq {}\r\n",
                self.date, self.seq
            ));
            return out;
        };
        out.push_str(&format!(
            "{}  {} race {race}   seq {}   lag {}\r\n\r\n",
            "racing watch".bold(),
            self.date,
            self.seq,
            self.lag_ms.map_or("-".to_owned(), |l| format!("{l} ms"))
        ));
        out.push_str(&format!("  {:<7} {:<24} {:>8}\r\n", "HORSE", "NAME", "WIN"));
        let runners = self.races.get(&race).cloned().unwrap_or_default();
        let mut by_price: Vec<(&String, &Runner)> = runners.iter().collect();
        by_price.sort_by(|a, b| a.1.odds.total_cmp(&b.1.odds));
        for (horse, runner) in by_price {
            let arrow = match runner.before {
                Some(b) if runner.odds < b => "▼",
                Some(b) if runner.odds > b => "▲",
                _ => " ",
            };
            let name = names.get(horse).map_or("", String::as_str);
            let row = format!("  {horse:<7} {name:<24} {:>8.1} {arrow}", runner.odds);
            if self.moved.contains(horse) {
                out.push_str(&format!("{}\r\n", row.yellow().bold()));
            } else {
                out.push_str(&format!("{row}\r\n"));
            }
        }
        out.push_str("\r\n  Ctrl-C to leave\r\n");
        out
    }
}

/// The horse names of a meeting's cards, for the board; none if there is no card.
async fn names(args: &WatchArgs, date: &str) -> BTreeMap<String, String> {
    #[derive(Deserialize)]
    struct Card {
        races: Vec<CardRace>,
    }
    #[derive(Deserialize)]
    struct CardRace {
        runners: Vec<CardRunner>,
    }
    #[derive(Deserialize)]
    struct CardRunner {
        horse_no: String,
        horse_name: String,
    }
    let url = format!("{}/api/v1/racecards/{date}", args.url.trim_end_matches('/'));
    let card: Option<Card> = async {
        let res = reqwest::Client::new()
            .get(url)
            .header("X-API-Key", &args.key)
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .ok()?;
        res.json().await.ok()
    }
    .await;
    card.into_iter()
        .flat_map(|c| c.races)
        .flat_map(|r| r.runners)
        .map(|r| (r.horse_no, r.horse_name))
        .collect()
}

/// Runs the watcher until the connection ends or Ctrl-C.
pub async fn run(args: WatchArgs) -> anyhow::Result<()> {
    let date = match &args.date {
        Some(d) if racing_events::Date::parse(d).is_some() => d.clone(),
        Some(d) => bail!("--date `{d}` is not a YYYY-MM-DD calendar date"),
        None => {
            let hk = jiff::tz::TimeZone::get("Asia/Hong_Kong")?;
            jiff::Timestamp::now().to_zoned(hk).date().to_string()
        }
    };
    let ws = format!(
        "{}/ws/live/odds",
        args.url.trim_end_matches('/').replacen("http", "ws", 1)
    );
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(ws.as_str())
            .context("the service's address")?;
    request.headers_mut().insert(
        "X-API-Key",
        args.key.parse().context("the key is not a header value")?,
    );
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| match e {
            tokio_tungstenite::tungstenite::Error::Http(r) => {
                anyhow::anyhow!("the service refused the connection: HTTP {}", r.status())
            }
            e => anyhow::anyhow!("connecting to {ws}: {e}"),
        })?;
    let (mut tx, mut rx) = socket.split();
    let mut request = match args.replay {
        Some(speed) => serde_json::json!({"type": "replay", "date": date, "speed": speed}),
        None => serde_json::json!({"type": "subscribe", "date": date}),
    };
    if let Some(race) = args.race {
        request["race_number"] = race.into();
    }
    if let Some(since) = args.since {
        request["since"] = since.into();
    }
    tx.send(Message::Text(request.to_string().into())).await?;

    // A replay is a list of what was, to read or keep, not a board to watch.
    let terminal = args.replay.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let names = if terminal {
        names(&args, &date).await
    } else {
        BTreeMap::new()
    };
    let mut board = Board {
        date: date.clone(),
        ..Board::default()
    };
    let mut out = std::io::stdout();
    if terminal {
        crossterm::execute!(
            out,
            crossterm::terminal::EnterAlternateScreen,
            crossterm::cursor::Hide
        )?;
    }
    let result = async {
        loop {
            let message = tokio::select! {
                m = rx.next() => m,
                _ = tokio::signal::ctrl_c() => return Ok(()),
            };
            let text = match message {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(frame))) => {
                    let why =
                        frame.map_or(String::new(), |f| format!(" ({} {})", f.code, f.reason));
                    bail!("the service closed the connection{why}");
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => bail!("the connection broke: {e}"),
                None => bail!("the connection ended"),
            };
            let Ok(frame) = serde_json::from_str::<Frame>(&text) else {
                continue;
            };
            if args.replay.is_some() {
                if let Frame::Error { error, message } = &frame {
                    bail!("the service refused the replay: {error}: {message}");
                }
            }
            let changed = board.apply(&frame, args.race);
            if terminal {
                if changed {
                    crossterm::queue!(
                        out,
                        crossterm::cursor::MoveTo(0, 0),
                        crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
                    )?;
                    write!(out, "{}", board.draw(&names))?;
                    out.flush()?;
                }
            } else if let Some(line) = board.line(&frame) {
                // A reader that went away (`| head`) ends the watch, quietly.
                match writeln!(out, "{line}").and_then(|()| out.flush()) {
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                    other => other?,
                }
            }
            if matches!(frame, Frame::ReplayEnd { .. }) {
                return Ok(());
            }
        }
    }
    .await;
    if terminal {
        let _ = crossterm::execute!(
            out,
            crossterm::cursor::Show,
            crossterm::terminal::LeaveAlternateScreen
        );
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(text: &str) -> Frame {
        serde_json::from_str(text).expect("a frame")
    }

    #[test]
    fn a_move_updates_the_board_and_marks_what_moved() {
        let mut board = Board::default();
        assert!(board.apply(
            &frame(r#"{"type":"snapshot","date":"2026-11-23","race_number":3,"seq":10,"odds":[{"horse_no":"A1","win_odds":4.0},{"horse_no":"B2","win_odds":9.5}]}"#),
            None
        ));
        let odds = frame(
            r#"{"type":"odds","date":"2026-11-23","race_number":3,"seq":11,"published_at":"2026-11-23T05:00:00Z","odds":[{"horse_no":"B2","win_odds":7.0}]}"#,
        );
        assert!(board.apply(&odds, None));
        assert_eq!(board.seq, 11);
        assert_eq!(board.shown, Some(3));
        assert_eq!(board.moved, ["B2"]);
        let b2 = &board.races[&3]["B2"];
        assert_eq!((b2.odds, b2.before), (7.0, Some(9.5)));
        let drawn = board.draw(&BTreeMap::new());
        assert!(drawn.contains("race 3") && drawn.contains("▼"), "{drawn}");
        let line = board.line(&odds).expect("a line");
        assert!(
            line.starts_with("odds 2026-11-23 race 3 seq 11 lag"),
            "{line}"
        );
        assert!(line.ends_with("B2 7"), "{line}");
        assert!(!board.apply(&frame(r#"{"type":"heartbeat","seq":12}"#), None));
        assert_eq!(board.seq, 12);
    }

    #[test]
    fn a_replay_prints_each_recorded_move_then_how_many_there_were() {
        let mut board = Board::default();
        let moved = frame(
            r#"{"type":"odds","replay":true,"date":"2026-11-21","venue":"Sha Tin","race_number":1,"seq":2771,"published_at":"2026-11-21T05:55:52Z","odds":[{"horse_no":"A1","win_odds":4.5}]}"#,
        );
        board.apply(&moved, Some(1));
        assert_eq!(
            board.line(&moved).as_deref(),
            Some("replay 2026-11-21 race 1 seq 2771 at 2026-11-21T05:55:52Z: A1 4.5")
        );
        let end = |moves: u64| {
            frame(&format!(
                r#"{{"type":"replay_end","date":"2026-11-21","race_number":null,"moves":{moves},"stopped":false}}"#
            ))
        };
        assert_eq!(
            board.line(&end(1)).as_deref(),
            Some("replay_end 2026-11-21 race all: 1 move")
        );
        assert_eq!(
            board.line(&end(0)).as_deref(),
            Some("replay_end 2026-11-21 race all: 0 moves")
        );
    }
}
