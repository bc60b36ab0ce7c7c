//! The service's settings: each one a command-line flag with an environment variable
//! (`docs/operations.md`, Configuration), parsed by clap into [`Config`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// Flags of `racing serve`; every one also reads its environment variable.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// NATS server to use; unset: start a local nats-server with its store under the data
    /// directory, and stop it on exit.
    #[arg(long, env = "RACING_NATS_URL")]
    pub nats_url: Option<String>,
    /// Credentials and TLS of the service's NATS user (the `service` role).
    #[command(flatten)]
    pub nats: crate::nats::client::NatsArgs,
    /// In demo mode against a NATS server of its own (RACING_NATS_URL set): the nkey seed
    /// file of a feeder, which publishes the demo's events (the service's own user may
    /// not). Unset with a local server: its own feeder.
    #[arg(long, env = "RACING_DEMO_NATS_NKEY")]
    pub demo_nats_nkey: Option<PathBuf>,
    /// How long each step of start-up keeps trying NATS (nothing answering yet, JetStream
    /// still electing its leader) before the service gives up, in seconds. What waiting
    /// does not mend (a server that is not NATS, credentials or permissions refused,
    /// JetStream off) ends start-up at once.
    #[arg(long, env = "RACING_NATS_PATIENCE_SECS", default_value_t = crate::retry::PATIENCE.as_secs())]
    pub nats_patience_secs: u64,
    /// Where the read models (and a local nats-server's store) live.
    #[arg(long, env = "RACING_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Address of the API.
    #[arg(long, env = "RACING_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Address of the admin listener (health, readiness, metrics, status).
    #[arg(long, env = "RACING_ADMIN_LISTEN", default_value = "127.0.0.1:9090")]
    pub admin_listen: SocketAddr,
    /// Comma-separated API keys accepted besides managed ones.
    #[arg(
        long,
        env = "RACING_API_KEYS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub api_keys: Vec<String>,
    /// IANA time zone that defines "today".
    #[arg(long, env = "RACING_TIMEZONE", default_value = "Asia/Hong_Kong")]
    pub timezone: String,
    /// JetStream stream name.
    #[arg(long, env = "RACING_STREAM", default_value = "RACING")]
    pub stream: String,
    /// The stream's settings, where the service sets it up itself.
    #[command(flatten)]
    pub stream_settings: StreamArgs,
    /// Publish a generated season of demo data (with a meeting today) if the stream is
    /// empty, and print a demo API key.
    #[arg(long, env = "RACING_DEMO")]
    pub demo: bool,
    /// Seed of the demo data; the same seed and day give the same data.
    #[arg(long, env = "RACING_DEMO_SEED", default_value_t = 42)]
    pub demo_seed: u64,
    /// In demo mode, seconds of live odds before each demo race is run and its result
    /// published (today's races, then those of each next meeting the demo declares).
    #[arg(long, env = "RACING_DEMO_RACE_SECS", default_value_t = 120)]
    pub demo_race_secs: u64,
    /// The nats-server program started when no NATS URL is given.
    #[arg(long, env = "RACING_NATS_SERVER", default_value = "nats-server")]
    pub nats_server: String,
    /// Quiet milliseconds after which a live odds connection gets a heartbeat.
    #[arg(long, env = "RACING_WS_HEARTBEAT_MS", default_value_t = 5000)]
    pub ws_heartbeat_ms: u64,
    /// Most open live odds connections per API key.
    #[arg(long, env = "RACING_WS_MAX_CONNECTIONS_PER_KEY", default_value_t = 100)]
    pub ws_max_connections_per_key: usize,
    /// Most subscriptions on one live odds connection.
    #[arg(long, env = "RACING_WS_MAX_SUBSCRIPTIONS", default_value_t = 256)]
    pub ws_max_subscriptions: usize,
    /// Largest frame a live odds client may send, bytes (at most 65536).
    #[arg(long, env = "RACING_WS_MAX_FRAME_BYTES", default_value_t = 4096)]
    pub ws_max_frame_bytes: usize,
    /// Messages a live odds client may send a second, on average; more get an `error`
    /// frame (`rate_limited`) and are not acted on.
    #[arg(long, env = "RACING_WS_MESSAGES_PER_SEC", default_value_t = 20)]
    pub ws_messages_per_sec: u32,
    /// Messages a live odds client may send at once.
    #[arg(long, env = "RACING_WS_MESSAGE_BURST", default_value_t = 300)]
    pub ws_message_burst: u32,
    /// Sustained requests per second per key (a key may set its own).
    #[arg(long, env = "RACING_RATE_LIMIT_PER_SEC", default_value_t = 50)]
    pub rate_limit_per_sec: u32,
    /// Requests per key allowed in a burst (a key may set its own).
    #[arg(long, env = "RACING_RATE_LIMIT_BURST", default_value_t = 100)]
    pub rate_limit_burst: u32,
    /// Longest a request may take, in milliseconds, before a 503; and one read of the
    /// read models for a live connection, before it is closed with 1013.
    #[arg(long, env = "RACING_REQUEST_TIMEOUT_MS", default_value_t = 10_000)]
    pub request_timeout_ms: u64,
    /// Most requests in flight at once; past it, 503.
    #[arg(long, env = "RACING_MAX_IN_FLIGHT", default_value_t = 1024)]
    pub max_in_flight: usize,
    /// Longest a read with `min_seq` (or the header `Racing-Min-Seq`, or an `as_of` past
    /// the checkpoint) waits for the read models to reach that position, in
    /// milliseconds, before a 503 that says where they stand; at most the request
    /// timeout less a second.
    #[arg(long, env = "RACING_MIN_SEQ_WAIT_MS", default_value_t = 2000)]
    pub min_seq_wait_ms: u64,
    /// Odds updates a live client may fall behind before its pending updates are replaced
    /// by fresh snapshots.
    #[arg(long, env = "RACING_ODDS_BUFFER", default_value_t = 4096)]
    pub odds_buffer: usize,
    /// MiB of the first layer of the filter in front of the applied event ids on disk: it
    /// holds about 0.76 M ids a MiB before a new layer, twice the size of the newest, takes the
    /// next ones; all but about 1% of new ids are ruled out without a disk look-up.
    #[arg(long, env = "RACING_ID_FILTER_MIB", default_value_t = 32)]
    pub id_filter_mib: usize,
    /// Most MiB of all the layers of that filter together: past what they hold within 1%
    /// (about 290 M ids at the defaults) more and more new ids need a disk look-up, and the
    /// log warns.
    #[arg(long, env = "RACING_ID_FILTER_MAX_MIB", default_value_t = 512)]
    pub id_filter_max_mib: usize,
    /// MiB of sled's cache of the read models' pages: more keeps a replay's and a busy
    /// projector's writes from reading pages back from disk, at that much more memory.
    #[arg(long, env = "RACING_STORE_CACHE_MIB", default_value_t = 1024)]
    pub store_cache_mib: u64,
    /// MiB of answers as of a point of the log kept in memory: one asked again is sent
    /// from there rather than rendered again from the records' versions (it never
    /// changes). 0: none kept, each rendered.
    #[arg(long, env = "RACING_AS_OF_CACHE_MIB", default_value_t = crate::read_models::AS_OF_CACHE_BYTES >> 20)]
    pub as_of_cache_mib: usize,
    /// MiB of the records the start-up replay into empty read models holds in memory: the
    /// replay is a bulk load that folds each batch over them while sled writes the batch
    /// before, on a thread of its own; past this many, it lets them go and reads what it
    /// lacks from the store. 0: it commits batch after batch, reading the store. What it
    /// holds and the replay's peak: docs/operations.md and BENCHMARKS.md.
    #[arg(long, env = "RACING_REPLAY_MEMORY_MIB", default_value_t = racing_projections::Options::default().replay_bytes >> 20)]
    pub replay_memory_mib: usize,
    /// The read models are compacted (copied whole into a fresh store, which is then
    /// swapped in) once their size on disk is more than this many times their records';
    /// 0: never, else above 1. sled gives no room back, so a store that applies events for long,
    /// amendments above all, grows to many times its records.
    #[arg(long, env = "RACING_STORE_COMPACT_RATIO", default_value_t = crate::compaction::Settings::default().ratio)]
    pub store_compact_ratio: f64,
    /// ...and at least this many MiB.
    #[arg(long, env = "RACING_STORE_COMPACT_MIN_MIB", default_value_t = crate::compaction::Settings::default().least_bytes >> 20)]
    pub store_compact_min_mib: u64,
    /// Whether this replica writes snapshots of the read models to the object store when
    /// it holds the writer's lease (one replica at a time does).
    #[arg(long, env = "RACING_SNAPSHOT_WRITE", default_value_t = true, action = clap::ArgAction::Set)]
    pub snapshot_write: bool,
    /// Whether a start with empty read models (a new replica, or an older layout's or a
    /// damaged store made anew) loads the newest snapshot rather than replaying the log.
    #[arg(long, env = "RACING_SNAPSHOT_LOAD", default_value_t = true, action = clap::ArgAction::Set)]
    pub snapshot_load: bool,
    /// A snapshot is written once this many events were applied since the newest...
    #[arg(long, env = "RACING_SNAPSHOT_EVERY_EVENTS", default_value_t = 250_000)]
    pub snapshot_every_events: u64,
    /// ...or once it is this many seconds old, with an event since.
    #[arg(long, env = "RACING_SNAPSHOT_EVERY_SECS", default_value_t = 3600)]
    pub snapshot_every_secs: u64,
    /// Snapshots kept in the object store; older ones are removed after a new one.
    #[arg(long, env = "RACING_SNAPSHOT_KEEP", default_value_t = crate::nats::buckets::SNAPSHOTS_KEPT)]
    pub snapshot_keep: usize,
    /// Seconds a start with no snapshot of its layout waits for the one another replica
    /// of its layout (holding the writer's lease) will publish, while that one holds it;
    /// 0: it replays at once.
    #[arg(long, env = "RACING_SNAPSHOT_WAIT_SECS", default_value_t = 3600)]
    pub snapshot_wait_secs: u64,
    /// MiB a second a snapshot is sent to the object store at most, so that its upload
    /// leaves the log's disk and links to the log; 0: as fast as JetStream takes it.
    #[arg(long, env = "RACING_SNAPSHOT_SEND_MIB_PER_SEC", default_value_t = 0)]
    pub snapshot_send_mib_per_sec: u64,
    /// The `max_file_store` of the NATS servers' JetStream, in MiB: the room the log
    /// shares with the snapshots' bucket. 0: not known, and only an account's own limit
    /// (where NATS reports one) is looked at before a snapshot is sent.
    #[arg(long, env = "RACING_NATS_FILE_STORE_MIB", default_value_t = 0)]
    pub nats_file_store_mib: u64,
    /// MiB of JetStream's file storage a snapshot must leave to the log: one that would
    /// leave less is not sent.
    #[arg(long, env = "RACING_SNAPSHOT_LOG_MARGIN_MIB", default_value_t = 1024)]
    pub snapshot_log_margin_mib: u64,
    /// TOML file of the plans on the pricing page (`[[plan]]` tables); unset: a free trial
    /// and two plans sold by contact.
    #[arg(long, env = "RACING_PLANS")]
    pub plans: Option<PathBuf>,
    /// SMTP server for subscribers' mail: `smtp://host:port`, `smtp://host?tls=required`
    /// (STARTTLS), `smtps://user:pass@host` (TLS); unset: mail is written to
    /// `$RACING_DATA_DIR/mail/outbox`.
    #[arg(long, env = "RACING_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// The sender of subscribers' mail.
    #[arg(
        long,
        env = "RACING_MAIL_FROM",
        default_value = "racing data <keys@racing.invalid>"
    )]
    pub mail_from: String,
    /// The site's address as subscribers reach it, for the links in their mail and the
    /// pricing page's example; unset: `http://` and the API's address.
    #[arg(long, env = "RACING_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Whom the pricing page names for the plans sold by contact: an e-mail address (a
    /// mailto link), a web address (a link) or any text; unset: "the operator of this
    /// service".
    #[arg(long, env = "RACING_CONTACT")]
    pub contact: Option<String>,
    /// Most keys one subscriber address may hold (one per plan).
    #[arg(long, env = "RACING_MAX_KEYS_PER_ADDRESS", default_value_t = 3)]
    pub max_keys_per_address: usize,
    /// Hours a replaced key that is not compromised keeps working.
    #[arg(long, env = "RACING_REPLACED_KEY_GRACE_HOURS", default_value_t = 24)]
    pub replaced_key_grace_hours: u64,
    /// Seconds a replica may go without confirming that it holds every change of the key
    /// registry (NATS out of reach, its watch stopped) before it refuses managed keys
    /// with a 503, as one of them may have been revoked meanwhile; configured keys go on.
    #[arg(long, env = "RACING_KEY_WATCH_STALE_SECS", default_value_t = crate::keys::registry::STALE_AFTER.as_secs())]
    pub key_watch_stale_secs: u64,
    /// Form posts (subscribe, replace) per client address per hour.
    #[arg(long, env = "RACING_FORM_POSTS_PER_HOUR", default_value_t = 20)]
    pub form_posts_per_hour: u32,
    /// Form posts per IPv6 /48 per hour, all its /64 clients together (a /48 is one
    /// site's usual share: 65,536 /64s).
    #[arg(
        long,
        env = "RACING_FORM_POSTS_PER_IPV6_48_PER_HOUR",
        default_value_t = 200
    )]
    pub form_posts_per_ipv6_48_per_hour: u32,
    /// Form posts per IPv6 /32 per hour, all its /48s together (a /32 is a provider's
    /// usual allocation: 65,536 /48s).
    #[arg(
        long,
        env = "RACING_FORM_POSTS_PER_IPV6_32_PER_HOUR",
        default_value_t = 500
    )]
    pub form_posts_per_ipv6_32_per_hour: u32,
    /// Form posts per IPv4 /24 per hour, all its 256 addresses together.
    #[arg(
        long,
        env = "RACING_FORM_POSTS_PER_IPV4_24_PER_HOUR",
        default_value_t = 100
    )]
    pub form_posts_per_ipv4_24_per_hour: u32,
    /// Percent of the link bucket kept for the replacement form: subscription posts are
    /// refused once the rest is full, so that others' sign-ups never close key
    /// replacement (0 to 90).
    #[arg(long, env = "RACING_REPLACEMENT_RESERVE_PERCENT", default_value_t = 25)]
    pub replacement_reserve_percent: u32,
    /// Replacement links that may wait to be followed for one subscriber at once; a
    /// replacement asked for beyond them sends a note instead of a link.
    #[arg(
        long,
        env = "RACING_REPLACEMENT_LINKS_PER_ADDRESS",
        default_value_t = 3
    )]
    pub replacement_links_per_address: usize,
    /// Subscription mails per e-mail address per hour.
    #[arg(long, env = "RACING_MAILS_PER_ADDRESS_PER_HOUR", default_value_t = 5)]
    pub mails_per_address_per_hour: u32,
    /// Proxies whose `X-Forwarded-For` names the client a form post counts against:
    /// addresses and networks, comma-separated; empty: none, the peer is the client.
    #[arg(long, env = "RACING_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
    /// The webhooks' settings.
    #[command(flatten)]
    pub webhooks: crate::webhooks::settings::WebhookArgs,
}

/// What the set-up makes the stream with: `racing setup`'s, and `racing serve`'s where
/// it sets the stream up itself (a server of its own, or one without users).
#[derive(Debug, Clone, Args)]
pub struct StreamArgs {
    /// Replicas of the stream in a JetStream cluster; unset keeps an existing stream's
    /// (1 for a new one).
    #[arg(long, env = "RACING_STREAM_REPLICAS")]
    pub stream_replicas: Option<usize>,
    /// JetStream duplicate window, in seconds.
    #[arg(long, env = "RACING_DUPLICATE_WINDOW_SECS", default_value_t = 120)]
    pub duplicate_window_secs: u64,
    /// Hours a link in a subscription mail may be followed; the link bucket keeps each
    /// link that long, so the set-up and the service take the same value.
    #[arg(long, env = "RACING_LINK_TTL_HOURS", default_value_t = 24)]
    pub link_ttl_hours: u64,
}

impl StreamArgs {
    /// The replicas asked for, 1 to 5.
    pub fn replicas(&self) -> Option<usize> {
        self.stream_replicas.map(|r| r.clamp(1, 5))
    }

    /// The duplicate window, at least a second.
    pub fn duplicate_window(&self) -> Duration {
        Duration::from_secs(self.duplicate_window_secs.max(1))
    }

    /// The links' life, at least an hour.
    pub fn link_ttl(&self) -> Duration {
        Duration::from_secs(self.link_ttl_hours.max(1).saturating_mul(3600))
    }
}

/// The service's settings, checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// `None`: run a local nats-server.
    pub nats_url: Option<String>,
    /// How the service proves who it is to NATS (given `nats_url`).
    pub nats_auth: crate::nats::client::ClientAuth,
    /// Given `nats_url`: the set-up user's credentials, to make or update the stream and
    /// its buckets at start-up; `None` (any deployment with roles) finds them made by
    /// `racing setup`.
    pub nats_setup: Option<crate::nats::client::ClientAuth>,
    /// In demo mode with `nats_url`: the feeder that publishes the demo's events; `None`
    /// publishes with the service's own credentials (a server without permissions).
    pub demo_feeder: Option<crate::nats::client::ClientAuth>,
    /// How long each step of start-up keeps trying NATS before giving up.
    pub nats_patience: Duration,
    /// Read models and local NATS store.
    pub data_dir: PathBuf,
    /// API address; port 0 picks a free port (tests).
    pub listen: SocketAddr,
    /// Admin address; port 0 picks a free port.
    pub admin_listen: SocketAddr,
    /// Keys accepted besides managed ones.
    pub api_keys: Vec<String>,
    /// The zone that defines "today".
    pub timezone: jiff::tz::TimeZone,
    /// Its IANA name, for messages.
    pub timezone_name: String,
    /// JetStream stream name.
    pub stream: String,
    /// JetStream duplicate window.
    pub duplicate_window: Duration,
    /// Stream replicas; `None` keeps an existing stream's.
    pub stream_replicas: Option<usize>,
    /// Seed the stream with demo data and print a demo key.
    pub demo: Option<u64>,
    /// Program for the local nats-server.
    pub nats_server: String,
    /// Limits of each live odds session.
    pub ws_limits: crate::live::session::limits::Limits,
    /// Most open live odds connections per key.
    pub ws_max_connections_per_key: usize,
    /// Capacity of the live odds ring, in updates.
    pub odds_buffer: usize,
    /// How the read models are opened (the size of the applied ids' filter).
    pub store: racing_projections::Options,
    /// Most bytes of answers as of a point of the log kept in memory.
    pub as_of_cache_bytes: usize,
    /// In demo mode, seconds of odds movement before each demo race is run.
    pub demo_race_secs: u64,
    /// Per-key rates and request bounds.
    pub request_limits: crate::http::limits::RequestLimits,
    /// How long a replica may go without confirming the key registry current before it
    /// refuses managed keys.
    pub key_watch_stale_after: Duration,
    /// The pricing page and its flow; `public_url` empty: the API's address.
    pub signup: crate::subscribe::settings::Settings,
    /// The `racing` program whose `rebuild-worker` folds a rebuild in a process of its
    /// own (`racing serve` sets itself); `None` folds it in the service's process.
    pub rebuild_worker: Option<PathBuf>,
    /// Snapshots of the read models: whether this replica writes and loads them, and when.
    pub snapshots: crate::snapshot::settings::Settings,
    /// When the read models are compacted.
    pub compaction: crate::compaction::Settings,
    /// Webhooks: the networks opened to endpoints, a delivery's time, the sender's lease.
    pub webhooks: crate::webhooks::settings::Settings,
}

impl TryFrom<ServeArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(a: ServeArgs) -> anyhow::Result<Config> {
        let timezone = jiff::tz::TimeZone::get(&a.timezone)
            .map_err(|e| anyhow::anyhow!("RACING_TIMEZONE `{}`: {e}", a.timezone))?;
        if a.stream.is_empty() || a.stream.contains(['.', ' ', '*', '>', '\t']) {
            anyhow::bail!("RACING_STREAM `{}` is not a valid stream name", a.stream);
        }
        // The demo's feeder: its own nkey, over the service's TLS settings.
        let demo_feeder = a
            .demo_nats_nkey
            .map(|path| {
                crate::nats::client::ClientAuth::try_from(crate::nats::client::NatsArgs {
                    nats_nkey: Some(path),
                    nats_creds: None,
                    nats_user: None,
                    nats_password: None,
                    nats_token: None,
                    ..a.nats.clone()
                })
            })
            .transpose()?;
        let nats_auth = crate::nats::client::ClientAuth::try_from(a.nats)?;
        let plans = match &a.plans {
            Some(path) => crate::subscribe::plans::Plans::load(path)?,
            None => crate::subscribe::plans::Plans::default(),
        };
        let hours = |h: u64| Duration::from_secs(h.saturating_mul(3600));
        let signup = crate::subscribe::settings::Settings {
            plans,
            smtp_url: a.smtp_url.filter(|u| !u.trim().is_empty()),
            mail_from: a.mail_from,
            public_url: a.public_url.unwrap_or_default(),
            contact: a.contact.filter(|c| !c.trim().is_empty()),
            link_ttl: a.stream_settings.link_ttl(),
            max_keys_per_address: a.max_keys_per_address.max(1),
            grace: hours(a.replaced_key_grace_hours),
            posts_per_client_hour: a.form_posts_per_hour,
            posts_per_network_hour: a.form_posts_per_ipv6_48_per_hour,
            posts_per_ipv6_32_hour: a.form_posts_per_ipv6_32_per_hour,
            posts_per_ipv4_24_hour: a.form_posts_per_ipv4_24_per_hour,
            reserve_percent: a.replacement_reserve_percent.min(90),
            replacement_links: a.replacement_links_per_address.max(1),
            mails_per_address_hour: a.mails_per_address_per_hour,
            trusted_proxies: crate::subscribe::clients::TrustedProxies::parse(&a.trusted_proxies)?,
        };
        Ok(Config {
            nats_url: a.nats_url.filter(|u| !u.trim().is_empty()),
            nats_auth,
            nats_setup: None,
            demo_feeder,
            nats_patience: Duration::from_secs(a.nats_patience_secs),
            data_dir: a.data_dir,
            listen: a.listen,
            admin_listen: a.admin_listen,
            api_keys: a
                .api_keys
                .into_iter()
                .map(|k| k.trim().to_owned())
                .filter(|k| !k.is_empty())
                .collect(),
            timezone,
            timezone_name: a.timezone,
            stream: a.stream,
            duplicate_window: a.stream_settings.duplicate_window(),
            stream_replicas: a.stream_settings.replicas(),
            demo: a.demo.then_some(a.demo_seed),
            nats_server: a.nats_server,
            ws_limits: crate::live::session::limits::Limits {
                heartbeat: Duration::from_millis(a.ws_heartbeat_ms.max(100)),
                max_subscriptions: a.ws_max_subscriptions.max(1),
                max_frame_bytes: a
                    .ws_max_frame_bytes
                    .clamp(256, crate::live::MAX_FRAME_BYTES),
                messages_per_sec: a.ws_messages_per_sec.max(1),
                message_burst: a.ws_message_burst.max(1),
                read_timeout: Duration::from_millis(a.request_timeout_ms.max(1)),
                ..Default::default()
            },
            ws_max_connections_per_key: a.ws_max_connections_per_key,
            odds_buffer: a.odds_buffer.max(16),
            store: racing_projections::Options {
                id_filter_bytes: a.id_filter_mib.clamp(1, 1 << 16) << 20,
                id_filter_most_bytes: a.id_filter_max_mib.clamp(1, 1 << 16) << 20,
                cache_bytes: a.store_cache_mib.clamp(16, 1 << 20) << 20,
                replay_bytes: match a.replay_memory_mib {
                    0 => 0,
                    mib => mib.clamp(16, 1 << 22) << 20,
                },
            },
            as_of_cache_bytes: a.as_of_cache_mib.min(1 << 16) << 20,
            demo_race_secs: a.demo_race_secs.max(5),
            rebuild_worker: None,
            snapshots: crate::snapshot::settings::Settings {
                write: a.snapshot_write,
                load: a.snapshot_load,
                every_events: a.snapshot_every_events.max(1),
                every: Duration::from_secs(a.snapshot_every_secs.max(1)),
                keep: a.snapshot_keep.max(1),
                wait: Duration::from_secs(a.snapshot_wait_secs),
                send_rate: (a.snapshot_send_mib_per_sec > 0)
                    .then(|| a.snapshot_send_mib_per_sec.saturating_mul(1 << 20)),
                file_store: (a.nats_file_store_mib > 0)
                    .then(|| a.nats_file_store_mib.saturating_mul(1 << 20)),
                log_margin: a.snapshot_log_margin_mib.saturating_mul(1 << 20),
            },
            compaction: crate::compaction::Settings {
                ratio: compact_ratio(a.store_compact_ratio)?,
                least_bytes: a.store_compact_min_mib.saturating_mul(1 << 20),
            },
            request_limits: crate::http::limits::RequestLimits {
                rate_per_sec: a.rate_limit_per_sec.max(1),
                burst: a.rate_limit_burst.max(1),
                timeout: Duration::from_millis(a.request_timeout_ms.max(1)),
                max_in_flight: a.max_in_flight.max(1),
                min_seq_wait: crate::http::limits::RequestLimits::wait_within(
                    Duration::from_millis(a.min_seq_wait_ms),
                    Duration::from_millis(a.request_timeout_ms.max(1)),
                ),
            },
            key_watch_stale_after: Duration::from_secs(a.key_watch_stale_secs.max(1)),
            signup,
            webhooks: crate::webhooks::settings::Settings::try_from(a.webhooks)?,
        })
    }
}

impl Config {
    /// Where the embedded NATS server's credentials are: one nkey seed per user.
    pub fn credentials_dir(&self) -> PathBuf {
        credentials_dir(&self.data_dir)
    }

    /// Defaults for a service on `data_dir` against `nats_url`, listening on a free
    /// loopback port: what tests and embedders start from.
    pub fn new(data_dir: impl Into<PathBuf>, nats_url: Option<String>) -> Config {
        Config {
            nats_url,
            nats_auth: crate::nats::client::ClientAuth::default(),
            nats_setup: None,
            demo_feeder: None,
            nats_patience: crate::retry::PATIENCE,
            data_dir: data_dir.into(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            admin_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            api_keys: Vec::new(),
            timezone: jiff::tz::TimeZone::get("Asia/Hong_Kong").unwrap_or(jiff::tz::TimeZone::UTC),
            timezone_name: "Asia/Hong_Kong".into(),
            stream: "RACING".into(),
            duplicate_window: Duration::from_secs(120),
            stream_replicas: None,
            demo: None,
            nats_server: "nats-server".into(),
            ws_limits: crate::live::session::limits::Limits::default(),
            ws_max_connections_per_key: 100,
            odds_buffer: 4096,
            store: racing_projections::Options::default(),
            as_of_cache_bytes: crate::read_models::AS_OF_CACHE_BYTES,
            demo_race_secs: 120,
            rebuild_worker: None,
            // Embedders and tests write snapshots, and wait for another's, only where they
            // ask to; a start loads one wherever there is one.
            snapshots: crate::snapshot::settings::Settings {
                write: false,
                wait: Duration::ZERO,
                ..crate::snapshot::settings::Settings::default()
            },
            compaction: crate::compaction::Settings::default(),
            request_limits: crate::http::limits::RequestLimits::default(),
            key_watch_stale_after: crate::keys::registry::STALE_AFTER,
            signup: crate::subscribe::settings::Settings {
                plans: crate::subscribe::plans::Plans::default(),
                smtp_url: None,
                mail_from: "racing data <keys@racing.invalid>".into(),
                public_url: String::new(),
                contact: None,
                link_ttl: crate::nats::buckets::LINK_TTL,
                max_keys_per_address: 3,
                grace: Duration::from_secs(24 * 3600),
                posts_per_client_hour: 20,
                posts_per_network_hour: 200,
                posts_per_ipv6_32_hour: 500,
                posts_per_ipv4_24_hour: 100,
                reserve_percent: 25,
                replacement_links: 3,
                mails_per_address_hour: 5,
                trusted_proxies: crate::subscribe::clients::TrustedProxies::default(),
            },
            webhooks: crate::webhooks::settings::Settings::default(),
        }
    }
}

/// `RACING_STORE_COMPACT_RATIO` checked: 0 (never), or above 1 (a store is never smaller
/// on disk than its records, so a lower ratio would compact it again and again).
fn compact_ratio(ratio: f64) -> anyhow::Result<f64> {
    if ratio == 0.0 || (ratio.is_finite() && ratio > 1.0) {
        Ok(ratio)
    } else {
        anyhow::bail!("RACING_STORE_COMPACT_RATIO `{ratio}`: 0 (never compact) or a number above 1")
    }
}

/// The credentials directory under a data directory, where `racing serve` without a NATS
/// URL keeps the seeds of its users and `racing publish` and `racing keys` find them.
pub fn credentials_dir(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("credentials")
}

#[cfg(test)]
mod tests {
    use super::compact_ratio;

    #[test]
    fn a_compaction_ratio_is_never_or_above_one() {
        for ratio in [0.0, 1.5, 3.0] {
            assert_eq!(compact_ratio(ratio).ok(), Some(ratio));
        }
        for ratio in [0.5, 1.0, -2.0, f64::NAN, f64::INFINITY] {
            let refused = compact_ratio(ratio).expect_err("refused").to_string();
            assert!(refused.contains("RACING_STORE_COMPACT_RATIO"), "{refused}");
        }
    }
}
