//! Telling an endpoint's owner by mail that it was disabled: the subscribers' mail, to the
//! address of the managed key that owns it. A key with no address (one given in
//! `RACING_API_KEYS`, or one the operator made with none) is told nothing; the log says so,
//! and the endpoint shows it is disabled, and why, to its key.

use std::sync::Arc;

use super::endpoint::Endpoint;
use crate::keys::registry::Registry;
use crate::subscribe::mail::Mailer;

/// Whom an endpoint's owner is told by when it is disabled: the subscribers' mail, and the
/// key registry that names a managed key's address.
pub struct Mail {
    /// The mail of subscribers.
    pub mailer: Arc<Mailer>,
    /// The key registry.
    pub registry: Registry,
}

impl Mail {
    /// Mail through `mailer`, to the addresses `registry` gives.
    pub fn new(mailer: &Arc<Mailer>, registry: Registry) -> Arc<Mail> {
        Arc::new(Mail {
            mailer: mailer.clone(),
            registry,
        })
    }

    /// Tells the owner of `endpoint` it was disabled, and why; a key with no address (a
    /// configured key, or one the operator made with none) is told nothing, and the log
    /// says so.
    pub async fn tell_disabled(&self, endpoint: &Endpoint, reason: &str) {
        let address = match &endpoint.key {
            Some(id) => match self.registry.get(id).await {
                Ok(record) => record.subscriber,
                Err(e) => {
                    tracing::warn!(endpoint = %endpoint.id, error = format!("{e:#}"), "finding the owner of a disabled webhook endpoint");
                    None
                }
            },
            None => None,
        };
        let Some(to) = address else {
            tracing::warn!(
                endpoint = %endpoint.id,
                url = %endpoint.url,
                "webhook endpoint disabled; its key has no mail address to tell"
            );
            return;
        };
        let body = format!(
            "Your webhook endpoint {} ({}) was disabled: {reason}.\n\n\
             Nothing more is sent to it. What it was owed is kept: once it answers again, \
             POST /api/v1/webhooks/{}/replay?since=SEQ enables it and sends every event \
             after SEQ again (GET /api/v1/webhooks/{}/deliveries shows where it stopped), \
             each with the webhook-id it had.\n",
            endpoint.url, endpoint.id, endpoint.id, endpoint.id
        );
        if let Err(e) = self
            .mailer
            .send(&to, "Your webhook endpoint was disabled", body)
        {
            tracing::warn!(endpoint = %endpoint.id, error = format!("{e:#}"), "mail of a disabled webhook endpoint");
        }
    }
}
