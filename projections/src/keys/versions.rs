//! The keys of a source record's versions, kept for what `as_of` answers (`history.rs`).

/// The values that one batch's changes of the source record under `record` (a day, a card,
/// a result, scratchings, a profile) replaced, the first change by the event at `seq`
/// (`subject_entries.rs`); of a venue's odds record, when it was removed. The record key's length
/// comes first, so that one record's versions never run into another's: what `as_of`
/// answers read (`history.rs`).
pub fn history(record: &[u8], seq: u64) -> Vec<u8> {
    let mut k = history_of(record);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The record and the first version's sequence of a key of versions ([`history`]).
pub fn parse_history(key: &[u8]) -> Option<(&[u8], u64)> {
    let rest = key.strip_prefix(b"h\0")?;
    let (len, rest) = rest.split_first_chunk::<4>()?;
    let (record, seq) = rest.split_at_checked(u32::from_be_bytes(*len) as usize)?;
    Some((record, u64::from_be_bytes(seq.try_into().ok()?)))
}

/// The prefix of every version of `record`.
pub fn history_of(record: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(6 + record.len() + 8);
    k.extend_from_slice(b"h\0");
    k.extend_from_slice(&(record.len() as u32).to_be_bytes());
    k.extend_from_slice(record);
    k
}
