//! API keys as the service holds them: SHA-256 hashes only, compared in constant time, so a
//! key is neither kept in memory in plain text nor guessable from response timing.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Which accepted key a request carried, for per-key limits; never the key itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyId(pub usize);

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

    /// Which of them `key` is, if any. Every stored hash is compared, whatever matches,
    /// so the time taken does not tell which key or how much of it matched.
    pub fn identify(&self, key: Option<&str>) -> Option<KeyId> {
        let presented = hash(key?);
        let mut found = subtle::CtOption::new(0u64, subtle::Choice::from(0));
        for (i, h) in self.hashes.iter().enumerate() {
            let candidate = subtle::CtOption::new(i as u64, h.ct_eq(&presented));
            found = subtle::ConditionallySelectable::conditional_select(
                &found,
                &candidate,
                candidate.is_some(),
            );
        }
        Option::<u64>::from(found).map(|i| KeyId(i as usize))
    }

    /// Whether `key` is one of them.
    pub fn accepts(&self, key: Option<&str>) -> bool {
        self.identify(key).is_some()
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
        assert_eq!(keys.identify(Some("beta")), Some(KeyId(1)));
    }
}
