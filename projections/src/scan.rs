//! Reads of a range of keys by their prefix, from either end and bounded in count, over
//! the records in memory and over a batch's writes laid on the tree: what a fold reads of
//! a record kept a key per item.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;

use crate::kv::StoreError;
use crate::kv::{Kv, Record};

/// Which end of a range of keys a [`crate::state::Records::scan`] reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// From the first key on.
    Forward,
    /// From the last key back.
    Backward,
}

/// A record as a scan reads it: its key and its value.
pub type Item = (Vec<u8>, Vec<u8>);

/// What a scan asks: the prefix, the end it reads from, and how many records at most.
pub(crate) type Ask<'a> = (&'a [u8], Scan, usize);

/// The bounds of the keys that start with `prefix`: from it to the first key past them
/// all (none where the prefix is only `0xff` bytes).
fn bounds(prefix: &[u8]) -> (Bound<&[u8]>, Bound<Vec<u8>>) {
    let mut end = prefix.to_vec();
    while end.last() == Some(&u8::MAX) {
        end.pop();
    }
    let upper = match end.last_mut() {
        Some(last) => {
            *last += 1;
            Bound::Excluded(end)
        }
        None => Bound::Unbounded,
    };
    (Bound::Included(prefix), upper)
}

/// The scan `ask` of the records of `map`.
pub(crate) fn over_map(
    map: &BTreeMap<Vec<u8>, Vec<u8>>,
    (prefix, dir, limit): Ask<'_>,
) -> Vec<Item> {
    let (from, to) = bounds(prefix);
    let range = map.range::<[u8], _>((from, to.as_ref().map(Vec::as_slice)));
    let item = |(k, v): (&Vec<u8>, &Vec<u8>)| (k.clone(), v.clone());
    match dir {
        Scan::Forward => range.take(limit).map(item).collect(),
        Scan::Backward => range.rev().take(limit).map(item).collect(),
    }
}

/// A record written in memory, as a [`Layer`] reads it: its key, and its value (`None`:
/// removed).
pub(crate) type Written<'w> = (&'w Vec<u8>, &'w Option<Vec<u8>>);

/// Writes in memory laid over the tree, read in key order from either end: a batch's own
/// (`write_set.rs`), a loader's (`loader_cache.rs`).
pub(crate) trait Layer {
    /// The writes from the first key at or after `from` on.
    fn forward<'w>(&'w self, from: &[u8]) -> Box<dyn Iterator<Item = Written<'w>> + 'w>;
    /// The writes from the last key before `to` back.
    fn backward<'w>(&'w self, to: Bound<&[u8]>) -> Box<dyn Iterator<Item = Written<'w>> + 'w>;
}

impl Layer for BTreeMap<Vec<u8>, Option<Vec<u8>>> {
    fn forward<'w>(&'w self, from: &[u8]) -> Box<dyn Iterator<Item = Written<'w>> + 'w> {
        Box::new(self.range::<[u8], _>((Bound::Included(from), Bound::Unbounded)))
    }

    fn backward<'w>(&'w self, to: Bound<&[u8]>) -> Box<dyn Iterator<Item = Written<'w>> + 'w> {
        Box::new(self.range::<[u8], _>((Bound::Unbounded, to)).rev())
    }
}

/// The scan `ask` of the records of `kv` as `writes` leave them.
pub(crate) fn over_batch(
    kv: &Kv,
    writes: &dyn Layer,
    ask: Ask<'_>,
) -> Result<Vec<Item>, StoreError> {
    over_layers(kv, &[writes], false, ask)
}

/// The scan `ask` of the records of `kv` as `layers` of writes leave them, the first
/// layer over the second and so on; with `whole`, the layers hold every record there is,
/// and the tree is not read.
///
/// Each layer is searched for the one end the scan starts from, and read on while its keys
/// start with `prefix`: a fold's scans mostly find their prefix in every layer, and a
/// range between two bounds would search each layer twice.
pub(crate) fn over_layers<'w>(
    kv: &Kv,
    layers: &[&'w dyn Layer],
    whole: bool,
    (prefix, dir, limit): Ask<'_>,
) -> Result<Vec<Item>, StoreError> {
    let (_, to) = bounds(prefix);
    let under = |(key, _): &Written<'w>| key.starts_with(prefix);
    let stored = (!whole).then(|| kv.prefix(prefix));
    match dir {
        Scan::Forward => {
            let heads = layers
                .iter()
                .map(|layer| layer.forward(prefix).take_while(under))
                .collect();
            let written = layered(heads, |a, b| a.cmp(b));
            merge(stored.into_iter().flatten(), written, limit, |a, b| {
                a.cmp(b)
            })
        }
        Scan::Backward => {
            let to = to.as_ref().map(Vec::as_slice);
            let heads = layers
                .iter()
                .map(|layer| layer.backward(to).take_while(under))
                .collect();
            let written = layered(heads, |a, b| b.cmp(a));
            merge(
                stored.into_iter().flat_map(Iterator::rev),
                written,
                limit,
                |a, b| b.cmp(a),
            )
        }
    }
}

/// `layers` (each in the order `before` gives) merged in that order, a key of an earlier
/// layer standing for the same key in later ones.
fn layered<'w, I>(
    layers: Vec<I>,
    before: impl Fn(&[u8], &[u8]) -> Ordering,
) -> impl Iterator<Item = (&'w Vec<u8>, &'w Option<Vec<u8>>)>
where
    I: Iterator<Item = (&'w Vec<u8>, &'w Option<Vec<u8>>)>,
{
    let mut heads: Vec<std::iter::Peekable<I>> = layers.into_iter().map(I::peekable).collect();
    std::iter::from_fn(move || {
        let mut first: Option<(usize, &'w Vec<u8>)> = None;
        for (i, head) in heads.iter_mut().enumerate() {
            if let Some(&(key, _)) = head.peek() {
                if first.is_none_or(|(_, k)| before(key, k) == Ordering::Less) {
                    first = Some((i, key));
                }
            }
        }
        let (layer, key) = first?;
        let item = heads[layer].next();
        for head in heads.iter_mut().skip(layer + 1) {
            if head.peek().is_some_and(|(k, _)| *k == key) {
                head.next();
            }
        }
        item
    })
}

/// The first `limit` records of `stored` and `written` merged in the order `before` gives
/// (both come in it), a key written standing for the same key stored.
fn merge<'w>(
    mut stored: impl Iterator<Item = Result<Record, StoreError>>,
    mut written: impl Iterator<Item = (&'w Vec<u8>, &'w Option<Vec<u8>>)>,
    limit: usize,
    before: impl Fn(&[u8], &[u8]) -> Ordering,
) -> Result<Vec<Item>, StoreError> {
    let mut out = Vec::new();
    let (mut s, mut w) = (stored.next().transpose()?, written.next());
    while out.len() < limit {
        let write_first = match (&s, &w) {
            (None, None) => break,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some((sk, _)), Some((wk, _))) => before(wk, sk) != Ordering::Greater,
        };
        if write_first {
            let Some((wk, wv)) = w else { break };
            if s.as_ref()
                .is_some_and(|(sk, _)| sk.as_ref() == wk.as_slice())
            {
                s = stored.next().transpose()?;
            }
            if let Some(v) = wv {
                out.push((wk.clone(), v.clone()));
            }
            w = written.next();
        } else if let Some((sk, sv)) = s {
            out.push((sk.to_vec(), sv.to_vec()));
            s = stored.next().transpose()?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way a batch's writes can fall among the stored keys, read from both ends at
    /// every limit, reads as the records the batch leaves.
    #[test]
    fn a_batch_scan_reads_the_records_its_writes_leave() {
        let dir = crate::tests::tempdir();
        let kv = Kv::open(dir.path(), 1 << 20).expect("kv");
        let stored = ["a\0", "p\0a", "p\0c", "p\0e", "p\0\u{7f}", "q"];
        for k in stored {
            kv.put(k.as_bytes(), k.as_bytes()).expect("put");
        }
        let mut writes: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        for (k, v) in [("p\0", Some("new")), ("p\0c", None), ("p\0d", Some("d"))] {
            writes.insert(k.into(), v.map(Into::into));
        }
        writes.insert(b"p\0e".to_vec(), Some(b"changed".to_vec()));
        writes.insert(b"r".to_vec(), Some(b"r".to_vec()));
        let mut left: BTreeMap<Vec<u8>, Vec<u8>> = stored
            .iter()
            .map(|k| (k.as_bytes().to_vec(), k.as_bytes().to_vec()))
            .collect();
        for (k, v) in &writes {
            match v {
                Some(v) => left.insert(k.clone(), v.clone()),
                None => left.remove(k),
            };
        }
        for dir in [Scan::Forward, Scan::Backward] {
            for limit in 0..7 {
                let ask = (&b"p\0"[..], dir, limit);
                let scanned = over_batch(&kv, &writes, ask).expect("scan");
                assert_eq!(scanned, over_map(&left, ask), "{dir:?} {limit}");
                assert_eq!(scanned.len(), limit.min(5), "{dir:?} {limit}");
            }
        }
        let all = over_map(&left, (&[][..], Scan::Backward, usize::MAX));
        assert_eq!(all.first().map(|(k, _)| k.as_slice()), Some(&b"r"[..]));
    }

    /// Layers of writes over one another and over the tree read as applying them in turn
    /// leaves the records; with `whole`, as they leave an empty tree.
    #[test]
    fn layers_of_writes_scan_as_the_records_they_leave() {
        let dir = crate::tests::tempdir();
        let kv = Kv::open(dir.path(), 1 << 20).expect("kv");
        for k in ["p\0a", "p\0c", "p\0f"] {
            kv.put(k.as_bytes(), b"stored").expect("put");
        }
        let layer = |items: &[(&str, Option<&str>)]| -> BTreeMap<Vec<u8>, Option<Vec<u8>>> {
            items
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.map(|v| v.as_bytes().to_vec())))
                .collect()
        };
        // Oldest last.
        let oldest = layer(&[
            ("p\0b", Some("1")),
            ("p\0d", Some("1")),
            ("p\0e", Some("1")),
        ]);
        // Keys just before and after the prefix's, where a scan from either end stops.
        let middle = layer(&[
            ("p", Some("2")),
            ("p\0b", None),
            ("p\0d", Some("2")),
            ("q", Some("2")),
        ]);
        let newest = layer(&[("p\0a", None), ("p\0d", Some("3")), ("p\0g", Some("3"))]);
        for whole in [false, true] {
            let mut left: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
            if !whole {
                for item in kv.all() {
                    let (k, v) = item.expect("read");
                    left.insert(k.to_vec(), v.to_vec());
                }
            }
            for l in [&oldest, &middle, &newest] {
                for (k, v) in l {
                    match v {
                        Some(v) => left.insert(k.clone(), v.clone()),
                        None => left.remove(k),
                    };
                }
            }
            for dir in [Scan::Forward, Scan::Backward] {
                for limit in 0..8 {
                    let ask = (&b"p\0"[..], dir, limit);
                    let scanned =
                        over_layers(&kv, &[&newest, &middle, &oldest], whole, ask).expect("scan");
                    assert_eq!(scanned, over_map(&left, ask), "{whole} {dir:?} {limit}");
                }
            }
        }
    }
}
