//! Pages of the log's history, read from what the store keeps: a race's odds moves from
//! the odds journal, and the documents each batch changed from the change feed. Each page
//! says where the next one starts, so a client walks the whole history a page at a time.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::store::{odds_moves_in, Store};
use crate::StoreError;

/// Moves read from the journal at a time while a page is filled.
const CHUNK: usize = 256;

/// A page of a race's odds history: the moves after a point of the log, oldest first.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = OddsHistory, examples(json!({
    "date": "2026-11-21", "race_number": 1,
    "moves": [
        {"seq": 2702, "published_at": "2026-11-21T04:10:02.113Z", "venue": "Sha Tin",
         "odds": [{"horse_no": "CA206", "win_odds": 2.4}, {"horse_no": "E271", "win_odds": 3.1}]},
        {"seq": 2770, "published_at": "2026-11-21T04:11:40.561Z", "venue": "Sha Tin",
         "odds": [{"horse_no": "CA206", "win_odds": 2.1}]}
    ],
    "next": 2770
}))))]
pub struct OddsHistory<'a> {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    date: &'a str,
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    race_number: u8,
    /// The race's odds updates after `since`, in ascending `seq`, each as the live
    /// channel sent it.
    moves: Vec<PastMove>,
    /// The `seq` to pass as `since` for the following page; `null` at the end.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    next: Option<u64>,
}

/// One odds update of a race, as it went live.
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = OddsMove))]
pub struct PastMove {
    /// Its stream sequence: a WebSocket `subscribe` with this `since` resumes after it.
    seq: u64,
    /// When JetStream stored it, RFC 3339 in UTC.
    published_at: String,
    /// The racecourse the feeder gave it for; `null` for odds given without a venue (for
    /// the race of that number at every venue).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    venue: Option<String>,
    /// The runners it priced, as the feeder gave them (a move may price only some).
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Vec<crate::docs::RunnerOddsDoc<'static>>)
    )]
    odds: Box<RawValue>,
}

/// A page of the change feed, as [`Store::change_page`] reads it.
pub struct ChangePage {
    /// Each changed document's key ([`crate::DocKey::parse`] reads it) with the sequence
    /// its batch reached.
    pub rows: Vec<(u64, Vec<u8>)>,
    /// Where the following page starts: the page's last sequence, or `None` when nothing
    /// follows it yet.
    pub next: Option<u64>,
}

impl Store {
    /// A page of the odds history of race `race_number` of `date`: at most `limit` moves
    /// after stream sequence `after`, oldest first, as JSON ([`OddsHistory`]). With a
    /// `venue`, that venue's moves and those given without one (which price the race at
    /// every venue), as the race's odds document merges them; without, every move of the
    /// race number. `None` when the race has no moves at all.
    pub fn odds_history(
        &self,
        date: &str,
        race_number: u8,
        venue: Option<&str>,
        after: u64,
        limit: usize,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let mut moves =
            self.past_moves(date, race_number, venue, after, limit.saturating_add(1))?;
        if moves.is_empty()
            && (after == 0 || self.past_moves(date, race_number, venue, 0, 1)?.is_empty())
        {
            return Ok(None);
        }
        let next = if moves.len() > limit {
            moves.truncate(limit);
            moves.last().map(|m| m.seq)
        } else {
            None
        };
        let page = OddsHistory {
            date,
            race_number,
            moves,
            next,
        };
        Ok(Some(serde_json::to_vec(&page).map_err(|e| {
            StoreError::Corrupt(format!("an odds history page: {e}"))
        })?))
    }

    /// Up to `limit` moves of the race after `after` that price it at `venue`.
    fn past_moves(
        &self,
        date: &str,
        race_number: u8,
        venue: Option<&str>,
        mut after: u64,
        limit: usize,
    ) -> Result<Vec<PastMove>, StoreError> {
        let mut out = Vec::new();
        while out.len() < limit {
            let chunk = odds_moves_in(&self.tree, date, after, Some(race_number), CHUNK)?;
            let Some(last) = chunk.last() else {
                break;
            };
            after = last.seq;
            let end = chunk.len() < CHUNK;
            for m in chunk {
                let past: PastMove = serde_json::from_slice(&m.body)
                    .map_err(|e| StoreError::Corrupt(format!("an odds journal entry: {e}")))?;
                let prices_it = match (venue, past.venue.as_deref()) {
                    (Some(wanted), Some(given)) => wanted == given,
                    _ => true,
                };
                if prices_it && out.len() < limit {
                    out.push(past);
                }
            }
            if end {
                break;
            }
        }
        Ok(out)
    }

    /// A page of the change feed: the documents changed after stream sequence `after`,
    /// in sequence order, about `limit` of them ([`Store::changes`]: a page never ends
    /// inside one sequence's rows).
    pub fn change_page(&self, after: u64, limit: usize) -> Result<ChangePage, StoreError> {
        let rows = self.changes(after, limit)?;
        let next = match rows.last() {
            Some(&(last, _)) if !self.changes(last, 1)?.is_empty() => Some(last),
            _ => None,
        };
        Ok(ChangePage { rows, next })
    }
}
