//! The random draws every part shares: from a weighted table, from a normal, and event
//! ids, all from one seeded generator so that a seed gives the same events.

use racing_events::{Envelope, Event};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Wraps an event with an event id drawn from `rng`, so that one seed gives the same ids.
pub(crate) fn envelope(rng: &mut ChaCha8Rng, event: Event, occurred_at: String) -> Envelope {
    let mut bytes = [0u8; 16];
    rng.fill(&mut bytes);
    Envelope {
        event_id: uuid::Builder::from_random_bytes(bytes).into_uuid(),
        occurred_at,
        event,
    }
}

/// Picks from a table of (item, weight); the tables here are constant and non-empty.
pub(crate) fn weighted<T: Copy>(rng: &mut ChaCha8Rng, table: &[(T, u32)]) -> T {
    let total: u32 = table.iter().map(|&(_, w)| w).sum();
    let mut roll = rng.random_range(0..total);
    for &(item, w) in table {
        if roll < w {
            return item;
        }
        roll -= w;
    }
    unreachable!("the roll is below the sum of the weights")
}

/// A standard normal draw (Box-Muller), so that no distribution crate is needed.
pub(crate) fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}
