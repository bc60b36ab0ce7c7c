//! The pure fold from events to read models. It sees the read models only through
//! [`State`], so the same code runs over an in-memory map in unit tests and over a sled
//! batch in the projector.
//!
//! Applying an event updates the source records (the feed's facts, keyed for look-up) and
//! marks which documents they touch; [`Fold::render`] then renders each touched document
//! once, however many events of the batch touched it. That keeps replay fast and makes an
//! amendment rewrite every document it affects, leaving nothing stale. A retraction also
//! names the documents it may have left with nothing to show; those that no render writes
//! again are removed.
//!
//! Odds and scratchings are kept as given: for one venue's race, or without a venue (a v1
//! feeder) for the race of that number at every venue of the date. The odds of a venue's
//! race are both merged, each runner at its latest price.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use racing_events::{
    Envelope, Event, HorseProfile, OddsUpdated, RaceCard, RaceResult, RaceRetracted,
};
use serde::{Deserialize, Serialize};

use crate::docs::{self, FormEntry, Meeting};
use crate::history::Versioned;
use crate::keys::{self, DocKey};
use crate::state::{race_no, read, write, RaceOdds, Records, State};
use crate::StoreError;

/// What became of one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its effects are in the read models.
    Applied,
    /// Its `event_id` was applied before; ignored.
    Duplicate,
}

/// Which venues of a date have cards, results and odds, and which races each.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Day {
    cards: BTreeMap<String, BTreeSet<u8>>,
    results: BTreeMap<String, BTreeSet<u8>>,
    /// Races with odds given for one venue, by venue.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    odds: BTreeMap<String, BTreeSet<u8>>,
    /// Races with odds given without a venue, for every venue of the date.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    odds_any: BTreeSet<u8>,
}

impl Day {
    fn read(s: &impl Records, date: &str) -> Result<Day, StoreError> {
        Ok(read(s, &keys::day(date))?.unwrap_or_default())
    }

    fn write(&self, s: &mut impl State, date: &str) {
        let empty = self.cards.is_empty()
            && self.results.is_empty()
            && self.odds.is_empty()
            && self.odds_any.is_empty();
        if empty {
            s.delete(keys::day(date));
        } else {
            write(s, keys::day(date), self);
        }
    }

    /// Every venue of the day with each race it has a card, a result or odds of, in venue
    /// order: the meetings the odds documents name.
    fn meetings(&self) -> Vec<Meeting<u8>> {
        let mut all: BTreeMap<&str, BTreeSet<u8>> = BTreeMap::new();
        for by_venue in [&self.cards, &self.results, &self.odds] {
            for (venue, races) in by_venue {
                all.entry(venue).or_default().extend(races);
            }
        }
        all.into_iter()
            .map(|(venue, races)| Meeting {
                venue: venue.to_owned(),
                races: races.into_iter().collect(),
            })
            .collect()
    }

    /// The races with odds, given for a venue or for all.
    fn odds_races(&self) -> BTreeSet<u8> {
        let mut races = self.odds_any.clone();
        races.extend(self.odds.values().flatten());
        races
    }
}

/// Removes race `n` from `venue`'s races, and the venue once it has none; whether it was
/// there.
fn take(by_venue: &mut BTreeMap<String, BTreeSet<u8>>, venue: &str, n: u8) -> bool {
    let Some(races) = by_venue.get_mut(venue) else {
        return false;
    };
    let taken = races.remove(&n);
    if races.is_empty() {
        by_venue.remove(venue);
    }
    taken
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
    /// Dates whose venues or races changed: every odds document of theirs is rendered
    /// again (their `meetings`, and which venue answers without one).
    odds_days: BTreeSet<String>,
    /// The horses whose forms the batch touched: their documents are rendered again.
    forms: BTreeSet<String>,
    /// By date, then race and venue (`None`: given for every venue).
    odds: BTreeMap<String, RacesOdds>,
    odds_seq: Option<u64>,
    /// Documents a retraction may have left with nothing to show: removed at render
    /// unless rendered again.
    stale: BTreeSet<Vec<u8>>,
    /// The stream sequence of the event being folded.
    seq: u64,
    /// The jockeys' and trainers' rides the batch touched (`people/`).
    people: crate::people::People,
    /// The horses' names the batch touched (`search.rs`).
    names: crate::search::Touched,
    /// The odds moves the batch applied, written as chunks of the journal at render.
    journal: crate::journal::Pending,
    /// The versions of source records the batch made, written a record per record at
    /// render.
    versions: crate::history::Versions,
    /// The price moves for races already off (`status.rs`).
    late_prices: crate::status::LatePrices,
}

/// The odds of a date's races as given, by race and venue (`None`: for every venue).
type RacesOdds = BTreeMap<(u8, Option<String>), RaceOdds>;

/// The name of a horse, read from its profile document.
#[derive(Deserialize)]
struct Named {
    horse_name: String,
}

impl Fold {
    /// Folds one valid event in. `seq` is its stream sequence, `published` when JetStream
    /// stored it (nanoseconds since the epoch), which an odds move keeps.
    pub fn apply<S: State>(
        &mut self,
        s: &mut S,
        seq: u64,
        published: i128,
        env: &Envelope,
    ) -> Result<Outcome, StoreError> {
        if !s.first_seen(env.event_id.as_u128())? {
            return Ok(Outcome::Duplicate);
        }
        self.seq = seq;
        let mut versions = std::mem::take(&mut self.versions);
        let folded = self.fold_event(
            &mut Versioned {
                s,
                seq,
                versions: &mut versions,
            },
            published,
            env,
        );
        self.versions = versions;
        folded?;
        crate::raceday::note(s, seq, published, &env.event)?;
        Ok(Outcome::Applied)
    }

    /// Folds one event in, its source records' versions kept by `s`.
    fn fold_event<S: State>(
        &mut self,
        s: &mut Versioned<'_, S>,
        published: i128,
        env: &Envelope,
    ) -> Result<(), StoreError> {
        let (seq, event) = (s.seq, &env.event);
        match event {
            Event::HorseProfileUpdated(p) => self.profile(s, p)?,
            Event::RaceCardDeclared(c) => self.card(s, c)?,
            Event::RunnerScratched(x) => {
                let key = keys::scratched(&x.date, race_no(x.race_number)?, x.venue.as_deref());
                let mut set: BTreeSet<String> = read(s, &key)?.unwrap_or_default();
                set.insert(x.horse_no.clone());
                write(s, key, &set);
                self.card_days.insert(x.date.clone());
            }
            Event::RaceResultPublished(r) => {
                self.result(s, r)?;
                if crate::status::finish(s, seq, &env.occurred_at, r)? {
                    self.status_changed(&r.date);
                }
            }
            Event::OddsUpdated(o) => {
                self.late_prices.note(s, o)?;
                self.odds(s, seq, published, o)?;
            }
            Event::RaceRetracted(r) => {
                self.retract(s, r)?;
                let n = race_no(r.race_number)?;
                if crate::status::retract(s, &r.date, n, &r.venue)? {
                    self.status_changed(&r.date);
                }
            }
            Event::RaceStatusChanged(x) => {
                crate::status::set(s, seq, &env.occurred_at, x)?;
                self.status_changed(&x.date);
            }
        }
        Ok(())
    }

    fn profile(&mut self, s: &mut impl State, p: &HorseProfile) -> Result<(), StoreError> {
        // The document is the profile as the feed gave it: no other record is kept.
        let doc = docs::render_profile(p);
        put_doc(s, DocKey::Profile(&p.horse_no), &doc, self.seq)?;
        self.names.note_profile(s, p, self.seq)?;
        // The profile's name heads the form document.
        self.forms.insert(p.horse_no.clone());
        Ok(())
    }

    /// Replaces `horse`'s form entry for one race (`date`, number, venue), by the event
    /// being folded (`form.rs`).
    fn form_replace(
        &mut self,
        s: &mut impl State,
        horse: &str,
        (date, n, venue): (&str, u8, &str),
        entry: Option<(&str, &[u8])>,
    ) -> Result<(), StoreError> {
        if !self.forms.contains(horse) {
            self.forms.insert(horse.to_owned());
        }
        crate::form::replace(s, horse, (date, n, venue), entry, self.seq)
    }

    fn card(&mut self, s: &mut impl State, c: &RaceCard) -> Result<(), StoreError> {
        let n = race_no(c.race_number)?;
        let old: Option<RaceCard> = read(s, &keys::card(&c.date, n, &c.venue))?;
        self.names.note_race(s, old.as_ref(), Some(c), self.seq)?;
        write(s, keys::card(&c.date, n, &c.venue), c);
        let mut day = Day::read(s, &c.date)?;
        if day.cards.entry(c.venue.clone()).or_default().insert(n) {
            day.write(s, &c.date);
            self.odds_days.insert(c.date.clone());
        }
        self.card_days.insert(c.date.clone());
        Ok(())
    }

    fn result(&mut self, s: &mut impl State, r: &RaceResult) -> Result<(), StoreError> {
        let n = race_no(r.race_number)?;
        let key = keys::result(&r.date, n, &r.venue);
        let old: Option<RaceResult> = read(s, &key)?;
        write(s, key, r);
        self.discover_result(s, old.as_ref(), r)?;
        let mut day = Day::read(s, &r.date)?;
        if day.results.entry(r.venue.clone()).or_default().insert(n) {
            day.write(s, &r.date);
            self.odds_days.insert(r.date.clone());
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
            self.form_replace(s, horse, (&r.date, n, &r.venue), entry)?;
        }
        Ok(())
    }

    fn odds(
        &mut self,
        s: &mut impl State,
        seq: u64,
        published: i128,
        o: &OddsUpdated,
    ) -> Result<(), StoreError> {
        let n = race_no(o.race_number)?;
        // The journal keeps every move as it went live; a retraction leaves it there.
        let body = docs::render_odds_move(
            &o.date,
            o.venue.as_deref(),
            n,
            seq,
            &docs::published_at(published),
            &o.odds,
        );
        self.journal.push(s, &o.date, seq, n, &body)?;
        let races = self.odds.entry(o.date.clone()).or_default();
        let race = match races.entry((n, o.venue.clone())) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let stored = read(s, &keys::odds(&o.date, n, o.venue.as_deref()))?;
                if stored.is_none() {
                    // The first odds of this race (and venue): the day learns of them.
                    let mut day = Day::read(s, &o.date)?;
                    let added = match &o.venue {
                        Some(v) => day.odds.entry(v.clone()).or_default().insert(n),
                        None => day.odds_any.insert(n),
                    };
                    if added {
                        day.write(s, &o.date);
                        if o.venue.is_some() {
                            self.odds_days.insert(o.date.clone());
                        }
                    }
                }
                e.insert(stored.unwrap_or_default())
            }
        };
        race.apply(seq, &o.odds);
        self.odds_seq = Some(self.odds_seq.unwrap_or(0).max(seq));
        Ok(())
    }

    /// Removes everything of one venue's race: its card and the scratchings given for it,
    /// its result and every runner's form entry of it, and the odds given for it. Odds and
    /// scratchings given without a venue are about the race of that number at every venue
    /// and stay. A race with nothing stored changes nothing.
    fn retract(&mut self, s: &mut impl State, r: &RaceRetracted) -> Result<(), StoreError> {
        let n = race_no(r.race_number)?;
        let (date, venue) = (r.date.as_str(), r.venue.as_str());
        self.discover_retract(s, (date, n, venue))?;
        let mut day = Day::read(s, date)?;

        let scratched = keys::scratched(date, n, Some(venue));
        if s.get(&scratched)?.is_some() {
            s.delete(scratched);
        }
        let card = take(&mut day.cards, venue, n);
        if card {
            s.delete(keys::card(date, n, venue));
            self.card_days.insert(date.to_owned());
            for v in [Some(venue), None] {
                self.stale.insert(DocKey::Card { date, venue: v }.key());
            }
        }

        let key = keys::result(date, n, venue);
        if let Some(old) = read::<RaceResult>(s, &key)? {
            s.delete(key);
            for runner in &old.runners {
                self.form_replace(s, &runner.horse_no, (date, n, venue), None)?;
            }
        }
        let result = take(&mut day.results, venue, n);
        if result {
            self.result_days.insert(date.to_owned());
            for v in [Some(venue), None] {
                self.stale.insert(DocKey::Results { date, venue: v }.key());
                let race = DocKey::Race {
                    date,
                    race_number: n,
                    venue: v,
                };
                self.stale.insert(race.key());
            }
        }

        let in_batch = self
            .odds
            .get_mut(date)
            .and_then(|races| races.remove(&(n, Some(venue.to_owned()))))
            .is_some();
        // Removed also where only this batch held them, so that the removal is kept in the
        // odds record's history: as of any later point, only later moves count.
        let key = keys::odds(date, n, Some(venue));
        if in_batch || s.get(&key)?.is_some() {
            s.delete(key);
        }
        let odds = take(&mut day.odds, venue, n);

        if card || result || odds {
            day.write(s, date);
            self.odds_days.insert(date.to_owned());
            for v in [Some(venue), None] {
                let key = DocKey::Odds {
                    date,
                    race_number: n,
                    venue: v,
                };
                self.stale.insert(key.key());
            }
        }
        Ok(())
    }

    /// A race's status on `date` changed: the cards and odds documents that carry it are
    /// rendered again.
    fn status_changed(&mut self, date: &str) {
        self.late_prices.forget();
        self.card_days.insert(date.to_owned());
        self.odds_days.insert(date.to_owned());
    }

    /// The price moves the batch applied for races already off, finished, abandoned or
    /// void.
    pub(crate) fn late_prices(&self) -> u64 {
        self.late_prices.count()
    }

    /// Bytes of the odds moves held for the journal, not yet written.
    pub(crate) fn journal_bytes(&self) -> usize {
        self.journal.bytes()
    }

    /// A result stored in place of `old`: its horses' names noted, its jockeys' and
    /// trainers' rides replaced (`search.rs`, `people/`).
    fn discover_result(
        &mut self,
        s: &mut impl State,
        old: Option<&RaceResult>,
        r: &RaceResult,
    ) -> Result<(), StoreError> {
        self.names.note_race(s, old, Some(r), self.seq)?;
        self.people.replace(old, Some(r))
    }

    /// One venue's race retracted: the names its card and result gave taken back, its
    /// jockeys' and trainers' rides removed.
    fn discover_retract(
        &mut self,
        s: &mut impl State,
        (date, n, venue): (&str, u8, &str),
    ) -> Result<(), StoreError> {
        let card: Option<RaceCard> = read(s, &keys::card(date, n, venue))?;
        self.names.note_race(s, card.as_ref(), None, self.seq)?;
        let result: Option<RaceResult> = read(s, &keys::result(date, n, venue))?;
        self.names.note_race(s, result.as_ref(), None, self.seq)?;
        self.people.replace(result.as_ref(), None)
    }
}

mod render;

use render::put_doc;
