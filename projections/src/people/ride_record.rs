//! A jockey's or trainer's ride as its record holds it (`ride_days.rs` keeps a day of
//! them in one record): what its key does not say, which is every field of the run its
//! horse's form entry records of the same result.

use super::docs::{Ride, Role};
use crate::horse_runs::Run;
use crate::keys;
use crate::kv::StoreError;

/// What a ride's record holds, in order: the horse's name, the position, the status, the
/// odds, the person's name and the other role's (the trainer's of a jockey's ride), the
/// race's distance, going and class, and the horse's draw.
type Held = (
    String,
    Option<i64>,
    Option<String>,
    Option<f64>,
    String,
    String,
    i64,
    String,
    Option<String>,
    Option<i64>,
);

/// The record of `ride` (its key says the race and the horse).
pub(super) fn encode(ride: &Ride) -> Vec<u8> {
    let held = (
        &ride.horse_name,
        ride.position,
        &ride.status,
        ride.win_odds,
        &ride.name,
        &ride.partner,
        ride.distance,
        &ride.going,
        &ride.class,
        ride.draw,
    );
    // Plain data: serialising it cannot fail.
    serde_json::to_vec(&held).unwrap_or_default()
}

/// The ride of a record: its race and horse from `key`, the rest from `value`.
pub(super) fn decode(key: &[u8], value: &[u8]) -> Result<Ride, StoreError> {
    let ((date, race_number, venue), horse_no) = keys::parse_person_ride(key).ok_or_else(|| {
        StoreError::Corrupt(format!("{}: no ride's key", String::from_utf8_lossy(key)))
    })?;
    let (horse_name, position, status, win_odds, name, partner, distance, going, class, draw): Held =
        serde_json::from_slice(value).map_err(|e| {
            StoreError::Corrupt(format!("{}: {e}", String::from_utf8_lossy(key)))
        })?;
    Ok(Ride {
        date: date.to_owned(),
        venue: venue.to_owned(),
        race_number: i64::from(race_number),
        horse_no: horse_no.to_owned(),
        horse_name,
        position,
        status,
        win_odds,
        name,
        partner,
        distance,
        going,
        class,
        draw,
    })
}

/// The run of the ride of the person in `role` stored under `key` (with `value`, not
/// empty): the run its horse's form entry records of the same result.
pub(crate) fn run_of(role: Role, key: &[u8], value: &[u8]) -> Result<Run, StoreError> {
    Ok(decode(key, value)?.run(role))
}
