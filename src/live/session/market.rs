//! The `market` topic: a race's market at most once a second while its prices move. A
//! price move or a scratching of a followed race marks the race due; at most once a second the session
//! sends each due race's market as it stands then, read from its current odds document.
//! So the frames are conflated by construction: however fast prices move, a client is
//! sent one frame a race a second, and nothing waits for it but the set of due races.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::time::Instant;

use super::end::End;
use super::Session;
use crate::live::frames::{Market, MarketFrame, MarketType, RunnerMarket};

/// The least time between two sends of the markets due.
pub(super) const MARKET_EVERY: Duration = Duration::from_secs(1);

/// The races whose market is due, when they may go out, and when the last went out.
#[derive(Default)]
pub(super) struct MarketDue {
    races: BTreeSet<(Arc<str>, u8)>,
    at: Option<Instant>,
    last: Option<Instant>,
}

impl MarketDue {
    /// When the races due may go out: `None` while none is.
    pub(super) fn at(&self) -> Option<Instant> {
        self.at
    }
}

/// The part of an odds document a market frame carries.
#[derive(Deserialize)]
struct OddsDoc {
    date: String,
    venue: Option<String>,
    race_number: u8,
    seq: u64,
    odds: Vec<RunnerMarket>,
    market: Market,
}

/// The `market` frame of one stored odds document.
fn market_frame(doc: &[u8]) -> Result<String, racing_projections::StoreError> {
    let corrupt = |e: serde_json::Error| racing_projections::StoreError::Corrupt(e.to_string());
    let doc: OddsDoc = serde_json::from_slice(doc).map_err(corrupt)?;
    serde_json::to_string(&MarketFrame {
        r#type: MarketType,
        date: doc.date,
        venue: doc.venue,
        race_number: doc.race_number,
        seq: doc.seq,
        market: doc.market,
        odds: doc.odds,
    })
    .map_err(corrupt)
}

impl Session<'_> {
    /// Notes a price move of race `race_number` of `date`, if its market is followed.
    pub(super) fn market_moved(&mut self, date: &Arc<str>, race_number: u8) {
        let followed = self
            .targets
            .as_ref()
            .is_some_and(|t| t.follows_market(date, race_number));
        if followed && !self.market.races.contains(&(date.clone(), race_number)) {
            self.market.races.insert((date.clone(), race_number));
            if self.market.at.is_none() {
                let now = Instant::now();
                let next = self
                    .market
                    .last
                    .map_or(now, |last| (last + MARKET_EVERY).max(now));
                self.market.at = Some(next);
            }
        }
    }

    /// Sends the market of every race due, one frame for each venue that runs it, as its
    /// odds documents stand now.
    pub(super) async fn send_markets(&mut self) -> Result<(), End> {
        let due: Vec<(Arc<str>, u8)> = std::mem::take(&mut self.market.races).into_iter().collect();
        self.market.last = Some(Instant::now());
        self.market.at = None;
        let frames = self
            .read(move |store| {
                let mut frames = Vec::new();
                for (date, race_number) in due {
                    for doc in store.odds_docs(&date, race_number)? {
                        frames.push(market_frame(&doc)?);
                    }
                }
                Ok(frames)
            })
            .await?;
        for frame in frames {
            self.send(frame.into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_market_frame_is_the_documents_market_and_runners() {
        let doc = br#"{"date":"2026-11-21","venue":"Sha Tin","race_number":2,"seq":9,"status":"open","status_at":"2026-11-21T04:05:00Z","odds":[{"horse_no":"A1","win_odds":2.0,"win_prob":0.5,"first_win_odds":2.5,"win_move_pct":-20.0}],"market":{"clock":"2026-11-21T04:20:00Z","win_book_pct":50.0,"favourites":["A1"],"steamers":[],"drifters":[]}}"#;
        let frame = market_frame(doc).expect("frame");
        assert_eq!(
            frame,
            r#"{"type":"market","date":"2026-11-21","venue":"Sha Tin","race_number":2,"seq":9,"market":{"clock":"2026-11-21T04:20:00Z","win_book_pct":50.0,"favourites":["A1"],"steamers":[],"drifters":[]},"odds":[{"horse_no":"A1","win_odds":2.0,"win_prob":0.5,"first_win_odds":2.5,"win_move_pct":-20.0}]}"#
        );
    }
}
