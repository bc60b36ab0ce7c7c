//! The schemas against the validation they describe: every sample event passes the schema
//! of each version that carries it, every refused sample fails it or breaks a rule it
//! names as the service's alone, and each version has exactly its own types and fields.

use serde_json::Value;

use super::*;
use crate::envelope::Envelope;
use crate::event::Event;
use crate::samples::{self, envelope};
use crate::values::RaceStatus;

/// A validator as a feeder's would be: `format` is an annotation only, as 2020-12 makes it
/// by default, so the schema is held to what its other keywords carry.
fn validator(version: FeedVersion) -> jsonschema::Validator {
    jsonschema::options()
        .build(&feed_schema(version))
        .unwrap_or_else(|e| panic!("the v{} schema is not a schema: {e}", version.as_str()))
}

fn payload(e: &Envelope) -> Value {
    serde_json::from_str(&e.to_json()).expect("an envelope is JSON")
}

/// Valid events of every type, each with the oldest version whose schema takes it. A
/// field added later is an unknown field to an older schema, which takes it, as the
/// contract ignores unknown fields; a type added later, or an odds entry with no win
/// price, it refuses.
fn valid() -> Vec<(FeedVersion, Event)> {
    let day = "2026-11-21";
    let mut dead_heat = samples::result(
        day,
        "Sha Tin",
        1,
        vec![
            samples::runner(Some(1), "A1"),
            samples::runner(Some(1), "B2"),
            samples::runner(None, "C3"),
        ],
    );
    if let Event::RaceResultPublished(r) = &mut dead_heat {
        r.runners[0].dead_heat = true;
        r.runners[1].dead_heat = true;
        r.runners[0].win_odds = None;
    }
    vec![
        (FeedVersion::V1_0, samples::profile("E271", "GOLDEN SIXTY")),
        (
            FeedVersion::V1_0,
            samples::recorded_profile("E271", "GOLDEN SIXTY"),
        ),
        (
            FeedVersion::V1_0,
            samples::card(day, "Sha Tin", 3, &["E271", "D1"]),
        ),
        (FeedVersion::V1_0, samples::scratch(day, 3, "E271")),
        (
            FeedVersion::V1_0,
            samples::scratch_at(day, "Happy Valley", 3, "E271"),
        ),
        (FeedVersion::V1_0, dead_heat),
        (FeedVersion::V1_0, samples::odds(day, 3, &[("E271", 3.5)])),
        (
            FeedVersion::V1_0,
            samples::odds_at(day, "Sha Tin", 3, &[("E271", 1.0)]),
        ),
        (
            FeedVersion::V1_2,
            samples::odds_with_place(day, None, 3, &[("E271", None, Some(1.4))]),
        ),
        (
            FeedVersion::V1_1,
            samples::retraction(day, "Sha Tin", 3, "wrong date"),
        ),
        (
            FeedVersion::V1_2,
            samples::status(day, Some("Sha Tin"), 3, RaceStatus::Off, Some("away")),
        ),
    ]
}

#[test]
fn every_sample_event_passes_the_schema_of_each_version_that_carries_it() {
    for version in FeedVersion::ALL {
        let schema = validator(version);
        for (since, event) in valid() {
            let e = envelope(event);
            let errors: Vec<String> = schema
                .iter_errors(&payload(&e))
                .map(|err| format!("{} at {}", err, err.instance_path()))
                .collect();
            if since <= version {
                assert!(
                    errors.is_empty(),
                    "v{}: {}: {errors:?}",
                    version.as_str(),
                    e.to_json()
                );
            } else {
                assert!(
                    !errors.is_empty(),
                    "v{} takes a v{} event: {}",
                    version.as_str(),
                    since.as_str(),
                    e.to_json()
                );
            }
        }
    }
}

#[test]
fn every_refused_sample_fails_the_schema_or_breaks_a_rule_only_the_service_checks() {
    let schema = validator(FeedVersion::LATEST);
    let mut hit = std::collections::BTreeSet::new();
    for sample in samples::refused() {
        let reason = match Envelope::parse(sample.payload.as_bytes()) {
            Err(reason) => reason.to_string(),
            Ok(_) => panic!(
                "{}: taken by the validation: {}",
                sample.rule, sample.payload
            ),
        };
        let Ok(value) = serde_json::from_str::<Value>(&sample.payload) else {
            continue; // not JSON: no schema takes it
        };
        if schema.is_valid(&value) {
            let rule = SERVICE_ONLY.iter().find(|r| reason.contains(r.refusal));
            let rule = rule.unwrap_or_else(|| {
                panic!(
                    "{}: the schema takes it, and its refusal `{reason}` is none of the rules it names",
                    sample.rule
                )
            });
            hit.insert(rule.rule);
        }
    }
    // The subject is not in the payload: a valid event on another kind's subject.
    let e = envelope(samples::odds("2026-11-21", 3, &[("E271", 3.5)]));
    let reason = Envelope::decode("racing.cards.2026-11-21.3", e.to_json().as_bytes())
        .expect_err("on the wrong subject")
        .to_string();
    let subject = SERVICE_ONLY.iter().find(|r| reason.contains(r.refusal));
    hit.insert(subject.expect("the subject's rule").rule);
    // Each rule the schema says it cannot carry is one it does not: a sample shows it.
    let named: std::collections::BTreeSet<&str> = SERVICE_ONLY.iter().map(|r| r.rule).collect();
    assert_eq!(hit, named);
}

#[test]
fn each_version_has_its_own_types_and_fields_and_no_later_ones() {
    let types = |v: FeedVersion| -> Vec<String> {
        feed_schema(v)["$defs"][ENVELOPE]["properties"]["type"]["enum"]
            .as_array()
            .expect("the types")
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(types(FeedVersion::V1_0).len(), 5);
    assert_eq!(types(FeedVersion::V1_1).len(), 6);
    assert_eq!(types(FeedVersion::V1_2).len(), 7);
    assert_eq!(types(FeedVersion::V1_3).len(), 7);
    // A rule of v1.3's is listed from v1.3 on.
    let rules = |v: FeedVersion| {
        feed_schema(v)["x-service-only"]
            .as_array()
            .map_or(0, Vec::len)
    };
    assert_eq!(
        (rules(FeedVersion::V1_2), rules(FeedVersion::V1_3)),
        (8, 10)
    );
    let field = |v: FeedVersion, def: &str, name: &str| {
        feed_schema(v)["$defs"][def]["properties"]
            .get(name)
            .is_some()
    };
    for (def, name, since) in [
        ("HorseProfile", "sire", FeedVersion::V1_1),
        ("HorseProfile", "season_stakes", FeedVersion::V1_1),
        ("ResultRunner", "lbw", FeedVersion::V1_1),
        ("ResultRunner", "running_positions", FeedVersion::V1_1),
        ("RaceResult", "class", FeedVersion::V1_1),
        ("OddsUpdated", "venue", FeedVersion::V1_1),
        ("RunnerScratched", "venue", FeedVersion::V1_1),
        ("RunnerOdds", "place_odds", FeedVersion::V1_2),
        ("HorseProfile", "seconds", FeedVersion::V1_3),
        ("HorseProfile", "thirds", FeedVersion::V1_3),
    ] {
        for v in FeedVersion::ALL {
            assert_eq!(
                field(v, def, name),
                v >= since,
                "{def}.{name} in v{}",
                v.as_str()
            );
        }
    }
    // A v1.0 odds entry needs its win price; a v1.2 one a win price, a place price or both.
    let odds = |v: FeedVersion| feed_schema(v)["$defs"]["RunnerOdds"].clone();
    assert!(odds(FeedVersion::V1_0)["required"]
        .as_array()
        .is_some_and(|r| r.contains(&"win_odds".into())));
    assert!(odds(FeedVersion::V1_0).get("anyOf").is_none());
    assert!(odds(FeedVersion::V1_2)["anyOf"].is_array());
    for v in FeedVersion::ALL {
        assert_eq!(FeedVersion::parse(v.as_str()), Some(v));
    }
    assert_eq!(FeedVersion::parse("v1"), Some(FeedVersion::V1_0));
    assert_eq!(FeedVersion::parse("2.0"), None);
}

#[test]
fn each_event_type_has_the_subject_its_events_go_to() {
    for (_, event) in valid() {
        let t = EVENT_TYPES
            .iter()
            .find(|t| t.name == event.type_name())
            .expect("every type is listed");
        let data = serde_json::to_value(payload(&envelope(event.clone()))["data"].clone())
            .expect("the body");
        let mut subject = t.subject.to_owned();
        for name in ["horse_no", "date", "race_number"] {
            let value = match &data[name] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            subject = subject.replace(&format!("{{{name}}}"), &value);
        }
        assert_eq!(subject, event.subject(), "{}", t.name);
    }
}
