//! The webhooks' settings: the flags of `racing serve`, checked, and the rules against
//! request forgery they make for the service's own listeners.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ipnet::IpNet;

use super::guard::{self, Resolve, SystemResolver};

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

/// The rules against request forgery for a service listening on `own`.
pub fn guard(settings: &Settings, own: Vec<SocketAddr>) -> guard::Guard {
    guard::Guard::new(settings.allowed.clone(), own, settings.resolver.clone())
}
