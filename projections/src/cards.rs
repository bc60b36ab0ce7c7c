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
use crate::docs::Tag;
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
    /// The digest of each race's part of the cards last made (`race_parts.rs`), and of
    /// what it shows besides its runners' forms.
    digests: Parts<u128>,
    listings: Parts<docs::cards::Listing>,
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
/// digests of the races' parts and listings it made, the careers it decoded, the days'
/// rides it counted and the horses' newest cards it knows.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    digests: Parts<u128>,
    listings: Parts<docs::cards::Listing>,
    pasts: form::Pasts,
    days: form::strikes::Days,
    newest: entries::NewestCards,
}

impl Cards {
    /// A model for a batch that starts where the one that kept `kept` ended.
    pub(crate) fn resumed(kept: Kept) -> Cards {
        Cards {
            digests: kept.digests,
            listings: kept.listings,
            pasts: kept.pasts,
            days: kept.days,
            newest: kept.newest,
            ..Cards::default()
        }
    }

    /// What the next batch may start from, once the batch has rendered and finished.
    pub(crate) fn keep(self) -> Kept {
        Kept {
            digests: self.digests,
            listings: self.listings,
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
            // Every race of a date an event changed; else only those a result reached.
            let every = whole.contains(date);
            let reached: BTreeSet<(u8, &str)> = races
                .range((date.to_owned(), 0, String::new())..)
                .take_while(|(d, ..)| d == date)
                .map(|(_, n, venue)| (*n, venue.as_str()))
                .collect();
            let (digests, listings) = (&mut self.digests, &mut self.listings);
            let digest =
                |race @ (_, n, venue): (&str, u8, &str), decoded: &mut _, people: &mut _| {
                    if !every && !reached.contains(&(n, venue)) {
                        if let Some(kept) = digests.kept(race) {
                            return Ok(Some(kept));
                        }
                    }
                    race::digest((&mut *digests, &mut *listings, decoded, people), s, race)
                };
            // The heads hold the documents' digests: no race or document is rendered.
            let kept = (&mut self.pasts.decoded, &mut self.days);
            let meetings = meetings_of(s, date, kept, digest)?;
            out.put_venues(s, &tags(date, &meetings), |venue| {
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

/// The race-card documents of `date`, per venue and for the day's main meeting, rendered
/// afresh from `s`: every card decoded from its record, every race's part rendered, every
/// day's rides read.
pub(crate) fn cards_of(s: &impl Records, date: &str) -> Result<ByVenue, StoreError> {
    let afresh = (&mut Default::default(), &mut Default::default());
    let part = |race: (&str, u8, &str),
                decoded: &mut decoded::Decoded,
                people: &mut form::strikes::People| {
        match race::read((decoded, people), s, race)? {
            Some(read) => read.render(race, decoded).map(Some),
            None => Ok(None),
        }
    };
    let meetings = meetings_of(s, date, afresh, part)?;
    Ok(docs::cards::render_cards(date, &meetings))
}

/// The race-card documents of `date` as [`cards_of`] renders them, each with the tag its
/// head holds ([`tags`]): a card served as it is now, its head read with it.
pub(crate) fn cards_headed(
    s: &impl Records,
    date: &str,
) -> Result<ByVenue<(Vec<u8>, Tag)>, StoreError> {
    let afresh = (&mut Default::default(), &mut Default::default());
    let part = |race: (&str, u8, &str),
                decoded: &mut decoded::Decoded,
                people: &mut form::strikes::People| {
        let Some(read) = race::read((decoded, people), s, race)? else {
            return Ok(None);
        };
        let digest = read.digest(&read.listing(race)?, decoded)?;
        Ok(Some((read.render(race, decoded)?, digest)))
    };
    let meetings = meetings_of(s, date, afresh, part)?;
    let (mut parts, mut digests) = (Vec::new(), Vec::new());
    for m in meetings {
        let (races, race_digests) = m.races.into_iter().unzip();
        parts.push(Meeting {
            venue: m.venue.clone(),
            races,
        });
        digests.push(Meeting {
            venue: m.venue,
            races: race_digests,
        });
    }
    let tags = tags(date, &digests);
    let docs = docs::cards::render_cards(date, &parts);
    Ok(docs
        .into_iter()
        .zip(tags)
        .map(|((venue, doc), (_, tag))| (venue, (doc, tag)))
        .collect())
}

/// The tags the heads of the card documents of `date` hold, by venue: their digests
/// ([`docs::cards::card_digests`]), from the digests of the races of its `meetings`.
fn tags(date: &str, meetings: &[Meeting<u128>]) -> ByVenue<Tag> {
    docs::cards::card_digests(date, meetings)
        .into_iter()
        .map(|(venue, digest)| (venue, docs::tag(digest)))
        .collect()
}

/// The meetings of `date` with what `race` makes of each of their races (given its date,
/// number and venue, and the cards and forms decoded and the date's strike rates): from its
/// cards, as `s` holds them, each card's races in order; the cards and forms from `decoded`
/// where their records are those they were decoded from, and the days' rides and the
/// date's strike rates from `days` where their records are those it read or wrote.
fn meetings_of<T>(
    s: &impl Records,
    date: &str,
    (decoded, days): (&mut decoded::Decoded, &mut form::strikes::Days),
    mut race: impl FnMut(
        (&str, u8, &str),
        &mut decoded::Decoded,
        &mut form::strikes::People,
    ) -> Result<Option<T>, StoreError>,
) -> Result<Vec<Meeting<T>>, StoreError> {
    let day = Day::read(s, date)?;
    let people = days.people(s, date)?;
    let mut meetings = Vec::with_capacity(day.cards.len());
    for (venue, races) in &day.cards {
        let mut list = Vec::with_capacity(races.len());
        for &n in races {
            if let Some(part) = race((date, n, venue), decoded, people)? {
                list.push(part);
            }
        }
        meetings.push(Meeting {
            venue: venue.clone(),
            races: list,
        });
    }
    Ok(meetings)
}
