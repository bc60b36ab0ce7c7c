//! API keys as the service holds them: SHA-256 hashes only, found by hash, so a key is
//! neither kept in plain text nor guessable from response timing.
//!
//! Two kinds live in one [`KeyRing`](ring::KeyRing): keys from configuration
//! (`RACING_API_KEYS`, the demo key) and managed keys, issued by `racing keys` into a
//! JetStream key-value bucket that every replica follows (see [`registry`]). A managed key
//! is accepted only while the registry has been confirmed current within the allowed
//! staleness (`RACING_KEY_WATCH_STALE_SECS`): a replica cut off from it cannot know of a
//! revocation, so past that it refuses managed keys rather than accept revoked ones;
//! configured keys are not in the registry and go on.

pub(crate) mod digest;
pub(crate) mod record;
pub mod registry;
pub mod replicas;
pub(crate) mod ring;
pub mod usage;

pub use digest::{hash, hex, unhex};
pub use record::{generate, KeyLimits};
