//! The subscription flow as its handlers share it: its settings, store, registry, mailer,
//! form tokens and limits, and the links its messages carry.

use std::sync::Arc;

use super::clients;
use super::csrf::Csrf;
use super::limiter::Limiter;
use super::mail::Mailer;
use super::settings::Settings;
use super::store::Store;
use crate::keys::registry::Registry;

/// Where the links in messages lead: a page with one button, which posts back here.
/// Short, so that a link fits a line of a plain-text message.
pub(super) const CONFIRM: &str = "/confirm";

/// Replacement offers looked up and mailed at once; the others wait their turn.
const REPLACEMENT_OFFERS: usize = 16;

/// The subscription flow, shared by its handlers.
pub struct Signup {
    pub(super) settings: Settings,
    pub(super) store: Store,
    pub(super) registry: Registry,
    pub(super) mailer: Arc<Mailer>,
    pub(super) csrf: Csrf,
    pub(super) by_client: Limiter<clients::Client>,
    /// One limit per wider network a client is in.
    pub(super) by_network: [(clients::Prefix, Limiter<clients::Network>); 3],
    pub(super) by_address: Limiter<String>,
    /// Replacement offers being looked up and mailed, after their pages were sent.
    pub(super) replacing: tokio::sync::Semaphore,
}

impl Signup {
    /// The flow over `store` and `registry`, sending with `mailer`, its forms' tokens
    /// signed with `secret` ([`Store::form_secret`]).
    pub fn new(
        settings: Settings,
        store: Store,
        secret: [u8; 32],
        registry: Registry,
        mailer: Arc<Mailer>,
    ) -> anyhow::Result<Signup> {
        let csrf = Csrf::new(secret);
        Ok(Signup {
            by_client: Limiter::per_hour(settings.posts_per_client_hour),
            by_network: clients::Prefix::ALL
                .map(|prefix| (prefix, Limiter::per_hour(settings.per_network_hour(prefix)))),
            by_address: Limiter::per_hour(settings.mails_per_address_hour),
            settings,
            store,
            registry,
            mailer,
            csrf,
            replacing: tokio::sync::Semaphore::new(REPLACEMENT_OFFERS),
        })
    }

    /// The mailer (its status, its outbox).
    pub fn mailer(&self) -> &Arc<Mailer> {
        &self.mailer
    }

    pub(super) fn link(&self, token: &str) -> String {
        format!(
            "{}{CONFIRM}?t={token}",
            self.settings.public_url.trim_end_matches('/')
        )
    }

    /// How long a link may be followed, as a message says it: `24 hours`, `1 hour`.
    pub(super) fn hours(&self) -> String {
        let hours = self.settings.link_ttl.as_secs().div_ceil(3600);
        crate::text::count(hours, "hour", "hours")
    }
}
