//! The pipeline's steps on their own: the request id, where an `as_of` read runs, and how
//! an error's answer is logged.

use std::sync::{Arc, Mutex};

use super::*;

/// What `f` logs, at every level.
fn logged(f: impl FnOnce()) -> String {
    #[derive(Clone)]
    struct Lines(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lines").extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = Lines(Arc::default());
    let sink = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = lines.0.lock().expect("lines").clone();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn a_request_id_is_the_clients_or_a_prefix_and_a_count_in_hex() {
    let plain = || Request::new(Body::empty());
    let ids: Vec<String> = (0..3)
        .map(|_| request_id(&plain()).to_str().expect("ascii").to_owned())
        .collect();
    for id in &ids {
        let (prefix, count) = id.split_once('-').expect("two parts");
        assert_eq!((prefix.len(), count.len()), (16, 12), "{id}");
        assert!(
            (prefix.to_owned() + count)
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{id}"
        );
        assert_eq!(prefix, &ids[0][..16], "one prefix a thread");
    }
    let count = |id: &str| u64::from_str_radix(&id[17..], 16).expect("hex");
    assert_eq!(count(&ids[1]), count(&ids[0]) + 1);
    assert_eq!(count(&ids[2]), count(&ids[1]) + 1);
    let mut theirs = plain();
    theirs
        .headers_mut()
        .insert(REQUEST_ID, HeaderValue::from_static("client-7"));
    assert_eq!(request_id(&theirs), "client-7");
}

#[test]
fn an_as_of_read_runs_on_a_blocking_thread_however_its_name_is_spelled() {
    let on = |uri: &str| {
        let request = Request::builder()
            .uri(uri)
            .body(Body::empty())
            .expect("a request");
        let matched = table::find(request.uri().path()).expect("a route");
        matched.route().runs != Runs::Inline
            || position::asked(&request, false).is_ok_and(|a| a.as_of)
    };
    let horse = "/api/v1/horses/H001";
    for uri in [
        format!("{horse}?as_of=5"),
        format!("{horse}?as%5Fof=5"),
        format!("{horse}?as%5fof=5"),
        format!("{horse}?%61s_of=5"),
        format!("{horse}?x=1&as%5Fof=5"),
    ] {
        assert!(on(&uri), "{uri} runs on a long reads' thread");
    }
    for uri in [
        horse.to_owned(),
        format!("{horse}?as_ofx=5"),
        format!("{horse}?has_of=5"),
    ] {
        assert!(!on(&uri), "{uri} runs inline");
    }
}

#[test]
fn a_503_is_logged_as_the_services_state_and_a_500_as_an_error() {
    let answered = |status: StatusCode| {
        logged(|| {
            let response = (status, "body").into_response();
            finish(response, HeaderValue::from_static("id"), Instant::now());
        })
    };
    let unavailable = answered(StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        unavailable.contains("DEBUG") && !unavailable.contains("ERROR"),
        "{unavailable}"
    );
    let failed = answered(StatusCode::INTERNAL_SERVER_ERROR);
    assert!(failed.contains("ERROR"), "{failed}");
}
