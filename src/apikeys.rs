//! API keys as the service holds them: SHA-256 hashes only, compared in constant time, so a
//! key is neither kept in memory in plain text nor guessable from response timing.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The keys a request may carry.
#[derive(Debug, Default)]
pub struct ApiKeys {
    hashes: Vec<[u8; 32]>,
}

fn hash(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

impl ApiKeys {
    /// Holds the hashes of `keys`.
    pub fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> Self {
        ApiKeys {
            hashes: keys.into_iter().map(hash).collect(),
        }
    }

    /// Whether `key` is one of them. Every stored hash is compared, whatever matches, so
    /// the time taken does not tell which key or how much of it matched.
    pub fn accepts(&self, key: Option<&str>) -> bool {
        let Some(key) = key else { return false };
        let presented = hash(key);
        self.hashes
            .iter()
            .fold(subtle::Choice::from(0), |found, h| {
                found | h.ct_eq(&presented)
            })
            .into()
    }

    /// A fresh random key for demo mode: 128 bits from the OS, hex, with a visible prefix.
    pub fn generate() -> String {
        format!("demo_{:032x}", rand::random::<u128>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_held_keys_are_accepted() {
        let keys = ApiKeys::new(["alpha", "beta"]);
        assert!(keys.accepts(Some("alpha")) && keys.accepts(Some("beta")));
        for bad in [None, Some(""), Some("alph"), Some("alpha "), Some("ALPHA")] {
            assert!(!keys.accepts(bad), "{bad:?}");
        }
        assert!(!ApiKeys::default().accepts(Some("")));
    }
}
