//! What every key is made of: parts joined by a separator (`kind \0 part \0 part ...`),
//! a race number as two digits, and a key split at its first separator.

pub(super) const SEP: u8 = 0;

/// Bytes of a year in a key, `YYYY`: what the key of a record of a year ends with.
pub(super) const YEAR_LEN: usize = 4;

pub(super) fn key(parts: &[&[u8]]) -> Vec<u8> {
    let mut k = Vec::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            k.push(SEP);
        }
        k.extend_from_slice(p);
    }
    k
}

/// Race numbers are at most 99; two digits keep races of a day in key order.
pub(super) fn race(n: u8) -> [u8; 2] {
    [b'0' + n / 10, b'0' + n % 10]
}

/// `part \0 rest`: the part before the first separator, and what follows it.
pub(super) fn split_at_sep(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = key.iter().position(|b| *b == SEP)?;
    Some((&key[..at], &key[at + 1..]))
}
