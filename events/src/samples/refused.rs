//! Payloads the feed contract refuses: at least one for each rule of its Validation and
//! of its additions, each a valid sample event with one thing broken. The events crate's
//! tests check that each is refused; the schema's, that each either fails the schema or
//! breaks a rule the schema says only the service checks.

use serde_json::{json, Value};

use super::builders::{
    card, envelope, odds, odds_with_place, profile, result, retraction, runner, scratch, status,
};
use crate::event::Event;
use crate::transport::MAX_PAYLOAD_BYTES;
use crate::values::RaceStatus;

/// A refused payload and the rule it breaks, for people.
pub struct Refused {
    /// The rule broken.
    pub rule: &'static str,
    /// The payload as a feeder would publish it.
    pub payload: String,
}

/// A sample event's payload with `changes` made: each sets the value at a JSON pointer
/// (adding the field when it is absent), or removes the field where the value is `None`.
fn broken(event: Event, changes: &[(&str, Option<Value>)]) -> String {
    let mut v: Value = serde_json::from_str(&envelope(event).to_json()).unwrap_or_default();
    for (pointer, value) in changes {
        let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
        match (v.pointer_mut(parent), value) {
            (Some(Value::Object(fields)), Some(value)) => {
                fields.insert(key.to_owned(), value.clone());
            }
            (Some(Value::Object(fields)), None) => {
                fields.remove(key);
            }
            (Some(Value::Array(items)), Some(value)) => {
                if let Some(slot) = key.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    *slot = value.clone();
                }
            }
            _ => {}
        }
    }
    v.to_string()
}

fn set(pointer: &str, value: Value) -> (&str, Option<Value>) {
    (pointer, Some(value))
}

/// Every refused sample, one rule at a time.
pub fn refused() -> Vec<Refused> {
    let day = "2026-11-21";
    let profile = || profile("E271", "GOLDEN SIXTY");
    let card = || card(day, "Sha Tin", 3, &["E271", "D123"]);
    let result = || {
        result(
            day,
            "Sha Tin",
            3,
            vec![runner(Some(1), "E271"), runner(Some(2), "D123")],
        )
    };
    let odds = || odds(day, 3, &[("E271", 3.5)]);
    let long = |n: usize| Value::String("x".repeat(n));
    let mut all: Vec<(&'static str, String)> = vec![
        ("the payload is JSON", "{\"event_id\": ".to_owned()),
        ("the envelope is an object", json!([1, 2]).to_string()),
        (
            "the type is known",
            broken(profile(), &[set("/type", json!("HorseRetired"))]),
        ),
        (
            "event_id is a UUID",
            broken(profile(), &[set("/event_id", json!("42"))]),
        ),
        (
            "occurred_at is RFC 3339",
            broken(
                profile(),
                &[set("/occurred_at", json!("2026-11-21 13:05:41"))],
            ),
        ),
        (
            "occurred_at is a real moment",
            broken(
                profile(),
                &[set("/occurred_at", json!("2026-11-21T24:61:00Z"))],
            ),
        ),
        ("data is present", broken(profile(), &[("/data", None)])),
        (
            "every required field is present",
            broken(profile(), &[("/data/horse_name", None)]),
        ),
        (
            "fields have their types",
            broken(profile(), &[set("/data/age", json!("five"))]),
        ),
        (
            "a body is an object",
            broken(profile(), &[set("/data", json!(["E271"]))]),
        ),
        (
            "runners are objects",
            broken(card(), &[set("/data/runners/0", json!(["E271", 1]))]),
        ),
        (
            "date is YYYY-MM-DD",
            broken(card(), &[set("/data/date", json!("2026-1-01"))]),
        ),
        (
            "date is a calendar day",
            broken(card(), &[set("/data/date", json!("2023-02-29"))]),
        ),
        (
            "race_number is at least 1",
            broken(card(), &[set("/data/race_number", json!(0))]),
        ),
        (
            "race_number is at most 99",
            broken(odds(), &[set("/data/race_number", json!(100))]),
        ),
        (
            "distance is at least 100",
            broken(card(), &[set("/data/distance", json!(99))]),
        ),
        (
            "distance is at most 10000",
            broken(result(), &[set("/data/distance", json!(10_001))]),
        ),
        (
            "draw is 1 to 99",
            broken(card(), &[set("/data/runners/1/draw", json!(0))]),
        ),
        (
            "weight is 50 to 200",
            broken(card(), &[set("/data/runners/0/weight", json!(201))]),
        ),
        (
            "age is 0 to 40",
            broken(profile(), &[set("/data/age", json!(41))]),
        ),
        (
            "starts is 0 or more",
            broken(profile(), &[set("/data/starts", json!(-1))]),
        ),
        (
            "total_stakes is 0 or more",
            broken(profile(), &[set("/data/total_stakes", json!(-5))]),
        ),
        (
            "wins are no more than starts",
            broken(profile(), &[set("/data/wins", json!(11))]),
        ),
        (
            "places are no more than starts",
            broken(profile(), &[set("/data/places", json!(11))]),
        ),
        (
            "seconds is 0 or more",
            broken(
                profile(),
                &[
                    set("/data/seconds", json!(-1)),
                    set("/data/thirds", json!(2)),
                ],
            ),
        ),
        (
            "seconds and thirds come together",
            broken(profile(), &[set("/data/seconds", json!(1))]),
        ),
        (
            "places are wins + seconds + thirds",
            broken(
                profile(),
                &[
                    set("/data/seconds", json!(1)),
                    set("/data/thirds", json!(1)),
                ],
            ),
        ),
        (
            "horse_no starts with a letter or digit",
            broken(profile(), &[set("/data/horse_no", json!("-E271"))]),
        ),
        (
            "horse_no is at most 32 characters",
            broken(odds(), &[set("/data/odds/0/horse_no", long(33))]),
        ),
        (
            "horse_no is A-Z a-z 0-9 _ -",
            broken(card(), &[set("/data/runners/0/horse_no", json!("E 271"))]),
        ),
        (
            "a name is not empty",
            broken(profile(), &[set("/data/horse_name", json!("  "))]),
        ),
        (
            "a venue is not empty",
            broken(card(), &[set("/data/venue", json!(""))]),
        ),
        (
            "finish_time is m:ss.cc with seconds below 60",
            broken(
                result(),
                &[set("/data/runners/0/finish_time", json!("1:60.00"))],
            ),
        ),
        (
            "win_odds are at least 1.0",
            broken(result(), &[set("/data/runners/1/win_odds", json!(0.99))]),
        ),
        (
            "finish_time is present, null where there is none",
            broken(result(), &[("/data/runners/0/finish_time", None)]),
        ),
        (
            "a runner appears once in a card",
            broken(card(), &[set("/data/runners/1/horse_no", json!("E271"))]),
        ),
        (
            "a shared position is a dead heat",
            broken(result(), &[set("/data/runners/1/position", json!(1))]),
        ),
        (
            "a dead heat is a shared position",
            broken(result(), &[set("/data/runners/0/dead_heat", json!(true))]),
        ),
        (
            "a runner with no position has a status",
            broken(result(), &[set("/data/runners/1/position", Value::Null)]),
        ),
        (
            "a position is 1 to 99",
            broken(result(), &[set("/data/runners/1/position", json!(100))]),
        ),
        (
            "a status is an upper-case code",
            broken(
                result(),
                &[
                    set("/data/runners/1/position", Value::Null),
                    set("/data/runners/1/status", json!("pu")),
                ],
            ),
        ),
        (
            "lbw is 1 to 8 of 0-9 A-Z - /",
            broken(result(), &[set("/data/runners/1/lbw", json!("1 1/4"))]),
        ),
        (
            "running_positions lists at least one call",
            broken(
                result(),
                &[set("/data/runners/0/running_positions", json!([]))],
            ),
        ),
        (
            "running_positions lists at most six calls",
            broken(
                result(),
                &[set(
                    "/data/runners/0/running_positions",
                    json!([1, 1, 1, 1, 1, 1, 1]),
                )],
            ),
        ),
        (
            "a running position is 1 to 99",
            broken(
                result(),
                &[set("/data/runners/0/running_positions", json!([0]))],
            ),
        ),
        (
            "actual_weight is 90 to 160",
            broken(result(), &[set("/data/runners/0/actual_weight", json!(89))]),
        ),
        (
            "declared_weight is 700 to 1500",
            broken(
                result(),
                &[set("/data/runners/0/declared_weight", json!(1501))],
            ),
        ),
        (
            "a result runner's draw is 1 to 99",
            broken(result(), &[set("/data/runners/0/draw", json!(100))]),
        ),
        (
            "a pedigree name is 1 to 64 characters",
            broken(profile(), &[set("/data/sire", long(65))]),
        ),
        (
            "import_type is upper-case letters",
            broken(profile(), &[set("/data/import_type", json!("pp"))]),
        ),
        (
            "current_rating is 0 to 200",
            broken(profile(), &[set("/data/current_rating", json!(201))]),
        ),
        (
            "season_stakes is 0 or more",
            broken(profile(), &[set("/data/season_stakes", json!(-1))]),
        ),
        (
            "an odds update lists a runner",
            broken(odds(), &[set("/data/odds", json!([]))]),
        ),
        (
            "an odds entry gives a win or a place price",
            broken(odds(), &[("/data/odds/0/win_odds", None)]),
        ),
        (
            "place_odds are at least 1.0",
            broken(odds(), &[set("/data/odds/0/place_odds", json!(0.5))]),
        ),
        (
            "a runner appears once in an odds update",
            broken(
                odds_with_place(
                    day,
                    None,
                    3,
                    &[("E271", Some(2.0), None), ("E271", Some(3.0), None)],
                ),
                &[],
            ),
        ),
        (
            "a scratching's venue is not empty",
            broken(scratch(day, 3, "E271"), &[set("/data/venue", json!(" "))]),
        ),
        (
            "a retraction gives a reason",
            broken(
                retraction(day, "Sha Tin", 3, "wrong venue"),
                &[set("/data/reason", json!(""))],
            ),
        ),
        (
            "a retraction's reason is at most 200 characters",
            broken(
                retraction(day, "Sha Tin", 3, "wrong venue"),
                &[set("/data/reason", long(201))],
            ),
        ),
        (
            "a race status is one of the six",
            broken(
                status(day, None, 3, RaceStatus::Off, None),
                &[set("/data/status", json!("running"))],
            ),
        ),
    ];
    let mut big = profile();
    if let Event::HorseProfileUpdated(p) = &mut big {
        p.owner = "x".repeat(MAX_PAYLOAD_BYTES);
    }
    all.push(("the payload is at most 1 MiB", broken(big, &[])));
    all.into_iter()
        .map(|(rule, payload)| Refused { rule, payload })
        .collect()
}
