//! Records by condition counted from a person's rides, against their horses' forms.

use racing_events::samples::{envelope, result, retraction, runner};
use racing_events::{Event, ResultRunner};

use super::*;
use crate::people::docs::Role;
use crate::store::Store;
use crate::tests::tempdir;

const D1: &str = "2026-11-01";
const D2: &str = "2026-11-08";

fn ride(position: Option<i64>, horse: &str, jockey: &str, trainer: &str) -> ResultRunner {
    ResultRunner {
        jockey: jockey.into(),
        trainer: trainer.into(),
        draw: Some(3),
        ..runner(position, horse)
    }
}

fn race(date: &str, venue: &str, n: i64, runners: Vec<ResultRunner>) -> Event {
    let mut e = result(date, venue, n, runners);
    if let Event::RaceResultPublished(r) = &mut e {
        r.class = Some("Class 4".into());
    }
    e
}

/// Results at two venues of a date and a later date, then amendments of every kind a
/// ride can see: a ride moved to another jockey, a horse that took part then did not,
/// the draw, the going, the class and the distance corrected alone, a name spelt
/// otherwise, a race retracted, and a result of the first date given again.
fn log() -> Vec<Event> {
    let first = || {
        vec![
            ride(Some(1), "A1", "Z Purton", "J Size"),
            ride(Some(2), "B2", "H Bowman", "J Size"),
            ride(Some(3), "C3", "Z Purton", "C Fownes"),
        ]
    };
    let mut events = vec![
        race(D1, "Sha Tin", 1, first()),
        race(
            D1,
            "Happy Valley",
            1,
            vec![
                ride(Some(1), "D4", "Z Purton", "C Fownes"),
                ride(Some(2), "E5", "H Bowman", "J Size"),
            ],
        ),
        race(D2, "Sha Tin", 1, first()),
    ];
    // Moved to another jockey.
    let mut moved = first();
    moved[0].jockey = "H Bowman".into();
    moved[1].jockey = "Z Purton".into();
    events.push(race(D1, "Sha Tin", 1, moved.clone()));
    // Took no part after all.
    moved[2].position = None;
    moved[2].status = Some("WV".into());
    events.push(race(D1, "Sha Tin", 1, moved.clone()));
    // The draw alone, then the name spelt otherwise.
    moved[0].draw = Some(9);
    events.push(race(D1, "Sha Tin", 1, moved.clone()));
    moved[1].jockey = "Z  PURTON".into();
    events.push(race(D1, "Sha Tin", 1, moved.clone()));
    // The going, the class and the distance alone.
    for change in 0..3 {
        let mut e = race(
            D1,
            "Happy Valley",
            1,
            vec![ride(Some(1), "D4", "Z Purton", "C Fownes")],
        );
        if let Event::RaceResultPublished(r) = &mut e {
            match change {
                0 => r.going = "YIELDING".into(),
                1 => r.class = Some("Class 2".into()),
                _ => r.distance = 1650,
            }
        }
        events.push(e);
    }
    events.push(retraction(D1, "Happy Valley", 1, "void"));
    events.push(race(D1, "Sha Tin", 1, first()));
    events
}

/// A person's runs as of every point of a log of amendments, and now, are those read
/// from their horses' form entries alone (what a point before every result gives).
#[test]
fn a_persons_runs_from_their_rides_are_those_of_the_horses_forms_at_every_point() {
    let dir = tempdir();
    let store = Store::open(dir.path()).expect("open");
    let events = log();
    for (i, e) in events.iter().enumerate() {
        let mut b = store.batch().expect("batch");
        b.apply(i as u64 + 1, 0, &envelope(e.clone()))
            .expect("apply");
        b.commit().expect("commit");
    }
    let people = [
        (Role::Jockey, "z-purton"),
        (Role::Jockey, "h-bowman"),
        (Role::Trainer, "j-size"),
        (Role::Trainer, "c-fownes"),
    ];
    let spans = [
        Span::default(),
        Span {
            from: Some(D2),
            to: None,
        },
    ];
    let mut from_rides = 0;
    for (role, id) in people {
        for span in spans {
            let subject = Subject::Person(role, id);
            let now = runs(&store.kv, &store.kv, store.reads(), subject, span, None);
            // Settled nowhere: every run read from the horses' forms.
            let forms = runs(&store.kv, &store.kv, store.reads(), subject, span, Some(0));
            assert_eq!(now.expect("now"), forms.expect("forms"), "{id} now");
            for point in 0..=events.len() as u64 {
                let past = crate::history::AsOf::new(&store.kv, store.reads(), point);
                let rides = runs(&past, &store.kv, store.reads(), subject, span, Some(point))
                    .expect("as of");
                let forms =
                    runs(&past, &store.kv, store.reads(), subject, span, Some(0)).expect("forms");
                assert_eq!(rides, forms, "{id} as of {point}");
                from_rides += rides.map_or(0, |r| r.len());
            }
        }
    }
    assert!(from_rides > 0);
}
