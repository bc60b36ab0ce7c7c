//! The renders of a batch: every document the batch touched, once, from the records as
//! they now stand; and any document from any [`Records`] (the records as they stood at a
//! point of the log, for `as_of`).

use std::collections::{BTreeMap, BTreeSet};

use racing_events::{RaceCard, RaceResult};
use serde::de::DeserializeOwned;

use super::{Day, Fold, Named, RacesOdds};
use crate::docs::{self, Meeting};
use crate::form::FormSource;
use crate::keys::{self, DocKey};
use crate::state::{read, write, RaceOdds, Records, State};
use crate::status::{self, Status};
use crate::StoreError;

impl Fold {
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
pub(super) fn put_doc(
    s: &mut impl State,
    key: DocKey<'_>,
    doc: &[u8],
    seq: u64,
) -> Result<bool, StoreError> {
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

/// The document under `key` as rendered from the records of `s`: its body (for a form,
/// the framed record), or `None` where there is none. With the records as they stood at
/// a point of the log, the document as it was served then.
fn render_doc(s: &impl Records, key: DocKey<'_>) -> Result<Option<Vec<u8>>, StoreError> {
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
    // venue's race of that number; its status.
    let mut scratched: BTreeMap<(i64, &str), BTreeSet<String>> = BTreeMap::new();
    let mut statuses: BTreeMap<(i64, String), Status> = BTreeMap::new();
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
                if let Some(st) = status::of_race(s, date, n, Some(venue))? {
                    statuses.insert((c.race_number, venue.clone()), st);
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
            .get(&(c.race_number, c.venue.as_str()))
            .is_some_and(|set| set.contains(horse))
    };
    let status = |c: &RaceCard| statuses.get(&(c.race_number, c.venue.clone()));
    Ok(docs::render_cards(date, &meetings, is_scratched, status).days)
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
        let st = status::of_race(s, date, n, venue)?;
        let doc = docs::render_odds(date, venue, listed.as_deref(), n, &view, st.as_ref());
        if unnamed.is_none() || venue == main {
            unnamed = Some(doc.clone());
        }
        out.push((venue.map(str::to_owned), doc));
    }
    // No venue of the race is known: the odds given for every venue, if any.
    let unnamed = match (unnamed, &every) {
        (Some(doc), _) => Some(doc),
        (None, Some(race)) => {
            let st = status::of_race(s, date, n, None)?;
            let doc = docs::render_odds(date, None, listed.as_deref(), n, race, st.as_ref());
            Some(doc)
        }
        (None, None) => None,
    };
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
    for (prices, over) in [
        (&mut view.runners, &over.runners),
        (&mut view.place, &over.place),
    ] {
        for (horse, &(price, seq)) in over {
            let slot = prices.entry(horse.clone()).or_insert((price, seq));
            if seq > slot.1 {
                *slot = (price, seq);
            }
        }
    }
    Some(view)
}

impl crate::Store {
    /// A served document as it was once the log up to `seq` had been applied (rendered
    /// from the versions of the records it is made from), or `None` where there was none
    /// then. Its `ETag` is that of the same bytes served then, so it never changes; its
    /// sequence ([`crate::Doc::seq`]) is `seq`.
    pub fn doc_as_of(
        &self,
        key: crate::DocKey<'_>,
        seq: u64,
    ) -> Result<Option<crate::Doc>, StoreError> {
        let past = crate::history::AsOf {
            tree: &self.tree,
            reads: self.reads(),
            seq,
        };
        let Some(body) = render_doc(&past, key)? else {
            return Ok(None);
        };
        let form = matches!(key, crate::DocKey::Form(_));
        crate::Doc::new(crate::docs::seal(form, &body, seq).into())
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt("a sealed document".into()))
    }
}
