//! A horse's names as the fold keeps them: one small record a horse (its profile's name,
//! how many cards and results give each name, its latest date with one:
//! `keys::horse_names`) and one a date it has a card or a result on (what each gives it:
//! `keys::horse_names_on`), each pointing to the horse's date before it with one. A card
//! or a result writes its date's record and the horse's, whatever the size of its history;
//! the date records are a list, newest first, so that the newest name is found again when
//! the latest race is taken back.

use std::collections::BTreeMap;

use racing_events::{HorseProfile, RaceCard, RaceResult};
use serde::{Deserialize, Serialize};

use super::index::Indexed;
use crate::encoding::{number, part, put_number, put_part};
use crate::facts::{Change, What};
use crate::keys;
use crate::kv::StoreError;
use crate::model::ReadModel;
use crate::state::{read, Records, State};

/// A race's card or result: the names it gives its runners.
pub(crate) trait NamesRunners {
    /// `c` for a card, `r` for a result: each keeps the names it gave apart.
    const KIND: char;
    /// Its date, race number and venue.
    fn race(&self) -> (&str, i64, &str);
    /// Each runner's brand number and the name given it.
    fn runners(&self) -> Vec<(String, String)>;
}

impl NamesRunners for RaceCard {
    const KIND: char = 'c';
    fn race(&self) -> (&str, i64, &str) {
        (&self.date, self.race_number, &self.venue)
    }
    fn runners(&self) -> Vec<(String, String)> {
        let named = |r: &racing_events::CardRunner| (r.horse_no.clone(), r.horse_name.clone());
        self.runners.iter().map(named).collect()
    }
}

impl NamesRunners for RaceResult {
    const KIND: char = 'r';
    fn race(&self) -> (&str, i64, &str) {
        (&self.date, self.race_number, &self.venue)
    }
    fn runners(&self) -> Vec<(String, String)> {
        let named = |x: &racing_events::ResultRunner| (x.horse_no.clone(), x.horse_name.clone());
        self.runners.iter().map(named).collect()
    }
}

/// A horse's own record: small, whatever the number of its races.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Head {
    /// The name its profile gives, and the sequence of that profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    profile: Option<(String, u64)>,
    /// Each name its cards and results give, and how many of them give it: a name leaves
    /// when the last of them is taken back.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    names: BTreeMap<String, u64>,
    /// The latest date it has a card or a result on: the head of the list of its dates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last: Option<String>,
}

impl Head {
    fn is_empty(&self) -> bool {
        self.profile.is_none() && self.names.is_empty() && self.last.is_none()
    }
}

/// What the cards and results of one date give a horse, and its date before with some.
#[derive(Debug, Default, Clone, PartialEq)]
struct Dated {
    prev: Option<String>,
    /// In order of race number, venue and kind.
    races: Vec<Given>,
}

/// The name one race's card or result gives: race number, venue, `c` or `r`, the name,
/// and the sequence of the event.
#[derive(Debug, Clone, PartialEq)]
struct Given(i64, String, char, String, u64);

impl Given {
    fn race(&self) -> (i64, &str, char) {
        (self.0, &self.1, self.2)
    }
}

/// Of a stored [`Given`]'s flags: given by a result (else by a card).
const BY_RESULT: u8 = 1;
/// Of its flags: the venue is that of the one before it in the record.
const SAME_VENUE: u8 = 2;
/// Of its flags: the name is that of the one before it in the record.
const SAME_NAME: u8 = 4;

impl Dated {
    /// The record as stored: whether a date before follows (1) or not (0), then that date
    /// as a part; then each race's name given: its flags, its race number (zigzag), its
    /// venue and its name as parts where they differ from the one before's (a card and
    /// the result of a race mostly give the same), and its sequence. About half the size
    /// of the JSON it replaces, which named no field but repeated every venue and name.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 32 * self.races.len());
        match &self.prev {
            Some(prev) => {
                out.push(1);
                put_part(&mut out, prev.as_bytes());
            }
            None => out.push(0),
        }
        let mut before: Option<&Given> = None;
        for g in &self.races {
            let same_venue = before.is_some_and(|b| b.1 == g.1);
            let same_name = before.is_some_and(|b| b.3 == g.3);
            let mut flags = 0;
            if g.2 == 'r' {
                flags |= BY_RESULT;
            }
            if same_venue {
                flags |= SAME_VENUE;
            }
            if same_name {
                flags |= SAME_NAME;
            }
            out.push(flags);
            put_number(&mut out, ((g.0 << 1) ^ (g.0 >> 63)) as u64);
            if !same_venue {
                put_part(&mut out, g.1.as_bytes());
            }
            if !same_name {
                put_part(&mut out, g.3.as_bytes());
            }
            put_number(&mut out, g.4);
            before = Some(g);
        }
        out
    }

    /// The record stored under `key` ([`Dated::encode`]).
    fn decode(key: &[u8], stored: &[u8]) -> Result<Dated, StoreError> {
        let corrupt = || {
            StoreError::Corrupt(format!(
                "{}: a horse's names of a date",
                String::from_utf8_lossy(key)
            ))
        };
        let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).map_err(|_| corrupt());
        let (&has_prev, mut rest) = stored.split_first().ok_or_else(corrupt)?;
        let prev = match has_prev {
            0 => None,
            1 => Some(text(part(&mut rest).ok_or_else(corrupt)?)?),
            _ => return Err(corrupt()),
        };
        let mut races: Vec<Given> = Vec::new();
        while let Some((&flags, after)) = rest.split_first() {
            rest = after;
            if flags & !(BY_RESULT | SAME_VENUE | SAME_NAME) != 0 {
                return Err(corrupt());
            }
            let zigzag = number(&mut rest).ok_or_else(corrupt)?;
            let n = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
            let before = races.last();
            let venue = match before {
                Some(b) if flags & SAME_VENUE != 0 => b.1.clone(),
                _ if flags & SAME_VENUE != 0 => return Err(corrupt()),
                _ => text(part(&mut rest).ok_or_else(corrupt)?)?,
            };
            let name = match before {
                Some(b) if flags & SAME_NAME != 0 => b.3.clone(),
                _ if flags & SAME_NAME != 0 => return Err(corrupt()),
                _ => text(part(&mut rest).ok_or_else(corrupt)?)?,
            };
            let kind = if flags & BY_RESULT != 0 { 'r' } else { 'c' };
            let seq = number(&mut rest).ok_or_else(corrupt)?;
            races.push(Given(n, venue, kind, name, seq));
        }
        Ok(Dated { prev, races })
    }

    /// The record of `horse`'s names of `date` in `s`, if any.
    fn read(s: &impl Records, horse: &str, date: &str) -> Result<Option<Dated>, StoreError> {
        let key = keys::horse_names_on(horse, date);
        s.get(&key)?
            .map(|stored| Dated::decode(&key, &stored))
            .transpose()
    }
}

/// One date's record of a horse as loaded (`was`) and as the batch leaves it (`now`).
#[derive(Debug, Default)]
struct Slot {
    was: Option<Dated>,
    now: Option<Dated>,
}

/// One touched horse: its record as loaded and as changed, the dates the batch read or
/// changed, and what its index entries were made from when loaded.
#[derive(Debug)]
struct Horse {
    was: Head,
    head: Head,
    dates: BTreeMap<String, Slot>,
    had: Indexed,
}

/// What a horse's list of dates is when it points to a date without a record, or to a
/// later date than the one pointing: damaged, and rebuilt from the log.
fn broken(horse: &str) -> StoreError {
    StoreError::Corrupt(format!("the list of dates of horse {horse}'s names"))
}

impl Horse {
    fn load(s: &impl Records, horse: &str) -> Result<Horse, StoreError> {
        let head: Head = read(s, &keys::horse_names(horse))?.unwrap_or_default();
        let mut h = Horse {
            was: head.clone(),
            head,
            dates: BTreeMap::new(),
            had: Indexed::default(),
        };
        // Made from its names as loaded, so that render writes entries only if they change.
        h.had = h.indexed(s, horse)?;
        Ok(h)
    }

    /// The record of `date`, loaded on first use.
    fn slot(&mut self, s: &impl Records, horse: &str, date: &str) -> Result<&mut Slot, StoreError> {
        use std::collections::btree_map::Entry;
        Ok(match self.dates.entry(date.to_owned()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let was = Dated::read(s, horse, date)?;
                e.insert(Slot {
                    now: was.clone(),
                    was,
                })
            }
        })
    }

    /// The record of `date`, one of the list's: there must be one.
    fn listed(
        &mut self,
        s: &impl Records,
        horse: &str,
        date: &str,
    ) -> Result<&mut Dated, StoreError> {
        self.slot(s, horse, date)?
            .now
            .as_mut()
            .ok_or_else(|| broken(horse))
    }

    /// Its names, and its newest: its profile's or that of its latest-dated card or
    /// result (the later event of a date), whichever the log gave later.
    fn indexed(&mut self, s: &impl Records, horse: &str) -> Result<Indexed, StoreError> {
        let raced = match self.head.last.clone() {
            Some(date) => self
                .listed(s, horse, &date)?
                .races
                .iter()
                .max_by(|a, b| (a.4, a.race()).cmp(&(b.4, b.race())))
                .map(|g| (g.3.clone(), g.4)),
            None => None,
        };
        let newest = match (&self.head.profile, raced) {
            (Some(p), Some(r)) => Some(if p.1 >= r.1 { p.0.clone() } else { r.0 }),
            (Some((name, _)), None) => Some(name.clone()),
            (None, raced) => raced.map(|(name, _)| name),
        };
        let profile = self.head.profile.iter().map(|(name, _)| name);
        Ok(Indexed {
            names: profile.chain(self.head.names.keys()).cloned().collect(),
            newest,
        })
    }

    /// Sets (`Some`) or takes back (`None`) the name one race's card or result gives.
    fn give(
        &mut self,
        s: &impl Records,
        horse: &str,
        (date, race): (&str, (i64, &str, char)),
        given: Option<&str>,
        seq: u64,
    ) -> Result<(), StoreError> {
        let slot = &mut self.slot(s, horse, date)?.now;
        let listed = slot.is_some();
        let dated = slot.get_or_insert_with(Dated::default);
        let at = dated.races.binary_search_by(|g| g.race().cmp(&race));
        let gone = match at {
            Ok(i) => Some(dated.races.remove(i).3),
            Err(_) => None,
        };
        if let Some(name) = given {
            let (n, venue, kind) = race;
            let i = at.unwrap_or_else(|i| i);
            let g = Given(n, venue.to_owned(), kind, name.to_owned(), seq);
            dated.races.insert(i, g);
        }
        let prev = dated.prev.clone();
        let empty = dated.races.is_empty();
        if empty {
            *slot = None;
        }
        if let Some(name) = gone {
            if let Some(count) = self.head.names.get_mut(&name) {
                *count -= 1;
                if *count == 0 {
                    self.head.names.remove(&name);
                }
            }
        }
        if let Some(name) = given {
            *self.head.names.entry(name.to_owned()).or_default() += 1;
        }
        match (listed, empty) {
            (false, false) => self.link(s, horse, date),
            (true, true) => self.unlink(s, horse, date, prev),
            _ => Ok(()),
        }
    }

    /// The date in the list after which `date` goes (`None`: it is the latest), and the
    /// one before it, going back from the latest: a card or a result is for a horse's
    /// next race far more often than for an earlier one.
    fn place(
        &mut self,
        s: &impl Records,
        horse: &str,
        date: &str,
    ) -> Result<(Option<String>, Option<String>), StoreError> {
        let mut after = None;
        let mut at = self.head.last.clone();
        while let Some(d) = at.take() {
            if d.as_str() <= date {
                at = Some(d);
                break;
            }
            let prev = self.listed(s, horse, &d)?.prev.clone();
            // Each date's previous is earlier: the walk ends.
            if prev.as_deref().is_some_and(|p| p >= d.as_str()) {
                return Err(broken(horse));
            }
            after = Some(d);
            at = prev;
        }
        Ok((after, at))
    }

    /// Puts the newly given `date` in the list.
    fn link(&mut self, s: &impl Records, horse: &str, date: &str) -> Result<(), StoreError> {
        let (after, before) = self.place(s, horse, date)?;
        if before.as_deref() == Some(date) {
            return Err(broken(horse));
        }
        self.listed(s, horse, date)?.prev = before;
        self.point(s, horse, after, Some(date.to_owned()))
    }

    /// Takes `date`, left with nothing and whose previous was `prev`, out of the list.
    fn unlink(
        &mut self,
        s: &impl Records,
        horse: &str,
        date: &str,
        prev: Option<String>,
    ) -> Result<(), StoreError> {
        let (after, at) = self.place(s, horse, date)?;
        if at.as_deref() != Some(date) {
            return Err(broken(horse));
        }
        self.point(s, horse, after, prev)
    }

    /// Makes the date `after` (`None`: the head) point back to `to`.
    fn point(
        &mut self,
        s: &impl Records,
        horse: &str,
        after: Option<String>,
        to: Option<String>,
    ) -> Result<(), StoreError> {
        match after {
            Some(d) => self.listed(s, horse, &d)?.prev = to,
            None => self.head.last = to,
        }
        Ok(())
    }

    /// Writes what changed: the date records, the horse's record (removed when it is
    /// left with no name), and its index entries.
    fn write(mut self, s: &mut impl State, horse: &str) -> Result<(), StoreError> {
        let has = self.indexed(&*s, horse)?;
        has.replace(s, horse, &self.had);
        for (date, slot) in self.dates {
            if slot.now == slot.was {
                continue;
            }
            let key = keys::horse_names_on(horse, &date);
            match slot.now {
                Some(dated) => s.put(key, dated.encode()),
                None => s.delete(key),
            }
        }
        if self.head != self.was {
            let key = keys::horse_names(horse);
            if self.head.is_empty() {
                s.delete(key);
            } else {
                s.put(key, serde_json::to_vec(&self.head).unwrap_or_default());
            }
        }
        Ok(())
    }
}

/// The horses whose names a batch touched, their records loaded on first use and written
/// once when it renders.
#[derive(Debug, Default)]
pub(crate) struct Touched {
    horses: BTreeMap<String, Horse>,
}

impl Touched {
    /// The records of `horse`, loaded into the batch on first use.
    fn horse(&mut self, s: &impl Records, horse: &str) -> Result<&mut Horse, StoreError> {
        use std::collections::btree_map::Entry;
        Ok(match self.horses.entry(horse.to_owned()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Horse::load(s, horse)?),
        })
    }

    /// Notes the name a profile gives its horse.
    fn note_profile(
        &mut self,
        s: &impl Records,
        p: &HorseProfile,
        seq: u64,
    ) -> Result<(), StoreError> {
        let horse = self.horse(s, &p.horse_no)?;
        horse.head.profile = Some((p.horse_name.clone(), seq));
        Ok(())
    }

    /// A card or a result in place of `old` (`None`: new), or (`new` `None`) retracted:
    /// the names each gives its runners.
    fn note_race<R: NamesRunners>(
        &mut self,
        s: &impl Records,
        old: Option<&R>,
        new: Option<&R>,
        seq: u64,
    ) -> Result<(), StoreError> {
        let Some((date, n, venue)) = new.or(old).map(NamesRunners::race) else {
            return Ok(());
        };
        let race = (date, (n, venue, R::KIND));
        let runners = |r: Option<&R>| r.map(NamesRunners::runners).unwrap_or_default();
        let (old, new) = (runners(old), runners(new));
        // Those only in `old` taken back, those in `new` set.
        for (horse, _) in &old {
            if !new.iter().any(|(h, _)| h == horse) {
                self.horse(s, horse)?.give(s, horse, race, None, seq)?;
            }
        }
        for (horse, given) in &new {
            self.horse(s, horse)?
                .give(s, horse, race, Some(given), seq)?;
        }
        Ok(())
    }
}

impl ReadModel for Touched {
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError> {
        let seq = change.seq;
        match &change.what {
            What::Profile(p) => self.note_profile(s, p, seq),
            What::Card { old, new } => self.note_race(s, old.as_ref(), Some(*new), seq),
            What::Result { old, new } => self.note_race(s, old.as_ref(), Some(*new), seq),
            What::Retracted(r) => {
                self.note_race(s, r.card.as_ref(), None, seq)?;
                self.note_race(s, r.result.as_ref(), None, seq)
            }
            _ => Ok(()),
        }
    }

    /// Writes each touched horse's records that changed, and the index entries its names
    /// no longer have, have anew or list under another newest name.
    fn render<S: State>(&mut self, s: &mut S, _: u64) -> Result<(), StoreError> {
        for (horse, h) in std::mem::take(&mut self.horses) {
            h.write(s, &horse)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(n: i64, venue: &str, kind: char, name: &str, seq: u64) -> Given {
        Given(n, venue.into(), kind, name.into(), seq)
    }

    #[test]
    fn a_date_record_reads_back_as_written() {
        let key = keys::horse_names_on("A024", "2026-11-29");
        let dated = [
            Dated::default(),
            Dated {
                prev: Some("2026-11-22".into()),
                races: vec![
                    given(3, "Sha Tin", 'c', "GLORIOUS SUNRISE", 7),
                    given(3, "Sha Tin", 'r', "GLORIOUS SUNRISE", u64::MAX),
                    given(-1, "Sha Tin", 'r', "GLORIOUS DAWN", 9),
                    given(i64::MAX, "Happy Valley", 'c', "GLORIOUS DAWN", 0),
                    given(i64::MIN, "", 'c', &"LONG ".repeat(80), 1 << 40),
                ],
            },
        ];
        for d in dated {
            let stored = d.encode();
            assert_eq!(Dated::decode(&key, &stored).expect("decodes"), d);
            // Cut short anywhere, it is damaged or a shorter list (a record ends after
            // any race).
            for end in 0..stored.len() {
                if let Ok(shorter) = Dated::decode(&key, &stored[..end]) {
                    assert!(shorter.races.len() < d.races.len(), "{end}");
                }
            }
        }
        // A card and its result of the same name cost their flags, race and sequence.
        let pair = Dated {
            prev: None,
            races: vec![
                given(3, "Sha Tin", 'c', "GLORIOUS SUNRISE", 1_000_000),
                given(3, "Sha Tin", 'r', "GLORIOUS SUNRISE", 1_000_100),
            ],
        };
        assert_eq!(pair.encode().len(), 1 + (1 + 1 + 8 + 17 + 3) + (1 + 1 + 3));
        for damaged in [&b""[..], &[2][..], &[0, 8, 6][..], &[0, 2, 6, 7][..]] {
            assert!(Dated::decode(&key, damaged).is_err(), "{damaged:?}");
        }
    }
}
