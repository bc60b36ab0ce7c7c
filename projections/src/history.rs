//! The read models as they stood at a point of the log, for `as_of` answers: a
//! [`Records`] that answers each record with its version at that point. Source records
//! (days, cards, results, scratchings, statuses, profiles) from the values their changes
//! replaced, which the fold keeps, and the values they hold now; a horse's form entries
//! from them and the versions they replaced; a race's odds from the odds journal since the
//! venue's race was last retracted. The fold's own renders run over it, so an answer of
//! the past is byte for byte what the service served then, and nothing replays the log.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;

use racing_events::RunnerOdds;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::keys;
use crate::kv::StoreError;
use crate::kv::{Commit, Kv};
use crate::scan::{Item, Scan};
use crate::state::{RaceOdds, Records, State, Writes};
use crate::subject_entries::{self, PerBatch};

/// The records of `kv` as they stood once the log up to `seq` had been applied.
pub(crate) struct AsOf<'a> {
    kv: &'a Kv,
    /// The store's count of records read ([`crate::store::Store::records_read`]).
    reads: crate::state::Reads<'a>,
    seq: u64,
    /// The odds of the race last asked for, by venue, as of the point.
    odds: RefCell<Option<(String, u8, OddsByVenue)>>,
}

impl<'a> AsOf<'a> {
    pub(crate) fn new(kv: &'a Kv, reads: crate::state::Reads<'a>, seq: u64) -> AsOf<'a> {
        AsOf {
            kv,
            reads,
            seq,
            odds: RefCell::default(),
        }
    }
}

impl Records for AsOf<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if key.starts_with(keys::ODDS_PREFIX) {
            let (date, n, venue) = keys::parse_odds(key)
                .ok_or_else(|| StoreError::Corrupt("odds record key".into()))?;
            return self.odds(date, n, venue);
        }
        if keys::form_entry_horse(key).is_some() {
            return self.form_year(key);
        }
        if !keys::is_versioned(key) {
            // No record without versions is rendered from (`keys::is_versioned`).
            return Ok(None);
        }
        self.value(key)
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        // Of records scanned by prefix, only a horse's form has a past.
        let horse = keys::form_entry_horse(prefix)
            .filter(|h| keys::form_entries_of(h) == prefix)
            .ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "no past kept of {}",
                    String::from_utf8_lossy(prefix)
                ))
            })?;
        let entries = crate::form::years_of(self.form(horse)?)?.into_iter();
        Ok(match dir {
            Scan::Forward => entries.take(limit).collect(),
            Scan::Backward => entries.rev().take(limit).collect(),
        })
    }

    fn made_after_point(&self, record: &[u8]) -> Result<bool, StoreError> {
        // Its first record of versions holds its first change, which made it: the first
        // version's sequence is in its key.
        self.reads.note()?;
        let prefix = keys::versions::history_of(record);
        let first = self
            .kv
            .range(prefix.as_slice()..)
            .keys()
            .next()
            .transpose()?;
        Ok(first
            .as_deref()
            .and_then(keys::versions::parse_history)
            .is_some_and(|(of, seq)| of == record && seq > self.seq))
    }
}

impl AsOf<'_> {
    /// The value `record` held at the point: the one the first change after the point
    /// replaced, or where nothing changed it since, the one it holds now.
    fn value(&self, record: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let (now, versions) = self.versions_from_point(record)?;
        for batch in versions {
            for change in subject_entries::entries(&batch) {
                let (seq, replaced) = change?;
                if seq > self.seq {
                    return Ok((!replaced.is_empty()).then(|| replaced.to_vec()));
                }
            }
        }
        Ok(now.map(|v| v.to_vec()))
    }

    /// The sequence of the last change of `record` at or before the point.
    fn changed_at(&self, record: &[u8]) -> Result<Option<u64>, StoreError> {
        let (_, versions) = self.versions_from_point(record)?;
        let mut last = None;
        for batch in versions {
            for change in subject_entries::entries(&batch) {
                let (seq, _) = change?;
                if seq > self.seq {
                    return Ok(last);
                }
                last = Some(seq);
            }
        }
        Ok(last)
    }

    /// The value `record` holds now, and its records of versions unpacked, in order, from
    /// the last batch that changed it at or before the point (from its first where none
    /// did): the first change after the point is among them. A record packed against the
    /// value after its batch needs the one after it ([`pack_versions`]), so those after
    /// the first are read up to one packed alone (at most [`packing::RUN`]), or to the
    /// newest with the value now: then together, again where a batch changed the record
    /// meanwhile.
    fn versions_from_point(
        &self,
        record: &[u8],
    ) -> Result<(Option<crate::kv::Bytes>, Vec<Vec<u8>>), StoreError> {
        let prefix = keys::versions::history_of(record);
        let point = keys::versions::history(record, self.seq);
        for _ in 0..READS_WHILE_CHANGED {
            let stored_now = self.kv.get_as_stored(record)?;
            let from = match self
                .kv
                .range(prefix.as_slice()..=point.as_slice())
                .next_back()
            {
                Some(found) => found?.0.to_vec(),
                None => prefix.clone(),
            };
            let mut stored = Vec::new();
            for found in self.kv.range(from..) {
                let (key, batch) = found?;
                if !key.starts_with(&prefix) {
                    break;
                }
                self.reads.note()?;
                let alone = !stored.is_empty() && !packing::against_after(&batch);
                stored.push(batch);
                if alone {
                    break;
                }
            }
            // (A race's prices change at every move: their versions, packed alone, are
            // not read again for it.)
            let against_now = stored
                .last()
                .is_some_and(|last| packing::against_after(last));
            // (Compared as stored: the same bytes are the same value, so that the record
            // is unpacked once.)
            if !against_now || self.kv.get_as_stored(record)? == stored_now {
                let now = stored_now
                    .map(|stored| Kv::unpacked(record, stored))
                    .transpose()?;
                let versions = unpack_versions(&stored, now.as_deref())?;
                return Ok((now, versions));
            }
        }
        // Changed at every read: a store this busy with one record answers later.
        Err(StoreError::TooLong)
    }

    /// A horse's form record of one year at the point (what a person's records by
    /// condition read, a ride's year at a time), from the record and its entries' past
    /// versions.
    fn form_year(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.reads.note()?;
        let now = self.kv.get(key)?.map(|v| (key.to_vec(), v.to_vec()));
        let now = crate::form::entries_in(now.as_slice())?;
        let pasts = keys::form_pasts_in(key)
            .ok_or_else(|| StoreError::Corrupt("a form record's key".into()))?;
        let pasts = self.kv.prefix(pasts).map(|item| {
            let (k, v) = item?;
            Ok((k.to_vec(), v.to_vec()))
        });
        let then = crate::form::as_of(self.seq, now.into_iter().map(Ok), pasts)?;
        let mut years = crate::form::years_of(then)?.into_iter();
        Ok(years.find(|(k, _)| k == key).map(|(_, v)| v))
    }

    /// A horse's form entries at the point, from its entries and their past versions.
    fn form(&self, horse: &str) -> Result<Vec<Item>, StoreError> {
        let scan = |prefix: Vec<u8>| {
            self.kv.prefix(prefix).map(|item| {
                self.reads.note()?;
                let (key, value) = item?;
                Ok((key.to_vec(), value.to_vec()))
            })
        };
        let years = scan(keys::form_entries_of(horse)).collect::<Result<Vec<_>, _>>()?;
        crate::form::as_of(
            self.seq,
            crate::form::entries_in(&years)?.into_iter().map(Ok),
            scan(keys::form_pasts_of(horse)),
        )
    }

    /// The odds given for race `n` of `date` at `venue` (`None`: for every venue), folded
    /// from the journal's moves up to the point, after the venue's race was last
    /// retracted. A race's documents ask for its odds at each of its venues and for
    /// every venue: each venue's are folded in one read of its moves, and kept for the
    /// next ask of the same race.
    fn odds(&self, date: &str, n: u8, venue: Option<&str>) -> Result<Option<Vec<u8>>, StoreError> {
        let mut held = self.odds.borrow_mut();
        let same = |(d, m, _): &(String, u8, OddsByVenue)| d == date && *m == n;
        let by_venue = match held.take().filter(same) {
            Some(race) => &held.insert(race).2,
            None => {
                &held
                    .insert((date.to_owned(), n, self.odds_by_venue(date, n)?))
                    .2
            }
        };
        by_venue
            .get(&venue.map(str::to_owned))
            .map(serde_json::to_vec)
            .transpose()
            .map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    /// The odds given for race `n` of `date` up to the point, by venue (`None`: for every
    /// venue), each folded from the race's moves of that venue since its race was last
    /// retracted there.
    fn odds_by_venue(&self, date: &str, n: u8) -> Result<OddsByVenue, StoreError> {
        // A move's prices are decoded only where it counts.
        #[derive(Deserialize)]
        struct Move<'a> {
            #[serde(borrow)]
            venue: Option<Cow<'a, str>>,
            #[serde(borrow)]
            published_at: Cow<'a, str>,
            #[serde(borrow)]
            occurred_at: Cow<'a, str>,
            #[serde(borrow)]
            odds: &'a RawValue,
        }
        let mut by_venue = OddsByVenue::new();
        // Each venue's last retraction at or before the point, read at its first move.
        let mut retracted: BTreeMap<Option<String>, u64> = BTreeMap::new();
        let mut failed = None;
        // The race's own moves up to the point: none of another race's, none past it.
        let mut past = |m: crate::journal::OddsMove| -> Result<bool, StoreError> {
            if m.seq > self.seq {
                return Ok(false);
            }
            let given: Move = serde_json::from_slice(&m.body)
                .map_err(|e| StoreError::Corrupt(format!("an odds move: {e}")))?;
            let venue = given.venue.map(Cow::into_owned);
            let after = match retracted.get(&venue) {
                Some(&after) => after,
                None => {
                    let after = match venue.as_deref() {
                        Some(v) => self.changed_at(&keys::odds(date, n, Some(v)))?,
                        None => None,
                    };
                    *retracted.entry(venue.clone()).or_insert(after.unwrap_or(0))
                }
            };
            if m.seq > after {
                let odds: Vec<RunnerOdds> = serde_json::from_str(given.odds.get())
                    .map_err(|e| StoreError::Corrupt(format!("an odds move's prices: {e}")))?;
                let published_ms = crate::market::millis(&given.published_at).unwrap_or(0);
                by_venue.entry(venue).or_default().apply(
                    m.seq,
                    (&given.occurred_at, published_ms),
                    &odds,
                );
            }
            Ok(true)
        };
        crate::journal::each_move(self.kv, self.reads, date, 0, Some(n), |m| {
            past(m).unwrap_or_else(|e| {
                failed = Some(e);
                false
            })
        })?;
        match failed {
            Some(e) => Err(e),
            None => Ok(by_venue),
        }
    }
}

/// A race's odds as of a point, by venue (`None`: those given for every venue).
type OddsByVenue = BTreeMap<Option<String>, RaceOdds>;

pub(crate) mod merge;
pub(crate) mod packing;
#[cfg(test)]
mod tests;

use packing::{pack_alone, pack_versions, packed_against_value, unpack_versions, Runs};

/// The records as an event changes them: a change of a source record that replaces (or
/// removes) a value keeps the value it replaced, by the event's sequence, among the batch's
/// [`Versions`]; the record itself holds its newest value. A change that makes a record
/// keeps an empty value, so that an answer as of a point before it finds none. So a record
/// written once costs one copy and a few bytes, and the read models can still be rendered
/// as they stood at any point of the log (`as_of`). A batch's render writes past it:
/// documents are rendered from the records, not kept among their versions.
pub(crate) struct Versioned<'a, S> {
    pub(crate) s: &'a mut S,
    pub(crate) seq: u64,
    pub(crate) versions: &'a mut Versions,
}

/// The values the changes of source records in a batch replaced, by record, until
/// [`Versions::write`] writes each record's as one ([`keys::versions::history`],
/// `subject_entries.rs`), or [`Versions::hand_over`] hands them to the batch's write; an
/// empty value means the record had none.
#[derive(Debug, Default)]
pub(crate) struct Versions {
    replaced: PerBatch<Vec<u8>>,
    /// A read of a value about to be replaced that failed: the batch must not commit
    /// without it.
    failed: Option<StoreError>,
    /// Where [`Versions::write`] packs: a store's batches pack where they are written, by
    /// the runs the store's writes hand on.
    runs: Runs,
}

impl Versions {
    /// Keeps what the change of `record` to `new` (`None`: removed) by the event at `seq`
    /// replaces, read from `s`, which holds the batch's earlier changes.
    fn change(&mut self, s: &impl Records, record: &[u8], seq: u64, new: Option<&[u8]>) {
        if record.starts_with(keys::ODDS_PREFIX) {
            // A race's odds as of a point are folded from the journal, after the last
            // removal of its record: when it changed is all that is kept.
            self.replaced.push(record, seq, &[]);
            return;
        }
        match s.get(record) {
            // Nothing replaced: written as it was, or removed where there was nothing.
            Ok(old) if old.as_deref() == new => {}
            Ok(old) => self
                .replaced
                .push(record, seq, old.as_deref().unwrap_or_default()),
            Err(e) => {
                self.failed.get_or_insert(e);
            }
        }
    }

    /// Writes each record's replaced values as one record ([`pack_versions`]), and forgets
    /// them; an error where one could not be read. After the batch's last write.
    pub(crate) fn write(&mut self, s: &mut impl State) -> Result<(), StoreError> {
        for (record, first, replaced) in self.hand_over()?.0 {
            let after = match packed_against_value(&record) {
                true => s.get(&record)?.unwrap_or_default(),
                false => Vec::new(),
            };
            let stored = packed(&mut self.runs, &record, replaced, &after);
            s.put(keys::versions::history(&record, first), stored);
        }
        Ok(())
    }

    /// The replaced values, to be packed where the batch is written ([`Replaced::write`]),
    /// and forgotten here; an error where one could not be read. After the batch's last
    /// write.
    pub(crate) fn hand_over(&mut self) -> Result<Replaced, StoreError> {
        let mut replaced = std::mem::take(&mut self.replaced);
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(Replaced(replaced.drain().collect())),
        }
    }
}

/// A record's replaced values as stored: packed against `after`, the value the batch left
/// it with, where its versions are ([`pack_versions`]); alone otherwise.
fn packed(runs: &mut Runs, record: &[u8], replaced: Vec<u8>, after: &[u8]) -> Vec<u8> {
    match packed_against_value(record) {
        true => pack_versions(runs, record, replaced, after),
        false => pack_alone(replaced),
    }
}

/// A sealed batch's replaced values ([`Versions::hand_over`]), by record in key order,
/// with the sequence of each record's first change: packed where the batch is written, on
/// the thread that writes it (a [`crate::load::Loader`]'s writes one while the next batch
/// folds), not on the one that folds.
#[derive(Debug, Default)]
pub(crate) struct Replaced(Vec<(Vec<u8>, u64, Vec<u8>)>);

impl Replaced {
    /// Puts each record's replaced values, packed, into `batch`, the write of the batch
    /// that left `writes`: a record changed by the batch is among them, with the value it
    /// left. `runs` must be what the write of the batch before left ([`Runs`]: the bytes
    /// stored depend on it, never an answer).
    pub(crate) fn write(self, runs: &mut Runs, writes: &Writes, batch: &mut Commit) {
        for (record, first, replaced) in self.0 {
            let after = writes.get(&record).and_then(Option::as_deref);
            let stored = packed(runs, &record, replaced, after.unwrap_or_default());
            batch.put(keys::versions::history(&record, first), stored);
        }
    }
}

/// How many times [`AsOf`] reads a record's value and versions again where a batch
/// changed the record between its reads of them.
const READS_WHILE_CHANGED: usize = 8;

/// `records` as a store holds them with the records of a batch's entries taken apart: a
/// record per version of a source record, under the sequence of its event, unpacked
/// against the source record's value among `records` ([`unpack_versions`]). Two stores
/// that applied the same events hold the same, however their batches fell: for checks
/// that compare them.
pub fn history_by_event(
    records: BTreeMap<Vec<u8>, Vec<u8>>,
) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, StoreError> {
    let mut out = BTreeMap::new();
    // Each record's versions, in order, with their keys' stems (the key without the
    // sequence it ends with), to unpack against the record's value.
    type Stored = Vec<(Vec<u8>, Vec<u8>)>;
    let mut versions: BTreeMap<Vec<u8>, Stored> = BTreeMap::new();
    for (key, value) in records {
        let record = keys::versions::parse_history(&key).map(|(record, _)| record.to_vec());
        let stem = key.split_last_chunk::<8>().map(|(stem, _)| stem.to_vec());
        match record.zip(stem) {
            Some((record, stem)) => versions.entry(record).or_default().push((stem, value)),
            None => {
                out.insert(key, value);
            }
        }
    }
    for (record, batches) in versions {
        let stored: Vec<&[u8]> = batches.iter().map(|(_, v)| v.as_slice()).collect();
        let unpacked = unpack_versions(&stored, out.get(&record).map(Vec::as_slice))?;
        for ((stem, _), batch) in batches.iter().zip(unpacked) {
            for entry in subject_entries::entries(&batch) {
                let (seq, entry) = entry?;
                let mut by_event = stem.clone();
                by_event.extend_from_slice(&seq.to_be_bytes());
                out.insert(by_event, entry.to_vec());
            }
        }
    }
    Ok(out)
}

impl<S: State> Records for Versioned<'_, S> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.s.get(key)
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        self.s.scan(prefix, dir, limit)
    }
}

impl<S: State> State for Versioned<'_, S> {
    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        if keys::is_versioned(&key) {
            self.versions.change(&*self.s, &key, self.seq, Some(&value));
        }
        self.s.put(key, value);
    }

    fn delete(&mut self, key: Vec<u8>) {
        if keys::is_versioned(&key) {
            self.versions.change(&*self.s, &key, self.seq, None);
        }
        self.s.delete(key);
    }

    fn first_seen(&mut self, event_id: u128) -> Result<bool, StoreError> {
        self.s.first_seen(event_id)
    }

    fn changes_at(&mut self, seq: u64) {
        self.s.changes_at(seq);
    }

    fn changed_at(&mut self, seq: u64, key: &[u8]) {
        self.s.changed_at(seq, key);
    }
}
