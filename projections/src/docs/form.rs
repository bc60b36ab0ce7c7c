//! A horse's form as it is served: one entry a race, and the document that frames the
//! newest entries.

use std::borrow::Cow;

use racing_events::{RaceResult, ResultRunner};

use super::lengths::lbw_lengths;
use serde::Serialize;

/// One race of a horse's form: the race and the horse's run in it (with `status` and
/// `dead_heat`, then the race's name, going and class and the runner's trainer and record where known: a field
/// the feed did not give is left out).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FormEntry {
    /// Meeting date, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub date: String,
    /// Racecourse, e.g. `Sha Tin`.
    pub venue: String,
    /// Race within the meeting, 1 to 99.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 99))]
    pub race_number: i64,
    /// Race distance in metres.
    pub distance: i64,
    /// Finishing position from 1 (shared in a dead heat); `null` for no placing.
    #[cfg_attr(feature = "openapi", schema(required = true, minimum = 1))]
    pub position: Option<i64>,
    /// Finishing time, `m:ss.cc` (minutes, seconds, hundredths); `null` where there is
    /// none.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub finish_time: Option<String>,
    /// Final decimal win odds, stake included (at least 1.0); `null` where there are none.
    #[cfg_attr(feature = "openapi", schema(required = true, minimum = 1))]
    pub win_odds: Option<f64>,
    /// Jockey who rode.
    pub jockey: String,
    /// `null` for a normal finisher, otherwise the official code of a non-finisher or
    /// withdrawal, e.g. `PU` (pulled up), `WV-A`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub status: Option<String>,
    /// Whether the position is shared with another runner.
    pub dead_heat: bool,
    /// Race name, e.g. `KITE HANDICAP`.
    pub race_name: String,
    /// Track condition, e.g. `GOOD`, `GOOD TO FIRM`.
    pub going: String,
    /// Race class, e.g. `Class 4`, `Group 1`; left out where the result gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub class: Option<String>,
    /// Trainer of the runner in this race.
    pub trainer: String,
    /// Barrier draw, 1 to 99. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 1, maximum = 99)
    )]
    pub draw: Option<i64>,
    /// Weight carried, in pounds (90 to 160). Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 90, maximum = 160)
    )]
    pub actual_weight: Option<i64>,
    /// The horse's own body weight declared before the race, in pounds (700 to 1500).
    /// Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 700, maximum = 1500)
    )]
    pub declared_weight: Option<i64>,
    /// Lengths behind the winner as officially written: `-` for the winner, `NOSE`, `SH`
    /// (short head), `HD` (head), `N` (neck), lengths with an optional fraction (`3/4`,
    /// `1-1/4`, `10-3/4`), or a code with no margin (`ML`, `DIST`, `---`). Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, pattern = "^[0-9A-Z/-]{1,8}$")
    )]
    pub lbw: Option<String>,
    /// `lbw` as a number of lengths behind the winner: `-` is 0, `1-1/4` is 1.25; `NOSE`,
    /// `SH`, `HD`, `N` are 0.05, 0.1, 0.2, 0.3. `null` where `lbw` is no number of lengths
    /// (`ML`, `DIST`, `---`). Present exactly when `lbw` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, required = false, minimum = 0))]
    pub lbw_lengths: Option<Option<f64>>,
    /// The runner's position at each call of the race, in order (1 to 6 positions of 1 to
    /// 99); the last is at the finish. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, min_items = 1, max_items = 6)
    )]
    pub running_positions: Option<Vec<i64>>,
}

impl FormEntry {
    /// The entry a result gives one of its runners.
    pub fn from_result(r: &RaceResult, runner: &ResultRunner) -> Self {
        FormEntry {
            date: r.date.clone(),
            venue: r.venue.clone(),
            race_number: r.race_number,
            distance: r.distance,
            position: runner.position,
            finish_time: runner.finish_time.clone(),
            win_odds: runner.win_odds,
            jockey: runner.jockey.clone(),
            status: runner.status.clone(),
            dead_heat: runner.dead_heat,
            race_name: r.race_name.clone(),
            going: r.going.clone(),
            class: r.class.clone(),
            trainer: runner.trainer.clone(),
            draw: runner.draw,
            actual_weight: runner.actual_weight,
            declared_weight: runner.declared_weight,
            lbw: runner.lbw.clone(),
            lbw_lengths: lbw_lengths(runner.lbw.as_deref()),
            running_positions: runner.running_positions.clone(),
        }
    }

    /// The entry's JSON, as served.
    pub(crate) fn json(&self) -> Vec<u8> {
        // A FormEntry is strings and finite numbers: serialising it cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// What follows a form document's head: its array of entries.
const FORM_ARRAY: &[u8] = b",\"form\":[";

/// A horse's form document, framed so that `limit` cuts it without parsing JSON.
///
/// Stored layout: `u32` entry count `n`, then `n` little-endian `u32` offsets where each
/// entry ends in the JSON, then the JSON `{"horse_no":..,"horse_name":..,"form":[e1,e2,..]}`.
pub struct FormDoc;

impl FormDoc {
    /// Renders the stored bytes of a form document from its entries' JSON, newest first.
    pub fn render<'a>(
        horse_no: &str,
        horse_name: &str,
        entries: impl ExactSizeIterator<Item = &'a [u8]>,
    ) -> Vec<u8> {
        FormDoc::framed(&FormDoc::head(horse_no, horse_name), entries)
    }

    /// The JSON of a form document up to its entries: `{"horse_no":..,"horse_name":..`.
    pub(crate) fn head(horse_no: &str, horse_name: &str) -> Vec<u8> {
        #[derive(Serialize)]
        struct Head<'a> {
            horse_no: &'a str,
            horse_name: &'a str,
        }
        let mut json = serde_json::to_vec(&Head {
            horse_no,
            horse_name,
        })
        .unwrap_or_default();
        json.pop(); // the closing brace; the form array follows
        json
    }

    /// The stored bytes of a form document from its JSON's [`FormDoc::head`] and its
    /// entries' JSON, newest first: the entries copied, not parsed.
    pub(crate) fn framed<'a>(
        head: &[u8],
        entries: impl ExactSizeIterator<Item = &'a [u8]>,
    ) -> Vec<u8> {
        let mut json = Vec::with_capacity(head.len() + 11);
        json.extend_from_slice(head);
        json.extend_from_slice(FORM_ARRAY);
        let mut ends = Vec::with_capacity(entries.len());
        for (i, e) in entries.enumerate() {
            if i > 0 {
                json.push(b',');
            }
            json.extend_from_slice(e);
            ends.push(json.len() as u32);
        }
        json.extend_from_slice(b"]}");
        let mut out = Vec::with_capacity(4 + 4 * ends.len() + json.len());
        out.extend_from_slice(&(ends.len() as u32).to_le_bytes());
        for e in &ends {
            out.extend_from_slice(&e.to_le_bytes());
        }
        out.extend(json);
        out
    }

    /// The JSON to send: the whole document (borrowed: it is the stored record's tail), or
    /// only the newest `limit` entries. `None` when the stored bytes are not a form document.
    pub fn body(stored: &[u8], limit: Option<usize>) -> Option<Cow<'_, [u8]>> {
        let n = u32::from_le_bytes(stored.get(..4)?.try_into().ok()?) as usize;
        let json = stored.get(4 + 4 * n..)?;
        let cut = match limit {
            Some(l) if l < n => {
                let at = 4 + 4 * (l.checked_sub(1)?);
                u32::from_le_bytes(stored.get(at..at + 4)?.try_into().ok()?) as usize
            }
            _ => return Some(Cow::Borrowed(json)),
        };
        let mut out = Vec::with_capacity(cut + 2);
        out.extend_from_slice(json.get(..cut)?);
        out.extend_from_slice(b"]}");
        Some(Cow::Owned(out))
    }
}

// The JSON of a form, as `FormDoc::render` writes it (itself, so that it can frame the
// entries): described here, and checked against rendered forms by the API's tests.
/// A horse's form: every recorded race, newest first (date, then race
/// number, descending).
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
#[schema(as = Form, examples(json!({
    "horse_no": "E271", "horse_name": "GOLDEN SIXTY",
    "form": [{
        "date": "2026-11-18", "venue": "Happy Valley", "race_number": 1, "distance": 1200,
        "position": 1, "finish_time": "1:09.45", "win_odds": 3.5, "jockey": "Z Purton",
        "status": null, "dead_heat": true, "race_name": "KITE HANDICAP", "going": "GOOD",
        "class": "Class 3", "trainer": "F C Lor", "draw": 4, "actual_weight": 133,
        "declared_weight": 1198, "lbw": "-", "lbw_lengths": 0.0, "running_positions": [3, 2, 1]
    }]
})))]
#[allow(dead_code)]
pub struct FormJson {
    /// Brand number.
    horse_no: String,
    /// Registered name: the profile's, or for a horse without a profile its latest
    /// result's.
    horse_name: String,
    /// The horse's races, newest first; `limit` keeps the newest N.
    form: Vec<FormEntry>,
}
