//! A key's use shared between replicas, so that its plan holds per client whichever
//! replicas its requests reach. Each replica enforces a key's whole plan in a token bucket
//! of its own, and every [`REPORT`] tells the others, on core NATS, how many requests of
//! each key it admitted since it last did (subject `{stream}_RATE_USE.<replica>`); each
//! replica charges what the others report into its own bucket of the key, as Gubernator's
//! and Envoy's global rate limits do. A client whose requests all reach one replica gets
//! its whole plan there; a client spread over replicas gets its plan in total.
//!
//! Tolerance: a replica charges the others' use only once their report arrives, up to
//! [`REPORT`] plus a NATS hop after the fact. Until then each replica admits from what it
//! knows, so a key spread over N replicas may pass its plan by what the other N - 1
//! admitted in that time: at most (N - 1) × (burst + rate × [`REPORT`]), at the moment
//! every replica still holds a full burst; afterwards by what reaches the others in one
//! report interval. A report lost (NATS out of reach) is not sent again: its use is not
//! charged elsewhere.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::digest::KeyId;
use super::record::KeyLimits;
use crate::nats::subjects;

/// How often a replica reports its use.
pub const REPORT: Duration = Duration::from_millis(200);
/// Bytes of one key's use in a report: its id, the count, the rate and the burst.
const ENTRY: usize = 8 + 4 + 4 + 4;
/// Keys in one report message: 80 KiB, well under NATS's default largest payload (1 MiB).
const ENTRIES_PER_MESSAGE: usize = 4096;

/// Requests of a key that one replica admitted since its last report, and the key's plan
/// there. A replica charges a report with the plan it knows of the key itself
/// ([`charge_report`]); the plan stays in the report for replicas of earlier versions,
/// which make a bucket with it, so that replicas of both versions run side by side during
/// an upgrade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use {
    /// Whose.
    pub key: KeyId,
    /// Requests admitted.
    pub count: u32,
    /// The key's sustained requests per second.
    pub rate: u32,
    /// The key's burst.
    pub burst: u32,
}

/// What a replica's rate limits give to the reports and take from them.
pub trait Ledger: Send + Sync + 'static {
    /// The use of each key admitted here since the last call, keys unused left out.
    fn take_used(&self) -> Vec<Use>;
    /// Charges another replica's use into this replica's bucket of the key, whose
    /// limits here are `limits`.
    fn charge(&self, theirs: &Use, limits: KeyLimits);
}

/// Charges a report's uses into `ledger`, each of a key that `known` holds (giving its
/// limits); a key it does not hold (unknown, revoked, or not yet seen here) is passed
/// over, so that a report cannot make this replica keep anything for a made-up key.
pub fn charge_report(
    ledger: &impl Ledger,
    known: &impl Fn(KeyId) -> Option<KeyLimits>,
    uses: &[Use],
) {
    for u in uses {
        match known(u.key) {
            Some(limits) => ledger.charge(u, limits),
            None => metrics::counter!("racing_rate_reports_unknown_keys_total").increment(1),
        }
    }
}

/// Reports in messages of at most [`ENTRIES_PER_MESSAGE`] keys each.
fn encode(uses: &[Use]) -> Vec<Bytes> {
    uses.chunks(ENTRIES_PER_MESSAGE)
        .map(|chunk| {
            let mut bytes = Vec::with_capacity(chunk.len() * ENTRY);
            for u in chunk {
                bytes.extend_from_slice(&u.key.0.to_be_bytes());
                bytes.extend_from_slice(&u.count.to_be_bytes());
                bytes.extend_from_slice(&u.rate.to_be_bytes());
                bytes.extend_from_slice(&u.burst.to_be_bytes());
            }
            Bytes::from(bytes)
        })
        .collect()
}

/// A report's uses; `None` for a payload that is not one.
fn decode(payload: &[u8]) -> Option<Vec<Use>> {
    if !payload.len().is_multiple_of(ENTRY) || payload.len() > ENTRY * ENTRIES_PER_MESSAGE {
        return None;
    }
    let u32_at = |e: &[u8], at: usize| {
        let mut word = [0u8; 4];
        word.copy_from_slice(&e[at..at + 4]);
        u32::from_be_bytes(word)
    };
    let uses = payload.chunks_exact(ENTRY).map(|e| {
        let mut key = [0u8; 8];
        key.copy_from_slice(&e[..8]);
        Use {
            key: KeyId(u64::from_be_bytes(key)),
            count: u32_at(e, 8),
            rate: u32_at(e, 12),
            burst: u32_at(e, 16),
        }
    });
    Some(uses.collect())
}

/// Joins the reports of `stream`'s replicas as `replica`: subscribes to the others' (an
/// error if NATS refuses), then, until `shutdown`, reports `ledger`'s use every
/// [`REPORT`] and charges theirs into it, for the keys `known` holds
/// ([`charge_report`]).
pub async fn start(
    client: &async_nats::Client,
    stream: &str,
    replica: &str,
    ledger: Arc<impl Ledger>,
    known: impl Fn(KeyId) -> Option<KeyLimits> + Send + 'static,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut reports = client
        .subscribe(subjects::rate_use_all(stream))
        .await
        .context("subscribing to the replicas' use of keys")?;
    let own = subjects::rate_use(stream, replica);
    let client = client.clone();
    tokio::spawn(async move {
        let mut report = tokio::time::interval(REPORT);
        report.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = report.tick() => {
                    for message in encode(&ledger.take_used()) {
                        if let Err(e) = client.publish(own.clone(), message).await {
                            tracing::debug!(error = %e, "reporting the use of keys");
                        }
                    }
                }
                message = reports.next() => {
                    let Some(message) = message else { return };
                    if message.subject.as_str() == own {
                        continue;
                    }
                    match decode(&message.payload) {
                        Some(uses) => charge_report(ledger.as_ref(), &known, &uses),
                        None => tracing::warn!(subject = %message.subject, "unreadable report of key use ignored"),
                    }
                }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_back_as_written_and_anything_else_is_refused() {
        let uses: Vec<Use> = (0..ENTRIES_PER_MESSAGE as u64 + 1)
            .map(|i| Use {
                key: KeyId(u64::MAX - i),
                count: i as u32,
                rate: 5,
                burst: u32::MAX,
            })
            .collect();
        let messages = encode(&uses);
        assert_eq!(
            messages.len(),
            2,
            "at most {ENTRIES_PER_MESSAGE} keys a message"
        );
        let read: Vec<Use> = messages
            .iter()
            .flat_map(|m| decode(m).expect("a report"))
            .collect();
        assert_eq!(read, uses);
        assert_eq!(decode(&messages[1][..ENTRY - 1]), None);
        assert_eq!(decode(b""), Some(Vec::new()));
    }
}
