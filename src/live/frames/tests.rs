//! The frame types against the bytes the server sends: the frames serialised from them
//! are what went out before they moved here, and the `odds` and `snapshot` frames that
//! `racing_projections` renders read back into their types and write out byte for byte.

use racing_events::samples::{
    card, envelope, odds, odds_at, result, retraction, runner, scratch_at, status,
};
use racing_events::RaceStatus;
use racing_events::RunnerOdds;
use racing_projections::{DayKind, OddsMoveDoc};

use super::*;
use crate::live::frames::{frame, odds_frame, replayed_odds_frame_of};
use crate::live::snapshot::race_snapshot;

/// A frame read into `T` (unknown fields refused) and written again: the same bytes.
fn round_trips<'a, T: Serialize + Deserialize<'a>>(text: &'a str) {
    let read: T = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(serde_json::to_string(&read).expect("serialises"), text);
}

#[test]
fn the_server_frames_serialise_as_they_always_have() {
    let cases = [
        (
            frame(&WelcomeFrame {
                r#type: WelcomeType,
                seq: 7,
                heartbeat_ms: 5000,
            }),
            r#"{"type":"welcome","seq":7,"heartbeat_ms":5000}"#,
        ),
        (
            frame(&ErrorFrame {
                r#type: ErrorType,
                error: "bad_request",
                message: "date must be \"YYYY-MM-DD\"",
            }),
            r#"{"type":"error","error":"bad_request","message":"date must be \"YYYY-MM-DD\""}"#,
        ),
        (
            frame(&HeartbeatFrame {
                r#type: HeartbeatType,
                seq: 9,
            }),
            r#"{"type":"heartbeat","seq":9}"#,
        ),
        (frame(&PongFrame { r#type: PongType }), r#"{"type":"pong"}"#),
        (
            frame(&ReplayEndFrame {
                r#type: ReplayEndType,
                date: "2026-11-21",
                race_number: None,
                moves: 3,
                stopped: true,
            }),
            r#"{"type":"replay_end","date":"2026-11-21","race_number":null,"moves":3,"stopped":true}"#,
        ),
    ];
    for (sent, expected) in cases {
        assert_eq!(sent.as_str(), expected);
    }
}

#[test]
fn odds_frames_live_and_replayed_read_back_into_their_type_byte_for_byte() {
    let prices = [
        RunnerOdds {
            horse_no: "A1".into(),
            win_odds: Some(3.5),
            place_odds: None,
        },
        RunnerOdds {
            horse_no: "B2".into(),
            win_odds: Some(12.25),
            place_odds: Some(2.5),
        },
        RunnerOdds {
            horse_no: "C3".into(),
            win_odds: None,
            place_odds: Some(1.75),
        },
    ];
    let book = racing_projections::Book {
        win_book_pct: Some(17.62),
        place_book_pct: Some(97.14),
        favourites: vec!["A1".into()],
    };
    for venue in [Some("Sha Tin"), None] {
        let live = odds_frame(&OddsMoveDoc {
            date: "2026-11-21",
            venue,
            race_number: 3,
            seq: 41,
            published_at: "2026-11-21T04:05:06.123456789Z",
            occurred_at: "2026-11-21T12:05:05+08:00",
            odds: &prices,
            market: &book,
        });
        round_trips::<OddsFrame>(&live);
        let body = racing_projections::render_odds_move(&OddsMoveDoc {
            date: "2026-11-21",
            venue,
            race_number: 3,
            seq: 41,
            published_at: "2026-11-21T04:05:06Z",
            occurred_at: "2026-11-21T04:05:05.5Z",
            odds: &prices,
            market: &book,
        });
        let replayed = replayed_odds_frame_of(&body).expect("utf-8");
        round_trips::<OddsFrame>(&replayed);
        assert!(replayed.starts_with(r#"{"type":"odds","replay":true,"#));
    }
}

/// A store with `events` folded in, one batch each.
fn store_of(
    events: impl IntoIterator<Item = racing_events::Event>,
) -> (tempfile::TempDir, racing_projections::Store) {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let store = racing_projections::Store::open(dir.path()).expect("store");
    for (i, e) in events.into_iter().enumerate() {
        let mut batch = store.batch().expect("batch");
        batch.apply(i as u64 + 1, 0, &envelope(e)).expect("apply");
        batch.commit().expect("commit");
    }
    (dir, store)
}

#[test]
fn snapshot_frames_read_back_into_their_type_byte_for_byte() {
    let events = [
        card("2026-11-21", "Sha Tin", 1, &["A1", "B2"]),
        card("2026-11-21", "Happy Valley", 1, &["C3"]),
        odds("2026-11-21", 1, &[("A1", 3.5), ("B2", 2.1)]),
        odds_at("2026-11-21", "Happy Valley", 1, &[("C3", 6.0)]),
        scratch_at("2026-11-21", "Sha Tin", 1, "B2"),
        odds("2026-11-25", 2, &[("K101", 4.2)]),
    ];
    let (_dir, store) = store_of(events);
    let mut frames = Vec::new();
    for (date, race) in [("2026-11-21", 1), ("2026-11-25", 2), ("2026-11-30", 1)] {
        frames.extend(
            race_snapshot(&racing_projections::Reader::of(&store), date, race)
                .expect("snapshot")
                .frames,
        );
    }
    // Two venues of a two-meeting date (each with `meetings`, a runner scratched at one),
    // one of a venue no card names (`venue` null), and a race with no odds at all.
    assert_eq!(frames.len(), 4, "{frames:?}");
    assert!(frames.iter().any(|f| f.contains("\"meetings\"")));
    assert!(frames.iter().any(|f| f.contains("\"venue\":null")));
    assert!(frames.iter().any(|f| f.contains("\"scratched\":true")));
    for f in &frames {
        round_trips::<SnapshotFrame>(f);
    }
}

#[test]
fn race_day_frames_read_back_into_their_types_byte_for_byte() {
    let events = [
        card("2026-11-21", "Sha Tin", 1, &["A1", "B2"]),
        status("2026-11-21", None, 1, RaceStatus::Off, None),
        status(
            "2026-11-21",
            Some("Sha Tin"),
            1,
            RaceStatus::Suspended,
            Some("reweigh"),
        ),
        scratch_at("2026-11-21", "Sha Tin", 1, "B2"),
        result("2026-11-21", "Sha Tin", 1, vec![runner(Some(1), "A1")]),
        retraction("2026-11-21", "Sha Tin", 1, "wrong day"),
    ];
    let (_dir, store) = store_of(events);
    let frames = store.race_day("2026-11-21", 0, 10).expect("journal");
    assert_eq!(frames.len(), 6);
    for day in &frames {
        let f = day.frame.as_str();
        match day.kind {
            DayKind::Card => round_trips::<CardFrame<'_>>(f),
            DayKind::Status => round_trips::<StatusFrame<'_>>(f),
            DayKind::Scratching => round_trips::<ScratchingFrame<'_>>(f),
            DayKind::Result => round_trips::<ResultFrame<'_>>(f),
            DayKind::Retraction => round_trips::<RetractionFrame<'_>>(f),
        }
    }
    // A status without a reason leaves it out; with a venue-less event, `venue` is null.
    assert_eq!(
        frames[1].frame,
        r#"{"type":"status","date":"2026-11-21","venue":null,"race_number":1,"seq":2,"published_at":"1970-01-01T00:00:00.000Z","status":"off"}"#
    );
}
