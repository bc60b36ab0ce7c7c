//! A form's entries, their past versions and the document assembled from them.

use super::*;
use crate::batch::MemState;
use crate::counting_state::Tally;

const ST: &str = "Sha Tin";

/// Replaces E271's entry for `race` by the event at `seq`.
fn set(s: &mut MemState, race: (&str, u8, &str), entry: Option<(&str, &[u8])>, seq: u64) {
    replace(s, "E271", race, entry, seq).expect("replaced");
}

fn order(s: &MemState, horse: &str) -> Vec<String> {
    let form = FormSource::load(s, horse).expect("loads");
    form.entries
        .iter()
        .map(|e| String::from_utf8_lossy(json(e)).into_owned())
        .collect()
}

#[test]
fn entries_are_read_newest_first_and_an_entry_given_again_is_not_written() {
    let mut s = MemState::default();
    set(&mut s, ("2026-10-01", 2, ST), Some(("A", b"{1}")), 1);
    set(&mut s, ("2026-11-01", 1, ST), Some(("B", b"{2}")), 2);
    set(
        &mut s,
        ("2026-10-01", 7, "Happy Valley"),
        Some(("C", b"{3}")),
        3,
    );
    set(&mut s, ("2026-10-01", 7, ST), Some(("D", b"{4}")), 4);
    replace(&mut s, "E27", ("2026-12-01", 1, ST), Some(("E", b"{5}")), 5).expect("ok");
    assert_eq!(order(&s, "E271"), ["{2}", "{4}", "{3}", "{1}"]);
    let before = s.clone();
    set(&mut s, ("2026-10-01", 2, ST), Some(("A", b"{1}")), 6);
    set(&mut s, ("2026-09-01", 2, ST), None, 7);
    assert_eq!(s, before, "nothing changed, nothing written");
    let form = FormSource::load(&s, "E271").expect("loads");
    assert_eq!(form.newest_name().as_deref(), Some("B"));
    let body = FormDoc::body(&form.render("E271", "NAME"), None)
        .expect("framed")
        .into_owned();
    assert_eq!(
        String::from_utf8_lossy(&body),
        r#"{"horse_no":"E271","horse_name":"NAME","form":[{2},{4},{3},{1}]}"#
    );
}

#[test]
fn the_head_and_the_entries_assemble_the_sealed_document() {
    let mut s = MemState::default();
    set(&mut s, ("2026-10-01", 2, ST), Some(("A", b"{1}")), 1);
    set(&mut s, ("2026-11-01", 1, ST), Some(("B", b"{22}")), 2);
    let form = FormSource::load(&s, "E271").expect("loads");
    for name in ["NAME", "A \"form\":[ NAME", ""] {
        let sealed = crate::docs::seal(true, &form.render("E271", name), 9);
        let stored = head(9, &FormDoc::head("E271", name));
        assert!(stored.len() < 100, "the head holds no entry");
        let values = form.entries.iter().map(|e| &e[..]);
        assert_eq!(assemble(&stored, values), Some(sealed), "{name}");
    }
    let empty = FormSource::default();
    let sealed = crate::docs::seal(true, &empty.render("E271", "NAME"), 9);
    let stored = head(9, &FormDoc::head("E271", "NAME"));
    assert_eq!(assemble(&stored, std::iter::empty()), Some(sealed));
    assert_eq!(assemble(b"short", std::iter::empty()), None);
}

#[test]
fn a_replaced_or_removed_entry_is_kept_as_the_past_it_was() {
    let mut s = MemState::default();
    let race = ("2026-10-01", 2, ST);
    set(&mut s, race, Some(("A", b"{1}")), 10);
    set(&mut s, ("2026-10-02", 1, ST), Some(("A", b"{9}")), 11);
    set(&mut s, race, Some(("A", b"{2}")), 20);
    set(&mut s, race, None, 30);
    set(&mut s, race, Some(("A", b"{3}")), 40);
    // Each version's JSON once: the entry now, and the two it replaced.
    let pasts = s
        .scan(&keys::form_pasts_of("E271"), Scan::Forward, usize::MAX)
        .expect("scan");
    let held: Vec<&[u8]> = pasts.iter().map(|(_, v)| json(v)).collect();
    assert_eq!(held, [&b"{1}"[..], b"{2}", b""]);
    let at = |point| {
        let entries = entries(&s, "E271").expect("entries");
        let then = as_of(
            point,
            entries.into_iter().map(Ok),
            pasts.clone().into_iter().map(Ok),
        )
        .expect("as of");
        then.iter()
            .rev()
            .map(|(_, v)| String::from_utf8_lossy(json(v)).into_owned())
            .collect::<Vec<_>>()
    };
    assert!(at(9).is_empty());
    assert_eq!(at(10), ["{1}"]);
    assert_eq!(at(19), ["{9}", "{1}"]);
    assert_eq!(at(20), ["{9}", "{2}"]);
    assert_eq!(at(30), ["{9}"]);
    assert_eq!(at(45), ["{9}", "{3}"]);
}

#[test]
fn a_truncated_entry_is_reported_damaged() {
    let mut s = MemState::default();
    set(&mut s, ("2026-10-01", 2, ST), Some(("A", b"{1}")), 1);
    let key = keys::form_year("E271", "2026-10-01");
    s.put(key, vec![0; 10]);
    assert!(FormSource::load(&s, "E271").is_err());
    assert!(replace(&mut s, "E271", ("2026-10-01", 2, ST), None, 2).is_err());
}

#[test]
fn a_years_entries_share_one_record_and_read_back_by_name() {
    let mut s = MemState::default();
    set(&mut s, ("2026-10-01", 2, ST), Some(("A", b"{1}")), 1);
    set(&mut s, ("2025-12-31", 9, ST), Some(("A", b"{0}")), 2);
    set(&mut s, ("2026-01-01", 1, ST), Some(("A", b"{2}")), 3);
    let years = s
        .scan(&keys::form_entries_of("E271"), Scan::Forward, usize::MAX)
        .expect("scan");
    let keys: Vec<&[u8]> = years.iter().map(|(k, _)| &k[..]).collect();
    let year = |date| keys::form_year("E271", date);
    assert_eq!(keys, [&year("2025-01-01")[..], &year("2026-01-01")[..]]);
    // The entries by name, oldest first; and the records they make, the same.
    let all = entries(&s, "E271").expect("entries");
    let names: Vec<Vec<u8>> = all.iter().map(|(name, _)| name.clone()).collect();
    let name = |date, n| keys::form_entry("E271", date, n, ST);
    assert_eq!(
        names,
        [
            name("2025-12-31", 9),
            name("2026-01-01", 1),
            name("2026-10-01", 2)
        ]
    );
    assert_eq!(years_of(all).expect("years"), years);
    let one = entry(&s, &name("2026-01-01", 1)).expect("read");
    assert_eq!(one.as_deref().map(json), Some(&b"{2}"[..]));
    assert_eq!(entry(&s, &name("2026-01-02", 1)).expect("read"), None);
    // The last entry of a year removed removes its record.
    set(&mut s, ("2025-12-31", 9, ST), None, 4);
    assert_eq!(s.get(&year("2025-01-01")).expect("read"), None);
    assert_eq!(newest_name(&s, "E271").expect("name").as_deref(), Some("A"));
    // A year whose entries are out of order is damaged.
    let (_, record) = &years[1];
    let mut parts = &record[..];
    let first = (part(&mut parts), part(&mut parts));
    let mut swapped = parts.to_vec();
    if let (Some(n), Some(v)) = first {
        put_part(&mut swapped, n);
        put_part(&mut swapped, v);
    }
    s.put(year("2026-01-01"), swapped);
    assert!(entries(&s, "E271").is_err());
}

#[test]
fn entries_read_through_the_years_held_are_those_the_store_holds() {
    let mut s = MemState::default();
    let mut names = Vec::new();
    // More horses a year than a `YearsRead` holds, each with two runs in each of two years.
    for (seq, date) in (1..).zip(["2025-03-01", "2025-09-01", "2026-03-01", "2026-09-01"]) {
        for h in 0..YEARS_HELD + 52 {
            let horse = format!("H{h:04}");
            let json = format!("{{{seq}}}");
            replace(
                &mut s,
                &horse,
                (date, 1, ST),
                Some(("A", json.as_bytes())),
                seq,
            )
            .expect("replaced");
            // Race 1 ran; race 2 did not.
            names.push((keys::form_entry(&horse, date, 1, ST), true));
            names.push((keys::form_entry(&horse, date, 2, ST), false));
        }
    }
    let mut years = YearsRead::default();
    // In date order, then some of the first year's again, after the second's.
    for (name, ran) in names.iter().chain(&names[..8]) {
        let held = years.entry(&s, name).expect("read");
        assert_eq!(held, entry(&s, name).expect("read"));
        assert_eq!(held.is_some(), *ran);
    }
}

#[test]
fn a_persons_rides_in_date_order_read_each_horses_year_once() {
    // 300 horses in each of two years (a busy jockey's rides), four dates a year.
    let mut s = MemState::default();
    let mut names = Vec::new();
    let dates = ["2025-03-01", "2025-09-01", "2026-03-01", "2026-09-01"];
    for (seq, date) in (1..).zip(dates) {
        for h in 0..300 {
            let horse = format!("H{h:03}");
            replace(&mut s, &horse, (date, 1, ST), Some(("A", b"{}")), seq).expect("replaced");
            names.push(keys::form_entry(&horse, date, 1, ST));
        }
    }
    let tally = Tally::new(&mut s);
    let mut years = YearsRead::default();
    for name in &names {
        assert!(years.entry(&tally, name).expect("read").is_some());
    }
    let read = tally.read();
    let once: std::collections::BTreeSet<_> = read.iter().collect();
    assert_eq!(read.len(), 2 * 300);
    assert_eq!(once.len(), read.len(), "a year record read twice");
}

/// Records that a commit changes between a read of the form's head and the scan of its
/// entries: reads see `before` until the first scan, `after` from it on.
struct CommitLands {
    before: MemState,
    after: MemState,
    landed: std::cell::Cell<bool>,
}

impl CommitLands {
    fn now(&self) -> &MemState {
        if self.landed.get() {
            &self.after
        } else {
            &self.before
        }
    }
}

impl Records for CommitLands {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.now().get(key)
    }

    fn scan(&self, prefix: &[u8], dir: Scan, limit: usize) -> Result<Vec<Item>, StoreError> {
        self.landed.set(true);
        self.now().scan(prefix, dir, limit)
    }
}

#[test]
fn a_form_read_while_a_commit_lands_is_read_again_whole() {
    let key = crate::keys::doc::DocKey::Form("E271").key();
    let json = FormDoc::head("E271", "NAME");
    let mut before = MemState::default();
    set(&mut before, ("2026-10-01", 2, ST), Some(("A", b"{1}")), 1);
    before.put(key.clone(), head(1, &json));
    let mut after = before.clone();
    set(&mut after, ("2026-11-01", 1, ST), Some(("A", b"{2}")), 9);
    after.put(key.clone(), head(9, &json));
    let read_landing = |after: MemState| {
        let records = CommitLands {
            landed: Default::default(),
            before: before.clone(),
            after,
        };
        let head = records.get(&key).expect("get").expect("a head");
        read(&records, "E271", head).expect("read")
    };
    // As the store is once the commit has landed, not its old head over its new entries.
    let head_after = after.get(&key).expect("get").expect("a head");
    let whole = read(&after, "E271", head_after).expect("read");
    assert!(whole.is_some());
    assert_eq!(read_landing(after.clone()), whole);
    after.delete(key.clone());
    assert_eq!(read_landing(after), None, "removed meanwhile");
}
