//! Pages of a race's odds history, read from the race's own chunks of the odds journal.
//! Each page says where the next one starts, so a client walks the whole history a page
//! at a time. (The change feed's pages are `feed.rs`'s.)

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::journal;
use crate::kv::StoreError;
use crate::store::Store;

/// A page of a race's odds history: the moves after a point of the log, oldest first.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = OddsHistory, examples(json!({
    "date": "2026-11-21", "race_number": 1,
    "moves": [
        {"seq": 2702, "published_at": "2026-11-21T04:10:02.113Z",
         "occurred_at": "2026-11-21T04:10:02.000Z", "venue": "Sha Tin",
         "odds": [{"horse_no": "CA206", "win_odds": 2.4}, {"horse_no": "E271", "win_odds": 3.1}],
         "market": {"win_book_pct": 73.92, "favourites": ["CA206"]}},
        {"seq": 2770, "published_at": "2026-11-21T04:11:40.561Z",
         "occurred_at": "2026-11-21T04:11:40.000Z", "venue": "Sha Tin",
         "odds": [{"horse_no": "CA206", "win_odds": 2.1}],
         "market": {"win_book_pct": 79.88, "favourites": ["CA206"]}}
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
    /// When JetStream stored it, in UTC to the millisecond: when it was published, which for moves
    /// a feeder published late (a past race's, say) is not when they happened.
    #[cfg_attr(
        feature = "openapi",
        schema(format = DateTime)
    )]
    published_at: String,
    /// When the prices were given at their source: the event's `occurred_at`, in UTC to
    /// the millisecond whatever offset the feeder wrote.
    // Every move the journal keeps has it; a store whose journal an earlier version wrote
    // answers its moves without it, until rebuilt, rather than fail the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(required = true, nullable = false, format = DateTime)
    )]
    occurred_at: Option<String>,
    /// The racecourse the feeder gave it for; `null` for odds given without a venue (for
    /// the race of that number at every venue).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    venue: Option<String>,
    /// The runners it priced, as the feeder gave them (a move may price only some).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::docs::odds::RunnerPriceDoc>))]
    odds: Box<RawValue>,
    /// The book of the race's prices after the move: `{win_book_pct, place_book_pct,
    /// favourites}`.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::market::Book))]
    market: Box<RawValue>,
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

    /// Up to `limit` moves of the race after `after` that price it at `venue`: read from
    /// the race's own chunks of the journal, up to the chunk of the last one.
    fn past_moves(
        &self,
        date: &str,
        race_number: u8,
        venue: Option<&str>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<PastMove>, StoreError> {
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        let mut failed = None;
        journal::each_move(
            &self.kv,
            self.reads(),
            date,
            after,
            Some(race_number),
            |m| match serde_json::from_slice::<PastMove>(&m.body) {
                Ok(past) => {
                    let prices_it = match (venue, past.venue.as_deref()) {
                        (Some(wanted), Some(given)) => wanted == given,
                        _ => true,
                    };
                    if prices_it {
                        out.push(past);
                    }
                    out.len() < limit
                }
                Err(e) => {
                    failed = Some(StoreError::Corrupt(format!("an odds journal entry: {e}")));
                    false
                }
            },
        )?;
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}
