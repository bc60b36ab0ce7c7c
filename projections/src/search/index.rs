//! The name index: what a horse's entries are made from, the entries of its names, and
//! how long a name an entry keeps.

use std::collections::BTreeSet;

use crate::keys;
use crate::state::State;

/// Most characters of a search's text.
pub const MAX_SEARCH_CHARS: usize = 50;

/// Most characters of a name an index entry keeps: a search's text, in lower case, is no
/// longer (a character's lower case is at most two), and finds a name by the entry that
/// starts where it does.
const INDEXED_CHARS: usize = 2 * MAX_SEARCH_CHARS;

/// What a horse's index entries are made from: its names, and its newest. A card or a
/// result that names a horse as it was named changes neither, and no entry is made.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Indexed {
    pub(super) names: BTreeSet<String>,
    pub(super) newest: Option<String>,
}

impl Indexed {
    /// The entries of the names that `had` gave `horse` and `self` no longer gives taken
    /// back, those of the names `self` gives anew written, and its newest name written
    /// where it changed: a horse's other entries stay as they are.
    pub(super) fn replace(&self, s: &mut impl State, horse: &str, had: &Indexed) {
        if self == had {
            return;
        }
        let indexed = |i: &Indexed| {
            if i.newest.is_some() {
                i.names.clone()
            } else {
                BTreeSet::new()
            }
        };
        let (had_names, has_names) = (indexed(had), indexed(self));
        if had_names != has_names {
            let (had, has) = (entries(horse, &had_names), entries(horse, &has_names));
            for key in had.difference(&has) {
                s.delete(key.clone());
            }
            for key in has.difference(&had) {
                s.put(key.clone(), Vec::new());
            }
        }
        if self.newest != had.newest {
            let key = keys::horse_newest(horse);
            match &self.newest {
                Some(newest) => s.put(key, newest.as_bytes().to_vec()),
                None => s.delete(key),
            }
        }
    }
}

/// The keys of a horse's entries in the name index.
pub(super) type Entries = BTreeSet<Vec<u8>>;

/// The index entries of a horse's names: one for each character each name can be read
/// from to its end (lower case, at most [`INDEXED_CHARS`] of it), those from its first
/// apart.
pub(super) fn entries(horse: &str, names: &BTreeSet<String>) -> Entries {
    let mut out = Entries::new();
    for name in names {
        let lower = name.to_lowercase();
        for (at, _) in lower.char_indices() {
            let text: String = lower[at..].chars().take(INDEXED_CHARS).collect();
            out.insert(keys::name_index(at == 0, &text, horse));
        }
    }
    out
}
