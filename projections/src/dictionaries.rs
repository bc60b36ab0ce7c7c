//! The zstd dictionaries the store packs the records of each packed kind with
//! (`keys/kinds.rs`): one a kind, in zstd's own format, so that a frame reuses the
//! dictionary's entropy tables and finds the kind's field names and common values in it,
//! where a record packed alone builds its tables anew and repeats little of itself.
//!
//! `racing-bench dictionaries` trains them on a log of demo seasons that no bench or
//! script measures (its seeds apart from theirs) and writes them to
//! `projections/dictionaries/`, each in the file [`file_name`] names after its kind's
//! prefix. A record is unpacked with the dictionary it was packed with: the dictionaries
//! are part of the store's layout, and a change to one is a new `SCHEMA` (`schema.rs`),
//! which a test of `keys/kinds.rs` holds.

use crate::compressed::Dictionary;

/// Profile documents (`doc\0profile\0`).
pub const PROFILE_DOCUMENTS: Dictionary = include_bytes!("../dictionaries/doc-profile.zdict");
/// Odds documents (`doc\0odds\0`).
pub const ODDS_DOCUMENTS: Dictionary = include_bytes!("../dictionaries/doc-odds.zdict");
/// Form entries by year (`fe\0`).
pub const FORM_ENTRIES: Dictionary = include_bytes!("../dictionaries/fe.zdict");
/// Race prices (`odds\0`).
pub const RACE_PRICES: Dictionary = include_bytes!("../dictionaries/odds.zdict");
/// The odds journal's chunks (`oj\0`).
pub const ODDS_JOURNAL: Dictionary = include_bytes!("../dictionaries/oj.zdict");
/// Cards (`card\0`).
pub const CARDS: Dictionary = include_bytes!("../dictionaries/card.zdict");
/// Cards' form sources (`cf\0`).
pub const CARD_FORMS: Dictionary = include_bytes!("../dictionaries/cf.zdict");
/// Days' rides (`dr\0`).
pub const DAYS_RIDES: Dictionary = include_bytes!("../dictionaries/dr.zdict");
/// Results (`res\0`).
pub const RESULTS: Dictionary = include_bytes!("../dictionaries/res.zdict");
/// Careers (`hc\0`).
pub const CAREERS: Dictionary = include_bytes!("../dictionaries/hc.zdict");
/// People's records (`ppl\0`).
pub const PEOPLE: Dictionary = include_bytes!("../dictionaries/ppl.zdict");
/// The change feed's parts (`chg\0`).
pub const CHANGE_FEED: Dictionary = include_bytes!("../dictionaries/chg.zdict");

/// The file of the dictionary of the kind whose keys start with `prefix`: the prefix, its
/// zero bytes as dashes and without the last, then `.zdict` (`doc\0profile\0`:
/// `doc-profile.zdict`).
pub fn file_name(prefix: &[u8]) -> String {
    let name: String = prefix
        .strip_suffix(b"\0")
        .unwrap_or(prefix)
        .iter()
        .map(|&b| if b == 0 { '-' } else { char::from(b) })
        .collect();
    format!("{name}.zdict")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compressed::{packed, unpack, unpack_with, ALONE};

    #[test]
    fn a_form_entry_packs_against_its_dictionary_and_reads_back_only_with_it() {
        let mut entry = 7_654_321u64.to_be_bytes().to_vec();
        entry.extend_from_slice(&9u32.to_le_bytes());
        entry.extend_from_slice(b"LUCKY ONE");
        entry.extend_from_slice(
            br#"{"date":"2024-03-10","venue":"Sha Tin","race_number":4,"distance":1400,"position":3,"finish_time":"1:22.41","win_odds":12.0,"jockey":"A Badel","status":null,"dead_heat":false,"race_name":"SAI KUNG HANDICAP","going":"GOOD","class":"Class 4","trainer":"K W Lui","draw":8,"actual_weight":120,"declared_weight":1101,"lbw":"1-1/4","lbw_lengths":1.25,"running_positions":[9,8,3]}"#,
        );
        let alone = packed(&entry, ALONE).map_or(entry.len(), |p| p.len());
        let with = packed(&entry, FORM_ENTRIES).expect("packs");
        assert!(
            with.len() * 3 < alone,
            "{} against {alone} alone, of {}",
            with.len(),
            entry.len()
        );
        let back = unpack_with(&with, FORM_ENTRIES).expect("unpacks");
        assert_eq!(back.as_ref(), entry.as_slice());
        // Read without its dictionary, or with another kind's, it is damaged, not another
        // value.
        assert!(unpack(&with).is_err());
        assert!(unpack_with(&with, CAREERS).is_err());
    }

    #[test]
    fn a_file_is_named_after_its_kind_s_prefix() {
        assert_eq!(file_name(b"doc\0profile\0"), "doc-profile.zdict");
        assert_eq!(file_name(b"ppl\0"), "ppl.zdict");
    }
}
