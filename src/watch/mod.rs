//! `racing watch`: a live race-day client in the terminal. It subscribes over the
//! WebSocket like any client and shows a race's runners with their win and place prices
//! updating in place, the last move highlighted, the race's status, its scratched runners
//! struck out and the latest result, with the stream sequence and how long each update
//! took to arrive. When standard output is not a terminal it writes one line per frame
//! instead.

mod board;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::Args;
use futures::{SinkExt as _, StreamExt as _};
use serde::Deserialize;
use tokio_tungstenite::tungstenite::Message;

use board::{Board, Frame};

/// The socket's topics the watcher subscribes to: all but the cards, which it reads once.
const TOPICS: [&str; 4] = ["odds", "status", "scratchings", "results"];

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
    /// times as fast as their prices were given (`occurred_at`), one line each, and end
    /// with the replay.
    #[arg(long, value_name = "SPEED", conflicts_with = "since")]
    pub replay: Option<f64>,
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

/// The `subscribe` frame: the date, the race and `since` where given, and with `topics`
/// the race day's topics beside the odds.
fn subscribe(args: &WatchArgs, date: &str, topics: bool) -> Message {
    if let Some(speed) = args.replay {
        let mut replay = serde_json::json!({"type": "replay", "date": date, "speed": speed});
        if let Some(race) = args.race {
            replay["race_number"] = race.into();
        }
        return Message::Text(replay.to_string().into());
    }
    let mut subscribe = serde_json::json!({"type": "subscribe", "date": date});
    if let Some(race) = args.race {
        subscribe["race_number"] = race.into();
    }
    if let Some(since) = args.since {
        subscribe["since"] = since.into();
    }
    if topics {
        subscribe["topics"] = TOPICS.as_slice().into();
    }
    Message::Text(subscribe.to_string().into())
}

/// Whether `frame` is a service's refusal of the `topics` field: one that predates them
/// reads it as an unknown field of `subscribe`.
fn refuses_topics(frame: &Frame) -> bool {
    matches!(frame, Frame::Error { error, message } if error == "bad_request" && message.contains("topics"))
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
    let mut topics = args.replay.is_none();
    tx.send(subscribe(&args, &date, topics)).await?;

    // A replay is a list of what was, to read or keep, not a board to watch.
    let terminal = args.replay.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let names = if terminal {
        names(&args, &date).await
    } else {
        BTreeMap::new()
    };
    let mut board = Board::new(&date);
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
            if topics && refuses_topics(&frame) {
                // A service older than the topics knows odds alone: watch those.
                eprintln!("the service has no topics: showing prices only");
                topics = false;
                tx.send(subscribe(&args, &date, topics)).await?;
                continue;
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
mod tests;
