//! Words for the messages people read: a count with its noun in the right number, so no
//! message says "1 characters" and none spells the rule out again.

/// `n` and the noun for it: `one` for exactly 1, `many` otherwise (`0 minutes`, `1
/// minute`, `2 minutes`). Both forms are given, so that any noun reads right.
pub fn count<N>(n: N, one: &str, many: &str) -> String
where
    N: std::fmt::Display + PartialEq + From<u8>,
{
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1u64, "character", "characters"), "1 character");
        assert_eq!(count(0u64, "character", "characters"), "0 characters");
        assert_eq!(count(2usize, "key", "keys"), "2 keys");
        assert_eq!(count(1u32, "entry", "entries"), "1 entry");
    }
}
