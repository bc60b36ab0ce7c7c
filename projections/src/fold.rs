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
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::docs::{self, FormEntry, Meeting};
use crate::form::FormSource;
use crate::history::Versioned;
use crate::keys::{self, DocKey};
pub use crate::scan::{Item, Scan};
use crate::StoreError;

/// Read access to the read models' records: all a render needs, so that the same renders
/// run over the records as they are and as they stood at a point of the log (`as_of`).
pub trait Records {
    /// The value under `key`, including writes made earlier in this batch.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// The records whose keys start with `prefix`, including writes made earlier in this
    /// batch: the first `limit` in key order, or (`Scan::Backward`) the last, last first.
    /// A fold reads a record kept a key per item (a person's rides, a horse's form
    /// entries) this way; of the records as they stood at a point of the log (`as_of`),
    /// only a horse's form entries are read so.
    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError>;
}

/// Read and write access to the read models, as a fold needs it.
pub trait State: Records {
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

/// The current odds of a race (as given for one venue, as given for every venue, or the
/// two merged): the latest price of each runner and the stream sequence that set it.
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
}

/// The odds of a date's races as given, by race and venue (`None`: for every venue).
type RacesOdds = BTreeMap<(u8, Option<String>), RaceOdds>;

/// The record under `key`, decoded, if there is one.
pub(crate) fn read<T: DeserializeOwned>(
    s: &impl Records,
    key: &[u8],
) -> Result<Option<T>, StoreError> {
    match s.get(key)? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(key)))),
        None => Ok(None),
    }
}

/// Reads a document's JSON (past its `ETag`).
fn read_doc<T: DeserializeOwned>(
    s: &impl Records,
    key: DocKey<'_>,
) -> Result<Option<T>, StoreError> {
    let key = key.key();
    match s.get(&key)? {
        Some(stored) => serde_json::from_slice(docs::unseal(&stored))
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(&key)))),
        None => Ok(None),
    }
}

/// Stores a document with its `ETag`, made once here rather than on every GET, and `seq`,
/// the stream sequence it reflects; a document rendered the same as it is stored is not
/// written again (its sequence stays that of its last change), so that only what answers
/// differently is written, and counted as changed. Whether it was written.
fn put_doc(s: &mut impl State, key: DocKey<'_>, doc: &[u8], seq: u64) -> Result<bool, StoreError> {
    put_sealed(s, key.key(), matches!(key, DocKey::Form(_)), doc, seq)
}

/// [`put_doc`] by the document's tree key (`form`: whether it is a form).
fn put_sealed(
    s: &mut impl State,
    key: Vec<u8>,
    form: bool,
    doc: &[u8],
    seq: u64,
) -> Result<bool, StoreError> {
    let sealed = docs::seal(form, doc, seq);
    // A form's entries are records of their own: its key holds the rest (`form.rs`).
    let sealed = if form {
        crate::form::head(&sealed)
    } else {
        sealed
    };
    let same = s
        .get(&key)?
        .is_some_and(|stored| docs::same_answer(&stored, &sealed));
    if !same {
        s.put(key, sealed);
    }
    Ok(!same)
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

/// The race number of an event: validated before an event reaches a fold, so one out of
/// its range means the fold was handed an event that skipped validation.
pub(crate) fn race_no(n: i64) -> Result<u8, StoreError> {
    racing_events::RaceNumber::try_from(n)
        .map(racing_events::RaceNumber::get)
        .map_err(|problem| {
            StoreError::Corrupt(format!("an unvalidated event: race_number {problem}"))
        })
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
            &env.event,
        );
        self.versions = versions;
        folded?;
        Ok(Outcome::Applied)
    }

    /// Folds one event in, its source records' versions kept by `s`.
    fn fold_event<S: State>(
        &mut self,
        s: &mut Versioned<'_, S>,
        published: i128,
        event: &Event,
    ) -> Result<(), StoreError> {
        let seq = s.seq;
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
            Event::RaceResultPublished(r) => self.result(s, r)?,
            Event::OddsUpdated(o) => self.odds(s, seq, published, o)?,
            Event::RaceRetracted(r) => self.retract(s, r)?,
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

    /// Bytes of the odds moves held for the journal, not yet written.
    pub(crate) fn journal_bytes(&self) -> usize {
        self.journal.bytes()
    }

    /// Renders every document touched since the last render.
    pub fn render<S: State>(&mut self, s: &mut S) -> Result<(), StoreError> {
        self.journal.write(s);
        self.versions.write(s)?;
        let mut out = Rendering {
            stale: std::mem::take(&mut self.stale),
            seq: self.seq,
        };
        self.render_discovery(s)?;
        for date in std::mem::take(&mut self.result_days) {
            let rendered = results_of(s, &date)?;
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
        for date in std::mem::take(&mut self.card_days) {
            out.put_venues(s, &cards_of(s, &date)?, |venue| {
                DocKey::Card { date: &date, venue }.key()
            })?;
        }
        self.render_odds(s, &mut out)?;
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
        for horse in std::mem::take(&mut self.forms) {
            match form_of(s, &horse, &load_form(s, &horse)?)? {
                Some(doc) => {
                    out.put(s, DocKey::Form(&horse), &doc)?;
                }
                // Appears nowhere any more (an amendment removed its only race).
                None => s.delete(DocKey::Form(&horse).key()),
            }
        }
        for key in out.stale {
            s.delete(key);
        }
        Ok(())
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

    /// Renders the read models of discovery the batch touched: the meetings of each date
    /// whose cards or results changed (`meetings.rs`), the horses' names (`search.rs`),
    /// and the jockeys and trainers (`people/`). Runs before the other renders, which take the touched dates.
    fn render_discovery(&mut self, s: &mut impl State) -> Result<(), StoreError> {
        for date in self.card_days.union(&self.result_days) {
            crate::meetings::render(s, date)?;
        }
        self.names.render(s)?;
        self.people.render(s, self.seq)
    }

    /// Stores the odds given in the batch, then renders the odds documents of the races
    /// they are for, and every odds document of the dates whose venues changed.
    ///
    /// A venue's race has a document where anything is known of it (a card, a result or
    /// odds of its own) and there are odds for it: its own merged with those given for
    /// every venue. The race without a venue is the day's main meeting's (the venue with
    /// the most races, ties alphabetical) where that one runs it, else the first venue's
    /// that does; where no venue of the race is known, it is the odds given for every
    /// venue, with `venue` null.
    fn render_odds(&mut self, s: &mut impl State, out: &mut Rendering) -> Result<(), StoreError> {
        let touched = std::mem::take(&mut self.odds);
        let whole_days = std::mem::take(&mut self.odds_days);
        for (date, races) in &touched {
            for ((n, venue), race) in races {
                write(s, keys::odds(date, *n, venue.as_deref()), race);
            }
        }
        let none = RacesOdds::new();
        let dates: BTreeSet<&String> = touched.keys().chain(&whole_days).collect();
        for date in dates {
            let given = touched.get(date).unwrap_or(&none);
            let day = Day::read(s, date)?;
            let races = if whole_days.contains(date) {
                day.odds_races()
            } else {
                given.keys().map(|(n, _)| *n).collect()
            };
            for n in races {
                out.put_venues(s, &odds_of(s, given, date, &day, n)?, |venue| {
                    DocKey::Odds {
                        date,
                        race_number: n,
                        venue,
                    }
                    .key()
                })?;
            }
        }
        Ok(())
    }
}

/// The document under `key` as rendered from the records of `s`: its body (for a form,
/// the framed record), or `None` where there is none. With the records as they stood at
/// a point of the log, the document as it was served then.
pub(crate) fn render_doc(s: &impl Records, key: DocKey<'_>) -> Result<Option<Vec<u8>>, StoreError> {
    let venue_of = |v: &Option<String>| v.as_deref().map(str::to_owned);
    Ok(match key {
        DocKey::Profile(_) => s
            .get(&key.key())?
            .map(|stored| docs::unseal(&stored).to_vec()),
        DocKey::Form(horse) => form_of(s, horse, &load_form(s, horse)?)?,
        DocKey::Results { date, venue } => results_of(s, date)?
            .days
            .into_iter()
            .find(|(v, _)| venue_of(v).as_deref() == venue)
            .map(|(_, doc)| doc),
        DocKey::Race {
            date,
            race_number,
            venue,
        } => results_of(s, date)?
            .races
            .into_iter()
            .find(|(n, v, _)| *n == race_number && venue_of(v).as_deref() == venue)
            .map(|(_, _, doc)| doc),
        DocKey::Card { date, venue } => cards_of(s, date)?
            .into_iter()
            .find(|(v, _)| v.as_deref() == venue)
            .map(|(_, doc)| doc),
        DocKey::Odds {
            date,
            race_number,
            venue,
        } => {
            let day = Day::read(s, date)?;
            odds_of(s, &RacesOdds::new(), date, &day, race_number)?
                .into_iter()
                .find(|(v, _)| v.as_deref() == venue)
                .map(|(_, doc)| doc)
        }
    })
}

/// Documents of one kind, by venue (`None`: the one that answers without a venue).
type ByVenue = Vec<(Option<String>, Vec<u8>)>;

/// The results documents of `date`: of the day and of each race, per venue and for the
/// day's main meeting, from its results as `s` holds them.
fn results_of(s: &impl Records, date: &str) -> Result<docs::Rendered, StoreError> {
    let day = Day::read(s, date)?;
    let mut meetings = Vec::with_capacity(day.results.len());
    for (venue, races) in &day.results {
        let mut list = Vec::with_capacity(races.len());
        for &n in races {
            if let Some(r) = read::<RaceResult>(s, &keys::result(date, n, venue))? {
                list.push(r);
            }
        }
        meetings.push(Meeting {
            venue: venue.clone(),
            races: list,
        });
    }
    docs::render_results(date, &meetings)
}

/// The race-card documents of `date`, per venue and for the day's main meeting, from its
/// cards and scratchings as `s` holds them.
fn cards_of(s: &impl Records, date: &str) -> Result<ByVenue, StoreError> {
    let day = Day::read(s, date)?;
    let mut meetings = Vec::with_capacity(day.cards.len());
    // Per race and venue: the scratchings given for it and those given for every
    // venue's race of that number.
    let mut scratched: BTreeMap<(i64, &str), BTreeSet<String>> = BTreeMap::new();
    for (venue, races) in &day.cards {
        let mut list = Vec::with_capacity(races.len());
        for &n in races {
            if let Some(c) = read::<RaceCard>(s, &keys::card(date, n, venue))? {
                let mut gone: BTreeSet<String> =
                    read(s, &keys::scratched(date, n, None))?.unwrap_or_default();
                gone.extend(
                    read::<BTreeSet<String>>(s, &keys::scratched(date, n, Some(venue)))?
                        .unwrap_or_default(),
                );
                scratched.insert((c.race_number, venue.as_str()), gone);
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
            .get(&(c.race_number, c.venue.as_str()))
            .is_some_and(|set| set.contains(horse))
    };
    Ok(docs::render_cards(date, &meetings, is_scratched).days)
}

/// The odds documents of race `n` of `date` (`day` its record), as `(venue, bytes)`: one
/// for each venue that runs it and has odds, and the one without a venue (see
/// [`Fold::render_odds`]). Odds in `given` (a batch's) stand before those in `s`.
fn odds_of(
    s: &impl Records,
    given: &RacesOdds,
    date: &str,
    day: &Day,
    n: u8,
) -> Result<ByVenue, StoreError> {
    let meetings = day.meetings();
    let listed = docs::venues(&meetings);
    let main = meetings
        .get(docs::main_meeting(&meetings))
        .map(|m| m.venue.as_str());
    let every = odds_given(s, given, date, n, None)?;
    let mut out = Vec::new();
    let mut unnamed: Option<Vec<u8>> = None;
    for m in meetings.iter().filter(|m| m.races.contains(&n)) {
        let venue = Some(m.venue.as_str());
        let own = odds_given(s, given, date, n, venue)?;
        let Some(view) = merged(every.as_ref(), own.as_ref()) else {
            continue;
        };
        let doc = docs::render_odds(date, venue, listed.as_deref(), n, &view);
        if unnamed.is_none() || venue == main {
            unnamed = Some(doc.clone());
        }
        out.push((venue.map(str::to_owned), doc));
    }
    // No venue of the race is known: the odds given for every venue, if any.
    let unnamed = unnamed.or_else(|| {
        every
            .as_ref()
            .map(|race| docs::render_odds(date, None, listed.as_deref(), n, race))
    });
    out.extend(unnamed.map(|doc| (None, doc)));
    Ok(out)
}

/// The form of `horse`: its entries (`form.rs`).
fn load_form(s: &impl Records, horse: &str) -> Result<FormSource, StoreError> {
    FormSource::load(s, horse)
}

/// The form document of `horse` from its entries `form`, named by its profile or else
/// its newest result; `None` when the horse appears nowhere.
fn form_of(
    s: &impl Records,
    horse: &str,
    form: &FormSource,
) -> Result<Option<Vec<u8>>, StoreError> {
    let profile: Option<Named> = read_doc(s, DocKey::Profile(horse))?;
    Ok(profile
        .map(|p| p.horse_name)
        .or_else(|| form.newest_name())
        .map(|name| form.render(horse, &name)))
}

/// Writes the documents of a render, and keeps the keys a retraction named that no render
/// has written again: those are removed once everything is rendered.
struct Rendering {
    stale: BTreeSet<Vec<u8>>,
    /// The sequence of the last event folded: what the documents written reflect.
    seq: u64,
}

impl Rendering {
    fn put(&mut self, s: &mut impl State, key: DocKey<'_>, doc: &[u8]) -> Result<bool, StoreError> {
        let form = matches!(key, DocKey::Form(_));
        self.put_key(s, key.key(), form, doc)
    }

    fn put_key(
        &mut self,
        s: &mut impl State,
        key: Vec<u8>,
        form: bool,
        doc: &[u8],
    ) -> Result<bool, StoreError> {
        if !self.stale.is_empty() {
            self.stale.remove(&key);
        }
        put_sealed(s, key, form, doc, self.seq)
    }

    /// Stores the documents of one kind by venue (`key` gives each one's tree key): each
    /// venue's, then the one without a venue as an alias of the venue's it is a copy of
    /// (the day's main meeting's), written again whenever that answer changes, so that the
    /// change feed names it. Where it is no venue's (odds given for every venue of a race
    /// no venue of which is known), it is a document of its own.
    fn put_venues(
        &mut self,
        s: &mut impl State,
        docs: &ByVenue,
        key: impl Fn(Option<&str>) -> Vec<u8>,
    ) -> Result<(), StoreError> {
        let mut changed = BTreeSet::new();
        for (venue, doc) in docs {
            if let Some(v) = venue {
                if self.put_key(s, key(Some(v)), false, doc)? {
                    changed.insert(v.as_str());
                }
            }
        }
        for (_, doc) in docs.iter().filter(|(venue, _)| venue.is_none()) {
            let unnamed = key(None);
            // Each venue's document names its venue: only the one it copies is the same.
            let copied = docs
                .iter()
                .find_map(|(v, d)| v.as_deref().filter(|_| d == doc));
            let Some(venue) = copied else {
                self.put_key(s, unnamed, false, doc)?;
                continue;
            };
            if !self.stale.is_empty() {
                self.stale.remove(&unnamed);
            }
            let same = s
                .get(&unnamed)?
                .as_deref()
                .and_then(docs::alias_of)
                .is_some_and(|(_, was)| was == venue.as_bytes());
            if !same || changed.contains(venue) {
                s.put(unnamed, docs::alias(self.seq, venue));
            }
        }
        Ok(())
    }
}

/// The odds given for race `n` of `date` at `venue` (or for every venue): from the batch,
/// else from the store.
fn odds_given(
    s: &impl Records,
    given: &RacesOdds,
    date: &str,
    n: u8,
    venue: Option<&str>,
) -> Result<Option<RaceOdds>, StoreError> {
    match given.get(&(n, venue.map(str::to_owned))) {
        Some(race) => Ok(Some(race.clone())),
        None => read(s, &keys::odds(date, n, venue)),
    }
}

/// The odds of a venue's race: those given for it, and those given for every venue, each
/// runner at its latest price.
fn merged(every: Option<&RaceOdds>, own: Option<&RaceOdds>) -> Option<RaceOdds> {
    let (base, over) = match (every, own) {
        (None, None) => return None,
        (Some(one), None) | (None, Some(one)) => return Some(one.clone()),
        (Some(every), Some(own)) => (every, own),
    };
    let mut view = base.clone();
    view.seq = base.seq.max(over.seq);
    for (horse, &(price, seq)) in &over.runners {
        let slot = view.runners.entry(horse.clone()).or_insert((price, seq));
        if seq > slot.1 {
            *slot = (price, seq);
        }
    }
    Some(view)
}
