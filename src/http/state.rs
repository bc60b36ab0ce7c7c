//! What the handlers share ([`AppState`]): one `Arc`, cloned for each request.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::limits::RateLimits;
use super::log_end::LogEnd;
use super::slots::ConnectionSlots;
use crate::keys::ring::KeyRing;
use crate::live::session::SessionContext;
use crate::read_models::ReadModels;

/// What the handlers share. Every middleware and handler takes its own clone for each
/// request, so it is one `Arc`: a clone is one atomic increment.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    /// Shares `shared` with every request.
    pub fn new(shared: Shared) -> AppState {
        AppState(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The fields of [`AppState`].
pub struct Shared {
    /// The read models.
    pub read_models: Arc<ReadModels>,
    /// Accepted keys, kept in step with the registry.
    pub keys: Arc<KeyRing>,
    /// Per-key rates and request bounds.
    pub limits: Arc<RateLimits>,
    /// The zone of "today".
    pub timezone: jiff::tz::TimeZone,
    /// Its IANA name.
    pub timezone_name: Arc<str>,
    /// Whether the projector has caught up once.
    pub ready: Arc<AtomicBool>,
    /// Where the log ends, for a read whose position is past the checkpoint.
    pub log_end: Arc<LogEnd>,
    /// What live odds sessions share.
    pub live: SessionContext,
    /// Open WebSocket connections per key.
    pub slots: Arc<ConnectionSlots>,
    /// Every live odds session, so that shutdown can wait for their close frames.
    pub sessions: tokio_util::task::TaskTracker,
    /// The pricing page and the subscription flow.
    pub signup: Arc<crate::subscribe::signup::Signup>,
    /// Webhook endpoints.
    pub webhooks: Arc<crate::webhooks::manage::Webhooks>,
    /// The one shutdown signal.
    pub shutdown: tokio_util::sync::CancellationToken,
}
