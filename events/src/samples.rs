//! Small, valid events for tests of this crate's users (feature `samples`): one builder a
//! event type, with plausible defaults for everything a test does not care about
//! (`samples/builders.rs`), and payloads the contract refuses (`samples/refused.rs`).

mod builders;
mod refused;

pub use builders::{
    card, envelope, odds, odds_at, odds_with_place, profile, recorded_profile, result, retraction,
    runner, scratch, scratch_at, status,
};
pub use refused::{refused, Refused};
