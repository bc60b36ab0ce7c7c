//! Signed webhooks: a key's endpoints, each sent every race-day event of the topics it
//! chose as one `POST` in the Standard Webhooks 1.0 form, in stream order, at least once,
//! with retries on the specification's schedule. Where things are: `endpoint` the records
//! (an endpoint, what is owed to it); `sign` the signatures; `guard` the rules against
//! request forgery; `send` one delivery over HTTP; `store` the buckets in NATS; `owner`
//! the mail to an endpoint's owner; `scanner` the race-day journal's new events;
//! `manage` what the API asks of them; `lane` one endpoint's deliveries in order, and
//! `dispatch` the sender of them all, on one replica at a time.
//!
//! What is owed lives in JetStream's key-value buckets, never in memory alone: the sender
//! writes each endpoint's position and retry schedule after every attempt, so that a kill
//! and a failover lose nothing, and a delivery the receiver took but whose record was not
//! written goes again with the same `webhook-id`.

pub mod dispatch;
pub mod endpoint;
pub mod guard;
mod lane;
pub mod manage;
pub mod owner;
pub mod scanner;
pub mod send;
pub mod sign;
pub mod store;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ipnet::IpNet;

pub use guard::{Resolve, SystemResolver};
pub use manage::{Problem, Webhooks};

/// The webhooks' flags of `racing serve`; each also reads its environment variable.
#[derive(Debug, Clone, Args)]
pub struct WebhookArgs {
    /// Networks whose addresses webhook endpoints may have, over plain `http` too
    /// (comma-separated, such as `127.0.0.0/8,10.1.0.0/16`): for tests and private
    /// deployments. Empty: only public addresses, over `https`.
    #[arg(long, env = "RACING_WEBHOOK_ALLOW_NETWORKS", default_value = "")]
    pub webhook_allow_networks: String,
    /// Seconds a webhook delivery may take, connection and answer included.
    #[arg(long, env = "RACING_WEBHOOK_TIMEOUT_SECS", default_value_t = 15)]
    pub webhook_timeout_secs: u64,
    /// Webhook endpoints a key may have when its plan sets no number (keys given in
    /// `RACING_API_KEYS`, keys made before plans set one).
    #[arg(long, env = "RACING_WEBHOOK_MAX_ENDPOINTS", default_value_t = 10)]
    pub webhook_max_endpoints: usize,
    /// Seconds the sending replica's lease lasts unrenewed: after a replica dies, another
    /// sends within about this long.
    #[arg(long, env = "RACING_WEBHOOK_LEASE_SECS", default_value_t = 30)]
    pub webhook_lease_secs: u64,
    /// Tests only: every pause of the retry schedule divided by this.
    #[arg(
        long,
        env = "RACING_WEBHOOK_RETRY_DIVISOR",
        default_value_t = 1,
        hide = true
    )]
    pub webhook_retry_divisor: u32,
}

/// The webhooks' settings, checked.
#[derive(Clone)]
pub struct Settings {
    /// Networks opened to endpoints, over plain `http` too.
    pub allowed: Vec<IpNet>,
    /// Longest one delivery may take.
    pub timeout: Duration,
    /// Endpoints a key may have when its limits set no number.
    pub max_endpoints: usize,
    /// How long the sender's lease lasts unrenewed.
    pub lease: Duration,
    /// The retry schedule's pauses divided by this (1 outside tests).
    pub retry_divisor: u32,
    /// How endpoints' host names are resolved.
    pub resolver: Arc<dyn Resolve>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("allowed", &self.allowed)
            .field("timeout", &self.timeout)
            .field("max_endpoints", &self.max_endpoints)
            .field("lease", &self.lease)
            .field("retry_divisor", &self.retry_divisor)
            .finish_non_exhaustive()
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            allowed: Vec::new(),
            timeout: Duration::from_secs(15),
            max_endpoints: 10,
            lease: Duration::from_secs(30),
            retry_divisor: 1,
            resolver: Arc::new(SystemResolver),
        }
    }
}

impl TryFrom<WebhookArgs> for Settings {
    type Error = anyhow::Error;

    fn try_from(a: WebhookArgs) -> anyhow::Result<Settings> {
        let allowed = a
            .webhook_allow_networks
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| {
                n.parse::<IpNet>()
                    .or_else(|_| n.parse::<std::net::IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "RACING_WEBHOOK_ALLOW_NETWORKS: `{n}` is not a network (such as 127.0.0.0/8)"
                        )
                    })
            })
            .collect::<anyhow::Result<Vec<IpNet>>>()?;
        Ok(Settings {
            allowed,
            timeout: Duration::from_secs(a.webhook_timeout_secs.clamp(1, 60)),
            max_endpoints: a.webhook_max_endpoints,
            lease: Duration::from_secs(a.webhook_lease_secs.clamp(1, 600)),
            retry_divisor: a.webhook_retry_divisor.max(1),
            resolver: Arc::new(SystemResolver),
        })
    }
}

/// The specification's retry schedule: the pause before each attempt of a delivery after
/// the one before it failed; after the last, the endpoint is disabled.
pub const SCHEDULE: [Duration; 10] = [
    Duration::ZERO,
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(14 * 3600),
    Duration::from_secs(20 * 3600),
    Duration::from_secs(24 * 3600),
];

/// The rules against request forgery for a service listening on `own`.
pub fn guard(settings: &Settings, own: Vec<SocketAddr>) -> guard::Guard {
    guard::Guard::new(settings.allowed.clone(), own, settings.resolver.clone())
}
