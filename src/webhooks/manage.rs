//! What the API asks of the webhooks: a key's endpoints made, listed, read, removed, their
//! secret rotated, a `ping` sent, their recent deliveries read and a replay asked for.
//! Each endpoint is its owner's alone: another key's is "not found". The sender
//! (`dispatch`) takes up what these write through the endpoints' bucket.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::endpoint::{
    self, DeliveryState, Endpoint, ReplayAsked, StoredSecret, ROTATION_GRACE_SECS,
};
use super::guard::Guard;
use super::owner::Mail;
use super::send::{Posted, Sender};
use super::settings::Settings;
use super::sign::{self, Secret};
use super::store::{Buckets, Endpoints};
use crate::keys::ring::{Identity, KeyRing};
use crate::live::hub::OddsHub;
use crate::read_models::ReadModels;

/// Why an ask of the API was not done.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The request is wrong; the message says how (a 400).
    #[error("{0}")]
    Invalid(String),
    /// No endpoint of that id for this key (a 404).
    #[error("no webhook endpoint {0} for this key")]
    NotFound(String),
    /// The key has as many endpoints as its plan allows (a 409).
    #[error("{0}")]
    Limit(String),
    /// NATS or a bug (a 500, details in the log).
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// An endpoint as asked for.
#[derive(Debug, Clone)]
pub struct NewEndpoint {
    /// Where to send.
    pub url: String,
    /// What to follow.
    pub topics: Vec<String>,
    /// Only this date, if given.
    pub date: Option<String>,
}

/// The webhooks of the service: their buckets, every endpoint as this replica sees them,
/// and the sender of `ping`s.
pub struct Webhooks {
    pub(super) buckets: Buckets,
    pub(super) endpoints: Arc<Endpoints>,
    pub(super) sender: Arc<Sender>,
    pub(super) settings: Settings,
    pub(super) read_models: Arc<ReadModels>,
    pub(super) hub: Arc<OddsHub>,
    pub(super) mail: Option<Arc<Mail>>,
    pub(super) shutdown: CancellationToken,
    keys: Arc<KeyRing>,
}

/// What [`Webhooks::open`] is given.
#[derive(Clone)]
pub struct Parts {
    /// Settings.
    pub settings: Settings,
    /// The service's own listeners, never reached.
    pub own: Vec<SocketAddr>,
    /// The read models, whose race-day journal the deliveries are read from.
    pub read_models: Arc<ReadModels>,
    /// The live hub: the latest position relayed.
    pub hub: Arc<OddsHub>,
    /// The keys, to find a managed key's record (whom to mail).
    pub keys: Arc<KeyRing>,
    /// Whom to tell by mail when an endpoint is disabled.
    pub mail: Option<Arc<Mail>>,
}

impl Webhooks {
    /// [`Webhooks::open`], tried again while NATS is starting, as every step of the
    /// service's start.
    pub async fn start(
        service: &crate::nats::client::Connection,
        stream: &str,
        parts: Parts,
        shutdown: &CancellationToken,
    ) -> anyhow::Result<Arc<Webhooks>> {
        service
            .ready("opening the webhooks", || {
                Webhooks::open(service, stream, parts.clone(), shutdown.clone())
            })
            .await
    }

    /// Opens the buckets beside `stream` (which the set-up made) and follows the
    /// endpoints until `shutdown`.
    pub async fn open(
        service: &crate::nats::client::Connection,
        stream: &str,
        parts: Parts,
        shutdown: CancellationToken,
    ) -> anyhow::Result<Arc<Webhooks>> {
        let buckets = Buckets::open(service, stream).await?;
        let endpoints = Arc::new(Endpoints::default());
        buckets.follow(endpoints.clone(), shutdown.clone()).await?;
        let guard = Arc::new(super::settings::guard(&parts.settings, parts.own));
        Ok(Arc::new(Webhooks {
            buckets,
            endpoints,
            sender: Arc::new(Sender::new(guard, parts.settings.timeout)),
            settings: parts.settings,
            read_models: parts.read_models,
            hub: parts.hub,
            mail: parts.mail,
            shutdown,
            keys: parts.keys,
        }))
    }

    /// The position of the log here: the store's checkpoint, or the latest relayed.
    fn position(&self) -> u64 {
        let checkpoint = self.read_models.reader().checkpoint().unwrap_or(0);
        checkpoint.max(self.hub.latest())
    }

    /// Makes an endpoint for `who`: its URL checked against the forgery rules now, its
    /// topics and date checked, within the key's number of endpoints. Returns it with its
    /// secret, shown this once.
    pub async fn create(
        &self,
        who: &Identity,
        new: NewEndpoint,
    ) -> Result<(Endpoint, String), Problem> {
        endpoint::topics(&new.topics).map_err(Problem::Invalid)?;
        if let Some(date) = &new.date {
            if racing_events::Date::parse(date).is_none() {
                return Err(Problem::Invalid(format!(
                    "date must be {}",
                    racing_events::Date::RULE
                )));
            }
        }
        let url = Guard::parse(&new.url).map_err(|e| Problem::Invalid(format!("url: {e}")))?;
        let owner = endpoint::owner(who.id);
        let max = who
            .limits
            .max_webhooks
            .unwrap_or(self.settings.max_endpoints);
        if self.endpoints.of(&owner).len() >= max {
            return Err(Problem::Limit(format!(
                "this key has {}, as many as its plan allows; remove one first",
                crate::text::count(max, "webhook endpoint", "webhook endpoints")
            )));
        }
        self.sender
            .guard()
            .target(&url)
            .await
            .map_err(|e| Problem::Invalid(format!("url: {e}")))?;
        let secret = Secret::generate();
        let record = Endpoint {
            id: endpoint::new_id(),
            owner,
            key: self.keys.record_id(who.id),
            url: url.to_string(),
            topics: new.topics,
            date: new.date,
            secrets: vec![StoredSecret {
                secret: secret.text(),
                until: None,
            }],
            created_at: racing_events::Instant::now(),
            from_seq: self.position(),
            disabled: None,
            replay: None,
        };
        self.buckets.create(&record).await?;
        self.endpoints
            .set(&record.record_key(), Some(record.clone()));
        Ok((record, secret.text()))
    }

    /// `who`'s endpoints, by id.
    pub fn list(&self, who: &Identity) -> Vec<Endpoint> {
        self.endpoints.of(&endpoint::owner(who.id))
    }

    /// The bucket's key of `who`'s endpoint `id`, if `id` can be one.
    fn key_of(who: &Identity, id: &str) -> Result<String, Problem> {
        if endpoint::is_id(id) {
            Ok(endpoint::record_key(&endpoint::owner(who.id), id))
        } else {
            Err(Problem::NotFound(racing_events::clip(id, 32)))
        }
    }

    /// `who`'s endpoint `id`, as the bucket holds it now.
    pub async fn get(&self, who: &Identity, id: &str) -> Result<Endpoint, Problem> {
        let key = Self::key_of(who, id)?;
        match self.buckets.endpoint(&key).await? {
            Some((endpoint, _)) => Ok(endpoint),
            None => Err(Problem::NotFound(id.to_owned())),
        }
    }

    /// Removes `who`'s endpoint `id` and what is owed to it.
    pub async fn delete(&self, who: &Identity, id: &str) -> Result<(), Problem> {
        let endpoint = self.get(who, id).await?;
        let key = endpoint.record_key();
        self.buckets.delete(&key).await?;
        self.endpoints.set(&key, None);
        Ok(())
    }

    /// Gives `who`'s endpoint `id` a new secret; the one it had signs beside it for
    /// [`ROTATION_GRACE_SECS`] more (an older one stops at once). Returns the endpoint and
    /// its new secret, shown this once.
    pub async fn rotate(&self, who: &Identity, id: &str) -> Result<(Endpoint, String), Problem> {
        let key = Self::key_of(who, id)?;
        let secret = Secret::generate();
        let text = secret.text();
        let now = jiff::Timestamp::now().as_second();
        let changed = self
            .buckets
            .change(&key, |e| {
                let mut previous: Vec<StoredSecret> = e
                    .secrets
                    .iter()
                    .filter(|s| s.until.is_none())
                    .cloned()
                    .map(|s| StoredSecret {
                        until: Some(now + ROTATION_GRACE_SECS),
                        ..s
                    })
                    .collect();
                previous.truncate(1);
                e.secrets = std::iter::once(StoredSecret {
                    secret: text.clone(),
                    until: None,
                })
                .chain(previous)
                .collect();
                Ok(())
            })
            .await?;
        let (endpoint, ()) = changed.ok_or_else(|| Problem::NotFound(id.to_owned()))?;
        self.endpoints.set(&key, Some(endpoint.clone()));
        Ok((endpoint, text))
    }

    /// Sends `who`'s endpoint `id` a `ping` now, once, from this replica, under the same
    /// rules as every delivery (a disabled endpoint too, to see whether it answers
    /// again); its `webhook-id` and what came of it.
    pub async fn ping(&self, who: &Identity, id: &str) -> Result<(String, Posted), Problem> {
        let endpoint = self.get(who, id).await?;
        let url = Guard::parse(&endpoint.url).map_err(|e| Problem::Invalid(e.to_string()))?;
        let webhook_id = format!("msg_{}_ping_{:016x}", endpoint.id, rand::random::<u64>());
        let now = racing_events::Instant::now();
        let data = serde_json::json!({"endpoint": endpoint.id, "url": endpoint.url});
        let body = payload("ping", self.position(), &now, &data.to_string());
        let posted = self
            .sender
            .post(&url, &headers(&endpoint, &webhook_id, &body), body)
            .await;
        Ok((webhook_id, posted))
    }

    /// `who`'s endpoint `id` and what is owed to it: its position, the delivery under way
    /// and the recent attempts.
    pub async fn deliveries(
        &self,
        who: &Identity,
        id: &str,
    ) -> Result<(Endpoint, DeliveryState), Problem> {
        let endpoint = self.get(who, id).await?;
        let state = self
            .buckets
            .state(&endpoint.record_key())
            .await?
            .map(|(state, _)| state)
            .unwrap_or_else(|| DeliveryState::from(endpoint.from_seq));
        Ok((endpoint, state))
    }

    /// Asks the sender to send `who`'s endpoint `id` every event after `since` again
    /// (each with the `webhook-id` it had, so that a receiver that keeps them takes each
    /// once), and lets a disabled endpoint be sent to again.
    pub async fn replay(&self, who: &Identity, id: &str, since: u64) -> Result<Endpoint, Problem> {
        let key = Self::key_of(who, id)?;
        let position = self.position();
        if since > position {
            return Err(Problem::Invalid(format!(
                "since {since} is past the log's position here ({position})"
            )));
        }
        let changed = self
            .buckets
            .change(&key, |e| {
                let n = e.replay.map_or(1, |r| r.n + 1);
                e.replay = Some(ReplayAsked { since, n });
                e.disabled = None;
                Ok(())
            })
            .await?;
        let (endpoint, ()) = changed.ok_or_else(|| Problem::NotFound(id.to_owned()))?;
        self.endpoints.set(&key, Some(endpoint.clone()));
        Ok(endpoint)
    }

    /// Follows the endpoints' changes (the sender's wake-up).
    pub(super) fn changes(&self) -> watch::Receiver<u64> {
        self.endpoints.watch()
    }
}

/// A payload: `{"type", "seq", "published_at", "data"}`, `data` the JSON given as it is
/// (a race-day frame's bytes, as the socket sends them).
pub(super) fn payload(kind: &str, seq: u64, published_at: &str, data: &str) -> Bytes {
    let text = |t: &str| serde_json::to_string(t).unwrap_or_default();
    Bytes::from(format!(
        "{{\"type\":{},\"seq\":{seq},\"published_at\":{},\"data\":{data}}}",
        text(kind),
        text(published_at)
    ))
}

/// The `webhook-*` headers of a delivery of `body` to `endpoint`, signed now with each
/// secret it signs with.
pub(super) fn headers(
    endpoint: &Endpoint,
    webhook_id: &str,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    let now = jiff::Timestamp::now().as_second();
    let secrets = endpoint.signing(now);
    vec![
        ("webhook-id", webhook_id.to_owned()),
        ("webhook-timestamp", now.to_string()),
        (
            "webhook-signature",
            sign::signatures(&secrets, webhook_id, now, body),
        ),
    ]
}
