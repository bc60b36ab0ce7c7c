//! The one reader of the log, `racing::nats::Messages`, against what the server and the
//! client library do to a consumer: each test with its own nats-server.

use std::time::Duration;

use crate::support::Nats;

const STREAM: &str = "RACING";

/// The next message's sequence, within `within`.
async fn next_seq(messages: &mut racing::nats::Messages, within: Duration) -> u64 {
    tokio::time::timeout(within, messages.next())
        .await
        .expect("a message in time")
        .expect("the stream goes on")
        .expect("a message")
        .info()
        .expect("message metadata")
        .stream_sequence
}

#[tokio::test]
async fn a_slow_reader_reads_on_after_the_server_drops_its_consumer() {
    let nats = Nats::start().await;
    nats.store_filler("racing.unread", 3000).await;
    let mut messages = racing::nats::messages_from(&nats.service, STREAM, 1)
        .await
        .expect("a consumer");
    // The client pulls 500 at a time, and again when 250 are left: reading the 251st
    // pulls the second 500, and the next pull comes at the 751st.
    for seq in 1..=251 {
        assert_eq!(next_seq(&mut messages, Duration::from_secs(10)).await, seq);
    }
    // A reader that never leaves it 20 s unread, but takes 40 s to read on: the server
    // drops the consumer 30 s after its last pull, and the client's pull at the 751st
    // goes unanswered.
    for (pause, seq) in [(15, 252), (15, 253), (10, 254)] {
        tokio::time::sleep(Duration::from_secs(pause)).await;
        assert_eq!(next_seq(&mut messages, Duration::from_secs(10)).await, seq);
    }
    // Left to the client, the 1,001st came 90 s later; the projector gives up after 5 s.
    for seq in 255..=1500 {
        assert_eq!(next_seq(&mut messages, Duration::from_secs(5)).await, seq);
    }
}

#[tokio::test]
async fn a_consumer_the_client_makes_again_before_its_first_message_does_not_start_over() {
    let nats = Nats::start().await;
    let last = nats.store_filler("racing.unread", 10).await;
    let mut messages = racing::nats::messages_from(&nats.service, STREAM, last + 1)
        .await
        .expect("a consumer");
    // A pull waits on the quiet stream when its consumer goes (deleted here; in a
    // cluster, lost with its node): the client makes it again, from where it had got.
    let quiet = tokio::time::timeout(Duration::from_millis(500), messages.next()).await;
    assert!(quiet.is_err(), "nothing past the last message yet");
    nats.service
        .delete_consumer_from_stream(messages.consumer_name(), STREAM)
        .await
        .expect("the consumer deleted");
    let more = nats.store_filler("racing.unread", 1).await;
    // Having got nothing, the client starts over from the stream's first message.
    assert_eq!(next_seq(&mut messages, Duration::from_secs(10)).await, more);
}
