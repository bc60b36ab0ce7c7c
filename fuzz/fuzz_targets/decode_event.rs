//! Fuzzes event decoding and validation as the projector meets them: the input's first
//! line is the subject, the rest the payload. No input may panic; a refusal's reason must
//! be short; an envelope that is accepted must be valid, must belong on its subject, and
//! must come back unchanged from a round trip through the wire format.

#![no_main]

use libfuzzer_sys::fuzz_target;
use racing_events::Envelope;

/// A reason goes whole into a dead letter and a log line, so it must stay short however
/// long the payload: the subject is cut to 128 characters, a type name to 64.
const MAX_REASON_CHARS: usize = 512;

fuzz_target!(|data: &[u8]| {
    let (subject, payload) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (String::from_utf8_lossy(&data[..i]), &data[i + 1..]),
        // No subject line: the whole input is a payload, checked as a feeder checks it.
        None => (std::borrow::Cow::Borrowed(""), data),
    };

    let parsed = Envelope::parse(payload);
    let decoded = Envelope::decode(&subject, payload);
    if let Err(e) = &decoded {
        let reason = e.to_string();
        let chars = reason.chars().count();
        assert!(
            chars <= MAX_REASON_CHARS,
            "reason of {chars} characters: {}…",
            reason.chars().take(200).collect::<String>()
        );
    }
    match (&parsed, &decoded) {
        // `decode` is `parse` plus the subject check, never more lenient.
        (Err(p), Err(d)) => assert_eq!(p, d, "decode failed differently from parse"),
        (Err(p), Ok(_)) => panic!("decode accepted a payload that parse refused: {p}"),
        (Ok(env), Err(_)) => assert_ne!(env.subject(), subject, "decode refused its own subject"),
        (Ok(p), Ok(d)) => assert_eq!(p, d),
    }
    let Ok(env) = parsed else { return };

    assert_eq!(
        env.event.validate(),
        Ok(()),
        "an accepted event must be valid"
    );
    let subject = env.subject();
    let json = env.to_json();
    let again = match Envelope::decode(&subject, json.as_bytes()) {
        Ok(again) => again,
        Err(e) => panic!("re-encoded envelope refused: {e}\nsubject: {subject}\njson: {json}"),
    };
    assert_eq!(
        again, env,
        "round trip changed the envelope\nsubject: {subject}\njson: {json}"
    );
    assert_eq!(again.to_json(), json, "re-encoding is not stable");
});
