//! The race-card documents: a date's cards per venue and for the day's main meeting, with
//! each race's scratchings and status and each runner's form as of the race's date
//! (`cards/form.rs`), rendered from the source records.

mod career;
mod form;

use std::collections::{BTreeMap, BTreeSet};

use racing_events::RaceCard;

use crate::docs::{self, Meeting, StoredRaceForm};
use crate::facts::{Change, Day, What};
use crate::keys::{self, DocKey};
use crate::model::ReadModel;
use crate::state::{read, Records, State};
use crate::status::{self, Status};
use crate::written::{ByVenue, Stale};
use crate::StoreError;

/// The dates whose cards an event changed (a card, a scratching, a status, a retraction),
/// and the races whose form it may have: its own card's, and those a result changes.
#[derive(Debug, Default)]
pub(crate) struct Cards {
    dates: BTreeSet<String>,
    stale: Stale,
    forms: BTreeSet<form::Race>,
    results: Vec<form::Resulted>,
}

impl ReadModel for Cards {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        match &change.what {
            What::Card { old, new } => {
                form::index(s, old.as_ref(), Some(new))?;
                let n = crate::state::race_no(new.race_number)?;
                self.forms.insert((new.date.clone(), n, new.venue.clone()));
            }
            What::Result { old, new } => {
                let resulted = form::Resulted::of(old.as_ref(), Some(new));
                form::keep_careers(s, &resulted)?;
                self.results.push(resulted);
            }
            What::Retracted(r) => {
                form::index(s, r.card.as_ref(), None)?;
                self.forms
                    .insert((r.date.to_owned(), r.race_number, r.venue.to_owned()));
                if let Some(result) = &r.result {
                    let resulted = form::Resulted::of(Some(result), None);
                    form::keep_careers(s, &resulted)?;
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

    fn render<S: State>(&mut self, s: &mut S, seq: u64) -> Result<(), StoreError> {
        // The forms first: after the horses' forms and the people's rides, which the
        // models before this one wrote.
        for resulted in std::mem::take(&mut self.results) {
            self.forms.extend(resulted.races(s)?);
        }
        for race in std::mem::take(&mut self.forms) {
            if form::refresh(s, &race)? && !self.dates.contains(&race.0) {
                self.dates.insert(race.0);
            }
        }
        let mut out = self.stale.rendering(seq);
        for date in std::mem::take(&mut self.dates) {
            out.put_venues(s, &cards_of(s, &date)?, |venue| {
                DocKey::Card { date: &date, venue }.key()
            })?;
        }
        out.finish(s);
        Ok(())
    }
}

/// The race-card documents of `date`, per venue and for the day's main meeting, from its
/// cards and scratchings as `s` holds them.
pub(crate) fn cards_of(s: &impl Records, date: &str) -> Result<ByVenue, StoreError> {
    let day = Day::read(s, date)?;
    let mut meetings = Vec::with_capacity(day.cards.len());
    // Per race and venue: the scratchings given for it and those given for every
    // venue's race of that number; its status.
    let mut scratched: BTreeMap<(i64, &str), BTreeSet<String>> = BTreeMap::new();
    let mut statuses: BTreeMap<(i64, String), Status> = BTreeMap::new();
    let mut forms: BTreeMap<(i64, String), StoredRaceForm> = BTreeMap::new();
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
                if let Some(f) = read::<StoredRaceForm>(s, &keys::card_form(date, n, venue))? {
                    forms.insert((c.race_number, venue.clone()), f);
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
    let form = |c: &RaceCard| forms.get(&(c.race_number, c.venue.clone()));
    Ok(docs::render_cards(date, &meetings, is_scratched, status, form).days)
}
