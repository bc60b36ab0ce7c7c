//! The whole service as one value: built from a [`Config`] (binding its port, connecting
//! to NATS, opening the store), then run until a shutdown signal. Tests build it on port 0
//! and read the port back. Opening the read models at start-up is `store`'s; the demo's
//! feeder and season are `demo`'s.

mod demo;
mod store;

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream;
use racing_projections::Store;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::faults::Faults;
use crate::http;
use crate::http::limits::RateLimits;
use crate::http::log_end::LogEnd;
use crate::http::slots::ConnectionSlots;
use crate::http::state::{AppState, Shared};
use crate::keys;
use crate::keys::registry::Registry;
use crate::keys::replicas::Replicas;
use crate::keys::ring::KeyRing;
use crate::live::hub::OddsHub;
use crate::live::session::SessionContext;
use crate::nats;
use crate::nats::auth::Role;
use crate::nats::local::LocalNats;
use crate::projector::{Parts, Progress, Projector};
use crate::read_models::{self, ReadModels};
use crate::rebuild::Rebuilder;
use crate::snapshot::{self, lease::Lease, start::StartReport, Snapshots};
use crate::starting::Starting;
use crate::supervise::{self, Tasks};
use crate::webhooks::dispatch::Dispatcher;
use demo::{demo_feeder, publish_demo_season};
use store::{open_store, repair, verify_in_background};

/// How long in-flight requests get to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// A built service, bound and connected, not yet serving.
pub struct Application {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    /// (Bound from the first moment of the build, answering meanwhile: `build`.)
    admin_listener: std::net::TcpListener,
    admin_addr: SocketAddr,
    client: async_nats::Client,
    state: AppState,
    js: jetstream::Context,
    config: Config,
    local_nats: Option<LocalNats>,
    nats_url: String,
    /// Where the service connects, as itself: for the projector's own connection.
    dial: nats::client::Dial,
    /// The demo feeder's own connection, if it has one.
    demo_client: Option<async_nats::Client>,
    /// With a local server: the directory of its users' credentials.
    nats_credentials: Option<std::path::PathBuf>,
    demo_key: Option<String>,
    /// The demo's meetings, run live once the service runs (demo mode, new stream), and
    /// where it publishes them as a feeder.
    demo: Option<(racing_demo::LiveDemo, crate::publish::Feeder)>,
    demo_example: Option<racing_demo::Example>,
    progress: watch::Sender<Progress>,
    /// Faults a test injects; none unless it does.
    faults: Arc<Faults>,
    /// The supervised tasks' restarts, and why the service stopped itself if it did.
    tasks: Arc<Tasks>,
    /// Why the read models were rebuilt at start-up, if they were.
    store_note: Option<String>,
    /// Which path the start took to its read models (its own store, a snapshot, a
    /// replay).
    start: StartReport,
    /// The snapshot bucket, where the set-up made one.
    snapshots: Option<Snapshots>,
    /// The snapshot writer's lease, where there is a bucket for it.
    lease: Option<Lease>,
    /// This replica's id among the others.
    replica: String,
    /// Stops the background tasks started by `build` if the application is dropped
    /// without being run.
    _stop_on_drop: tokio_util::sync::DropGuard,
}

impl Application {
    /// Starts a local nats-server if no URL is configured, connects, creates or updates
    /// the stream, opens the read models and binds the API's port.
    pub async fn build(config: Config) -> anyhow::Result<Application> {
        std::fs::create_dir_all(&config.data_dir)
            .with_context(|| format!("creating data directory {}", config.data_dir.display()))?;
        crate::telemetry::metrics();
        // The admin listener answers from the first moment: a start may take minutes
        // (a large store, a snapshot to load, another replica's to wait for).
        let admin_listener = std::net::TcpListener::bind(config.admin_listen)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .with_context(|| format!("binding the admin listener {}", config.admin_listen))?;
        let admin_addr = admin_listener.local_addr()?;
        let starting = Starting::new();
        let while_starting =
            crate::admin::serve_while_starting(&admin_listener, &config.stream, starting.clone())?;
        let built = Self::build_while(config, &starting, admin_listener, admin_addr).await;
        while_starting.stop().await;
        built
    }

    /// [`Application::build`], its steps told to `starting`, with the admin listener
    /// already bound.
    async fn build_while(
        config: Config,
        starting: &Starting,
        admin_listener: std::net::TcpListener,
        admin_addr: SocketAddr,
    ) -> anyhow::Result<Application> {
        // Without a NATS URL the service runs its own server, with credentials of its
        // own for itself, the set-up, a feeder and a keys admin under the data directory.
        let (local_nats, nats_url, service_auth, feeder_auth, setup_auth) = match &config.nats_url {
            Some(url) => (
                None,
                url.clone(),
                config.nats_auth.clone(),
                config.demo_feeder.clone(),
                config.nats_setup.clone(),
            ),
            None => {
                let credentials =
                    nats::auth::Credentials::ensure(&config.credentials_dir(), &config.stream)?;
                let dir = config.data_dir.join("nats");
                let local =
                    LocalNats::start(&config.nats_server, &dir, Some(4222), &credentials).await?;
                let url = local.url();
                let service = local.auth(Role::Service)?;
                let feeder = local.auth(Role::Feeder)?;
                let setup = local.auth(Role::Setup)?;
                (Some(local), url, service, Some(feeder), Some(setup))
            }
        };
        starting.set("connecting to NATS");
        // Each step waits for NATS up to `nats_patience`, and ends at once with what
        // waiting does not mend (see `Connection`). The projector opens a connection of
        // its own the same way.
        let dial = nats::client::Dial::new(
            &nats_url,
            &service_auth,
            Role::Service,
            config.nats_patience,
        );
        let service = dial.open().await?;
        let client = service.client.clone();
        let js = service.jetstream();
        let stream_info = stream(
            &config,
            &nats_url,
            &service,
            setup_auth,
            !service_auth.is_set(),
        )
        .await?;

        starting.set("opening the read models");
        let store_dir = read_models::active_dir(&config.data_dir)?;
        let (store, store_note) = open_store(&store_dir, &stream_info, config.store).await?;

        // The demo season goes into the log before the projector starts, so that the
        // API is not "ready" on an empty log and then answers 404s for a moment. (After
        // the store is checked against the stream's end as it was.)
        let demo_feeder = match config.demo {
            Some(_) => demo_feeder(&nats_url, feeder_auth, config.nats_patience).await?,
            None => None,
        };
        // The demo publishes as its feeder, or as the service (see `demo_feeder`).
        let feeder = demo_feeder.as_ref().unwrap_or(&service);
        if config.demo.is_some() {
            starting.set("publishing the demo season");
        }
        let demo = match config.demo {
            Some(seed) => publish_demo_season(&js, feeder, &config, seed).await?,
            None => None,
        };
        let demo_example = demo.as_ref().and_then(|(feed, _)| feed.example());
        let demo = demo.map(|(feed, calendar)| {
            let live = racing_demo::LiveDemo::new(&feed, calendar);
            (live, crate::publish::Feeder(feeder.jetstream()))
        });
        let demo_client = demo_feeder.map(|feeder| feeder.client);

        let shutdown = CancellationToken::new();
        let demo_key = config.demo.map(|_| keys::record::generate_demo());
        let keys = Arc::new(KeyRing::new(
            config
                .api_keys
                .iter()
                .map(String::as_str)
                .chain(demo_key.as_deref()),
        ));
        starting.set("loading the key registry");
        let registry = service
            .ready("opening the key registry", || {
                Registry::open(&js, &config.stream)
            })
            .await?;
        service
            .ready("loading the key registry", || {
                registry.clone().follow(
                    keys.clone(),
                    config.key_watch_stale_after,
                    shutdown.clone(),
                )
            })
            .await?;
        starting.set("joining the replicas");
        let replicas = service
            .ready("joining the replicas", || {
                Replicas::start(&js, &config.stream, shutdown.clone())
            })
            .await?;
        let replica = replicas.id().to_owned();
        // A store that is empty over a log that is not starts from the newest snapshot,
        // where there is one; where there is none yet, a replica that writes snapshots
        // takes the writer's lease and replays, and the others of its layout wait a while
        // for the snapshot it will publish.
        let live: Arc<dyn Fn() -> u32 + Send + Sync> = {
            let replicas = replicas.clone();
            Arc::new(move || replicas.live())
        };
        let (snapshots, lease) =
            snapshot::open(&js, &config.stream, &config.data_dir, &replica, live).await;
        let predecessor = snapshot::start::predecessor(&config.data_dir, &replica);
        let gone = |id: &str| predecessor.as_deref() == Some(id) || !replicas.is_live(id);
        let (store, store_dir, start) = snapshot::start::choose(
            store,
            store_dir,
            snapshot::start::Sources {
                snapshots: snapshots.as_ref().filter(|_| config.snapshots.load),
                lease: lease.as_ref(),
                settings: &config.snapshots,
                gone: &gone,
            },
            &nats::stream::stream_identity(&stream_info),
            stream_info.state.last_sequence,
            &config.data_dir,
            starting,
        )
        .await?;
        starting.set("binding the API's port");
        read_models::remove_stale(&config.data_dir, &store_dir);
        let limits = RateLimits::new(config.request_limits);
        let known = keys.clone();
        keys::usage::start(
            &client,
            &config.stream,
            replicas.id(),
            limits.clone(),
            move |id| known.limits_of(id),
            shutdown.clone(),
        )
        .await?;
        let state_shutdown = shutdown.clone();
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("binding {}", config.listen))?;
        let addr = listener.local_addr()?;
        let signup = open_signup(&config, &service, registry.clone(), addr).await?;
        let hub = Arc::new(OddsHub::new(config.odds_buffer, store.latest_odds_seq()?));
        let read_models = ReadModels::new(store, &config.data_dir, config.as_of_cache_bytes);
        let webhooks = crate::webhooks::manage::Parts {
            settings: config.webhooks.clone(),
            own: vec![addr, admin_addr],
            read_models: read_models.clone(),
            hub: hub.clone(),
            keys: keys.clone(),
            mail: Some(crate::webhooks::owner::Mail::new(signup.mailer(), registry)),
        };
        let webhooks =
            crate::webhooks::manage::Webhooks::start(&service, &config.stream, webhooks, &shutdown);
        let webhooks = webhooks.await?;
        let faults = Arc::<Faults>::default();
        let state = AppState::new(Shared {
            live: SessionContext {
                hub,
                read_models: read_models.clone(),
                limits: config.ws_limits.clone(),
                faults: faults.clone(),
            },
            read_models,
            keys,
            limits,
            timezone: config.timezone.clone(),
            timezone_name: config.timezone_name.as_str().into(),
            ready: Arc::new(AtomicBool::new(false)),
            log_end: Arc::new(LogEnd::new(ask_end(&js, &config.stream))),
            slots: ConnectionSlots::new(config.ws_max_connections_per_key, replicas),
            sessions: tokio_util::task::TaskTracker::new(),
            signup,
            webhooks,
            shutdown,
        });
        Ok(Application {
            listener,
            addr,
            admin_listener,
            admin_addr,
            client,
            state,
            js,
            config,
            nats_credentials: local_nats
                .as_ref()
                .map(|local| local.credentials().dir().to_owned()),
            local_nats,
            nats_url: nats::client::redact(&nats_url),
            dial,
            demo_client,
            demo_key,
            demo,
            demo_example,
            progress: watch::channel(Progress::default()).0,
            faults,
            tasks: Arc::default(),
            store_note,
            start,
            snapshots,
            lease,
            replica,
            _stop_on_drop: state_shutdown.drop_guard(),
        })
    }

    /// The address the API listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address of the admin listener.
    pub fn admin_addr(&self) -> SocketAddr {
        self.admin_addr
    }

    /// The NATS server the service uses.
    pub fn nats_url(&self) -> &str {
        &self.nats_url
    }

    /// Without SMTP: where subscribers' mail is written.
    pub fn mail_outbox(&self) -> Option<&std::path::Path> {
        self.state.signup.mailer().outbox()
    }

    /// With a local nats-server: where its users' credentials are.
    pub fn nats_credentials(&self) -> Option<&std::path::Path> {
        self.nats_credentials.as_deref()
    }

    /// In demo mode with a season just published: a race and a horse to try.
    pub fn demo_example(&self) -> Option<&racing_demo::Example> {
        self.demo_example.as_ref()
    }

    /// The key printed in demo mode.
    pub fn demo_key(&self) -> Option<&str> {
        self.demo_key.as_deref()
    }

    /// The read models (to inspect dead letters, in tests and tools).
    pub fn store(&self) -> racing_projections::Store {
        Store::clone(&self.state.read_models.load())
    }

    /// The read models in use, which a rebuild replaces.
    pub fn read_models(&self) -> Arc<ReadModels> {
        self.state.read_models.clone()
    }

    /// Follows the projector's progress.
    pub fn progress(&self) -> watch::Receiver<Progress> {
        self.progress.subscribe()
    }

    /// The faults a test may inject into this service once it runs.
    pub fn faults(&self) -> Arc<Faults> {
        self.faults.clone()
    }

    /// Serves the API and runs the projector until `shutdown` is cancelled, then lets
    /// requests in flight finish, closes WebSockets with 1001, commits what was projected
    /// and stops a local NATS.
    pub async fn run(self, stop: CancellationToken) -> anyhow::Result<()> {
        // One signal for every task: the caller's stop, or the end of this run.
        let shutdown = self.state.shutdown.clone();
        let on_stop = shutdown.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            on_stop.cancel();
        });
        let rebuilder = Arc::new(
            Rebuilder::new(
                self.state.read_models.clone(),
                self.js.clone(),
                self.config.stream.clone(),
                shutdown.clone(),
                self.faults.clone(),
            )
            .with_worker(self.config.rebuild_worker.clone())
            .with_snapshots(self.snapshots.clone()),
        );
        tokio::spawn(crate::compaction::watch(
            rebuilder.clone(),
            self.state.read_models.clone(),
            self.config.compaction,
            self.state.ready.clone(),
            shutdown.clone(),
        ));
        // The snapshots' writer, where there is a bucket and its lease's.
        let writer = match (&self.snapshots, &self.lease) {
            (Some(snapshots), Some(lease)) => {
                Some(snapshot::writer::Writer::new(snapshot::writer::Parts {
                    snapshots: snapshots.clone(),
                    lease: lease.clone(),
                    replica: self.replica.clone(),
                    settings: self.config.snapshots.clone(),
                    read_models: self.state.read_models.clone(),
                    progress: self.progress.subscribe(),
                    rebuilding: {
                        let rebuilder = rebuilder.clone();
                        Box::new(move || {
                            rebuilder.status().state == crate::rebuild::status::State::Running
                        })
                    },
                    most_behind: crate::admin::READY_MAX_LAG,
                    js: self.js.clone(),
                    shutdown: shutdown.clone(),
                }))
            }
            _ => None,
        };
        let written = writer.clone().map(|writer| tokio::spawn(writer.run()));
        let webhooks = self.state.webhooks.clone();
        let sent = Dispatcher::spawn(webhooks, &self.replica, self.progress.subscribe());
        // The projector, started again after a panic or an error (see `supervise`).
        let projector = {
            let (models, repairs) = (self.state.read_models.clone(), rebuilder.clone());
            let parts = Parts {
                read_models: self.state.read_models.clone(),
                stream: self.config.stream.clone(),
                progress: self.progress.clone(),
                ready: self.state.ready.clone(),
                hub: self.state.live.hub.clone(),
                faults: self.faults.clone(),
                on_damage: Arc::new(move |problem| {
                    let in_use = ReadModels::address(&models.load_full());
                    repair(&models, &repairs, in_use, problem);
                }),
            };
            let (stop, dial) = (shutdown.clone(), self.dial.clone());
            supervise::spawn(
                "projector",
                self.tasks.clone(),
                shutdown.clone(),
                move || {
                    Projector::run_on_own_threads(parts.clone(), dial.clone(), stop.child_token())
                },
            )
        };

        if let Some((demo, mut feeder)) = self.demo {
            let race_secs = self.config.demo_race_secs;
            let stop = shutdown.clone().cancelled_owned();
            tokio::spawn(async move {
                if let Err(e) = demo.run(&mut feeder, race_secs, stop).await {
                    tracing::error!(error = format!("{e:#}"), "demo feed");
                }
            });
        }

        let mailer = self.state.signup.mailer().clone();
        let mail_stop = shutdown.clone();
        supervise::spawn("mailer", self.tasks.clone(), shutdown.clone(), move || {
            let (mailer, stop) = (mailer.clone(), mail_stop.clone());
            async move {
                mailer.run(stop).await;
                Ok(())
            }
        });

        let verified = verify_in_background(
            self.state.read_models.clone(),
            rebuilder.clone(),
            shutdown.clone(),
        );
        let admin = crate::admin::router(crate::admin::AdminState {
            read_models: self.state.read_models.clone(),
            rebuilder,
            client: self.client.clone(),
            js: self.js.clone(),
            stream: self.config.stream.clone(),
            progress: self.progress.subscribe(),
            ready: self.state.ready.clone(),
            mailer: self.state.signup.mailer().clone(),
            tasks: self.tasks.clone(),
            store_note: self.store_note.clone(),
            store_read: Arc::default(),
            start: self.start.clone(),
            snapshots: writer,
        });
        let admin_stop = shutdown.clone();
        let admin_listener = tokio::net::TcpListener::from_std(self.admin_listener)?;
        let admin_server = axum::serve(admin_listener, admin)
            .with_graceful_shutdown(async move { admin_stop.cancelled().await });
        let admin_served = tokio::spawn(async move { admin_server.await });

        // The client's address, for the per-client limits of the subscription forms.
        let app = axum::ServiceExt::<axum::extract::Request>::into_make_service_with_connect_info::<
            SocketAddr,
        >(
            http::api(self.state.clone()).context("starting the long reads' threads")?
        );
        let stall = self.state.live.limits.send_timeout;
        let listener = axum::serve::ListenerExt::tap_io(self.listener, move |tcp| {
            http::connection::set_up(tcp, stall);
        });
        let stop = shutdown.clone();
        let server = axum::serve(listener, app).with_graceful_shutdown(async move {
            stop.cancelled().await;
        });
        let served = tokio::spawn(async move { server.await });

        shutdown.cancelled().await;
        match tokio::time::timeout(SHUTDOWN_GRACE, served).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => tracing::error!(error = %e, "HTTP server"),
            Ok(Err(e)) => tracing::error!(error = %e, "HTTP server task"),
            Err(_) => tracing::warn!("requests still in flight after {SHUTDOWN_GRACE:?}; stopping"),
        }
        // Sessions see the same signal and close with 1001; give them the grace to do so.
        self.state.sessions.close();
        if tokio::time::timeout(SHUTDOWN_GRACE, self.state.sessions.wait())
            .await
            .is_err()
        {
            tracing::warn!("live odds sessions still open after {SHUTDOWN_GRACE:?}; stopping");
        }
        if let Ok(Err(e)) = admin_served.await {
            tracing::error!(error = %e, "admin listener");
        }
        if let Err(e) = projector.await {
            tracing::error!(error = %e, "projector task");
        }
        if tokio::time::timeout(SHUTDOWN_GRACE, verified)
            .await
            .is_err()
        {
            tracing::warn!("the check of the read models did not stop in time");
        }
        if tokio::time::timeout(SHUTDOWN_GRACE, sent).await.is_err() {
            tracing::warn!("the webhooks' sender did not stop in time");
        }
        if let Some(written) = written {
            if tokio::time::timeout(SHUTDOWN_GRACE, written).await.is_err() {
                tracing::warn!("the snapshots' writer did not stop in time");
            }
        }
        if let Some(local) = self.local_nats {
            // Our own connections close first: a server stopped under them makes each
            // log an IO error on what is a clean stop.
            let _ = tokio::time::timeout(Duration::from_secs(2), self.client.drain()).await;
            if let Some(demo) = &self.demo_client {
                let _ = tokio::time::timeout(Duration::from_secs(2), demo.drain()).await;
            }
            local.stop(Duration::from_secs(5)).await;
        }
        match self.tasks.fatal() {
            Some(reason) => Err(anyhow::anyhow!(reason)),
            None => Ok(()),
        }
    }
}

/// The snapshots' bucket as a service that sets up its own server bounds it: by the
/// snapshots it keeps.
fn snapshot_bucket(config: &Config) -> nats::buckets::SnapshotBucket {
    nats::buckets::SnapshotBucket {
        keep: config.snapshots.keep,
        bytes: None,
    }
}

/// The stream, set up first where this service is given the set-up's credentials (a
/// server of its own) or where the server has no users (then nobody's permissions are
/// narrower than the service's); otherwise as the set-up left it, which the service's
/// own user may not change.
async fn stream(
    config: &Config,
    nats_url: &str,
    service: &nats::client::Connection,
    setup: Option<nats::client::ClientAuth>,
    anonymous: bool,
) -> anyhow::Result<jetstream::stream::Info> {
    let settings = nats::setup::StreamSettings {
        name: config.stream.clone(),
        duplicate_window: config.duplicate_window,
        replicas: config.stream_replicas,
        link_ttl: config.signup.link_ttl,
    };
    match setup {
        Some(auth) => {
            let setup =
                nats::client::Connection::open(nats_url, &auth, Role::Setup, config.nats_patience)
                    .await?;
            let info = nats::setup::set_up_with(&setup, &settings, &snapshot_bucket(config)).await;
            let _ = tokio::time::timeout(Duration::from_secs(2), setup.client.drain()).await;
            info
        }
        None if anonymous => {
            nats::setup::set_up_with(service, &settings, &snapshot_bucket(config)).await
        }
        None => {
            let js = service.jetstream();
            service
                .ready(&format!("finding stream {}", config.stream), || {
                    nats::setup::existing_stream(&js, &config.stream)
                })
                .await
        }
    }
}

/// How the API asks where the log ends (the stream's last sequence), for a read whose
/// position is past the checkpoint: a look-up of the stream through the service's own
/// connection, which the API itself does not hold.
fn ask_end(js: &jetstream::Context, stream: &str) -> http::log_end::AskEnd {
    let (js, stream) = (js.clone(), stream.to_owned());
    Box::new(move || {
        let (js, stream) = (js.clone(), stream.clone());
        Box::pin(async move {
            let found = js.get_stream(&stream).await?;
            Ok(found.cached_info().state.last_sequence)
        })
    })
}

/// The pricing page's flow: its buckets in NATS, its mail (SMTP, or an outbox under the
/// data directory), and links that name `addr` unless a public URL is configured.
async fn open_signup(
    config: &Config,
    service: &nats::client::Connection,
    registry: Registry,
    addr: SocketAddr,
) -> anyhow::Result<Arc<crate::subscribe::signup::Signup>> {
    let mut settings = config.signup.clone();
    if settings.public_url.is_empty() {
        let host = if addr.ip().is_unspecified() {
            SocketAddr::from(([127, 0, 0, 1], addr.port()))
        } else {
            addr
        };
        settings.public_url = format!("http://{host}");
    }
    let mailer = Arc::new(crate::subscribe::mail::Mailer::new(
        settings.smtp_url.as_deref(),
        &settings.mail_from,
        &config.data_dir,
    )?);
    let js = service.jetstream();
    // The secret is read in the same attempt: in a cluster, a bucket just made may not
    // answer its first write or read yet.
    let (store, secret) = service
        .ready("opening the subscription buckets", || async {
            let store = crate::subscribe::store::Store::open(&js, &config.stream).await?;
            let secret = store.form_secret().await?;
            Ok((store, secret))
        })
        .await?;
    settings.link_ttl =
        crate::subscribe::store::link_life(settings.link_ttl, store.link_age().await?);
    Ok(Arc::new(crate::subscribe::signup::Signup::new(
        settings, store, secret, registry, mailer,
    )?))
}
