//! The folds as pure functions: given these events, the documents are these. No NATS, no
//! disk, but in `store`, which runs the same events through a sled store. One module a
//! subject; the helpers they share (and the other modules' tests use) are here.

use std::collections::BTreeMap;

use racing_events::samples::{
    card, odds, odds_at, profile, result, retraction, runner, scratch, scratch_at,
};
use racing_events::*;
use serde_json::{json, Value};

use crate::fold::Kept;
use crate::*;

mod cards;
mod growth;
mod journal;
mod loader;
mod odds;
mod positions;
mod records;
mod results;
mod retractions;
mod status;
mod store;

fn env(event: Event) -> Envelope {
    samples::envelope(event)
}

/// Folds the events, one batch each, and returns the state.
fn fold_each(events: impl IntoIterator<Item = Envelope>) -> MemState {
    let mut s = MemState::default();
    for (i, e) in events.into_iter().enumerate() {
        let mut f = Fold::default();
        f.apply(&mut s, i as u64 + 1, 0, &e).expect("apply");
        f.render(&mut s).expect("render");
    }
    s
}

/// Folds `batch` into `s` as one batch, its events at the sequences after `before`.
pub(crate) fn fold_batch(s: &mut MemState, before: usize, batch: &[Event]) {
    fold_resumed(s, before, batch, Kept::default());
}

/// [`fold_batch`] starting from what the batch before handed on (`kept`), as a store's
/// batches do: what this one hands on.
pub(crate) fn fold_resumed(s: &mut MemState, before: usize, batch: &[Event], kept: Kept) -> Kept {
    let mut f = Fold::resumed(kept);
    for (i, e) in batch.iter().enumerate() {
        let seq = (before + i + 1) as u64;
        f.apply(s, seq, 0, &samples::envelope(e.clone()))
            .expect("apply");
    }
    f.render(s).expect("render");
    f.keep()
}

fn doc(s: &MemState, key: DocKey<'_>) -> Value {
    let bytes = s.doc(key).unwrap_or_else(|| panic!("no document {key:?}"));
    match key {
        DocKey::Form(_) => {
            serde_json::from_slice(&FormDoc::body(&bytes, None).expect("framed")).expect("json")
        }
        _ => serde_json::from_slice(&bytes).expect("json"),
    }
}

/// An odds document's prices alone: each runner's number, win and place prices, without
/// what the market reads of them (the market's tests, `market.rs` and `tests/odds.rs`,
/// look at that).
fn prices(doc: &Value) -> Value {
    let runners = doc["odds"].as_array().cloned().unwrap_or_default();
    runners
        .into_iter()
        .map(|mut r| {
            if let Some(r) = r.as_object_mut() {
                r.retain(|k, _| ["horse_no", "win_odds", "place_odds"].contains(&k.as_str()));
            }
            r
        })
        .collect()
}

/// An odds document without its market: its race, status and prices.
fn without_market(mut doc: Value) -> Value {
    doc["odds"] = prices(&doc);
    if let Some(d) = doc.as_object_mut() {
        d.remove("market");
    }
    doc
}

fn horses(v: &Value, list: &str) -> Vec<String> {
    v[list]
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["horse_no"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A fresh directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(std::path::PathBuf);

impl TempDir {
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Opens the store in `dir` again. sled lets go of a dropped store's file lock only once
/// its background threads finish, a moment later in this same process; a new process (a
/// restart) never waits. So the lock is waited for here, for a few seconds at most.
pub(crate) fn reopen(dir: &std::path::Path, options: Options) -> Store {
    try_reopen(dir, options).unwrap_or_else(|e| panic!("reopen: {e}"))
}

/// [`reopen`], for a store that may fail to open for another reason than the lock.
pub(crate) fn try_reopen(dir: &std::path::Path, options: Options) -> Result<Store, StoreError> {
    Store::open_once_let_go(dir, options, std::time::Duration::from_secs(5))
}

pub(crate) fn tempdir() -> TempDir {
    let p = std::env::temp_dir().join(format!("racing-proj-{}", uuid::Uuid::new_v4()));
    TempDir(p)
}

const DAY: &str = "2026-11-25";

const ST: &str = "Sha Tin";

const HV: &str = "Happy Valley";

/// Race 3 run at both venues of `DAY` (A1 and B2 at Sha Tin, C3 at Happy Valley), Sha
/// Tin's race 4, an older run of A1, and odds and a scratching given for Sha Tin's race 3.
fn two_meetings() -> Vec<Envelope> {
    [
        result("2026-11-01", ST, 1, vec![runner(Some(2), "A1")]),
        card(DAY, ST, 3, &["A1", "B2", "X9"]),
        card(DAY, HV, 3, &["C3"]),
        card(DAY, ST, 4, &["E5"]),
        scratch_at(DAY, ST, 3, "X9"),
        odds_at(DAY, ST, 3, &[("A1", 2.5)]),
        odds_at(DAY, HV, 3, &[("C3", 4.0)]),
        result(
            DAY,
            ST,
            3,
            vec![runner(Some(1), "A1"), runner(Some(2), "B2")],
        ),
        result(DAY, HV, 3, vec![runner(Some(1), "C3")]),
        result(DAY, ST, 4, vec![runner(Some(1), "E5")]),
    ]
    .into_iter()
    .map(env)
    .collect()
}

/// The records of `s`, each document as it answers: its `ETag` and bytes, without the
/// sequence it was sealed at (which is where its batch ended); the odds journal a record
/// per move, and the versions and forms' changes a record per event (their records are
/// where batches ended too).
fn answers(s: &MemState) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let by_move = crate::journal::journal_by_move(s.records.clone()).expect("chunks that decode");
    crate::history::history_by_event(by_move)
        .expect("versions and form changes that decode")
        .into_iter()
        .map(|(k, v)| {
            let v = if is_sealed(&k) { answered(&v) } else { v };
            (k, v)
        })
        .collect()
}
