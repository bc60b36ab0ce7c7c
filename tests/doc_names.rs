//! The names the documents (README.md, CHANGELOG.md, BENCHMARKS.md and docs/) give the socket's topics, its frames and
//! the feed's event types are the code's: the AsyncAPI document the service serves (its
//! `Topic` enum, the messages it sends and takes, the error codes of its `error` frame)
//! and the feed schema's `type` enum.
//!
//! - `docs/live.md`'s table of server messages names every frame the server sends, and
//!   no other; its table of topics names every topic, each with frames the server sends.
//! - Every backticked word shaped like an event type (`RaceCardDeclared`: a subject and a
//!   past participle) is one.
//! - A list of backticked words that follows the word "topics" in a sentence (`the topics
//!   `status`, `scratchings` ...`), and a backticked word right before "topic", names
//!   topics only.

use std::collections::BTreeSet;

use racing_events::schema::{feed_schema, FeedVersion};
use serde_json::Value;

use crate::architecture::read;
use crate::documents::documents;

fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// What the code names: topics, the frames the server sends, the messages a client
/// sends, the event types.
struct Names {
    topics: BTreeSet<String>,
    frames: BTreeSet<String>,
    events: BTreeSet<String>,
}

fn names() -> Names {
    let asyncapi = &*racing::http::asyncapi::DOCUMENT;
    let operations = asyncapi["operations"].as_object().expect("operations");
    let of = |action: &str| -> BTreeSet<String> {
        operations
            .keys()
            .filter_map(|k| k.strip_prefix(action).map(str::to_owned))
            .collect()
    };
    let schema = serde_json::to_value(feed_schema(FeedVersion::LATEST)).expect("the schema");
    let names = Names {
        topics: strings(&asyncapi["components"]["schemas"]["Topic"]["enum"]),
        frames: of("receive_"),
        events: strings(&schema["$defs"]["Envelope"]["properties"]["type"]["enum"]),
    };
    assert!(names.topics.len() >= 6 && names.frames.len() >= 10 && names.events.len() >= 7);
    names
}

/// The backticked words of `text`, in order.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The first cells of the table of `text` under the row that starts with `header`,
/// split into their backticked words; and the second cells likewise.
fn columns(text: &str, header: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (_, rest) = text
        .split_once(&format!("\n{header}"))
        .unwrap_or_else(|| panic!("no table headed `{header}`"));
    let (mut first, mut second) = (BTreeSet::new(), BTreeSet::new());
    for row in rest.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').collect();
        first.extend(backticked(cells[1]).into_iter().map(str::to_owned));
        second.extend(backticked(cells[2]).into_iter().map(str::to_owned));
    }
    (first, second)
}

/// The sentences of `text`: a table's row is one, a paragraph's lines are joined.
fn sentences(text: &str) -> Vec<String> {
    let mut sentences = Vec::new();
    for paragraph in text.split("\n\n") {
        let (rows, prose): (Vec<&str>, Vec<&str>) =
            paragraph.lines().partition(|l| l.starts_with('|'));
        sentences.extend(rows.into_iter().map(str::to_owned));
        let prose = prose.join(" ");
        sentences.extend(prose.split(". ").map(str::to_owned));
    }
    sentences
}

/// The backticked words a sentence names as topics: a list right after the plain word
/// "topics" (or after a few words, opened by a bracket: "the topics they follow
/// (`results`, ...)"), items apart by commas, "and" and "or"; the word right before or
/// right after the plain word "topic".
fn named_topics(sentence: &str) -> Vec<&str> {
    let words: Vec<&str> = sentence.split(' ').filter(|w| !w.is_empty()).collect();
    let mut named = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if word.contains('`') {
            continue;
        }
        let bare = word.trim_matches(|c: char| !c.is_ascii_alphabetic());
        if bare == "topic" {
            if let Some(before) = i.checked_sub(1).map(|b| words[b]) {
                named.extend(backticked(before));
            }
            if word.ends_with("topic") {
                if let Some(after) = words.get(i + 1).filter(|w| w.starts_with('`')) {
                    named.extend(backticked(after));
                }
            }
        }
        if bare != "topics" || !word.ends_with("topics") {
            continue;
        }
        let rest = &words[i + 1..];
        let start = match rest.first() {
            Some(w) if w.starts_with('`') => 0,
            _ => match rest.iter().take(4).position(|w| w.starts_with("(`")) {
                Some(at) => at,
                None => continue,
            },
        };
        for next in &rest[start..] {
            if next.trim_start_matches('(').starts_with('`') {
                named.extend(backticked(next));
                if next.ends_with([')', ':', ';', '.']) {
                    break;
                }
            } else if !["and", "or"].contains(next) {
                break;
            }
        }
    }
    named
}

/// What is wrong with the topics the sentences of a document name.
fn topics_named(name: &str, text: &str, names: &Names) -> Vec<String> {
    let mut wrong = Vec::new();
    for sentence in sentences(text) {
        for topic in named_topics(&sentence) {
            if !names.topics.contains(topic) {
                wrong.push(format!(
                    "{name}: `{topic}` is named a topic in \"{sentence}\""
                ));
            }
        }
    }
    wrong
}

#[test]
fn the_socket_guides_tables_name_the_codes_frames_and_topics() {
    let names = names();
    let live = read("docs/live.md");
    let (frames, _) = columns(&live, "| `type` | fields | when |");
    assert_eq!(frames, names.frames, "docs/live.md's server messages");
    let (topics, their_frames) = columns(&live, "| topic | frame |");
    let mut expected = names.topics.clone();
    // `odds` is the topic of the frames the table above lists first.
    expected.remove("odds");
    assert_eq!(topics, expected, "docs/live.md's topics");
    assert!(
        their_frames.is_subset(&names.frames),
        "{their_frames:?} are not all frames the server sends"
    );
}

#[test]
fn every_event_type_and_topic_the_documents_name_is_the_codes() {
    let names = names();
    let mut wrong = Vec::new();
    for name in documents() {
        let text = read(&name);
        for word in backticked(&text) {
            // A subject and a past participle: `RaceCardDeclared`, `RunnerReinstated`.
            let shaped = ["Horse", "Race", "Runner", "Odds"]
                .iter()
                .any(|p| word.starts_with(p))
                && word.chars().all(|c| c.is_ascii_alphabetic())
                && word.chars().filter(char::is_ascii_uppercase).count() >= 2
                && word.ends_with("ed");
            if shaped && !names.events.contains(word) {
                wrong.push(format!("{name}: `{word}` is no event type"));
            }
        }
        wrong.extend(topics_named(&name, &text, &names));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_frame_called_a_topic_is_named() {
    let names = names();
    let said = "Socket: the topics `status`, `scratching`, `result` and `card` beside `odds`. \
        The `retraction` topic. The topics they follow (`results`, `cards`). A subscribe may \
        name `topics`, and its topics after `SEQ`, with topics and `since`.";
    let wrong = topics_named("t", said, &names);
    assert_eq!(wrong.len(), 4, "{wrong:#?}");
    assert_eq!(
        named_topics("the topics they follow (`results`, `status`), and"),
        ["results", "status"]
    );
}
