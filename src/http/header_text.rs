//! A header value written on the stack from text and numbers.

use axum::http::HeaderValue;

/// A header value written on the stack from text and numbers, without `format!`'s
/// machinery: two are made for every answer (the request id and the `RateLimit` header),
/// and formatting them was a visible share of the service's CPU serving a small document.
/// Its own bytes are the value's only allocation.
pub(super) struct HeaderText {
    buf: [u8; HeaderText::CAPACITY],
    len: usize,
    overflowed: bool,
}

impl HeaderText {
    /// Longest value it makes.
    const CAPACITY: usize = 64;

    pub(super) fn new() -> HeaderText {
        HeaderText {
            buf: [0; HeaderText::CAPACITY],
            len: 0,
            overflowed: false,
        }
    }

    pub(super) fn bytes(mut self, bytes: &[u8]) -> HeaderText {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.overflowed = true,
        }
        self
    }

    pub(super) fn text(self, text: &str) -> HeaderText {
        self.bytes(text.as_bytes())
    }

    /// `n` in decimal.
    pub(super) fn number(self, n: u64) -> HeaderText {
        self.bytes(itoa::Buffer::new().format(n).as_bytes())
    }

    /// `n` in lower-case hex, with leading zeros to at least `digits` digits (one digit
    /// at least, as `format!` writes zero).
    pub(super) fn hex(self, n: u64, digits: usize) -> HeaderText {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut all = [0u8; 16];
        for (i, d) in all.iter_mut().enumerate() {
            *d = DIGITS[((n >> (60 - 4 * i)) & 0xf) as usize];
        }
        let significant = (64 - n.leading_zeros() as usize).div_ceil(4);
        let shown = significant.max(digits).clamp(1, 16);
        self.bytes(&all[16 - shown..])
    }

    /// The value; `None` if it is over [`HeaderText::CAPACITY`] bytes or not valid in a
    /// header.
    pub(super) fn value(&self) -> Option<HeaderValue> {
        if self.overflowed {
            return None;
        }
        HeaderValue::from_bytes(self.buf.get(..self.len)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_text_is_exact_or_refused() {
        let v = HeaderText::new()
            .text("\"default\";r=")
            .number(41)
            .text(";t=")
            .number(u64::MAX)
            .value();
        assert_eq!(
            v.expect("fits"),
            format!("\"default\";r=41;t={}", u64::MAX).as_str()
        );
        for n in [0, 1, 0xabc, 0xffff_ffff_ffff, 0x1_0000_0000_0000, u64::MAX] {
            let v = HeaderText::new()
                .hex(n, 12)
                .text("-")
                .hex(n, 16)
                .text("-")
                .hex(n, 0)
                .value();
            assert_eq!(
                v.expect("fits"),
                format!("{n:012x}-{n:016x}-{n:x}").as_str(),
                "{n}"
            );
        }
        let long = "x".repeat(HeaderText::CAPACITY);
        assert!(HeaderText::new().text(&long).value().is_some());
        assert!(
            HeaderText::new().text(&long).text("y").value().is_none(),
            "over the capacity"
        );
        assert!(
            HeaderText::new().text("a\nb").value().is_none(),
            "not a header value"
        );
    }
}
