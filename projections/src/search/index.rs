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
pub(super) const INDEXED_CHARS: usize = 2 * MAX_SEARCH_CHARS;

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
    ///
    /// Only the names that came or went are made into entries. An entry that one of them
    /// shares with a name the horse keeps (one name ending the other: `Star`, `Lucky
    /// Star`) stays; the kept names are read for those alone. Making every entry of every
    /// name at each new one costs in proportion to the names a horse had: one named anew
    /// each season (the bench's log reuses brand numbers) took 18% of the fold's thread
    /// so at ten times the bench's log.
    pub(super) fn replace(&self, s: &mut impl State, horse: &str, had: &Indexed) {
        if self == had {
            return;
        }
        let none = BTreeSet::new();
        let (had_names, has_names) = (
            indexed(had).unwrap_or(&none),
            indexed(self).unwrap_or(&none),
        );
        if had_names != has_names {
            let gone = texts_of(had_names.difference(has_names));
            let came = texts_of(has_names.difference(had_names));
            let kept = made_by(had_names.intersection(has_names), &gone, &came);
            for (whole, text) in gone.difference(&came).filter(|t| !kept.contains(t)) {
                s.delete(keys::name_index(*whole, text, horse));
            }
            for (whole, text) in came.difference(&gone).filter(|t| !kept.contains(t)) {
                s.put(keys::name_index(*whole, text, horse), Vec::new());
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

/// The names a horse's entries are made of: none before it has a newest.
fn indexed(i: &Indexed) -> Option<&BTreeSet<String>> {
    i.newest.is_some().then_some(&i.names)
}

/// What an index entry holds of a name: whether it is read from its first character, and
/// the text.
type Text = (bool, String);

/// The texts of the entries of `names`: one for each character each name can be read from
/// to its end, those from its first apart ([`texts`]).
fn texts_of<'a>(names: impl IntoIterator<Item = &'a String>) -> BTreeSet<Text> {
    let mut out = BTreeSet::new();
    for name in names {
        let lower = name.to_lowercase();
        out.extend(texts(&lower).map(|(whole, text)| (whole, text.to_owned())));
    }
    out
}

/// Those of `gone` and `came` that an entry of one of `names` holds too. A text is made
/// into a `String` only where it is one of them, so that reading many names is cheap.
fn made_by<'a>(
    names: impl IntoIterator<Item = &'a String>,
    gone: &BTreeSet<Text>,
    came: &BTreeSet<Text>,
) -> BTreeSet<Text> {
    let mut asked: [BTreeSet<&str>; 2] = Default::default();
    for (whole, text) in gone.iter().chain(came) {
        asked[usize::from(*whole)].insert(text);
    }
    let mut out = BTreeSet::new();
    for name in names {
        let lower = name.to_lowercase();
        for (whole, text) in texts(&lower) {
            if asked[usize::from(whole)].contains(text) {
                out.insert((whole, text.to_owned()));
            }
        }
    }
    out
}

/// The texts a name in lower case is read by: from each of its characters to its end, at
/// most [`INDEXED_CHARS`] of it; `true` for the one from its first.
fn texts(lower: &str) -> impl Iterator<Item = (bool, &str)> {
    lower.char_indices().map(move |(at, _)| {
        let rest = &lower[at..];
        let end = rest
            .char_indices()
            .nth(INDEXED_CHARS)
            .map_or(rest.len(), |(i, _)| i);
        (at == 0, &rest[..end])
    })
}
