//! NATS with authentication and roles, against real nats-server processes: nobody connects
//! without credentials, each role is refused everything outside its permissions, and TLS
//! works with a CA made here.

use std::path::Path;
use std::time::Duration;

use async_nats::jetstream;
use futures::StreamExt;
use racing::keys::registry::Registry;
use racing::nats::{ClientAuth, Credentials, LocalNats, NatsArgs, Role, ServerOptions, ServerTls};
use racing_events::samples::{envelope, profile, result, runner};
use reqwest::StatusCode;
use tempfile::TempDir;
use tokio::sync::mpsc;

use crate::support::{App, Nats, KEY};

/// How long a refused request waits for an answer that never comes.
const REFUSED: Duration = Duration::from_secs(1);

/// A client of `url` as `seed`'s user of `role`, with the errors the server sends it.
struct Watched {
    client: async_nats::Client,
    js: jetstream::Context,
    errors: mpsc::UnboundedReceiver<String>,
}

impl Watched {
    async fn connect(url: &str, seed: &str, role: Role) -> Watched {
        let (tx, errors) = mpsc::unbounded_channel();
        let client = async_nats::ConnectOptions::with_nkey(seed.to_owned())
            .custom_inbox_prefix(role.inbox_prefix())
            .request_timeout(Some(REFUSED))
            .event_callback(move |event| {
                let tx = tx.clone();
                async move {
                    if let async_nats::Event::ServerError(e) = event {
                        let _ = tx.send(e.to_string());
                    }
                }
            })
            .connect(url)
            .await
            .expect("the user connects");
        let js = jetstream::with_prefix(client.clone(), "$JS.API");
        Watched { client, js, errors }
    }

    /// Waits for the server's "Permissions Violation" naming `subject`.
    async fn refused(&mut self, what: &str, subject: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.errors.recv()).await {
                Ok(Some(e)) if e.contains("Permissions Violation") && e.contains(subject) => return,
                Ok(Some(_)) => {}
                _ => panic!("{what}: no permissions violation for {subject} from the server"),
            }
        }
    }
}

/// Everything neither a feeder nor a keys admin may do, tried in turn; each must be
/// refused by the server itself.
async fn try_everything_forbidden(user: &mut Watched, what: &str) {
    let deleted = user.js.delete_stream("RACING").await;
    assert!(deleted.is_err(), "{what}: deleting the stream");
    user.refused(what, "$JS.API.STREAM.DELETE.RACING").await;

    let purged = user
        .client
        .request("$JS.API.STREAM.PURGE.RACING", "{}".into())
        .await;
    assert!(purged.is_err(), "{what}: purging the stream");
    user.refused(what, "$JS.API.STREAM.PURGE.RACING").await;

    let consumer = user
        .js
        .create_consumer_on_stream(
            jetstream::consumer::pull::Config::default(),
            "RACING".to_owned(),
        )
        .await;
    assert!(consumer.is_err(), "{what}: making a consumer");
    user.refused(what, "$JS.API.CONSUMER.CREATE.RACING").await;

    user.client
        .publish("odds.forged", "{}".into())
        .await
        .expect("handed to the client");
    user.refused(what, "odds.forged").await;

    // Reading the log live, or another role's answers.
    for subject in ["racing.>", "_INBOX.>", "_INBOX_RACING_SERVICE.>"] {
        let _subscription = user.client.subscribe(subject).await;
        user.refused(what, subject).await;
    }
}

/// A feeder writing a key record whose hash is of a key it knows: refused.
async fn try_forging_a_key(user: &mut Watched, what: &str) {
    let forged = serde_json::json!({
        "id": "f0f0f0f0",
        "name": "forged",
        "hash": hex_sha256("forged-key-0123456789"),
        "created_at": "2026-01-01T00:00:00Z",
    });
    let put = user
        .js
        .publish("$KV.RACING_KEYS.f0f0f0f0", forged.to_string().into())
        .await;
    if let Ok(ack) = put {
        assert!(ack.await.is_err(), "{what}: writing the key bucket");
    }
    user.refused(what, "$KV.RACING_KEYS.f0f0f0f0").await;
}

/// Publishes `event` and returns its stream sequence.
async fn publish(js: &jetstream::Context, event: &racing_events::Envelope) -> u64 {
    js.publish(event.subject(), event.to_json().into())
        .await
        .expect("published")
        .await
        .expect("acknowledged")
        .sequence
}

fn hex_sha256(text: &str) -> String {
    racing::keys::hex(&racing::keys::hash(text))
}

#[tokio::test]
async fn a_client_without_credentials_or_with_unknown_ones_is_refused() {
    let nats = Nats::start().await;
    let anonymous = async_nats::ConnectOptions::new()
        .connect(nats.url())
        .await
        .map(|_| ());
    let kind = anonymous
        .expect_err("an anonymous client is refused")
        .kind();
    assert_eq!(kind, async_nats::ConnectErrorKind::AuthorizationViolation);

    let stranger = nkeys::KeyPair::new_user().seed().expect("a seed");
    let refused = racing::nats::connect(&nats.url(), &ClientAuth::nkey(&stranger), Role::Feeder)
        .await
        .map(|_| ())
        .expect_err("an unknown nkey is refused");
    assert!(
        refused
            .to_string()
            .contains("refused the feeder's credentials"),
        "{refused:#}"
    );
    assert!(
        !refused.to_string().contains(&stranger),
        "no seed in errors"
    );
}

#[tokio::test]
async fn a_feeder_publishes_events_and_is_refused_everything_else() {
    let mut nats = Nats::start().await;
    nats.violations_expected = true;
    let dir = TempDir::new().expect("temp dir");
    let mut app = App::start(&nats, dir.path()).await;
    let credentials = Credentials::open(&nats.credentials_dir(), "RACING").expect("users");
    let seed = |role| {
        credentials
            .first(role)
            .expect("a user of the role")
            .seed()
            .to_owned()
    };

    // What a feeder is for: its result is served.
    let mut feeder = Watched::connect(&nats.url(), &seed(Role::Feeder), Role::Feeder).await;
    let event = envelope(result("2026-11-18", "ST", 1, vec![runner(Some(1), "E271")]));
    let seq = publish(&feeder.js, &event).await;
    app.projected(seq).await;
    assert_eq!(
        app.get("/api/v1/results/2026-11-18/1").await.0,
        StatusCode::OK
    );

    try_everything_forbidden(&mut feeder, "feeder").await;
    try_forging_a_key(&mut feeder, "feeder").await;
    let mut keys = Watched::connect(&nats.url(), &seed(Role::KeysAdmin), Role::KeysAdmin).await;
    try_everything_forbidden(&mut keys, "keys admin").await;
    let profile = envelope(profile("E271", "FORGED"));
    let put = keys
        .js
        .publish(profile.subject(), profile.to_json().into())
        .await;
    if let Ok(ack) = put {
        assert!(ack.await.is_err(), "a keys admin publishing an event");
    }
    keys.refused("keys admin", &profile.subject()).await;

    // Nothing of it took: the stream holds the one event, the forged key is unknown.
    let mut stream = nats.service.get_stream("RACING").await.expect("the stream");
    assert_eq!(stream.info().await.expect("info").state.messages, 1);
    let registry = Registry::open(&nats.service, "RACING")
        .await
        .expect("registry");
    assert!(registry.get("f0f0f0f0").await.is_err(), "no forged record");
    let (status, _) = app
        .get_with(
            "/api/v1/results/2026-11-18/1",
            Some("forged-key-0123456789"),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // The keys admin does what it is for.
    let admin = jetstream::new(nats.connect(Role::KeysAdmin).await);
    let (key, _) = Registry::open(&admin, "RACING")
        .await
        .expect("the keys admin opens the registry")
        .create("acme", Default::default())
        .await
        .expect("and issues a key");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while app
        .get_with("/api/v1/results/2026-11-18/1", Some(&key))
        .await
        .0
        != StatusCode::OK
    {
        assert!(tokio::time::Instant::now() < deadline, "the new key works");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What the set-up alone may do, tried as the service's own user: a stream update (a
/// lower limit purges the log), a stream delete or purge, a bucket's stream update, an
/// event, a named consumer (which could be another's, made or changed). Each is refused
/// by the server itself, and the stream stays as the set-up made it.
#[tokio::test]
async fn the_service_may_not_change_or_delete_the_stream_nor_publish_events() {
    let mut nats = Nats::start().await;
    nats.violations_expected = true;
    let credentials = Credentials::open(&nats.credentials_dir(), "RACING").expect("users");
    let seed = credentials
        .first(Role::Service)
        .expect("a service user")
        .seed();
    let mut service = Watched::connect(&nats.url(), seed, Role::Service).await;

    let mut shorter = racing::nats::stream_config("RACING", Duration::from_secs(120), 1);
    shorter.max_messages = 1;
    let updated = service.js.update_stream(&shorter).await;
    assert!(updated.is_err(), "updating the stream");
    service
        .refused("service", "$JS.API.STREAM.UPDATE.RACING")
        .await;

    let deleted = service.js.delete_stream("RACING").await;
    assert!(deleted.is_err(), "deleting the stream");
    service
        .refused("service", "$JS.API.STREAM.DELETE.RACING")
        .await;

    for subject in [
        "$JS.API.STREAM.PURGE.RACING",
        "$JS.API.STREAM.UPDATE.KV_RACING_KEYS",
        "$JS.API.STREAM.CREATE.KV_RACING_ELSE",
    ] {
        let asked = service.client.request(subject, "{}".into()).await;
        assert!(asked.is_err(), "{subject}");
        service.refused("service", subject).await;
    }

    let event = envelope(profile("E271", "FORGED"));
    service
        .client
        .publish(event.subject(), event.to_json().into())
        .await
        .expect("handed to the client");
    service.refused("service", &event.subject()).await;

    let mut stream = nats.setup.get_stream("RACING").await.expect("the stream");
    let info = stream.info().await.expect("info");
    assert_eq!(info.config.max_messages, -1, "no limit on messages");
    assert_eq!(info.config.max_age, Duration::ZERO, "kept forever");
    assert_eq!(info.state.messages, 0, "no event");
}

/// The service's own user is enough to start, serve and keep its buckets: every test
/// runs it so, and this one says it (the server's log shows no refusal when it ends).
#[tokio::test]
async fn a_service_with_its_own_user_alone_starts_and_serves() {
    let (_nats, app, _dir) = crate::support::service_with(&[envelope(result(
        "2026-11-18",
        "ST",
        1,
        vec![runner(Some(1), "E271")],
    ))])
    .await;
    assert_eq!(
        app.get("/api/v1/results/2026-11-18/1").await.0,
        StatusCode::OK
    );
}

/// A CA, and certificates it signs for the server (loopback) and for a client.
struct Pki {
    ca: std::path::PathBuf,
    server: (std::path::PathBuf, std::path::PathBuf),
    client: (std::path::PathBuf, std::path::PathBuf),
}

fn pki(dir: &Path) -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).expect("a CA");
    let issuer = Issuer::new(ca_params, ca_key);
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("written");
        path
    };
    let signed = |name: &str, sans: Vec<SanType>| {
        let key = KeyPair::generate().expect("a key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.subject_alt_names = sans;
        let cert = params.signed_by(&key, &issuer).expect("signed");
        (
            write(&format!("{name}.pem"), cert.pem()),
            write(&format!("{name}-key.pem"), key.serialize_pem()),
        )
    };
    let loopback = vec![
        SanType::DnsName("localhost".try_into().expect("a name")),
        SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()),
    ];
    Pki {
        ca: write("ca.pem", ca_cert.pem()),
        server: signed("server", loopback),
        client: signed(
            "client",
            vec![SanType::DnsName("feeder".try_into().expect("a name"))],
        ),
    }
}

#[tokio::test]
async fn a_service_and_a_feeder_speak_tls_to_nats_with_a_ca_made_here() {
    let dir = TempDir::new().expect("temp dir");
    let pki = pki(dir.path());
    let credentials =
        Credentials::ensure(&dir.path().join("credentials"), "RACING").expect("credentials");
    let tls = ServerTls {
        cert: pki.server.0.clone(),
        key: pki.server.1.clone(),
        verify_clients: Some(pki.ca.clone()),
    };
    let server = LocalNats::start_with(
        "nats-server",
        &dir.path().join("nats"),
        None,
        &credentials,
        &ServerOptions {
            tls: Some(tls),
            ..ServerOptions::default()
        },
    )
    .await
    .expect("nats-server starts with TLS");
    let url = server.url();
    assert!(url.starts_with("tls://"), "{url}");
    let args = |role: &str, ca: bool, cert: bool| NatsArgs {
        nats_nkey: Some(credentials.seed_file(role)),
        nats_ca: ca.then(|| pki.ca.clone()),
        nats_cert: cert.then(|| pki.client.0.clone()),
        nats_key: cert.then(|| pki.client.1.clone()),
        ..NatsArgs::default()
    };
    let auth = |role, ca, cert| ClientAuth::try_from(args(role, ca, cert)).expect("settings");

    // Without the CA the server is not trusted; without a client certificate the server
    // does not trust the client.
    for (ca, cert, what) in [
        (false, true, "a server the client cannot check"),
        (true, false, "a client without a certificate"),
    ] {
        let refused = tokio::time::timeout(
            Duration::from_secs(30),
            racing::nats::connect(&url, &auth("feeder", ca, cert), Role::Feeder),
        )
        .await
        .expect("refused at once, not retried");
        assert!(refused.is_err(), "{what} is refused");
    }

    // A plain connection to a TLS port is refused as well.
    let plain = url.replace("tls://", "nats://");
    assert!(async_nats::ConnectOptions::with_nkey(
        credentials
            .first(Role::Feeder)
            .expect("feeder")
            .seed()
            .to_owned()
    )
    .connect(plain)
    .await
    .is_err());

    // The whole service over TLS.
    let data = TempDir::new().expect("data dir");
    let mut config = racing::Config::new(data.path(), Some(url.clone()));
    config.nats_auth = auth("service", true, true);
    // Nothing set up on this server yet: the service sets up first, as the set-up user.
    config.nats_setup = Some(auth("setup", true, true));
    config.api_keys = vec![KEY.to_owned()];
    let app = racing::Application::build(config)
        .await
        .expect("the service connects over TLS");
    let mut app = App::run(app);
    let feeder = racing::nats::connect(&url, &auth("feeder", true, true), Role::Feeder)
        .await
        .expect("the feeder connects over TLS");
    let event = envelope(profile("T100", "TLS EXPRESS"));
    let seq = publish(&jetstream::new(feeder), &event).await;
    app.projected(seq).await;
    let (status, body) = app.get("/api/v1/horses/T100").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["horse_name"], "TLS EXPRESS");
}

/// Publishes, through `client`, an event only the service refuses, naming `feeder` as
/// its sender; returns its `event_id`.
async fn refused_as(client: &async_nats::Client, feeder: &str) -> String {
    let (e, payload) = crate::refusals::refused(11);
    crate::refusals::publish_as(client, feeder, &e, payload).await;
    e.event_id.to_string()
}

/// Feeder b tries feeder a's refusals' plumbing: looking into the refusals' stream (whose
/// keys name every feeder and count its refusals), removing a's reading, whose name the
/// inbox every feeder shares shows it, and pointing a reading of its own at the subject
/// a's reading delivers to. The server refuses the first two, and a reads on, its own
/// refusals only.
#[tokio::test]
async fn a_feeder_may_neither_look_into_the_refusals_stream_nor_remove_another_s_reading() {
    let mut nats = Nats::start_with_feeders(&["a", "b"]).await;
    nats.violations_expected = true;
    let dir = TempDir::new().expect("temp dir");
    let _app = App::start(&nats, dir.path()).await;
    let credentials = Credentials::open(&nats.credentials_dir(), "RACING").expect("users");
    let seed = |name: &str| credentials.user(name).expect("a feeder").seed().to_owned();
    let mut b = Watched::connect(&nats.url(), &seed("feeder-b"), Role::Feeder).await;
    let mut inbox = b
        .client
        .subscribe("_INBOX_RACING_FEEDER.>")
        .await
        .expect("the feeders' inbox");
    b.client.flush().await.expect("subscribed");
    // b has a refusal of its own.
    let of_b = refused_as(&b.client, "feeder-b").await;
    crate::refusals::kept_for(&b.client, "feeder-b", &of_b).await;

    let a = racing::nats::connect(
        &nats.url(),
        &ClientAuth::nkey(&seed("feeder-a")),
        Role::Feeder,
    )
    .await
    .expect("a connects");
    let (following, mut followed) = crate::refusals::follow_a(a.clone());
    // The answer to a's making of its reading, on the shared inbox, names it and where
    // it delivers.
    let (name, deliver) = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let m = inbox.next().await.expect("the inbox is open");
            let v: serde_json::Value = serde_json::from_slice(&m.payload).unwrap_or_default();
            let filter = v["config"]["filter_subject"].as_str().unwrap_or_default();
            if filter.contains("feeder-a") {
                if let (Some(name), Some(deliver)) =
                    (v["name"].as_str(), v["config"]["deliver_subject"].as_str())
                {
                    return (name.to_owned(), deliver.to_owned());
                }
            }
        }
    })
    .await
    .expect("a's reading is made");

    let deleted =
        b.js.delete_consumer_from_stream(&name, "KV_RACING_REFUSALS")
            .await;
    assert!(deleted.is_err(), "b removed a's reading {name}");
    b.refused(
        "feeder b",
        &format!("$JS.API.CONSUMER.DELETE.KV_RACING_REFUSALS.{name}"),
    )
    .await;
    let looked = b.js.get_stream("KV_RACING_REFUSALS").await;
    assert!(looked.is_err(), "b looked into the refusals' stream");
    b.refused("feeder b", "$JS.API.STREAM.INFO.KV_RACING_REFUSALS")
        .await;

    // A reading of b's own keys, which b may make, delivering where a's does.
    b.js.create_consumer_on_stream(
        jetstream::consumer::push::Config {
            name: Some("refusals_feeder-b_3".to_owned()),
            deliver_subject: deliver,
            filter_subject: "$KV.RACING_REFUSALS.feeder-b.>".to_owned(),
            ack_policy: jetstream::consumer::AckPolicy::None,
            ..Default::default()
        },
        "KV_RACING_REFUSALS",
    )
    .await
    .expect("b makes a reading of its own");

    // a's reading goes on: its next refusal comes to it, and nothing of b's.
    let of_a = refused_as(&a, "feeder-a").await;
    let r = tokio::time::timeout(Duration::from_secs(20), followed.recv())
        .await
        .expect("a's refusal in time")
        .expect("a still reads");
    assert_eq!(r.event_id.as_deref(), Some(&*of_a));
    assert!(followed.try_recv().is_err(), "a was handed another refusal");
    assert!(!following.is_finished(), "a still follows");
    following.abort();
}
