//! The source records: the feed's facts, kept for look-up and for the read models to render
//! from (a date's venues and races, its cards, scratchings and results, the odds given, each
//! race's status), and [`Change`], what one event changed of them, which the fold hands every
//! read model (`model.rs`).
//!
//! Odds and scratchings are kept as given: for one venue's race, or without a venue (a v1
//! feeder) for the race of that number at every venue of the date.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use racing_events::{
    Event, HorseProfile, OddsUpdated, RaceCard, RaceResult, RaceRetracted, RunnerScratched,
};
use serde::{Deserialize, Serialize};

use crate::docs::meeting::{main_meeting, venues, Meeting};
use crate::keys;
use crate::kv::StoreError;
use crate::market::Book;
use crate::state::{race_no, read, write, RaceOdds, Records, State};
use crate::status::{self, LatePrices};

/// Which venues of a date have cards, results and odds, and which races each.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Day {
    pub(crate) cards: BTreeMap<String, BTreeSet<u8>>,
    pub(crate) results: BTreeMap<String, BTreeSet<u8>>,
    /// Races with odds given for one venue, by venue.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) odds: BTreeMap<String, BTreeSet<u8>>,
    /// Races with odds given without a venue, for every venue of the date.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) odds_any: BTreeSet<u8>,
}

impl Day {
    pub(crate) fn read(s: &impl Records, date: &str) -> Result<Day, StoreError> {
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
    pub(crate) fn meetings(&self) -> Vec<Meeting<u8>> {
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

    /// What the date's odds documents take of its meetings ([`DayShape`]).
    pub(crate) fn shape(&self) -> DayShape {
        let meetings = self.meetings();
        let main = meetings
            .get(main_meeting(&meetings))
            .map(|m| m.venue.clone());
        DayShape {
            listed: venues(&meetings),
            main,
            meetings,
        }
    }

    /// The races with odds, given for a venue or for all.
    pub(crate) fn odds_races(&self) -> BTreeSet<u8> {
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

/// Stores a card or a result (`value`, of race `n` of `date` at `venue`) under `key`, and
/// lists the race among the day record's races of its kind (`listed`): the value it
/// replaced, and how the day record's lists changed.
fn keep<T: Serialize + serde::de::DeserializeOwned>(
    s: &mut impl State,
    key: Vec<u8>,
    value: &T,
    (date, n, venue): (&str, u8, &str),
    listed: fn(&mut Day) -> &mut BTreeMap<String, BTreeSet<u8>>,
) -> Result<(Option<T>, Listing), StoreError> {
    let old = read(s, &key)?;
    write(s, key, value);
    let mut day = Day::read(s, date)?;
    if listed(&mut day)
        .get(venue)
        .is_some_and(|races| races.contains(&n))
    {
        return Ok((old, Listing::Unchanged));
    }
    let shape = day.shape();
    listed(&mut day)
        .entry(venue.to_owned())
        .or_default()
        .insert(n);
    day.write(s, date);
    Ok((old, Listing::of(&shape, &day)))
}

/// The runners scratched from race `n` of `date` at `venue`: those given for it and those
/// given for every venue of the date (`venue` `None`: those alone). A book, the
/// favourites and the movers leave them out (`market.rs`).
pub(crate) fn scratched(
    s: &impl Records,
    date: &str,
    n: u8,
    venue: Option<&str>,
) -> Result<BTreeSet<String>, StoreError> {
    let mut out: BTreeSet<String> = read(s, &keys::scratched(date, n, None))?.unwrap_or_default();
    if venue.is_some() {
        let own: Option<BTreeSet<String>> = read(s, &keys::scratched(date, n, venue))?;
        out.extend(own.unwrap_or_default());
    }
    Ok(out)
}

/// What one applied event changed of the source records: what every read model is handed.
#[derive(Debug)]
pub(crate) struct Change<'a> {
    /// The event's stream sequence.
    pub(crate) seq: u64,
    /// When JetStream stored it (nanoseconds since the epoch).
    pub(crate) published: i128,
    /// When the fact happened at its source: the envelope's `occurred_at`, in UTC to the
    /// millisecond as every instant is served ([`racing_events::Instant`]).
    pub(crate) occurred_at: &'a str,
    pub(crate) event: &'a Event,
    pub(crate) what: What<'a>,
    /// How the date's lists of races by venue changed: the event's race's odds documents
    /// follow the venues that run it, and every odds document of the date the venues and
    /// which one answers without one.
    pub(crate) listing: Listing,
    /// Whether a race's status changed: the date's cards and odds carry it.
    pub(crate) status_changed: bool,
    /// Of a price move, the book of its race's prices after it (`market.rs`).
    pub(crate) book: Option<Book>,
}

/// What the odds documents of a date take of its day record ([`Day::shape`]), worked out
/// once for all its races: its meetings, the venues every document lists (on a date of
/// more than one) and the venue whose document the one without a venue copies.
pub(crate) struct DayShape {
    pub(crate) meetings: Vec<Meeting<u8>>,
    pub(crate) listed: Option<Vec<String>>,
    pub(crate) main: Option<String>,
}

impl DayShape {
    /// What every odds document of the date shows of its meetings: the venues listed and
    /// the one that answers without a venue.
    fn listing(&self) -> (&Option<Vec<String>>, &Option<String>) {
        (&self.listed, &self.main)
    }
}

/// How an event changed the day record's lists of races by venue (its cards', results' and
/// odds').
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listing {
    /// Not at all.
    Unchanged,
    /// The event's race was listed or unlisted at its venue; the date's venues, and the one
    /// that answers without a venue, stayed as they were.
    Race,
    /// The date's venues, or the one that answers without a venue, changed with it.
    Venues,
}

impl Listing {
    /// How `day` changed from a day of `shape` ([`Day::shape`]) by listing or unlisting a
    /// race.
    fn of(shape: &DayShape, day: &Day) -> Listing {
        if day.shape().listing() == shape.listing() {
            Listing::Race
        } else {
            Listing::Venues
        }
    }
}

/// The records an event changed, with what they held before where a read model needs it.
#[derive(Debug)]
pub(crate) enum What<'a> {
    Profile(&'a HorseProfile),
    Card {
        old: Option<RaceCard>,
        new: &'a RaceCard,
    },
    Scratched(&'a RunnerScratched),
    Result {
        old: Option<RaceResult>,
        new: &'a RaceResult,
    },
    Odds(&'a OddsUpdated),
    Retracted(Retracted<'a>),
    /// A `RaceStatusChanged` for a race of `date`.
    Status {
        date: &'a str,
    },
}

/// One venue's race retracted: what it had until then.
#[derive(Debug)]
pub(crate) struct Retracted<'a> {
    pub(crate) date: &'a str,
    pub(crate) race_number: u8,
    pub(crate) venue: &'a str,
    /// Its card and result as stored before.
    pub(crate) card: Option<RaceCard>,
    pub(crate) result: Option<RaceResult>,
    /// Whether the date listed a card, a result of it.
    pub(crate) carded: bool,
    pub(crate) resulted: bool,
}

impl What<'_> {
    /// The date of the race (or races) the change is about; `None` for a profile.
    pub(crate) fn date(&self) -> Option<&str> {
        match self {
            What::Profile(_) => None,
            What::Card { new, .. } => Some(&new.date),
            What::Scratched(x) => Some(&x.date),
            What::Result { new, .. } => Some(&new.date),
            What::Odds(o) => Some(&o.date),
            What::Retracted(r) => Some(r.date),
            What::Status { date } => Some(date),
        }
    }
}

/// The source records a batch changed that it holds decoded until it renders: the odds
/// of the races it touched (a batch of thousands of price moves reads and writes each
/// race's odds once, not once a move), and the count of moves that came late.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// By date, then race and venue (`None`: given for every venue).
    odds: BTreeMap<String, RacesOdds>,
    /// The odds as the batch before wrote them ([`Written`]), taken from here by the
    /// race's first move of this batch rather than read back from its record.
    written: Written,
    /// Those of them moved in the batch: their records are written once, when it
    /// renders ([`Facts::write`]).
    moved: BTreeSet<(String, u8, Option<String>)>,
    odds_seq: Option<u64>,
    /// The runners scratched from the races the batch priced, by date, race and venue
    /// ([`scratched`]), read once a race and forgotten when a scratching or a retraction
    /// of the race changes them: each price move's book leaves them out.
    scratched: BTreeMap<(String, u8, Option<String>), BTreeSet<String>>,
    /// The price moves for races already off (`status.rs`).
    late_prices: LatePrices,
}

/// The odds of a date's races as given, by race and venue (`None`: for every venue).
pub(crate) type RacesOdds = BTreeMap<(u8, Option<String>), RaceOdds>;

/// The odds of the races a batch moved, as it wrote their records, with those the batch
/// before it had written of the same dates: what the next batch of its store starts from
/// ([`crate::fold::Kept`]). Without them, a live batch of a few moves would read each
/// race's record and decode its JSON (its prices and the market's trail) at the race's
/// first move, just after the batch before wrote it: a seventh of the folding thread's
/// instructions in batches of 20 events.
#[derive(Debug, Default)]
pub(crate) struct Written(BTreeMap<String, RacesOdds>);

impl Facts {
    /// A batch's, after the one that wrote `written`.
    pub(crate) fn resumed(written: Written) -> Facts {
        Facts {
            written,
            ..Facts::default()
        }
    }

    /// What the next batch may start from, once this one has written its odds
    /// ([`Facts::write`]).
    pub(crate) fn keep(self) -> Written {
        self.written
    }

    /// Stores what `event` (at stream sequence `seq`) gives, and says what it changed.
    pub(crate) fn apply<'a>(
        &mut self,
        s: &mut impl State,
        seq: u64,
        published: i128,
        occurred_at: &'a str,
        event: &'a Event,
    ) -> Result<Change<'a>, StoreError> {
        let mut listing = Listing::Unchanged;
        let mut status_changed = false;
        let mut book = None;
        let what = match event {
            Event::HorseProfileUpdated(p) => What::Profile(p),
            Event::RaceCardDeclared(c) => {
                let n = race_no(c.race_number)?;
                let key = keys::card(&c.date, n, &c.venue);
                let old;
                (old, listing) = keep(s, key, c, (&c.date, n, &c.venue), |d| &mut d.cards)?;
                What::Card { old, new: c }
            }
            Event::RunnerScratched(x) => {
                let n = race_no(x.race_number)?;
                let key = keys::scratched(&x.date, n, x.venue.as_deref());
                let mut set: BTreeSet<String> = read(s, &key)?.unwrap_or_default();
                set.insert(x.horse_no.clone());
                write(s, key, &set);
                self.forget_scratched(&x.date, n);
                What::Scratched(x)
            }
            Event::RaceResultPublished(r) => {
                let n = race_no(r.race_number)?;
                let key = keys::result(&r.date, n, &r.venue);
                let old;
                (old, listing) = keep(s, key, r, (&r.date, n, &r.venue), |d| &mut d.results)?;
                status_changed = status::finish(s, seq, occurred_at, r)?;
                What::Result { old, new: r }
            }
            Event::OddsUpdated(o) => {
                self.late_prices.note(s, o)?;
                let published_ms = i64::try_from(published / 1_000_000).unwrap_or(0);
                let after;
                (listing, after) = self.odds(s, seq, (occurred_at, published_ms), o)?;
                book = Some(after);
                What::Odds(o)
            }
            Event::RaceRetracted(r) => {
                let retracted;
                (listing, retracted) = self.retract(s, r)?;
                self.forget_scratched(&r.date, retracted.race_number);
                status_changed =
                    status::retract(s, r.date.as_str(), retracted.race_number, &r.venue)?;
                What::Retracted(retracted)
            }
            Event::RaceStatusChanged(x) => {
                status::set(s, seq, occurred_at, x)?;
                status_changed = true;
                What::Status { date: &x.date }
            }
        };
        if status_changed {
            self.late_prices.forget();
        }
        Ok(Change {
            seq,
            published,
            occurred_at,
            event,
            what,
            listing,
            status_changed,
            book,
        })
    }

    /// Takes in the odds `o` gives (given at `occurred_at`, published at `published_ms`):
    /// how the date's lists changed (a venue's race with odds for the first time), and
    /// the book of the race's prices after it: a venue's own merged with those given for
    /// every venue, or those given for every venue.
    fn odds(
        &mut self,
        s: &mut impl State,
        seq: u64,
        given: (&str, i64),
        o: &OddsUpdated,
    ) -> Result<(Listing, Book), StoreError> {
        let n = race_no(o.race_number)?;
        let mut listing = Listing::Unchanged;
        let scratched = match self.scratched.entry((o.date.clone(), n, o.venue.clone())) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(scratched(s, &o.date, n, o.venue.as_deref())?),
        };
        let races = self.odds.entry(o.date.clone()).or_default();
        let written = self.written.0.get_mut(&o.date);
        // A venue's race is priced with the odds given for every venue's.
        let every: Option<RaceOdds> = match (&o.venue, races.get(&(n, None))) {
            (None, _) => None,
            (Some(_), Some(every)) => Some(every.clone()),
            (Some(_), None) => match written.as_ref().and_then(|w| w.get(&(n, None))) {
                Some(every) => Some(every.clone()),
                None => read(s, &keys::odds(&o.date, n, None))?,
            },
        };
        let race = match races.entry((n, o.venue.clone())) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let stored = match written.and_then(|w| w.remove(&(n, o.venue.clone()))) {
                    Some(race) => Some(race),
                    None => read(s, &keys::odds(&o.date, n, o.venue.as_deref()))?,
                };
                if stored.is_none() {
                    // The first odds of this race (and venue): the day learns of them.
                    // (Odds given for every venue list no venue.)
                    let mut day = Day::read(s, &o.date)?;
                    let shape = o.venue.is_some().then(|| day.shape());
                    let added = match &o.venue {
                        Some(v) => day.odds.entry(v.clone()).or_default().insert(n),
                        None => day.odds_any.insert(n),
                    };
                    if added {
                        day.write(s, &o.date);
                        if let Some(shape) = &shape {
                            listing = Listing::of(shape, &day);
                        }
                    }
                }
                e.insert(stored.unwrap_or_default())
            }
        };
        race.apply(seq, given, &o.odds);
        let book = match &every {
            Some(every) => RaceOdds::merged(Some(every), Some(race))
                .unwrap_or_default()
                .book(scratched),
            None => race.book(scratched),
        };
        self.moved.insert((o.date.clone(), n, o.venue.clone()));
        self.odds_seq = Some(self.odds_seq.unwrap_or(0).max(seq));
        Ok((listing, book))
    }

    /// Removes everything of one venue's race: its card and the scratchings given for it,
    /// its result, and the odds given for it. Odds and scratchings given without a venue
    /// are about the race of that number at every venue and stay. How the date's lists
    /// changed, and what the race had.
    fn retract<'a>(
        &mut self,
        s: &mut impl State,
        r: &'a RaceRetracted,
    ) -> Result<(Listing, Retracted<'a>), StoreError> {
        let n = race_no(r.race_number)?;
        let (date, venue) = (r.date.as_str(), r.venue.as_str());
        let card = read(s, &keys::card(date, n, venue))?;
        let result = read(s, &keys::result(date, n, venue))?;
        let mut day = Day::read(s, date)?;
        let shape = day.shape();

        let scratched = keys::scratched(date, n, Some(venue));
        if s.get(&scratched)?.is_some() {
            s.delete(scratched);
        }
        let carded = take(&mut day.cards, venue, n);
        if carded {
            s.delete(keys::card(date, n, venue));
        }
        if result.is_some() {
            s.delete(keys::result(date, n, venue));
        }
        let resulted = take(&mut day.results, venue, n);

        let in_batch = self
            .odds
            .get_mut(date)
            .and_then(|races| races.remove(&(n, Some(venue.to_owned()))))
            .is_some();
        if let Some(written) = self.written.0.get_mut(date) {
            written.remove(&(n, Some(venue.to_owned())));
        }
        // Removed also where only this batch held them, so that the removal is kept in the
        // odds record's history: as of any later point, only later moves count.
        let key = keys::odds(date, n, Some(venue));
        if in_batch || s.get(&key)?.is_some() {
            s.delete(key);
        }
        let odds = take(&mut day.odds, venue, n);

        let listing = if carded || resulted || odds {
            day.write(s, date);
            Listing::of(&shape, &day)
        } else {
            Listing::Unchanged
        };
        let retracted = Retracted {
            date,
            race_number: n,
            venue,
            card,
            result,
            carded,
            resulted,
        };
        Ok((listing, retracted))
    }

    /// Whether the batch holds the odds of `o`'s race and venue: then folding `o` changes
    /// only them (not the date's venues or races, as the first odds of a race do).
    pub(crate) fn holds_odds(&self, o: &OddsUpdated) -> bool {
        let Ok(n) = race_no(o.race_number) else {
            return false;
        };
        self.odds
            .get(&o.date)
            .is_some_and(|races| races.contains_key(&(n, o.venue.clone())))
    }

    /// The odds the batch holds of the races of `date` it touched, as their records will
    /// stand once the batch writes them ([`Facts::write`]): what a render reads in place
    /// of those records, which are not written before.
    pub(crate) fn held_odds(&self, date: &str) -> Option<&RacesOdds> {
        self.odds.get(date)
    }

    /// Forgets the scratchings held of race `n` of `date`, at every venue: a scratching or
    /// a retraction changed them.
    fn forget_scratched(&mut self, date: &str, n: u8) {
        if !self.scratched.is_empty() {
            self.scratched
                .retain(|(d, race, _), _| !(d == date && *race == n));
        }
    }

    /// Writes the odds the batch moved, each race's record once however many moves and
    /// renders it had, and the sequence of the newest; keeps them as written, with those
    /// the batch before wrote of the same dates, for the next batch ([`Written`]).
    pub(crate) fn write(&mut self, s: &mut impl State) -> Result<(), StoreError> {
        let moved = std::mem::take(&mut self.moved);
        if !moved.is_empty() {
            let mut written = BTreeMap::new();
            for (date, n, venue) in moved {
                let Some(race) = self
                    .odds
                    .get_mut(&date)
                    .and_then(|r| r.remove(&(n, venue.clone())))
                else {
                    continue;
                };
                write(s, keys::odds(&date, n, venue.as_deref()), &race);
                let day = match written.entry(date) {
                    Entry::Occupied(day) => day.into_mut(),
                    Entry::Vacant(day) => {
                        let kept = self.written.0.remove(day.key()).unwrap_or_default();
                        day.insert(kept)
                    }
                };
                day.insert((n, venue), race);
            }
            self.written = Written(written);
        }
        self.odds.clear();
        self.scratched.clear();
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
        Ok(())
    }

    /// The price moves the batch applied for races already off, finished, abandoned or
    /// void.
    pub(crate) fn late_prices(&self) -> u64 {
        self.late_prices.count()
    }
}
