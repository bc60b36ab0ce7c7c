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

use crate::docs::{self, FormEntry, Meeting};
use crate::form::FormSource;
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
    /// Remembers `event_id` as applied; `false` if it was applied before, at any age.
    fn first_seen(&mut self, event_id: u128) -> Result<bool, StoreError>;
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
///
/// The forms of the horses and the current odds of the races it touched are held decoded
/// until then: a batch of thousands of price moves and results reads and writes each
/// race's odds and each horse's form once, not once an event.
#[derive(Debug, Default)]
pub struct Fold {
    result_days: BTreeSet<String>,
    card_days: BTreeSet<String>,
    forms: BTreeMap<String, FormSource>,
    odds: BTreeMap<String, BTreeMap<u8, RaceOdds>>,
    odds_seq: Option<u64>,
}

fn read<T: DeserializeOwned>(s: &impl State, key: &[u8]) -> Result<Option<T>, StoreError> {
    match s.get(key)? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(key)))),
        None => Ok(None),
    }
}

/// Reads a document's JSON (past its `ETag`).
fn read_doc<T: DeserializeOwned>(s: &impl State, key: DocKey<'_>) -> Result<Option<T>, StoreError> {
    let key = key.key();
    match s.get(&key)? {
        Some(stored) => serde_json::from_slice(docs::unseal(&stored))
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(&key)))),
        None => Ok(None),
    }
}

/// Stores a document with its `ETag`, made once here rather than on every GET.
fn put_doc(s: &mut impl State, key: DocKey<'_>, doc: &[u8]) {
    let form = matches!(key, DocKey::Form(_));
    s.put(key.key(), docs::seal(form, doc));
}

fn write<T: Serialize>(s: &mut impl State, key: Vec<u8>, value: &T) {
    // Source records are plain data: serialising them cannot fail.
    s.put(key, serde_json::to_vec(value).unwrap_or_default());
}

/// The name of a horse, read from its profile document.
#[derive(Deserialize)]
struct Named {
    horse_name: String,
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
        if !s.first_seen(env.event_id.as_u128())? {
            if matches!(env.event, Event::OddsUpdated(_)) {
                s.put(keys::ignored_odds(seq), Vec::new());
            }
            return Ok(Outcome::Duplicate);
        }
        match &env.event {
            Event::HorseProfileUpdated(p) => self.profile(s, p)?,
            Event::RaceCardDeclared(c) => self.card(s, c)?,
            Event::RunnerScratched(x) => {
                let key = keys::scratched(&x.date, race_no(x.race_number));
                let mut set: BTreeSet<String> = read(s, &key)?.unwrap_or_default();
                set.insert(x.horse_no.clone());
                write(s, key, &set);
                self.card_days.insert(x.date.clone());
            }
            Event::RaceResultPublished(r) => self.result(s, r)?,
            Event::OddsUpdated(o) => self.odds(s, seq, o)?,
        }
        Ok(Outcome::Applied)
    }

    fn profile(&mut self, s: &mut impl State, p: &HorseProfile) -> Result<(), StoreError> {
        // The document is the profile as the feed gave it: no other record is kept.
        put_doc(s, DocKey::Profile(&p.horse_no), &docs::render_profile(p));
        // The profile's name heads the form document.
        self.form(s, &p.horse_no)?;
        Ok(())
    }

    /// The form of `horse`, loaded into the batch on first use.
    fn form(&mut self, s: &impl State, horse: &str) -> Result<&mut FormSource, StoreError> {
        Ok(match self.forms.entry(horse.to_owned()) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(match s.get(&keys::form(horse))? {
                    Some(record) => FormSource::decode(record)?,
                    None => FormSource::default(),
                })
            }
        })
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
            let runner = r.runners.iter().find(|x| x.horse_no == horse);
            let json = runner.map(|x| FormEntry::from_result(r, x).json());
            let entry = runner
                .zip(json.as_deref())
                .map(|(x, j)| (x.horse_name.as_str(), j));
            self.form(s, horse)?.replace(&r.date, n, &r.venue, entry);
        }
        Ok(())
    }

    fn odds(&mut self, s: &impl State, seq: u64, o: &OddsUpdated) -> Result<(), StoreError> {
        let n = race_no(o.race_number);
        if !self.odds.get(&o.date).is_some_and(|d| d.contains_key(&n)) {
            let stored = read(s, &keys::odds(&o.date, n))?.unwrap_or_default();
            self.odds
                .entry(o.date.clone())
                .or_default()
                .insert(n, stored);
        }
        let Some(race) = self.odds.get_mut(&o.date).and_then(|d| d.get_mut(&n)) else {
            return Ok(()); // just inserted
        };
        race.seq = seq;
        for r in &o.odds {
            match race.runners.get_mut(&r.horse_no) {
                Some(price) => *price = (r.win_odds, seq),
                None => {
                    race.runners.insert(r.horse_no.clone(), (r.win_odds, seq));
                }
            }
        }
        self.odds_seq = Some(self.odds_seq.unwrap_or(0).max(seq));
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
                put_doc(s, key, &bytes);
            }
            for (race_number, venue, bytes) in rendered.races {
                let key = DocKey::Race {
                    date: &date,
                    race_number,
                    venue: venue.as_deref(),
                };
                put_doc(s, key, &bytes);
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
                put_doc(s, key, &bytes);
            }
        }
        let odds = std::mem::take(&mut self.odds);
        for ((date, race_number), race) in odds
            .iter()
            .flat_map(|(date, races)| races.iter().map(move |(n, race)| ((date, *n), race)))
        {
            let doc = docs::render_odds(date, race_number, race);
            put_doc(s, DocKey::Odds { date, race_number }, &doc);
            write(s, keys::odds(date, race_number), race);
        }
        if let Some(seq) = self.odds_seq.take() {
            let latest = match s.get(keys::ODDS_SEQ)? {
                Some(v) => v.as_slice().try_into().map(u64::from_be_bytes).unwrap_or(0),
                None => 0,
            };
            s.put(
                keys::ODDS_SEQ.to_vec(),
                latest.max(seq).to_be_bytes().to_vec(),
            );
        }
        for (horse, form) in std::mem::take(&mut self.forms) {
            let profile: Option<Named> = read_doc(s, DocKey::Profile(&horse))?;
            let name = match profile.map(|p| p.horse_name).or_else(|| form.newest_name()) {
                Some(name) => name,
                // Appears nowhere any more (an amendment removed its only race).
                None => {
                    s.delete(keys::form(&horse));
                    s.delete(DocKey::Form(&horse).key());
                    continue;
                }
            };
            if form.is_empty() {
                s.delete(keys::form(&horse));
            } else if form.changed() {
                s.put(keys::form(&horse), form.encode());
            }
            put_doc(s, DocKey::Form(&horse), &form.render(&horse, &name));
        }
        Ok(())
    }
}
