//! The watcher's board and lines from frames as the service sends them.

use super::*;

/// A frame as the service sends it: described by the AsyncAPI document.
fn frame(text: &str) -> Frame {
    crate::http::asyncapi::check_server_frame(text).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(text).expect("a frame")
}

const SNAPSHOT: &str = r#"{"type":"snapshot","date":"2026-11-23","venue":null,"race_number":3,"seq":10,"odds":[{"horse_no":"A1","win_odds":4.0},{"horse_no":"B2","win_odds":9.5}]}"#;

#[test]
fn a_move_updates_the_board_and_marks_what_moved() {
    let mut board = Board::default();
    assert!(board.apply(&frame(SNAPSHOT), None));
    let odds = frame(
        r#"{"type":"odds","date":"2026-11-23","venue":null,"race_number":3,"seq":11,"published_at":"2026-11-23T05:00:00.000Z","occurred_at":"2026-11-23T05:00:00.000Z","odds":[{"horse_no":"B2","win_odds":7.0}],"market":{"favourites":[]}}"#,
    );
    assert!(board.apply(&odds, None));
    assert_eq!(board.seq, 11);
    assert_eq!(board.shown, Some(3));
    assert_eq!(board.moved, ["B2"]);
    let b2 = &board.races[&3].runners["B2"];
    assert_eq!((b2.win, b2.before), (Some(7.0), Some(9.5)));
    let drawn = board.draw(&BTreeMap::new());
    assert!(drawn.contains("race 3") && drawn.contains("▼"), "{drawn}");
    let line = board.line(&odds).expect("a line");
    assert!(
        line.starts_with("odds 2026-11-23 race 3 seq 11 lag"),
        "{line}"
    );
    assert!(line.ends_with("B2 7"), "{line}");
    assert!(!board.apply(&frame(r#"{"type":"heartbeat","seq":12}"#), None));
    assert_eq!(board.seq, 12);
}

#[test]
fn place_prices_show_beside_win_prices_and_a_place_move_keeps_the_win_price() {
    let mut board = Board::default();
    let snapshot = frame(
        r#"{"type":"snapshot","date":"2026-11-23","venue":null,"race_number":3,"seq":10,"odds":[{"horse_no":"A1","win_odds":4.0,"place_odds":1.6},{"horse_no":"B2","win_odds":9.5}]}"#,
    );
    board.apply(&snapshot, None);
    let line = board.line(&snapshot).expect("a line");
    assert_eq!(
        line,
        "snapshot 2026-11-23 race 3 seq 10: A1 4 place 1.6, B2 9.5"
    );
    let odds = frame(
        r#"{"type":"odds","date":"2026-11-23","venue":null,"race_number":3,"seq":11,"published_at":"2026-11-23T05:00:00.000Z","occurred_at":"2026-11-23T05:00:00.000Z","odds":[{"horse_no":"A1","place_odds":1.5},{"horse_no":"B2","win_odds":8.0,"place_odds":2.4}],"market":{"favourites":[]}}"#,
    );
    board.apply(&odds, None);
    let line = board.line(&odds).expect("a line");
    assert!(line.ends_with(": A1 place 1.5, B2 8 place 2.4"), "{line}");
    let a1 = &board.races[&3].runners["A1"];
    assert_eq!((a1.win, a1.place), (Some(4.0), Some(1.5)));
    let drawn = board.draw(&BTreeMap::new());
    assert!(drawn.contains("PLACE"), "{drawn}");
    let row = drawn.lines().find(|l| l.contains("B2")).expect("B2's row");
    assert!(row.contains("8.0") && row.contains("2.4"), "{row}");
    let row = drawn.lines().find(|l| l.contains("A1")).expect("A1's row");
    assert!(row.contains("4.0") && row.contains("1.5"), "{row}");
}

#[test]
fn a_status_frame_shows_the_status_and_its_reason() {
    let mut board = Board::default();
    board.apply(&frame(SNAPSHOT), None);
    let status = frame(
        r#"{"type":"status","date":"2026-11-23","venue":"Sha Tin","race_number":3,"seq":12,"published_at":"2026-11-23T05:00:01.000Z","status":"suspended","reason":"B2 withdrawn: lame"}"#,
    );
    assert!(board.apply(&status, None));
    assert_eq!(board.seq, 12);
    assert_eq!(
        board.line(&status).as_deref(),
        Some("status 2026-11-23 race 3 seq 12: suspended (B2 withdrawn: lame)")
    );
    let drawn = board.draw(&BTreeMap::new());
    assert!(drawn.contains("SUSPENDED (B2 withdrawn: lame)"), "{drawn}");
    let off = frame(
        r#"{"type":"status","date":"2026-11-23","venue":null,"race_number":3,"seq":13,"published_at":"2026-11-23T05:00:02.000Z","status":"off"}"#,
    );
    board.apply(&off, None);
    assert!(board.line(&off).is_some_and(|l| l.ends_with("seq 13: off")));
    let drawn = board.draw(&BTreeMap::new());
    assert!(
        drawn.contains("OFF") && !drawn.contains("SUSPENDED"),
        "{drawn}"
    );
    // A snapshot that gives the race's status shows it too.
    let mut board = Board::default();
    let snapshot = frame(
        r#"{"type":"snapshot","date":"2026-11-23","venue":null,"race_number":3,"seq":10,"status":"open","status_at":"2026-11-23T04:00:00.000Z","odds":[]}"#,
    );
    board.apply(&snapshot, None);
    let line = board.line(&snapshot).expect("a line");
    assert_eq!(line, "snapshot 2026-11-23 race 3 seq 10 (open): ");
}

#[test]
fn a_scratched_runner_is_struck_out() {
    let mut board = Board::default();
    board.apply(&frame(SNAPSHOT), None);
    let scratching = frame(
        r#"{"type":"scratching","date":"2026-11-23","venue":"Sha Tin","race_number":3,"seq":11,"published_at":"2026-11-23T05:00:01.000Z","horse_no":"B2"}"#,
    );
    assert!(board.apply(&scratching, None));
    assert_eq!(
        board.line(&scratching).as_deref(),
        Some("scratching 2026-11-23 race 3 seq 11: ~~B2~~ scratched")
    );
    let names = BTreeMap::from([("B2".to_owned(), "LUCKY STAR".to_owned())]);
    let drawn = board.draw(&names);
    let row = drawn.lines().find(|l| l.contains("B2")).expect("B2's row");
    // Struck through (SGR 9) and marked in words, for a terminal that shows no strike.
    assert!(
        row.contains("\u{1b}[9m") && row.contains("scratched"),
        "{row}"
    );
    assert!(row.contains("LUCKY STAR") && !row.contains("9.5"), "{row}");
    let a1 = drawn.lines().find(|l| l.contains("A1")).expect("A1's row");
    assert!(!a1.contains("\u{1b}[9m"), "{a1}");
}

const RESULT: &str = r#"{"type":"result","date":"2026-11-23","venue":"Sha Tin","race_number":3,"seq":20,"published_at":"2026-11-23T05:03:00.000Z","result":{"date":"2026-11-23","venue":"Sha Tin","race_number":3,"race_name":"PINE HANDICAP","distance":1200,"going":"GOOD","runners":[{"position":1,"horse_no":"A1","horse_name":"GOLDEN DASH","jockey":"Z Purton","trainer":"J Size","finish_time":"1:09.52","win_odds":4.0,"status":null,"dead_heat":false},{"position":2,"horse_no":"C3","horse_name":"SILVER WAVE","jockey":"H Bowman","trainer":"F Lor","finish_time":"1:09.60","win_odds":6.0,"status":null,"dead_heat":false},{"position":null,"horse_no":"B2","horse_name":"LUCKY STAR","jockey":"K Teetan","trainer":"P Yiu","finish_time":null,"win_odds":null,"status":"WX","dead_heat":false}],"class":"Class 4"}}"#;

#[test]
fn a_result_frame_prints_the_placings() {
    let mut board = Board::default();
    board.apply(&frame(SNAPSHOT), None);
    let result = frame(RESULT);
    assert!(board.apply(&result, None));
    assert_eq!(board.seq, 20);
    assert_eq!(
        board.line(&result).as_deref(),
        Some(
            "result 2026-11-23 race 3 (Sha Tin) seq 20: 1 A1 GOLDEN DASH (Z Purton) 1:09.52; \
             2 C3 SILVER WAVE (H Bowman) 1:09.60; B2 LUCKY STAR WX"
        )
    );
    let drawn = board.draw(&BTreeMap::new());
    assert!(drawn.contains("RESULT"), "{drawn}");
    let first = drawn.lines().find(|l| l.contains("GOLDEN DASH"));
    let first = first.expect("the winner's line");
    assert!(
        first.trim_start().starts_with('1')
            && first.contains("Z Purton")
            && first.contains("1:09.52"),
        "{first}"
    );
}

#[test]
fn a_retraction_prints_a_line_and_takes_the_result_off_the_board() {
    let mut board = Board::default();
    board.apply(&frame(SNAPSHOT), None);
    board.apply(&frame(RESULT), None);
    let retraction = frame(
        r#"{"type":"retraction","date":"2026-11-23","venue":"Sha Tin","race_number":3,"seq":21,"published_at":"2026-11-23T05:04:00.000Z","reason":"published under Sha Tin in error"}"#,
    );
    assert!(board.apply(&retraction, None));
    assert_eq!(
        board.line(&retraction).as_deref(),
        Some("retraction 2026-11-23 race 3 (Sha Tin) seq 21: published under Sha Tin in error")
    );
    let drawn = board.draw(&BTreeMap::new());
    assert!(!drawn.contains("GOLDEN DASH"), "{drawn}");
    assert!(
        drawn.contains("race 3 (Sha Tin) retracted: published under Sha Tin in error"),
        "{drawn}"
    );
}

#[test]
fn the_subscription_asks_for_the_race_days_topics_unless_refused() {
    let args = WatchArgs {
        url: "http://127.0.0.1:1".to_owned(),
        key: "k".to_owned(),
        date: None,
        race: Some(2),
        since: Some(7),
        replay: None,
    };
    let text = |m: Message| match m {
        Message::Text(t) => serde_json::from_str::<serde_json::Value>(&t).expect("JSON"),
        other => panic!("a text frame, not {other:?}"),
    };
    let with = text(subscribe(&args, "2026-11-23", true));
    assert_eq!(
        with,
        serde_json::json!({"type":"subscribe","date":"2026-11-23","race_number":2,"since":7,
            "topics":["odds","status","scratchings","results"]})
    );
    let without = text(subscribe(&args, "2026-11-23", false));
    assert_eq!(without.get("topics"), None);
    // What a service without topics answers: serde's refusal of an unknown field.
    let refused = frame(
        r#"{"type":"error","error":"bad_request","message":"unknown field `topics`, expected one of `date`, `race_number`, `since`"}"#,
    );
    assert!(refuses_topics(&refused));
    let other = frame(r#"{"type":"error","error":"bad_request","message":"bad date"}"#);
    assert!(!refuses_topics(&other));
}

#[test]
fn the_lag_counts_whole_seconds_too() {
    let mut board = Board::default();
    let published = racing_events::Instant::text(
        jiff::Timestamp::now() - jiff::SignedDuration::from_millis(2_500),
    );
    let odds = format!(
        r#"{{"type":"odds","date":"2026-11-23","venue":null,"race_number":3,"seq":11,"published_at":"{published}","occurred_at":"{published}","odds":[{{"horse_no":"B2","win_odds":7.0}}],"market":{{"favourites":[]}}}}"#
    );
    board.apply(&frame(&odds), None);
    // Within the test's own run time of the 2.5 s it was published before.
    let lag = board.lag_ms.expect("a lag");
    assert!((2_500..60_000).contains(&lag), "{lag} ms");
}

#[test]
fn a_replay_shows_when_each_move_happened_not_when_it_was_published() {
    let mut board = Board::default();
    // A past race's move, published into the log this morning.
    let moved = frame(
        r#"{"type":"odds","replay":true,"date":"2026-11-18","venue":"Sha Tin","race_number":2,"seq":812,"published_at":"2026-11-25T01:02:03.456Z","occurred_at":"2026-11-18T05:29:00.000Z","odds":[{"horse_no":"A1","win_odds":4.5}],"market":{"favourites":[]}}"#,
    );
    board.apply(&moved, Some(2));
    assert_eq!(
        board.line(&moved).as_deref(),
        Some("replay 2026-11-18 race 2 seq 812 at 2026-11-18T05:29:00.000Z: A1 4.5")
    );
}

#[test]
fn a_replay_prints_each_recorded_move_then_how_many_there_were() {
    let mut board = Board::default();
    let moved = frame(
        r#"{"type":"odds","replay":true,"date":"2026-11-21","venue":"Sha Tin","race_number":1,"seq":2771,"published_at":"2026-11-21T05:55:52.000Z","occurred_at":"2026-11-21T05:55:52.000Z","odds":[{"horse_no":"A1","win_odds":4.5}],"market":{"favourites":[]}}"#,
    );
    board.apply(&moved, Some(1));
    assert_eq!(
        board.line(&moved).as_deref(),
        Some("replay 2026-11-21 race 1 seq 2771 at 2026-11-21T05:55:52.000Z: A1 4.5")
    );
    let end = |moves: u64| {
        frame(&format!(
            r#"{{"type":"replay_end","date":"2026-11-21","race_number":null,"moves":{moves},"stopped":false}}"#
        ))
    };
    assert_eq!(
        board.line(&end(1)).as_deref(),
        Some("replay_end 2026-11-21 race all: 1 move")
    );
    assert_eq!(
        board.line(&end(0)).as_deref(),
        Some("replay_end 2026-11-21 race all: 0 moves")
    );
}
