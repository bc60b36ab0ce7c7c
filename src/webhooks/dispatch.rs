//! The sender of the webhooks: on the replica that holds the lease (a value in the
//! deliveries' bucket that lapses unless renewed), a lane for each enabled endpoint
//! (`lane`), all of them reading the race-day journal through one [`Scanner`], which
//! runs only while there is a lane: with no endpoint, the journal is not read; on every
//! other replica, nothing but waiting for the lease.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::lane::Lane;
use super::manage::Webhooks;
use super::scanner::Scanner;
use crate::projector::Progress;

/// How long a stop waits to give the sending lease back before leaving it to lapse.
const LEASE_RELEASE: Duration = Duration::from_secs(2);

/// The sender, as the service runs it.
pub struct Dispatcher {
    /// The webhooks.
    pub webhooks: Arc<Webhooks>,
    /// This replica's id, as the lease names it.
    pub replica: String,
    /// The projector's progress: each commit.
    pub progress: watch::Receiver<Progress>,
}

impl Dispatcher {
    /// Sends the deliveries of `webhooks` while this replica (`replica`) holds the
    /// sender's lease, until the service stops; `progress` tells of each commit of the
    /// projector's.
    pub fn spawn(
        webhooks: Arc<Webhooks>,
        replica: &str,
        progress: watch::Receiver<Progress>,
    ) -> JoinHandle<()> {
        let dispatcher = Dispatcher {
            webhooks,
            replica: replica.to_owned(),
            progress,
        };
        tokio::spawn(dispatcher.run())
    }

    /// Takes the lease whenever it is free and sends while it holds it, until `shutdown`;
    /// then lets go of it.
    pub async fn run(mut self) {
        let shutdown = self.webhooks.shutdown.clone();
        // Not before the read models have caught up once: a start's replay into an empty
        // store is a bulk load, whose records land in steps, and a journal read in the
        // middle of one could pass events over.
        tokio::select! {
            _ = shutdown.cancelled() => return,
            caught_up = self.progress.wait_for(|p| p.caught_up) => if caught_up.is_err() { return },
        }
        let ttl = self.webhooks.settings.lease;
        let renew = (ttl / 3).max(Duration::from_millis(200));
        let mut changes = self.webhooks.changes();
        let mut lanes: HashMap<String, (CancellationToken, JoinHandle<()>)> = HashMap::new();
        let mut held: Option<Held> = None;
        let mut renewed = tokio::time::Instant::now();
        loop {
            let due = held.is_none() || renewed.elapsed() >= renew;
            if due {
                let holds = self.webhooks.buckets.hold_lease(&self.replica, ttl).await;
                renewed = tokio::time::Instant::now();
                match (holds, &held) {
                    (true, None) => {
                        tracing::info!(replica = %self.replica, "sending webhooks (lease taken)");
                        metrics::gauge!("racing_webhook_lease_held").set(1.0);
                        held = Some(Held {
                            stop: shutdown.child_token(),
                            scanner: None,
                        });
                    }
                    (false, Some(lost)) => {
                        tracing::warn!(replica = %self.replica, "webhook sender's lease lost; stopping");
                        metrics::gauge!("racing_webhook_lease_held").set(0.0);
                        lost.stop.cancel();
                        held = None;
                    }
                    _ => {}
                }
            }
            match &mut held {
                Some(held) => self.reconcile(&mut lanes, held),
                None => lanes.clear(),
            }
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = changes.changed() => {}
                _ = tokio::time::sleep(renew) => {}
            }
        }
        if let Some(held) = held {
            held.stop.cancel();
            for (_, (_, lane)) in lanes.drain() {
                let _ = tokio::time::timeout(Duration::from_secs(2), lane).await;
            }
            // Given back at once for another replica to take, but bounded: a bucket that
            // does not answer (a NATS node just lost) would hold the stop up to the
            // client's request timeout, twice; the lease lapses by itself.
            let release = self.webhooks.buckets.release_lease(&self.replica);
            let _ = tokio::time::timeout(LEASE_RELEASE, release).await;
            metrics::gauge!("racing_webhook_lease_held").set(0.0);
        }
    }

    /// A lane for each enabled endpoint that has none running, and the scanner they read
    /// through started with the first; those of endpoints gone or disabled stop by
    /// themselves, and the scanner once none is left.
    fn reconcile(
        &self,
        lanes: &mut HashMap<String, (CancellationToken, JoinHandle<()>)>,
        held: &mut Held,
    ) {
        lanes.retain(|_, (_, lane)| !lane.is_finished());
        let starting: Vec<String> = self
            .webhooks
            .endpoints
            .keys()
            .into_iter()
            .filter(|key| {
                !lanes.contains_key(key)
                    && self
                        .webhooks
                        .endpoints
                        .get(key)
                        .is_some_and(|e| e.disabled.is_none())
            })
            .collect();
        if starting.is_empty() && lanes.is_empty() {
            if let Some((stop, _)) = held.scanner.take() {
                stop.cancel();
            }
            return;
        }
        let (stop, scanner) = held.scanner.get_or_insert_with(|| {
            let stop = held.stop.child_token();
            let scanner = Scanner::new(self.webhooks.read_models.clone());
            tokio::spawn(scanner.clone().run(self.progress.clone(), stop.clone()));
            (stop, scanner)
        });
        for key in starting {
            let lane_stop = stop.child_token();
            let lane = Lane {
                webhooks: self.webhooks.clone(),
                scanner: scanner.clone(),
                mail: self.webhooks.mail.clone(),
                key: key.clone(),
                stop: lane_stop.clone(),
            };
            lanes.insert(key, (lane_stop, tokio::spawn(lane.run())));
        }
    }
}

/// What the sender runs while this replica holds the lease.
struct Held {
    /// Stops the lanes and the scanner when the lease is lost or the service stops.
    stop: CancellationToken,
    /// The scanner, while there is a lane, and what stops it.
    scanner: Option<(CancellationToken, Arc<Scanner>)>,
}
