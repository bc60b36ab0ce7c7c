//! Subscribing on the pricing page with a real SMTP server on loopback (aiosmtpd, from
//! Debian's python3-aiosmtpd, writing what it receives to a Maildir): the whole double
//! opt-in, the key working, and each way the flow refuses.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use tempfile::TempDir;

use crate::support::{App, Nats};

/// A real SMTP server of a test's own; stopped on drop.
pub struct Smtp {
    child: tokio::process::Child,
    pub port: u16,
    maildir: PathBuf,
    _dir: TempDir,
}

impl Smtp {
    pub async fn start() -> Smtp {
        Smtp::start_on(racing::nats::free_port().expect("a free port")).await
    }

    /// Starts it on `port`.
    pub async fn start_on(port: u16) -> Smtp {
        Smtp::start_with(port, "aiosmtpd.handlers.Mailbox").await
    }

    /// Starts one that refuses for good (550) every recipient whose address begins with
    /// `refused` (`tests/smtp/refusing.py`).
    pub async fn start_refusing() -> Smtp {
        let port = racing::nats::free_port().expect("a free port");
        Smtp::start_with(port, "refusing.Refusing").await
    }

    /// Starts it on `port` with aiosmtpd's handler `class`, a Maildir handler.
    async fn start_with(port: u16, class: &str) -> Smtp {
        let dir = TempDir::new().expect("temp dir");
        let maildir = dir.path().join("Maildir");
        // Debian's python3 has the package; a python3 of one's own first on the PATH may not.
        let python = if Path::new("/usr/bin/python3").exists() {
            "/usr/bin/python3"
        } else {
            "python3"
        };
        let child = tokio::process::Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-c", class])
            .arg(&maildir)
            .env(
                "PYTHONPATH",
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests")
                    .join("smtp"),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("aiosmtpd starts (apt-get install python3-aiosmtpd)");
        crate::support::listening(port, "aiosmtpd", Duration::from_secs(10)).await;
        Smtp {
            child,
            port,
            maildir,
            _dir: dir,
        }
    }

    /// The messages received so far, oldest first.
    pub fn messages(&self) -> Vec<String> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.maildir.join("new"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort_by_key(|f| std::fs::metadata(f).and_then(|m| m.modified()).ok());
        files
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .collect()
    }

    /// Waits for message number `n` (1-based) to arrive, and returns it.
    pub async fn message(&self, n: usize) -> String {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(m) = self.messages().into_iter().nth(n - 1) {
                return m;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "message {n} did not arrive; {} did",
                self.messages().len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The link of a message.
pub fn link_in(message: &str) -> String {
    message
        .split_whitespace()
        .find(|w| w.contains("/confirm?t="))
        .unwrap_or_else(|| panic!("no link in:\n{message}"))
        .to_owned()
}

/// The key of a message.
pub fn key_in(message: &str) -> String {
    message
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| c == '\'' || c == '\\'))
        .find(|w| w.starts_with("rk_") && w.len() == 44)
        .unwrap_or_else(|| panic!("no key in:\n{message}"))
        .to_owned()
}

/// A browser's part, by hand: the form cookie, and the token of the last page.
pub struct Visitor {
    pub client: reqwest::Client,
    pub base: String,
    pub cookie: Option<String>,
    pub csrf: String,
    /// The `X-Forwarded-For` its posts carry, as a proxy in front would add.
    pub forwarded_for: Option<String>,
}

impl Visitor {
    pub fn new(app: &App) -> Visitor {
        Visitor {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            base: app.base.clone(),
            cookie: None,
            csrf: String::new(),
            forwarded_for: None,
        }
    }

    /// GETs a page, keeping its cookie and form token; returns status and body.
    pub async fn open(&mut self, url: &str) -> (StatusCode, String) {
        let mut req = self.client.get(url);
        if let Some(c) = &self.cookie {
            req = req.header("Cookie", c);
        }
        let res = req.send().await.expect("page");
        if let Some(set) = res.headers().get("set-cookie") {
            let set = set.to_str().expect("ascii");
            self.cookie = set.split(';').next().map(str::to_owned);
        }
        let status = res.status();
        let body = res.text().await.expect("body");
        if let Some(token) = hidden(&body, "csrf") {
            self.csrf = token;
        }
        (status, body)
    }

    /// POSTs a form to `path` with the form token; returns status and body.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> (StatusCode, String) {
        let mut form: Vec<(&str, &str)> = vec![("csrf", &self.csrf)];
        form.extend_from_slice(fields);
        self.post_raw(path, &form).await
    }

    pub async fn post_raw(&self, path: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
        let mut req = self.client.post(format!("{}{path}", self.base)).form(form);
        if let Some(c) = &self.cookie {
            req = req.header("Cookie", c);
        }
        if let Some(ip) = &self.forwarded_for {
            req = req.header("X-Forwarded-For", ip);
        }
        let res = req.send().await.expect("post");
        (res.status(), res.text().await.expect("body"))
    }

    /// Opens the link of `message` and presses its button.
    pub async fn follow(&mut self, message: &str) -> (StatusCode, String) {
        let (status, page) = self.open(&link_in(message)).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let token = hidden(&page, "token").expect("the link's token in the page");
        self.post("/confirm", &[("token", &token)]).await
    }

    pub async fn subscribe(&mut self, email: &str, plan: &str) -> (StatusCode, String) {
        let (status, _) = self.open(&format!("{}/", self.base)).await;
        assert_eq!(status, StatusCode::OK);
        self.post(
            "/subscribe",
            &[
                ("name", "Ann Lee"),
                ("email", email),
                ("plan", plan),
                ("terms", "yes"),
            ],
        )
        .await
    }
}

/// The value of the hidden field `name` of a page.
pub fn hidden(page: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page.find(&marker)? + marker.len();
    let end = page[start..].find('"')? + start;
    Some(page[start..end].to_owned())
}

pub async fn api(app: &App, key: &str) -> StatusCode {
    app.client
        .get(format!("{}/api/v1/racecards/today", app.base))
        .header("X-API-Key", key)
        .send()
        .await
        .expect("request")
        .status()
}

/// Publishes a card for today in Hong Kong (the service's "today"), so that a new key
/// has something to read at `/api/v1/racecards/today`, and waits until it is served.
pub async fn todays_card(nats: &Nats, app: &mut App) {
    let hong_kong = jiff::tz::TimeZone::get("Asia/Hong_Kong").expect("a zone");
    let today = jiff::Timestamp::now()
        .to_zoned(hong_kong)
        .date()
        .to_string();
    let card = racing_events::samples::card(&today, "Sha Tin", 1, &["A001", "A002"]);
    let seq = nats
        .publish(&[racing_events::samples::envelope(card)])
        .await;
    app.projected(seq).await;
}

/// Polls until `key` gets `status` from the API (the registry reaches the ring within
/// moments); fails after 5 s.
pub async fn api_becomes(app: &App, key: &str, status: StatusCode) {
    api_becomes_within(app, key, status, Duration::from_secs(5)).await;
}

/// The `mail` part of the service's `/status`.
pub async fn mail_status(app: &App) -> serde_json::Value {
    let status: serde_json::Value = app
        .client
        .get(format!("{}/status", app.admin))
        .send()
        .await
        .expect("status")
        .json()
        .await
        .expect("JSON");
    status["mail"].clone()
}

pub async fn start(
    nats: &Nats,
    dir: &Path,
    smtp: &Smtp,
    adjust: impl FnOnce(&mut racing::Config),
) -> App {
    let port = smtp.port;
    App::start_with(nats, dir, move |c| {
        c.signup.smtp_url = Some(format!("smtp://127.0.0.1:{port}"));
        adjust(c);
    })
    .await
}

#[tokio::test]
async fn a_subscriber_gets_a_key_by_mail_and_replaces_it() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = start(&nats, dir.path(), &smtp, |_| {}).await;
    todays_card(&nats, &mut app).await;
    let mut ann = Visitor::new(&app);

    // The pricing page needs no key, and neither do its forms.
    for path in ["/", "/pricing"] {
        let res = app
            .client
            .get(format!("{}{path}", app.base))
            .send()
            .await
            .expect("page");
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        assert!(res.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("text/html"));
    }

    let (status, page) = ann.subscribe("Ann@Example.com", "trial").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("Check your e-mail"), "{page}");
    let confirmation = smtp.message(1).await;
    assert!(
        confirmation.contains("To: ann@example.com"),
        "{confirmation}"
    );
    assert!(
        !confirmation.contains("rk_"),
        "no key before the address is confirmed"
    );

    let (status, page) = ann.follow(&confirmation).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(!page.contains("rk_"), "the key is in no page");
    let key = key_in(&smtp.message(2).await);
    api_becomes(&app, &key, StatusCode::OK).await;

    // The link works once.
    let (status, page) = ann.open(&link_in(&confirmation)).await;
    assert_eq!(status, StatusCode::GONE, "a used link: {page}");

    // A second subscription to the plan makes no second key: a reminder instead.
    ann.subscribe("ann@example.com", "trial").await;
    let (status, _) = ann.follow(&smtp.message(3).await).await;
    assert_eq!(status, StatusCode::OK);
    let reminder = smtp.message(4).await;
    assert!(reminder.contains("already hold a key"), "{reminder}");
    assert!(
        reminder.contains(&key[..11]) && !reminder.contains(&key),
        "{reminder}"
    );

    // Replaced, not compromised: the old key keeps working, the new one works too.
    let (status, _) = ann
        .post("/keys/replace", &[("email", "ann@example.com")])
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = ann.follow(&smtp.message(5).await).await;
    assert_eq!(status, StatusCode::OK);
    let second = key_in(&smtp.message(6).await);
    assert_ne!(second, key);
    api_becomes(&app, &second, StatusCode::OK).await;
    assert_eq!(
        api(&app, &key).await,
        StatusCode::OK,
        "inside its grace period"
    );

    // Compromised: the key in use stops at once.
    let (status, _) = ann
        .post(
            "/keys/replace",
            &[("email", "ann@example.com"), ("compromised", "yes")],
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = ann.follow(&smtp.message(7).await).await;
    assert_eq!(status, StatusCode::OK);
    let third = key_in(&smtp.message(8).await);
    api_becomes(&app, &third, StatusCode::OK).await;
    api_becomes(&app, &second, StatusCode::UNAUTHORIZED).await;

    // An address that never subscribed gets the same page and no mail.
    let (status, page) = ann
        .post("/keys/replace", &[("email", "nobody@example.com")])
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(smtp.messages().len(), 8);
}

#[tokio::test]
async fn forms_without_their_token_links_used_or_expired_and_floods_are_refused() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = start(&nats, dir.path(), &smtp, |c| {
        c.signup.link_ttl = Duration::from_secs(1);
        c.signup.posts_per_client_hour = 4;
    })
    .await;
    let mut bob = Visitor::new(&app);
    bob.open(&format!("{}/pricing", app.base)).await;
    let fields = [
        ("name", "Bob"),
        ("email", "bob@example.com"),
        ("plan", "trial"),
        ("terms", "yes"),
    ];

    // No token, a token of another cookie, a token too old.
    let (status, page) = bob.post_raw("/subscribe", &fields).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    let mut stranger = Visitor::new(&app);
    stranger.csrf = bob.csrf.clone();
    stranger.cookie = Some(format!("racing_form={}", "0".repeat(32)));
    assert_eq!(
        stranger.post("/subscribe", &fields).await.0,
        StatusCode::FORBIDDEN
    );
    let secret = {
        let kv = nats
            .service
            .get_key_value("RACING_SUBSCRIBERS")
            .await
            .expect("the bucket");
        let hex = kv
            .get("secret.forms")
            .await
            .expect("read")
            .expect("a secret");
        racing::keys::unhex(std::str::from_utf8(&hex).expect("text")).expect("64 hex digits")
    };
    let cookie = bob
        .cookie
        .clone()
        .expect("a cookie")
        .trim_start_matches("racing_form=")
        .to_owned();
    let old = racing::subscribe::csrf::Csrf::new(secret)
        .token(&cookie, jiff::Timestamp::now().as_second() - 3 * 3600);
    let mut form: Vec<(&str, &str)> = vec![("csrf", &old)];
    form.extend_from_slice(&fields);
    let (status, page) = bob.post_raw("/subscribe", &form).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(page.contains("expired"), "{page}");
    assert!(
        smtp.messages().is_empty(),
        "nothing sent for a refused form"
    );

    // Bad fields: a clear page, nothing sent.
    let (status, page) = bob
        .post(
            "/subscribe",
            &[
                ("name", "Bob"),
                ("email", "not an address"),
                ("plan", "trial"),
                ("terms", "yes"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(page.contains("not an e-mail address"), "{page}");

    // A link past its expiry, and one that was never sent.
    let (status, _) = bob.post("/subscribe", &fields).await;
    assert_eq!(status, StatusCode::OK);
    let confirmation = smtp.message(1).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (status, page) = bob.open(&link_in(&confirmation)).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(page.contains("expired"), "{page}");
    let (status, _) = bob
        .open(&format!("{}/confirm?t={}", app.base, "f".repeat(32)))
        .await;
    assert_eq!(status, StatusCode::GONE);

    // Posts from one client past its hourly limit: 429 and when to come back.
    let mut last = StatusCode::OK;
    let mut retry = None;
    for _ in 0..4 {
        let res = bob
            .client
            .post(format!("{}/keys/replace", app.base))
            .header("Cookie", bob.cookie.clone().expect("cookie"))
            .form(&[("csrf", bob.csrf.as_str()), ("email", "bob@example.com")])
            .send()
            .await
            .expect("post");
        last = res.status();
        retry = res.headers().get("retry-after").cloned();
        if last == StatusCode::TOO_MANY_REQUESTS {
            let page = res.text().await.expect("body");
            assert!(page.contains("come back in"), "{page}");
            break;
        }
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
    assert!(retry.is_some(), "Retry-After");
}

#[tokio::test]
async fn mail_the_smtp_server_does_not_take_waits_and_goes_once_it_does() {
    let nats = Nats::start().await;
    let dir = TempDir::new().expect("temp dir");
    // Nothing listens there yet.
    let port = racing::nats::free_port().expect("a free port");
    let app = App::start_with(&nats, dir.path(), move |c| {
        c.signup.smtp_url = Some(format!("smtp://127.0.0.1:{port}"));
    })
    .await;
    let mut dan = Visitor::new(&app);
    let (status, page) = dan.subscribe("dan@example.com", "trial").await;
    assert_eq!(status, StatusCode::OK, "the form is taken: {page}");

    let mail = || mail_status(&app);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let m = mail().await;
        if m["failed_attempts"].as_u64() >= Some(1) && m["queued"] == 1 {
            assert!(m["last_error"].is_string(), "{m}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no failure shown: {m}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The server comes; the message waiting goes, within the backoff.
    let smtp = Smtp::start_on(port).await;
    let confirmation = smtp.message(1).await;
    assert!(
        confirmation.contains("To: dan@example.com"),
        "{confirmation}"
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let m = mail().await;
        if m["queued"] == 0 && m["sent"] == 1 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "still queued: {m}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn mails_to_one_address_are_limited_whoever_asks() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = start(&nats, dir.path(), &smtp, |c| {
        c.signup.mails_per_address_hour = 2;
    })
    .await;
    // Two visitors (two cookies), one address: the third mail to it is refused.
    let mut first = Visitor::new(&app);
    let mut second = Visitor::new(&app);
    assert_eq!(
        first.subscribe("eve@example.com", "trial").await.0,
        StatusCode::OK
    );
    assert_eq!(
        second.subscribe("eve@example.com", "trial").await.0,
        StatusCode::OK
    );
    let (status, page) = first.subscribe("EVE@example.com", "trial").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{page}");
    assert!(page.contains("come back in"), "{page}");
    // Another address is not held back by it.
    assert_eq!(
        second.subscribe("fay@example.com", "trial").await.0,
        StatusCode::OK
    );
    smtp.message(3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(smtp.messages().len(), 3, "no mail for the refused form");
}

#[tokio::test]
async fn a_recipient_the_relay_refuses_is_set_aside_and_later_mail_still_goes() {
    let nats = Nats::start().await;
    let smtp = Smtp::start_refusing().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = start(&nats, dir.path(), &smtp, |_| {}).await;
    todays_card(&nats, &mut app).await;
    let mut eve = Visitor::new(&app);
    let (status, page) = eve.subscribe("refused@example.com", "trial").await;
    assert_eq!(status, StatusCode::OK, "the form is taken: {page}");
    // Mail written after the refused message still arrives, in order, while the refused
    // one waits nowhere in front of it.
    let mut fay = Visitor::new(&app);
    for address in ["fay@example.com", "gus@example.com"] {
        let (status, page) = fay.subscribe(address, "trial").await;
        assert_eq!(status, StatusCode::OK, "{page}");
    }
    assert!(smtp.message(1).await.contains("To: fay@example.com"));
    assert!(smtp.message(2).await.contains("To: gus@example.com"));
    let (status, _) = fay.follow(&smtp.message(1).await).await;
    assert_eq!(status, StatusCode::OK);
    let key = key_in(&smtp.message(3).await);
    api_becomes(&app, &key, StatusCode::OK).await;

    // The refused message is set aside with its reason, once, and counted.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mail = loop {
        let mail = mail_status(&app).await;
        if mail["queued"] == 0 && mail["failed"] == 1 && mail["sent"] == 3 {
            break mail;
        }
        assert!(tokio::time::Instant::now() < deadline, "mail: {mail}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(mail["deferred"], 0, "{mail}");
    let failed: Vec<_> = std::fs::read_dir(dir.path().join("mail").join("failed"))
        .expect("the failed directory")
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).expect("a record"))
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].contains("refused@example.com"), "{}", failed[0]);
    assert!(
        failed[0].contains("550"),
        "the relay's answer: {}",
        failed[0]
    );
    assert!(
        !failed[0].contains("/confirm?t="),
        "no link or key kept: {}",
        failed[0]
    );
    // A sent message leaves nothing in the spool.
    let spool = std::fs::read_dir(dir.path().join("mail").join("spool"))
        .expect("the spool")
        .count();
    assert_eq!(spool, 0);
    let metrics = app.metrics().await;
    for name in [
        "racing_mail_queued",
        "racing_mail_deferred",
        "racing_mail_set_aside",
        "racing_mail_sent_total",
        "racing_mail_failed_total",
    ] {
        assert!(metrics.contains(name), "{name} in /metrics");
    }
    assert_eq!(smtp.messages().len(), 3, "nothing for the refused address");
}

#[tokio::test]
async fn a_link_copied_with_a_line_end_works_and_a_cut_one_is_told_apart_from_a_used_one() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = start(&nats, dir.path(), &smtp, |_| {}).await;
    todays_card(&nats, &mut app).await;
    let mut cy = Visitor::new(&app);
    let (status, page) = cy.subscribe("cy@example.com", "trial").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let link = link_in(&smtp.message(1).await);

    // Cut short on its way: a page that says so, not one that says it was used.
    let (status, page) = cy.open(&link[..link.len() - 1]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains("incomplete"), "{page}");
    assert!(!page.contains("used already"), "{page}");

    // Copied with the message's line end (a carriage return, `%0D`) and a space: it works,
    // and the button's post, which carries the token as the page got it, too.
    let (status, page) = cy.open(&format!("{link}%0D%20")).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let token = hidden(&page, "token").expect("the link's token in the page");
    let (status, page) = cy
        .post("/confirm", &[("token", &format!("{token}\r\n"))])
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let key = key_in(&smtp.message(2).await);
    api_becomes(&app, &key, StatusCode::OK).await;

    // Used, with or without the line end: gone, and said so.
    for used in [link.clone(), format!("{link}%0D")] {
        let (status, page) = cy.open(&used).await;
        assert_eq!(status, StatusCode::GONE, "{used}: {page}");
        assert!(page.contains("used already"), "{page}");
    }
}

/// Polls until `key` gets `status`; fails after `within`.
pub async fn api_becomes_within(app: &App, key: &str, status: StatusCode, within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let now = api(app, key).await;
        if now == status {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the key got {now}, not {status}, after {within:?}"
        );
        // Slower than the trial plan's rate, so a key still working is never a 429.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_compromised_replacement_revokes_every_older_key_too() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = start(&nats, dir.path(), &smtp, |_| {}).await;
    todays_card(&nats, &mut app).await;
    let mut hal = Visitor::new(&app);
    hal.subscribe("hal@example.com", "trial").await;
    let (status, _) = hal.follow(&smtp.message(1).await).await;
    assert_eq!(status, StatusCode::OK);
    let k1 = key_in(&smtp.message(2).await);
    api_becomes(&app, &k1, StatusCode::OK).await;

    // K1 -> K2, not compromised: K1 keeps working in its grace period.
    hal.post("/keys/replace", &[("email", "hal@example.com")])
        .await;
    let (status, _) = hal.follow(&smtp.message(3).await).await;
    assert_eq!(status, StatusCode::OK);
    let k2 = key_in(&smtp.message(4).await);
    api_becomes(&app, &k2, StatusCode::OK).await;
    assert_eq!(
        api(&app, &k1).await,
        StatusCode::OK,
        "K1 in its grace period"
    );

    // K2 -> K3, compromised: K1 and K2 both stop, as the mail says.
    hal.post(
        "/keys/replace",
        &[("email", "hal@example.com"), ("compromised", "yes")],
    )
    .await;
    let (status, page) = hal.follow(&smtp.message(5).await).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mail = smtp.message(6).await;
    assert!(mail.contains("were revoked"), "{mail}");
    let k3 = key_in(&mail);
    api_becomes(&app, &k3, StatusCode::OK).await;
    for (name, key) in [("K2", &k2), ("K1", &k1)] {
        api_becomes_within(&app, key, StatusCode::UNAUTHORIZED, Duration::from_secs(2)).await;
        assert_eq!(
            api(&app, key).await,
            StatusCode::UNAUTHORIZED,
            "{name} stays revoked"
        );
    }
    assert_eq!(api(&app, &k3).await, StatusCode::OK);
}

#[tokio::test]
async fn sub_addresses_share_their_mailbox_s_limits_and_strangers_learn_nothing() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = start(&nats, dir.path(), &smtp, |c| {
        c.signup.mails_per_address_hour = 3;
    })
    .await;
    todays_card(&nats, &mut app).await;
    let mut ivy = Visitor::new(&app);

    // The name given is nobody's to read before the address is confirmed.
    ivy.subscribe("ivy+one@example.com", "trial").await;
    let confirmation = smtp.message(1).await;
    assert!(
        !confirmation.contains("Ann Lee"),
        "the form's name is in no mail before confirmation:\n{confirmation}"
    );
    let (status, _) = ivy.follow(&confirmation).await;
    assert_eq!(status, StatusCode::OK);
    let key = key_in(&smtp.message(2).await);
    api_becomes(&app, &key, StatusCode::OK).await;

    // Another sub-address of the mailbox holds the same plan already: no second key.
    ivy.subscribe("ivy+two@example.com", "trial").await;
    let (status, _) = ivy.follow(&smtp.message(3).await).await;
    assert_eq!(status, StatusCode::OK);
    let reminder = smtp.message(4).await;
    assert!(reminder.contains("already hold a key"), "{reminder}");

    // A replacement asked for an address that subscribed and for one that did not gets the
    // same answer, even when the mail cannot be written (no 500 that tells them apart).
    let spool = dir.path().join("mail").join("spool");
    std::fs::remove_dir_all(&spool).expect("spool removed");
    std::fs::write(&spool, b"not a directory").expect("a file in its place");
    let mut answers = Vec::new();
    for email in ["jon@example.com", "ivy+three@example.com"] {
        let mut visitor = Visitor::new(&app);
        visitor.open(&format!("{}/", app.base)).await;
        let (status, page) = visitor.post("/keys/replace", &[("email", email)]).await;
        answers.push((status, page.replace(email, "ADDRESS")));
    }
    assert_eq!(answers[0].0, StatusCode::OK, "{}", answers[0].1);
    assert_eq!(answers[0], answers[1]);

    // The mailbox's three posts an hour are spent, whichever tag asks.
    let (status, page) = ivy.subscribe("ivy+four@example.com", "trial").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{page}");
}

#[tokio::test]
async fn form_posts_count_per_ipv6_64_and_per_client_behind_a_trusted_proxy() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = start(&nats, dir.path(), &smtp, |c| {
        c.signup.posts_per_client_hour = 2;
        c.signup.trusted_proxies =
            racing::subscribe::clients::TrustedProxies::parse("127.0.0.1").expect("a list");
    })
    .await;
    let post_from = |ip: &'static str, n: u32| {
        let mut visitor = Visitor::new(&app);
        visitor.forwarded_for = Some(ip.to_owned());
        async move {
            visitor.open(&format!("{}/", visitor.base)).await;
            let email = format!("kim{n}@example.com");
            visitor
                .post("/keys/replace", &[("email", email.as_str())])
                .await
                .0
        }
    };
    // Three addresses of one /64: one client, two posts an hour.
    assert_eq!(post_from("2001:db8:0:1::1", 1).await, StatusCode::OK);
    assert_eq!(post_from("2001:db8:0:1::2", 2).await, StatusCode::OK);
    assert_eq!(
        post_from("2001:db8:0:1::3", 3).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // Another /64, and an IPv4 client, each count on their own.
    assert_eq!(post_from("2001:db8:0:2::1", 4).await, StatusCode::OK);
    assert_eq!(post_from("198.51.100.7", 5).await, StatusCode::OK);
    // What a client writes before the proxy's hop is not believed.
    assert_eq!(
        post_from("2001:db8:9::1, 2001:db8:0:1::9", 6).await,
        StatusCode::TOO_MANY_REQUESTS
    );
}
