//! The current odds of a race as `snapshot` frames, read from the store.

use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;

use super::frames;

/// The current odds of one race, as `snapshot` frames.
#[derive(Debug, Clone)]
pub struct RaceSnapshot {
    /// Meeting date.
    pub date: Arc<str>,
    /// Race within the meeting.
    pub race_number: u8,
    /// The highest `seq` of its frames: every update at or below it is in them.
    pub seq: u64,
    /// One frame for each venue that runs the race (one with `venue` null where none is
    /// known), or one empty frame for a race without odds.
    pub frames: Vec<Utf8Bytes>,
}

/// The current odds of a race as `snapshot` frames, read from the store.
pub fn race_snapshot(
    store: &racing_projections::Reader,
    date: &str,
    race_number: u8,
) -> Result<RaceSnapshot, racing_projections::StoreError> {
    #[derive(serde::Deserialize)]
    struct Seq {
        seq: u64,
    }
    let corrupt =
        |e: &dyn std::fmt::Display| racing_projections::StoreError::Corrupt(e.to_string());
    let docs = store.odds_docs(date, race_number)?;
    let mut snapshot = RaceSnapshot {
        date: date.into(),
        race_number,
        seq: 0,
        frames: Vec::with_capacity(docs.len().max(1)),
    };
    if docs.is_empty() {
        // A race priced nowhere yet: its status, where one was given (for each venue
        // that has one, or for every venue), with no odds; else one empty snapshot.
        let statuses = store.race_statuses(date, Some(race_number))?;
        if statuses.is_empty() {
            snapshot.frames.push(
                format!("{{\"type\":\"snapshot\",\"date\":\"{date}\",\"venue\":null,\"race_number\":{race_number},\"seq\":0,\"odds\":[]}}")
                    .into(),
            );
        }
        for row in statuses {
            let frame = frames::SnapshotFrame {
                r#type: frames::SnapshotType,
                date: date.to_owned(),
                venue: row.venue,
                meetings: None,
                race_number,
                seq: 0,
                status: Some(row.status),
                status_at: Some(row.at),
                status_reason: row.reason,
                odds: Vec::new(),
                market: None,
            };
            let text = serde_json::to_string(&frame).map_err(|e| corrupt(&e))?;
            snapshot.frames.push(text.into());
        }
    }
    for doc in docs {
        let seq = serde_json::from_slice::<Seq>(&doc)
            .map_err(|e| corrupt(&e))?
            .seq;
        // The stored document is `{"date":...}`: the frame is the same with a type.
        let body =
            std::str::from_utf8(doc.get(1..).unwrap_or_default()).map_err(|e| corrupt(&e))?;
        snapshot.seq = snapshot.seq.max(seq);
        snapshot
            .frames
            .push(format!("{{\"type\":\"snapshot\",{body}").into());
    }
    Ok(snapshot)
}
