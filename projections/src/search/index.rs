//! The name index: the entries of a horse's names, the newest name it is listed under,
//! and how long a name an entry keeps.

use std::collections::BTreeSet;

use crate::keys;
use crate::state::State;

/// Fewest characters of a search's text: an index entry of fewer (a name's last
/// character) would be read by no search, and is not written.
pub const MIN_SEARCH_CHARS: usize = 2;

/// Most characters of a search's text.
pub const MAX_SEARCH_CHARS: usize = 50;

/// Most characters of a name an index entry keeps: a search's text, in lower case, is no
/// longer (a character's lower case is at most two), and finds a name by the entry that
/// starts where it does.
pub(super) const INDEXED_CHARS: usize = 2 * MAX_SEARCH_CHARS;

/// The entries of the names `gone` that `horse` no longer has taken back, and those of
/// the names `came` it has anew written; `kept` are the names it had and still has.
///
/// Only the names that came or went are made into entries. An entry that one of them
/// shares with a name the horse keeps (one name ending the other: `Star`, `Lucky Star`)
/// stays; the kept names are read for those alone. Making every entry of every name at
/// each new one would cost in proportion to the names a horse had, and one named anew
/// each season (the bench's log reuses brand numbers) has many (BENCHMARKS.md, "What was
/// tried").
pub(super) fn rename<'a>(
    s: &mut impl State,
    horse: &str,
    gone: &BTreeSet<String>,
    came: &BTreeSet<String>,
    kept: impl IntoIterator<Item = &'a String>,
) {
    let gone = texts_of(gone);
    let came = texts_of(came);
    let kept = made_by(kept, &gone, &came);
    for (whole, text) in gone.difference(&came).filter(|t| !kept.contains(t)) {
        s.delete(keys::name_index(*whole, text, horse));
    }
    for (whole, text) in came.difference(&gone).filter(|t| !kept.contains(t)) {
        s.put(keys::name_index(*whole, text, horse), Vec::new());
    }
}

/// The newest name that a search lists `horse` under, where it changed from `had` to
/// `has`.
pub(super) fn set_newest(
    s: &mut impl State,
    horse: &str,
    had: &Option<String>,
    has: &Option<String>,
) {
    if has == had {
        return;
    }
    let key = keys::horse_newest(horse);
    match has {
        Some(newest) => s.put(key, newest.as_bytes().to_vec()),
        None => s.delete(key),
    }
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
/// most [`INDEXED_CHARS`] of it and at least [`MIN_SEARCH_CHARS`]; `true` for the one from
/// its first.
fn texts(lower: &str) -> impl Iterator<Item = (bool, &str)> {
    lower.char_indices().filter_map(move |(at, _)| {
        let rest = &lower[at..];
        rest.chars().nth(MIN_SEARCH_CHARS - 1)?;
        let end = rest
            .char_indices()
            .nth(INDEXED_CHARS)
            .map_or(rest.len(), |(i, _)| i);
        Some((at == 0, &rest[..end]))
    })
}
