//! The results documents: a date's results and each race's, per venue and for the day's
//! main meeting, rendered from the date's results as the source records hold them.

use std::collections::{BTreeMap, BTreeSet};

use racing_events::RaceResult;

use crate::doc_writes::{ByVenue, Stale};
use crate::docs;
use crate::docs::meeting::Meeting;
use crate::facts::{Change, Day, Facts, What};
use crate::keys;
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::race_parts::{self, Parts};
use crate::state::{decode, race_no, Records, State};

/// The dates whose results a batch changed.
#[derive(Debug, Default)]
pub(crate) struct Results {
    dates: BTreeSet<String>,
    stale: Stale,
    /// Each race's part of the results last rendered (`race_parts.rs`).
    parts: Parts,
}

impl Results {
    /// A model for a batch that starts where the one that kept `parts` ended
    /// ([`crate::fold::Kept`]).
    pub(crate) fn resumed(parts: Parts) -> Results {
        Results {
            parts,
            ..Results::default()
        }
    }

    /// The races' parts it rendered, for the next batch of its store.
    pub(crate) fn keep(self) -> Parts {
        self.parts
    }
}

impl ReadModel for Results {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        match &change.what {
            What::Result { new, .. } => {
                self.dates.insert(new.date.clone());
                // The race's part, rendered from the result as the event gives it: its
                // record is the result encoded (`facts.rs`), which decodes back to it, so
                // that the render finds the part kept rather than decode the record.
                let (date, n, venue) = (&new.date, race_no(new.race_number)?, &new.venue);
                if let Some(stored) = s.get(&keys::result(date, n, venue))? {
                    let sources = race_parts::hash([Some(&stored[..])]);
                    let render = || Ok(Some(docs::results::result_race(new).into()));
                    self.parts.of((date, n, venue), sources, render)?;
                }
            }
            What::Retracted(r) if r.resulted => {
                self.dates.insert(r.date.to_owned());
                let date = r.date;
                for venue in [Some(r.venue), None] {
                    self.stale.note(DocKey::Results { date, venue });
                    self.stale.note(DocKey::Race {
                        date,
                        race_number: r.race_number,
                        venue,
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn render<S: State>(&mut self, s: &mut S, seq: u64, _: &Facts) -> Result<(), StoreError> {
        let mut out = self.stale.rendering(seq);
        for date in std::mem::take(&mut self.dates) {
            let rendered = results_of(s, &date, &mut self.parts)?;
            out.put_venues(s, &rendered.days, |venue| {
                DocKey::Results { date: &date, venue }.key()
            })?;
            let mut races: BTreeMap<u8, ByVenue> = BTreeMap::new();
            for (race_number, venue, bytes) in rendered.races {
                races.entry(race_number).or_default().push((venue, bytes));
            }
            for (&race_number, docs) in &races {
                out.put_venues(s, docs, |venue| {
                    DocKey::Race {
                        date: &date,
                        race_number,
                        venue,
                    }
                    .key()
                })?;
            }
        }
        out.finish(s);
        Ok(())
    }
}

/// The results documents of `date`: of the day and of each race, per venue and for the
/// day's main meeting, from its results as `s` holds them; each race's part from `parts`
/// where its result is the one it was rendered from.
pub(crate) fn results_of(
    s: &impl Records,
    date: &str,
    parts: &mut Parts,
) -> Result<docs::meeting::Rendered, StoreError> {
    let day = Day::read(s, date)?;
    let mut meetings = Vec::with_capacity(day.results.len());
    for (venue, races) in &day.results {
        let mut list = Vec::with_capacity(races.len());
        for &n in races {
            let Some(result) = s.get(&keys::result(date, n, venue))? else {
                continue;
            };
            let render = || {
                let what = || format!("result of race {n} of {date} at {venue}");
                Ok(decode::<RaceResult>(Some(&result), what)?
                    .map(|r| docs::results::result_race(&r).into()))
            };
            if let Some(part) = parts.of(
                (date, n, venue),
                race_parts::hash([Some(&result[..])]),
                render,
            )? {
                list.push((n, part));
            }
        }
        meetings.push(Meeting {
            venue: venue.clone(),
            races: list,
        });
    }
    Ok(docs::results::render_results(date, &meetings))
}
