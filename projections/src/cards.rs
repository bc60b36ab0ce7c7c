//! The race-card documents: a date's cards per venue and for the day's main meeting, with
//! each race's scratchings and status and each runner's form as of the race's date
//! (`cards/form.rs`), rendered from the source records.

mod career;
mod decoded;
mod entries;
mod form;
mod race;

use std::collections::BTreeSet;

use crate::doc_writes::{ByVenue, Stale};
use crate::docs;
use crate::docs::meeting::Meeting;
use crate::facts::{Change, Day, Facts, What};
use crate::keys::doc::DocKey;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::race_parts::Parts;
use crate::state::{Records, State};

/// The dates whose cards an event changed (a card, a scratching, a status, a retraction),
/// and the races whose form it may have: its own card's, and those a result changes.
#[derive(Debug, Default)]
pub(crate) struct Cards {
    /// The dates each of whose races is checked again (`race.rs`): those an event changed
    /// a card, a scratching, a status or the races of.
    dates: BTreeSet<String>,
    /// The races checked again on the other dates: those whose form a result may have
    /// changed, or its people's strike rates ([`form::Resulted::races`]). Each other race
    /// of their dates is as it was when it was last checked, and its part is taken as
    /// kept, where it is.
    races: BTreeSet<form::Race>,
    stale: Stale,
    forms: BTreeSet<form::Race>,
    results: Vec<form::Resulted>,
    /// Each race's part of the cards last rendered (`race_parts.rs`).
    parts: Parts,
    /// The careers the batch read, decoded.
    pasts: form::Pasts,
    /// The days' rides and wins the strike rates are summed from, read and written.
    days: form::strikes::Days,
    /// The newest card of each horse the batch asked about or declared.
    newest: entries::NewestCards,
    /// The events the batch folded.
    events: usize,
}

/// What the model hands on to the next batch of its store ([`crate::fold::Kept`]): the
/// races' parts it rendered, the careers it decoded, the days' rides it counted and the
/// horses' newest cards it knows.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    parts: Parts,
    pasts: form::Pasts,
    days: form::strikes::Days,
    newest: entries::NewestCards,
}

impl Cards {
    /// A model for a batch that starts where the one that kept `kept` ended.
    pub(crate) fn resumed(kept: Kept) -> Cards {
        Cards {
            parts: kept.parts,
            pasts: kept.pasts,
            days: kept.days,
            newest: kept.newest,
            ..Cards::default()
        }
    }

    /// What the next batch may start from, once the batch has rendered and finished.
    pub(crate) fn keep(self) -> Kept {
        Kept {
            parts: self.parts,
            pasts: self.pasts.kept(self.events),
            days: self.days.kept(),
            newest: self.newest.kept(),
        }
    }
}

impl ReadModel for Cards {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        self.events += 1;
        match &change.what {
            What::Card { old, new } => {
                self.newest.index(old.as_ref(), Some(new))?;
                let n = crate::state::race_no(new.race_number)?;
                let key = crate::keys::card(&new.date, n, &new.venue);
                self.pasts.decoded.written_card(s, &key, new)?;
                self.forms.insert((new.date.clone(), n, new.venue.clone()));
            }
            What::Result { old, new } => {
                let resulted = form::Resulted::of(old.as_ref(), Some(new));
                self.days.count(s, resulted.rides())?;
                form::keep_careers(s, &resulted, &mut self.pasts)?;
                self.results.push(resulted);
            }
            What::Retracted(r) => {
                self.newest.index(r.card.as_ref(), None)?;
                self.forms
                    .insert((r.date.to_owned(), r.race_number, r.venue.to_owned()));
                if let Some(result) = &r.result {
                    let resulted = form::Resulted::of(Some(result), None);
                    self.days.count(s, resulted.rides())?;
                    form::keep_careers(s, &resulted, &mut self.pasts)?;
                    self.results.push(resulted);
                }
            }
            _ => {}
        }
        let date = match &change.what {
            What::Card { new, .. } => Some(new.date.as_str()),
            What::Scratched(x) => Some(x.date.as_str()),
            What::Retracted(r) if r.carded => {
                for venue in [Some(r.venue), None] {
                    self.stale.note(DocKey::Card {
                        date: r.date,
                        venue,
                    });
                }
                Some(r.date)
            }
            what if change.status_changed => what.date(),
            _ => None,
        };
        if let Some(date) = date {
            if !self.dates.contains(date) {
                self.dates.insert(date.to_owned());
            }
        }
        Ok(())
    }

    fn render<S: State>(&mut self, s: &mut S, seq: u64, _: &Facts) -> Result<(), StoreError> {
        // The forms first: after the horses' forms, which the models before this one
        // wrote.
        let mut amended = form::Amended::default();
        for resulted in std::mem::take(&mut self.results) {
            amended.add(s, resulted, (&mut self.newest, &mut self.pasts.decoded))?;
        }
        let whole = std::mem::take(&mut self.forms);
        for race in &whole {
            if form::refresh(s, race, &mut self.pasts)? && !self.dates.contains(&race.0) {
                self.dates.insert(race.0.clone());
            }
        }
        for race in amended.races(&whole) {
            form::amend(s, race, &amended, &mut self.pasts)?;
            // Checked again whether or not its horses' part changed: its people's strike
            // rates may have (a part whose records and rates are the same is copied).
            self.races.insert(race.clone());
        }
        let whole = std::mem::take(&mut self.dates);
        let races = std::mem::take(&mut self.races);
        let mut dates: BTreeSet<&str> = whole.iter().map(String::as_str).collect();
        dates.extend(races.iter().map(|(date, ..)| date.as_str()));
        let mut out = self.stale.rendering(seq);
        for date in dates {
            let kept = (&mut self.parts, &mut self.pasts.decoded, &mut self.days);
            // Every race of a date an event changed; else only those a result reached.
            let every = whole.contains(date);
            let reached: BTreeSet<(u8, &str)> = races
                .range((date.to_owned(), 0, String::new())..)
                .take_while(|(d, ..)| d == date)
                .map(|(_, n, venue)| (*n, venue.as_str()))
                .collect();
            let check = |n: u8, venue: &str| every || reached.contains(&(n, venue));
            out.put_venues(s, &cards_of(s, date, kept, check)?, |venue| {
                DocKey::Card { date, venue }.key()
            })?;
        }
        out.finish(s);
        Ok(())
    }

    fn finish<S: State>(&mut self, s: &mut S) -> Result<(), StoreError> {
        // The names' records, which hold the cards each horse is declared on, are
        // written: the models that render once a batch wrote before this.
        self.newest.written();
        self.pasts.write(s)
    }
}

/// The race-card documents of `date`, per venue and for the day's main meeting, from its
/// cards, scratchings, statuses and forms, and the rides of the 14 days before, as `s`
/// holds them; each race's part from `parts` where its records and strike rates are those
/// it was rendered from, its card and form from `decoded` where their records are those
/// they were decoded from, and the days' rides and the date's strike rates from `days`
/// where their records are those it read or wrote. A race that `check` (given its number
/// and venue) leaves out is taken from `parts` as kept, not read, where `parts` keeps it:
/// the fold leaves out those no event changed since they were last checked.
pub(crate) fn cards_of(
    s: &impl Records,
    date: &str,
    (parts, decoded, days): (&mut Parts, &mut decoded::Decoded, &mut form::strikes::Days),
    check: impl Fn(u8, &str) -> bool,
) -> Result<ByVenue, StoreError> {
    let day = Day::read(s, date)?;
    let people = days.people(s, date)?;
    let mut meetings = Vec::with_capacity(day.cards.len());
    for (venue, races) in &day.cards {
        let mut list = Vec::with_capacity(races.len());
        for &n in races {
            if !check(n, venue) {
                if let Some(part) = parts.kept((date, n, venue)) {
                    list.push(part);
                    continue;
                }
            }
            let kept = (&mut *parts, &mut *decoded, &mut *people);
            if let Some(part) = race::part(kept, s, date, n, venue)? {
                list.push(part);
            }
        }
        meetings.push(Meeting {
            venue: venue.clone(),
            races: list,
        });
    }
    Ok(docs::cards::render_cards(date, &meetings).days)
}

/// The card documents of `date` rendered afresh from `s`: every card decoded from its
/// record, every race's part rendered again, every day's rides read again.
#[cfg(test)]
pub(crate) fn cards_afresh(s: &impl Records, date: &str) -> Result<ByVenue, StoreError> {
    cards_of(
        s,
        date,
        (
            &mut Parts::default(),
            &mut Default::default(),
            &mut Default::default(),
        ),
        |_, _| true,
    )
}
