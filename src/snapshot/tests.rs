//! What a prune removes: the snapshots of this layout and stream past those kept, and of
//! older layouts all but the newest of each that a live replica runs.

use super::*;

fn listed(layout: &str, checkpoint: u64, stream: &str) -> Listed {
    Listed {
        name: format!("{PREFIX}{layout}-{checkpoint:020}"),
        layout: layout.to_owned(),
        checkpoint,
        stream: stream.to_owned(),
        digest: String::new(),
        records: 0,
        bytes: 0,
        store_bytes: None,
        created_at: String::new(),
        replica: String::new(),
    }
}

/// Newest first, as `list` has them.
fn bucket() -> Vec<Listed> {
    let mut all = vec![
        listed("19", 500, "S"),
        listed("19", 400, "S"),
        listed("19", 300, "S"),
        listed("19", 200, "S"),
        listed("20", 450, "S"),
        listed("18", 350, "S"),
        listed("18", 250, "S"),
        listed("17", 150, "S"),
        listed("19", 100, "another"),
    ];
    all.sort_by_key(|l| std::cmp::Reverse(l.checkpoint));
    all
}

fn names(layout: &str, checkpoints: &[u64], stream: &str) -> Vec<String> {
    checkpoints
        .iter()
        .map(|c| listed(layout, *c, stream).name)
        .collect()
}

#[test]
fn a_prune_keeps_the_newest_of_an_older_layout_only_while_a_replica_runs_it() {
    let running = |layouts: &[&str], unknown| InUse {
        layouts: layouts.iter().map(|l| (*l).to_owned()).collect(),
        unknown,
    };
    let doomed_with = |in_use: &InUse| {
        let mut d = doomed(&bucket(), 3, "19", "S", in_use);
        d.sort();
        d
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    // Nobody runs 18 or 17: every older one goes, and another stream's; 20's stay.
    let mut expected = names("19", &[200], "S");
    expected.extend(names("18", &[350, 250], "S"));
    expected.extend(names("17", &[150], "S"));
    expected.extend(names("19", &[100], "another"));
    assert_eq!(doomed_with(&running(&["19"], false)), sorted(expected));
    // A replica runs 18: its newest stays.
    let mut expected = names("19", &[200], "S");
    expected.extend(names("18", &[250], "S"));
    expected.extend(names("17", &[150], "S"));
    expected.extend(names("19", &[100], "another"));
    assert_eq!(
        doomed_with(&running(&["19", "18"], false)),
        sorted(expected)
    );
    // A replica says nothing of its layout (an older version's): the newest of each
    // older layout stays.
    let mut expected = names("19", &[200], "S");
    expected.extend(names("18", &[250], "S"));
    expected.extend(names("19", &[100], "another"));
    assert_eq!(doomed_with(&running(&["19"], true)), sorted(expected));
}

#[test]
fn nothing_is_pruned_before_there_is_a_snapshot_of_this_layout_and_stream() {
    let all: Vec<Listed> = bucket().into_iter().filter(|l| l.layout != "19").collect();
    assert!(doomed(&all, 3, "19", "S", &InUse::default()).is_empty());
}
