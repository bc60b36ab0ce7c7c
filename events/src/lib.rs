//! The racing feed contract as types: the envelope every feeder publishes, the seven event
//! bodies, the subject each event goes to, and every validation rule of
//! `docs/feeding.md`. Serde only: no I/O, so a feeder written in Rust can
//! depend on this crate alone.

pub mod asyncapi;
mod envelope;
mod event;
mod patterns;
#[cfg(any(test, feature = "samples"))]
pub mod samples;
pub mod schema;
mod transport;
mod validate;
mod values;

pub use envelope::Envelope;
pub use event::{
    CardRunner, Event, HorseProfile, OddsUpdated, RaceCard, RaceResult, RaceRetracted,
    RaceStatusChanged, ResultRunner, RunnerOdds, RunnerScratched,
};
pub use transport::{
    ALL_SUBJECTS, FEEDER_HEADER, MAX_PAYLOAD_BYTES, ODDS_SUBJECTS, STATUS_SUBJECTS, SUBJECT_ROOT,
};
pub use validate::{is_horse_no, ValidationError};
pub use values::{clip, Date, Instant, Lbw, RaceNumber, RaceStatus};

#[cfg(test)]
mod tests;
