//! The current odds documents: each race's odds per venue that runs it, merged with those
//! given for every venue, and the one without a venue, rendered from the odds the source
//! records hold: those the batch holds (`facts.rs`, which writes their records when the
//! batch ends), the others' records.
//!
//! A venue's race has a document where anything is known of it (a card, a result or odds
//! of its own) and there are odds for it: its own merged with those given for every venue.
//! The race without a venue is the day's main meeting's (the venue with the most races,
//! ties alphabetical) where that one runs it, else the first venue's that does; where no
//! venue of the race is known, it is the odds given for every venue, with `venue` null.
//!
//! A runner scratched from the race (for its venue or for every venue) keeps its last
//! prices, marked `scratched`, and the market leaves it out: a scratching renders the
//! race's documents again at its own position, after the price moves before it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use racing_events::Event;

use crate::doc_writes::{ByVenue, Stale};
use crate::docs;
use crate::facts::{scratched, Change, Day, DayShape, Facts, Listing, RacesOdds, What};
use crate::keys;
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::state::{race_no, read, RaceOdds, Records, State};
use crate::status;

/// A price move not rendered yet: its venue (`None`: every venue) and its position.
type Move = (Option<String>, u64);

/// The races whose odds documents a batch touched, by date.
///
/// A price move that changes nothing but its race's prices (the race and venue had
/// prices before it) is rendered with the moves after it, at the next event that is not
/// one ([`Odds::render_moves`]), each document at the position of the last move that
/// changed it and listed in the change feed at each: a document's `seq` is its latest
/// move's, so each move that reaches it changes it. That is what rendering at each move
/// would write, without rendering each: a race's prices move thousands of times.
#[derive(Debug, Default)]
pub(crate) struct Odds {
    /// Races to render at this event.
    races: BTreeMap<String, BTreeSet<u8>>,
    /// Price moves not rendered yet, by date and race.
    moves: BTreeMap<(String, u8), Vec<Move>>,
    /// Dates whose venues, races or statuses changed: every odds document of theirs is
    /// rendered again (their `meetings`, and which venue answers without one).
    whole_days: BTreeSet<String>,
    stale: Stale,
}

impl ReadModel for Odds {
    fn apply<S: State>(&mut self, _: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        if let What::Odds(o) = &change.what {
            if change.listing == Listing::Unchanged && !change.status_changed {
                let race = (o.date.clone(), race_no(o.race_number)?);
                self.moves
                    .entry(race)
                    .or_default()
                    .push((o.venue.clone(), change.seq));
                return Ok(());
            }
        }
        if let What::Retracted(r) = &change.what {
            if change.listing != Listing::Unchanged {
                for venue in [Some(r.venue), None] {
                    self.stale.note(DocKey::Odds {
                        date: r.date,
                        race_number: r.race_number,
                        venue,
                    });
                }
            }
        }
        let Some(date) = change.what.date() else {
            return Ok(());
        };
        // A race's status, scratchings and venues are in its own documents; the date's
        // venues, and which one answers without a venue, in every one's.
        let race_of = match change.event {
            Event::RaceCardDeclared(x) => Some(x.race_number),
            Event::RunnerScratched(x) => Some(x.race_number),
            Event::RaceResultPublished(x) => Some(x.race_number),
            Event::OddsUpdated(x) => Some(x.race_number),
            Event::RaceRetracted(x) => Some(x.race_number),
            Event::RaceStatusChanged(x) => Some(x.race_number),
            Event::HorseProfileUpdated(_) => None,
        };
        let scratching = matches!(change.what, What::Scratched(_));
        let race_changed = change.status_changed || scratching || change.listing == Listing::Race;
        match race_of {
            _ if change.listing == Listing::Venues => {
                self.whole_days.insert(date.to_owned());
            }
            Some(n) if race_changed => {
                self.races
                    .entry(date.to_owned())
                    .or_default()
                    .insert(race_no(n)?);
            }
            _ => {}
        }
        Ok(())
    }

    fn render<S: State>(&mut self, s: &mut S, seq: u64, facts: &Facts) -> Result<(), StoreError> {
        let mut out = self.stale.rendering(seq);
        let touched = std::mem::take(&mut self.races);
        let whole_days = std::mem::take(&mut self.whole_days);
        let dates: BTreeSet<&String> = touched.keys().chain(&whole_days).collect();
        for date in dates {
            let day = Day::read(s, date)?;
            let races = if whole_days.contains(date) {
                day.odds_races()
            } else {
                touched.get(date).cloned().unwrap_or_default()
            };
            let shape = day.shape();
            for n in races {
                let docs = odds_of(s, (date, facts.held_odds(date)), &shape, n)?;
                out.put_venues(s, &docs, |venue| {
                    DocKey::Odds {
                        date,
                        race_number: n,
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

impl Odds {
    /// Whether price moves wait to be rendered.
    pub(crate) fn holds_moves(&self) -> bool {
        !self.moves.is_empty()
    }

    /// Renders the races of the price moves not rendered yet, over records that have
    /// changed only by those moves since: each document that a move reached (its venue's,
    /// each venue's for a move given for every venue, and the one without a venue where it
    /// copies one of them) at the position of the last, and listed at each.
    /// The races' odds are those `facts` holds, as their records will stand once written.
    pub(crate) fn render_moves<S: State>(
        &mut self,
        s: &mut S,
        facts: &Facts,
    ) -> Result<(), StoreError> {
        // The moves are in date order: each date's record is read once for all its races.
        let mut last: Option<(String, DayShape)> = None;
        for ((date, n), moves) in std::mem::take(&mut self.moves) {
            let shape = match last {
                Some((ref of, ref shape)) if *of == date => shape,
                _ => {
                    let shape = Day::read(s, &date)?.shape();
                    &last.insert((date.clone(), shape)).1
                }
            };
            let docs = odds_of(s, (&date, facts.held_odds(&date)), shape, n)?;
            // The positions of the moves that reached the document of `venue` (`None`: a
            // document of no venue's, of the odds given for every venue).
            let reached = |venue: Option<&str>| -> Vec<u64> {
                moves
                    .iter()
                    .filter(|(v, _)| v.is_none() || v.as_deref() == venue)
                    .map(|&(_, seq)| seq)
                    .collect()
            };
            let key = |venue: Option<&str>| {
                DocKey::Odds {
                    date: &date,
                    race_number: n,
                    venue,
                }
                .key()
            };
            for (venue, doc) in &docs {
                let venue = venue.as_deref();
                let (seqs, copied) = match venue {
                    Some(_) => (reached(venue), None),
                    None => {
                        let copied = docs
                            .iter()
                            .find_map(|(v, d)| v.as_deref().filter(|_| d == doc));
                        (reached(copied), copied)
                    }
                };
                let Some((&last, before)) = seqs.split_last() else {
                    continue;
                };
                s.changes_at(last);
                let written = match copied {
                    Some(copied) => {
                        s.put(key(None), docs::alias(last, copied));
                        true
                    }
                    None => {
                        crate::doc_writes::put_sealed(s, key(venue), docs::seal(false, doc, last))?
                    }
                };
                if written {
                    for &seq in before {
                        s.changed_at(seq, &key(venue));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The odds documents of race `n` of `date` (`shape` that of its day record), as `(venue,
/// bytes)`: one for each venue that runs it and has odds, and the one without a venue. A
/// race's odds are read from `held` (a batch's of the date, [`Facts::held_odds`]) where it
/// holds them, from their records where not.
pub(crate) fn odds_of(
    s: &impl Records,
    (date, held): (&str, Option<&RacesOdds>),
    shape: &DayShape,
    n: u8,
) -> Result<ByVenue, StoreError> {
    let (meetings, listed) = (&shape.meetings, &shape.listed);
    let main = shape.main.as_deref();
    let odds = |venue: Option<&str>| -> Result<Option<Cow<'_, RaceOdds>>, StoreError> {
        let found = held.and_then(|held| held.get(&(n, venue.map(str::to_owned))));
        Ok(match found {
            Some(race) => Some(Cow::Borrowed(race)),
            None => read(s, &keys::odds(date, n, venue))?.map(Cow::Owned),
        })
    };
    let every = odds(None)?;
    let mut out = Vec::new();
    let mut unnamed: Option<Vec<u8>> = None;
    let race = |venue| docs::odds::OddsRace {
        date,
        venue,
        meetings: listed.as_deref(),
        race_number: n,
    };
    for m in meetings.iter().filter(|m| m.races.contains(&n)) {
        let venue = Some(m.venue.as_str());
        let own = odds(venue)?;
        let Some(view) = RaceOdds::merged(every.as_deref(), own.as_deref()) else {
            continue;
        };
        let st = status::of_race(s, date, n, venue)?;
        let gone = scratched(s, date, n, venue)?;
        let doc = docs::odds::render_odds(&race(venue), &view, st.as_ref(), &gone);
        if unnamed.is_none() || venue == main {
            unnamed = Some(doc.clone());
        }
        out.push((venue.map(str::to_owned), doc));
    }
    // No venue of the race is known: the odds given for every venue, if any.
    let unnamed = match (unnamed, &every) {
        (Some(doc), _) => Some(doc),
        (None, Some(odds)) => {
            let st = status::of_race(s, date, n, None)?;
            let gone = scratched(s, date, n, None)?;
            Some(docs::odds::render_odds(
                &race(None),
                odds,
                st.as_ref(),
                &gone,
            ))
        }
        (None, None) => None,
    };
    out.extend(unnamed.map(|doc| (None, doc)));
    Ok(out)
}
