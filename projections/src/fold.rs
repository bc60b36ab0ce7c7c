//! The pure fold from events to read models. It sees the read models only through
//! [`State`], so the same code runs over an in-memory map in unit tests and over a sled
//! batch in the projector.
//!
//! Applying an event updates the source records (the feed's facts, keyed for look-up) and
//! marks which documents they touch; [`Fold::render`] then renders each touched document
//! once, however many events of the batch touched it. That keeps replay fast and makes an
//! amendment rewrite every document it affects, leaving nothing stale.

use std::collections::{BTreeMap, BTreeSet};

use racing_events::{Envelope, Event, HorseProfile, OddsUpdated, RaceCard, RaceResult};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::docs::{self, FormDoc, FormEntry, Meeting, StoredFormEntry};
use crate::keys::{self, DocKey};
use crate::StoreError;

/// Read and write access to the read models, as a fold needs it.
pub trait State {
    /// The value under `key`, including writes made earlier in this batch.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Sets `key`; visible to later `get`s of the batch.
    fn put(&mut self, key: Vec<u8>, value: Vec<u8>);
    /// Removes `key`.
    fn delete(&mut self, key: Vec<u8>);
}

/// What became of one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its effects are in the read models.
    Applied,
    /// Its `event_id` was applied before; ignored.
    Duplicate,
}

/// Which venues of a date have cards and results, and which races each.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Day {
    cards: BTreeMap<String, BTreeSet<u8>>,
    results: BTreeMap<String, BTreeSet<u8>>,
}

/// The current odds of a race: the latest price of each runner and the stream sequence
/// that set it.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceOdds {
    /// Sequence of the latest `OddsUpdated` folded in.
    pub seq: u64,
    /// Runner to `(win_odds, seq that set it)`.
    pub runners: BTreeMap<String, (f64, u64)>,
}

/// The documents an in-progress batch has touched and must render before it commits.
#[derive(Debug, Default)]
pub struct Fold {
    result_days: BTreeSet<String>,
    card_days: BTreeSet<String>,
    forms: BTreeSet<String>,
    odds: BTreeSet<(String, u8)>,
}

fn read<T: DeserializeOwned>(s: &impl State, key: &[u8]) -> Result<Option<T>, StoreError> {
    match s.get(key)? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(key)))),
        None => Ok(None),
    }
}

fn write<T: Serialize>(s: &mut impl State, key: Vec<u8>, value: &T) {
    // Source records are plain data: serialising them cannot fail.
    s.put(key, serde_json::to_vec(value).unwrap_or_default());
}

/// Race numbers are validated to 1..=99 before an event reaches a fold.
fn race_no(n: i64) -> u8 {
    n.clamp(0, 99) as u8
}

impl Fold {
    /// Folds one valid event in. `seq` is its stream sequence.
    pub fn apply<S: State>(
        &mut self,
        s: &mut S,
        seq: u64,
        env: &Envelope,
    ) -> Result<Outcome, StoreError> {
        let seen = keys::seen(&env.event_id);
        if s.get(&seen)?.is_some() {
            return Ok(Outcome::Duplicate);
        }
        s.put(seen, seq.to_be_bytes().to_vec());
        match &env.event {
            Event::HorseProfileUpdated(p) => self.profile(s, p),
            Event::RaceCardDeclared(c) => self.card(s, c)?,
            Event::RunnerScratched(x) => {
                let key = keys::scratched(&x.date, race_no(x.race_number));
                let mut set: BTreeSet<String> = read(s, &key)?.unwrap_or_default();
                set.insert(x.horse_no.clone());
                write(s, key, &set);
                self.card_days.insert(x.date.clone());
            }
            Event::RaceResultPublished(r) => self.result(s, r)?,
            Event::OddsUpdated(o) => {
                odds(s, seq, o)?;
                self.odds.insert((o.date.clone(), race_no(o.race_number)));
            }
        }
        Ok(Outcome::Applied)
    }

    fn profile(&mut self, s: &mut impl State, p: &HorseProfile) {
        write(s, keys::profile(&p.horse_no), p);
        s.put(DocKey::Profile(&p.horse_no).key(), docs::render_profile(p));
        // The profile's name heads the form document.
        self.forms.insert(p.horse_no.clone());
    }

    fn card(&mut self, s: &mut impl State, c: &RaceCard) -> Result<(), StoreError> {
        write(s, keys::card(&c.date, race_no(c.race_number), &c.venue), c);
        let mut day: Day = read(s, &keys::day(&c.date))?.unwrap_or_default();
        if day
            .cards
            .entry(c.venue.clone())
            .or_default()
            .insert(race_no(c.race_number))
        {
            write(s, keys::day(&c.date), &day);
        }
        self.card_days.insert(c.date.clone());
        Ok(())
    }

    fn result(&mut self, s: &mut impl State, r: &RaceResult) -> Result<(), StoreError> {
        let n = race_no(r.race_number);
        let key = keys::result(&r.date, n, &r.venue);
        let old: Option<RaceResult> = read(s, &key)?;
        write(s, key, r);
        let mut day: Day = read(s, &keys::day(&r.date))?.unwrap_or_default();
        if day.results.entry(r.venue.clone()).or_default().insert(n) {
            write(s, keys::day(&r.date), &day);
        }
        self.result_days.insert(r.date.clone());

        // An amendment may drop a runner: every horse of the old and the new result has
        // its entry for this race replaced (or removed).
        let mut horses: BTreeSet<&str> = r.runners.iter().map(|x| x.horse_no.as_str()).collect();
        if let Some(old) = &old {
            horses.extend(old.runners.iter().map(|x| x.horse_no.as_str()));
        }
        for horse in horses {
            let fkey = keys::form(horse);
            let mut entries: Vec<StoredFormEntry> = read(s, &fkey)?.unwrap_or_default();
            entries.retain(|e| {
                !(e.entry.date == r.date
                    && e.entry.venue == r.venue
                    && e.entry.race_number == r.race_number)
            });
            if let Some(runner) = r.runners.iter().find(|x| x.horse_no == horse) {
                let entry = StoredFormEntry {
                    entry: FormEntry::from_result(r, runner),
                    name: runner.horse_name.clone(),
                };
                let at = entries
                    .partition_point(|e| FormEntry::newest_first(&e.entry, &entry.entry).is_lt());
                entries.insert(at, entry);
            }
            if entries.is_empty() {
                s.delete(fkey);
            } else {
                write(s, fkey, &entries);
            }
            self.forms.insert(horse.to_owned());
        }
        Ok(())
    }

    /// Renders every document touched since the last render.
    pub fn render<S: State>(&mut self, s: &mut S) -> Result<(), StoreError> {
        for date in std::mem::take(&mut self.result_days) {
            let day: Day = read(s, &keys::day(&date))?.unwrap_or_default();
            let mut meetings = Vec::with_capacity(day.results.len());
            for (venue, races) in &day.results {
                let mut list = Vec::with_capacity(races.len());
                for &n in races {
                    if let Some(r) = read::<RaceResult>(s, &keys::result(&date, n, venue))? {
                        list.push(r);
                    }
                }
                meetings.push(Meeting {
                    venue: venue.clone(),
                    races: list,
                });
            }
            let rendered = docs::render_results(&date, &meetings);
            for (venue, bytes) in rendered.days {
                let key = DocKey::Results {
                    date: &date,
                    venue: venue.as_deref(),
                };
                s.put(key.key(), bytes);
            }
            for (race_number, venue, bytes) in rendered.races {
                let key = DocKey::Race {
                    date: &date,
                    race_number,
                    venue: venue.as_deref(),
                };
                s.put(key.key(), bytes);
            }
        }
        for date in std::mem::take(&mut self.card_days) {
            let day: Day = read(s, &keys::day(&date))?.unwrap_or_default();
            let mut meetings = Vec::with_capacity(day.cards.len());
            let mut scratched: BTreeMap<i64, BTreeSet<String>> = BTreeMap::new();
            for (venue, races) in &day.cards {
                let mut list = Vec::with_capacity(races.len());
                for &n in races {
                    if let Some(c) = read::<RaceCard>(s, &keys::card(&date, n, venue))? {
                        if let std::collections::btree_map::Entry::Vacant(slot) =
                            scratched.entry(c.race_number)
                        {
                            slot.insert(read(s, &keys::scratched(&date, n))?.unwrap_or_default());
                        }
                        list.push(c);
                    }
                }
                meetings.push(Meeting {
                    venue: venue.clone(),
                    races: list,
                });
            }
            let is_scratched = |c: &RaceCard, horse: &str| {
                scratched
                    .get(&c.race_number)
                    .is_some_and(|set| set.contains(horse))
            };
            let rendered = docs::render_cards(&date, &meetings, is_scratched);
            for (venue, bytes) in rendered.days {
                let key = DocKey::Card {
                    date: &date,
                    venue: venue.as_deref(),
                };
                s.put(key.key(), bytes);
            }
        }
        for (date, race_number) in std::mem::take(&mut self.odds) {
            if let Some(race) = read::<RaceOdds>(s, &keys::odds(&date, race_number))? {
                let doc = docs::render_odds(&date, race_number, &race);
                s.put(
                    DocKey::Odds {
                        date: &date,
                        race_number,
                    }
                    .key(),
                    doc,
                );
            }
        }
        for horse in std::mem::take(&mut self.forms) {
            let entries: Vec<StoredFormEntry> = read(s, &keys::form(&horse))?.unwrap_or_default();
            let profile: Option<HorseProfile> = read(s, &keys::profile(&horse))?;
            let name = match (&profile, entries.first()) {
                (Some(p), _) => p.horse_name.clone(),
                (None, Some(newest)) => newest.name.clone(),
                // Appears nowhere any more (an amendment removed its only race).
                (None, None) => {
                    s.delete(DocKey::Form(&horse).key());
                    continue;
                }
            };
            s.put(
                DocKey::Form(&horse).key(),
                FormDoc::render(&horse, &name, &entries),
            );
        }
        Ok(())
    }
}

fn odds(s: &mut impl State, seq: u64, o: &OddsUpdated) -> Result<(), StoreError> {
    let key = keys::odds(&o.date, race_no(o.race_number));
    let mut race: RaceOdds = read(s, &key)?.unwrap_or_default();
    race.seq = seq;
    for r in &o.odds {
        race.runners.insert(r.horse_no.clone(), (r.win_odds, seq));
    }
    write(s, key, &race);
    let latest = match s.get(keys::ODDS_SEQ)? {
        Some(v) => v.as_slice().try_into().map(u64::from_be_bytes).unwrap_or(0),
        None => 0,
    };
    s.put(
        keys::ODDS_SEQ.to_vec(),
        latest.max(seq).to_be_bytes().to_vec(),
    );
    Ok(())
}
