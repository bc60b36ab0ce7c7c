//! The binary records' building blocks: a part (a length, then its bytes) and a number
//! in as few bytes as it needs. A record of JSON repeats its field names in every record,
//! which for the small records kept a horse or a person a date was most of their bytes.

/// Marks a part longer than one byte says.
const LONG: u8 = 0xFF;

/// Appends `bytes` as a part: a length under 255 in one byte, a longer one as 255 and four
/// bytes, big-endian; then the bytes.
pub(crate) fn put_part(out: &mut Vec<u8>, bytes: &[u8]) {
    match u8::try_from(bytes.len()) {
        Ok(len) if len < LONG => out.push(len),
        // A record is far under 4 GiB.
        _ => {
            out.push(LONG);
            let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&len.to_be_bytes());
        }
    }
    out.extend_from_slice(bytes);
}

/// The next part of `rest`, which moves past it; `None` where it is cut short.
pub(crate) fn part<'r>(rest: &mut &'r [u8]) -> Option<&'r [u8]> {
    let (&first, after) = rest.split_first()?;
    let (len, after) = match first {
        LONG => {
            let (len, after) = after.split_first_chunk::<4>()?;
            (usize::try_from(u32::from_be_bytes(*len)).ok()?, after)
        }
        len => (usize::from(len), after),
    };
    let bytes = after.get(..len)?;
    *rest = &after[len..];
    Some(bytes)
}

/// Appends `n` seven bits a byte, lowest first, the top bit of each byte but the last set.
pub(crate) fn put_number(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7F) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The next number of `rest` ([`put_number`]), which moves past it; `None` where it is cut
/// short or runs past 64 bits.
pub(crate) fn number(rest: &mut &[u8]) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, after) = rest.split_first()?;
        *rest = after;
        let bits = u64::from(byte & 0x7F);
        if shift == 63 && bits > 1 {
            return None;
        }
        n |= bits << shift;
        if byte & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_and_numbers_read_back_as_written() {
        let long = vec![7u8; 300];
        let numbers = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        let mut out = Vec::new();
        put_part(&mut out, b"");
        put_part(&mut out, b"Sha Tin");
        put_part(&mut out, &long);
        for n in numbers {
            put_number(&mut out, n);
        }
        let mut rest = &out[..];
        assert_eq!(part(&mut rest), Some(&b""[..]));
        assert_eq!(part(&mut rest), Some(&b"Sha Tin"[..]));
        assert_eq!(part(&mut rest), Some(&long[..]));
        for n in numbers {
            assert_eq!(number(&mut rest), Some(n));
        }
        assert!(rest.is_empty());
    }

    #[test]
    fn what_is_cut_short_or_too_long_reads_as_nothing() {
        let mut out = Vec::new();
        put_part(&mut out, b"Happy Valley");
        assert_eq!(part(&mut &out[..out.len() - 1]), None);
        assert_eq!(part(&mut &[LONG, 0, 0][..]), None);
        assert_eq!(number(&mut &[0x80][..]), None);
        // Eleven bytes of continuation: past 64 bits.
        assert_eq!(number(&mut &[0xFF; 11][..]), None);
        assert_eq!(
            number(&mut &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02][..]),
            None
        );
    }
}
