//! What a new run of a horse costs the form's records in bytes written and records read,
//! counted through a [`State`] that tallies every `put` and every record read.

use std::collections::BTreeMap;

use racing_events::samples::{envelope, result, runner};
use racing_events::Envelope;

use crate::batch::MemState;
use crate::counting_state::Tally;
use crate::docs::form::FormDoc;
use crate::fold::Fold;
use crate::keys::doc::DocKey;

/// The kind of a key: its first part, or its first two for a document.
fn kind(key: &[u8]) -> String {
    let mut parts = key.split(|b| *b == 0);
    let first = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    match (first.as_str(), parts.next()) {
        ("doc", Some(second)) => format!("doc/{}", String::from_utf8_lossy(second)),
        _ => first,
    }
}

/// Whether a kind of key holds a horse's form: its entries, its changes, the document, or
/// a record of the whole form.
fn of_form(kind: &str) -> bool {
    ["fe", "fc", "form", "doc/form"].contains(&kind)
}

/// What a fold did, by kind of key: the bytes put, and the records read.
struct Counted {
    put: BTreeMap<String, usize>,
    read: BTreeMap<String, usize>,
}

/// Folds `events` in batches of `batch` events, counting what it did.
fn fold_counting(s: &mut MemState, events: &[Envelope], first_seq: u64, batch: usize) -> Counted {
    let mut c = Tally::new(s);
    for (b, chunk) in events.chunks(batch.max(1)).enumerate() {
        let mut f = Fold::default();
        for (i, e) in chunk.iter().enumerate() {
            let seq = first_seq + (b * batch + i) as u64;
            f.apply(&mut c, seq, 0, e).expect("apply");
        }
        f.render(&mut c).expect("render");
    }
    let mut put = BTreeMap::new();
    for (key, bytes) in c.puts() {
        *put.entry(kind(key)).or_default() += bytes;
    }
    let mut read = BTreeMap::new();
    for key in c.read() {
        *read.entry(kind(&key)).or_default() += 1;
    }
    Counted { put, read }
}

/// The sum of `counts` over the kinds of key that hold a horse's form.
fn of_forms(counts: &BTreeMap<String, usize>) -> usize {
    counts
        .iter()
        .filter(|(kind, _)| of_form(kind))
        .map(|(_, n)| n)
        .sum()
}

/// The `i`th of a horse's runs: a race a month from January 2001, on the first.
fn run(i: usize, horse: &str) -> Envelope {
    let date = format!("{}-{:02}-01", 2001 + i / 12, 1 + i % 12);
    envelope(result(&date, "Sha Tin", 1, vec![runner(Some(1), horse)]))
}

/// E271's first 199 runs folded one a batch, and what folding the 200th did.
fn the_200th_run() -> (MemState, Counted) {
    let mut s = MemState::default();
    let runs: Vec<Envelope> = (0..199).map(|i| run(i, "E271")).collect();
    fold_counting(&mut s, &runs, 1, 1);
    let counted = fold_counting(&mut s, &[run(199, "E271")], 200, 1);
    (s, counted)
}

#[test]
fn the_200th_run_of_a_horse_writes_bytes_of_its_year_not_of_its_form() {
    let (s, Counted { put, .. }) = the_200th_run();
    let form = of_forms(&put);
    // The 200th run is the eighth of its year (August 2017): it writes the year's eight
    // entries and the document's head, as the eighth run of the first year did; the form
    // is 55 KB.
    let mut first = MemState::default();
    fold_counting(
        &mut first,
        &(0..7).map(|i| run(i, "E271")).collect::<Vec<_>>(),
        1,
        1,
    );
    let eighth = of_forms(&fold_counting(&mut first, &[run(7, "E271")], 8, 1).put);
    assert!(
        form <= eighth + 16,
        "{form} bytes of form records written, against {eighth}: {put:?}"
    );
    let stored = s.doc(DocKey::Form("E271")).expect("form");
    let body = FormDoc::body(&stored, None).expect("framed");
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["form"].as_array().map(Vec::len), Some(200));
    assert_eq!(v["form"][0]["date"], "2017-08-01");
}

#[test]
fn the_200th_run_of_a_horse_reads_records_of_one_year_not_of_its_form() {
    let (mut s, Counted { read, .. }) = the_200th_run();
    // The form's head, the year of the entry the run set and the newest (the same one).
    assert!(
        of_forms(&read) <= 4,
        "{} form records read: {read:?}",
        of_forms(&read)
    );
    // An amendment of an old run reads that entry's year, not the form either.
    let amended = envelope(result(
        "2001-05-01",
        "Sha Tin",
        1,
        vec![runner(Some(2), "E271")],
    ));
    let read = fold_counting(&mut s, &[amended], 201, 1).read;
    assert!(of_forms(&read) <= 5, "{read:?}");
    let stored = s.doc(DocKey::Form("E271")).expect("form");
    let body = FormDoc::body(&stored, None).expect("framed");
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["form"][199]["date"], "2001-01-01");
    assert_eq!(v["form"][195]["position"], 2);
}
