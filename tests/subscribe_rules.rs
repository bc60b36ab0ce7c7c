//! The rules the subscription flow keeps whoever asks: an operator's revocation is never
//! undone by the lost-key form, mail about a subscription goes to the address that
//! subscribed, the stores behind the forms are bounded, and a key whose mail could not be
//! written is said to exist. Against a real SMTP server, as `subscribe.rs`.

use std::time::Duration;

use reqwest::StatusCode;
use tempfile::TempDir;

use crate::subscribe::{api, api_becomes, key_in, start, todays_card, Smtp, Visitor};
use crate::support::{App, Nats};

/// Two self-service plans, so that one subscriber can hold a key banned and one not.
const TWO_PLANS: &str = "\
[[plan]]\nid = \"trial\"\nname = \"Trial\"\nprice = \"Free\"\nrate_per_sec = 5\nburst = 10\n\
live_connections = 2\nself_service = true\n\
[[plan]]\nid = \"silver\"\nname = \"Silver\"\nprice = \"HK$1\"\nrate_per_sec = 5\nburst = 10\n\
live_connections = 2\nself_service = true\n";

/// Runs `racing keys ACTION...` as the keys admin against `nats`; its standard output.
async fn keys_cli(nats: &Nats, action: &[&str]) -> String {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_racing"))
        .args(["keys", "--nats-url", &nats.url(), "--nats-nkey"])
        .arg(nats.credentials_dir().join("keys-admin.nk"))
        .args(action)
        .env("RACING_LOG", "warn")
        .output()
        .await
        .expect("racing keys runs");
    assert!(
        out.status.success(),
        "racing keys {action:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The prefix of a key, `rk_` and its id.
fn prefix(key: &str) -> &str {
    &key[..11]
}

/// Waits a moment and says whether no message beyond the first `n` arrived (the form
/// answers before its mail is written, so there is nothing to wait for but time).
async fn no_mail_beyond(smtp: &Smtp, n: usize) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(smtp.messages().len(), n, "{:#?}", smtp.messages().get(n..));
}

#[tokio::test]
async fn a_key_the_operator_revoked_is_never_revived_by_the_lost_key_form() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = start(&nats, dir.path(), &smtp, |c| {
        c.signup.mails_per_address_hour = 20;
        c.signup.plans = racing::subscribe::plans::Plans::parse(TWO_PLANS).expect("plans");
    })
    .await;
    todays_card(&nats, &mut app).await;
    let mut lee = Visitor::new(&app);
    lee.subscribe("lee@example.com", "trial").await;
    lee.follow(&smtp.message(1).await).await;
    let trial = key_in(&smtp.message(2).await);
    lee.subscribe("lee@example.com", "silver").await;
    lee.follow(&smtp.message(3).await).await;
    let silver = key_in(&smtp.message(4).await);
    api_becomes(&app, &trial, StatusCode::OK).await;

    // The operator bans the trial key.
    let revoked = keys_cli(&nats, &["revoke", prefix(&trial)]).await;
    api_becomes(&app, &trial, StatusCode::UNAUTHORIZED).await;

    // A compromised replacement replaces the silver key only: no trial key comes back,
    // and the mail says nothing of it.
    lee.post(
        "/keys/replace",
        &[("email", "lee@example.com"), ("compromised", "yes")],
    )
    .await;
    let (status, page) = lee.follow(&smtp.message(5).await).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mail = smtp.message(6).await;
    assert!(
        !mail.contains("Trial"),
        "a replacement revived the banned trial key:\n{mail}"
    );
    assert!(mail.contains("Silver plan: rk_"), "{mail}");
    let silver2 = key_in(&mail);
    api_becomes(&app, &silver2, StatusCode::OK).await;
    api_becomes(&app, &silver, StatusCode::UNAUTHORIZED).await;
    assert_eq!(api(&app, &trial).await, StatusCode::UNAUTHORIZED);

    // The revocation a compromised replacement made is no ban: the next replacement
    // replaces the silver key again.
    lee.post("/keys/replace", &[("email", "lee@example.com")])
        .await;
    lee.follow(&smtp.message(7).await).await;
    let mail = smtp.message(8).await;
    assert!(mail.contains("Silver plan: rk_"), "{mail}");
    assert!(!mail.contains("Trial"), "{mail}");
    let silver3 = key_in(&mail);
    api_becomes(&app, &silver3, StatusCode::OK).await;

    // Subscribing to the banned plan again makes no key either: the reminder.
    lee.subscribe("lee@example.com", "trial").await;
    lee.follow(&smtp.message(9).await).await;
    let reminder = smtp.message(10).await;
    assert!(reminder.contains("already hold a key"), "{reminder}");
    assert!(!reminder.contains(&trial), "{reminder}");

    // Every key banned: the form answers as for any address and mails nothing.
    keys_cli(&nats, &["revoke", prefix(&silver3)]).await;
    let (status, page) = lee
        .post("/keys/replace", &[("email", "lee@example.com")])
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    no_mail_beyond(&smtp, 10).await;

    // What the operator was told, and the only way back.
    assert!(
        revoked.contains("the subscriber's record keeps it revoked"),
        "{revoked}"
    );
    let unrevoked = keys_cli(&nats, &["unrevoke", prefix(&trial)]).await;
    assert!(unrevoked.contains("works again"), "{unrevoked}");
    api_becomes(&app, &trial, StatusCode::OK).await;
}

#[tokio::test]
async fn mail_about_a_subscription_goes_to_the_address_that_subscribed() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = start(&nats, dir.path(), &smtp, |_| {}).await;
    todays_card(&nats, &mut app).await;
    let mut bob = Visitor::new(&app);
    bob.subscribe("bob@example.com", "trial").await;
    bob.follow(&smtp.message(1).await).await;
    let key = key_in(&smtp.message(2).await);
    api_becomes(&app, &key, StatusCode::OK).await;

    // Asked for a sub-address of the mailbox: the link goes where the key went.
    bob.post("/keys/replace", &[("email", "bob+x@example.com")])
        .await;
    let offer = smtp.message(3).await;
    assert!(offer.contains("To: bob@example.com"), "{offer}");
    let (status, page) = bob.follow(&offer).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("the address that subscribed"), "{page}");
    assert!(!page.contains("bob@example.com"), "{page}");
    let mail = smtp.message(4).await;
    assert!(mail.contains("To: bob@example.com"), "{mail}");
    let new = key_in(&mail);
    api_becomes(&app, &new, StatusCode::OK).await;

    // A reminder of a plan held goes there too, whichever sub-address confirmed.
    bob.subscribe("bob+y@example.com", "trial").await;
    let confirmation = smtp.message(5).await;
    assert!(
        confirmation.contains("To: bob+y@example.com"),
        "{confirmation}"
    );
    let (status, page) = bob.follow(&confirmation).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(!page.contains("bob@example.com"), "{page}");
    let reminder = smtp.message(6).await;
    assert!(reminder.contains("already hold a key"), "{reminder}");
    assert!(reminder.contains("To: bob@example.com"), "{reminder}");
}

#[tokio::test]
async fn a_key_made_whose_mail_cannot_be_written_is_said_to_be_made() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let mut app = start(&nats, dir.path(), &smtp, |_| {}).await;
    todays_card(&nats, &mut app).await;
    let spool = dir.path().join("mail").join("spool");
    // The spool a file, so that no message can be written.
    let break_spool = || {
        std::fs::remove_dir_all(&spool).expect("spool removed");
        std::fs::write(&spool, b"not a directory").expect("a file in its place");
    };
    let mend_spool = || {
        std::fs::remove_file(&spool).expect("the file removed");
        std::fs::create_dir(&spool).expect("the spool again");
    };
    let mut cat = Visitor::new(&app);
    cat.subscribe("cat@example.com", "trial").await;
    let confirmation = smtp.message(1).await;

    break_spool();
    let (status, page) = cat.follow(&confirmation).await;
    assert!(
        !page.contains("Nothing was changed"),
        "a key was made: {page}"
    );
    assert!(
        page.contains("Your key of the Trial plan was made"),
        "{page}"
    );
    assert!(page.contains("Lost or compromised key"), "{page}");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{page}");

    // The replacement form gets it; its mail failing is said as plainly.
    mend_spool();
    cat.post("/keys/replace", &[("email", "cat@example.com")])
        .await;
    let offer = smtp.message(2).await;
    break_spool();
    let (status, page) = cat.follow(&offer).await;
    assert!(!page.contains("Nothing was changed"), "{page}");
    assert!(page.contains("Your keys were replaced"), "{page}");
    assert!(page.contains("Lost or compromised key"), "{page}");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{page}");

    mend_spool();
    cat.post("/keys/replace", &[("email", "cat@example.com")])
        .await;
    cat.follow(&smtp.message(3).await).await;
    let key = key_in(&smtp.message(4).await);
    api_becomes(&app, &key, StatusCode::OK).await;
}

/// Sets the link bucket's byte limit as the set-up user; returns the limit it had.
async fn link_bucket_bytes(nats: &Nats, max_bytes: i64) -> i64 {
    let stream = nats
        .setup
        .get_stream("KV_RACING_SIGNUPS")
        .await
        .expect("the link bucket's stream");
    let mut config = stream.cached_info().config.clone();
    let had = config.max_bytes;
    config.max_bytes = max_bytes;
    nats.setup
        .update_stream(config)
        .await
        .expect("the stream updated");
    had
}

#[tokio::test]
async fn a_full_link_bucket_refuses_the_forms_with_a_503_and_loses_nothing() {
    let nats = Nats::start().await;
    // A link bucket that holds a few links only.
    link_bucket_bytes(&nats, 4096).await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    // No share of it kept for replacement links: sign-ups fill all of it.
    let app = start(&nats, dir.path(), &smtp, |c| c.signup.reserve_percent = 0).await;
    let mut visitor = Visitor::new(&app);
    let mut taken = 0;
    let (status, page) = loop {
        let email = format!("n{taken}@example.com");
        let (status, page) = visitor.subscribe(&email, "trial").await;
        if status != StatusCode::OK {
            break (status, page);
        }
        taken += 1;
        assert!(taken < 15, "the link bucket never filled");
    };
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{page}");
    assert!(page.contains("try again"), "{page}");
    assert!(taken > 0, "no form taken at all: {page}");
    // Every form taken has its mail; the refused one none.
    smtp.message(taken).await;
    no_mail_beyond(&smtp, taken).await;
    // The replacement form, which may use the whole bucket, says the same, whoever asks.
    let (status, page) = visitor
        .post("/keys/replace", &[("email", "n0@example.com")])
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{page}");
}

#[tokio::test]
async fn form_posts_count_per_ipv6_48_as_well_as_per_64() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = start(&nats, dir.path(), &smtp, |c| {
        c.signup.trusted_proxies =
            racing::subscribe::clients::TrustedProxies::parse("127.0.0.1").expect("a list");
    })
    .await;
    let mut visitor = Visitor::new(&app);
    visitor.open(&format!("{}/", app.base)).await;
    // One post from each of 201 /64s of one /48: the default allows 200 an hour.
    let mut refused = None;
    for n in 0..=200u32 {
        visitor.forwarded_for = Some(format!("2001:db8:7:{n:x}::1"));
        let email = format!("kim{n}@example.com");
        let (status, page) = visitor
            .post("/keys/replace", &[("email", email.as_str())])
            .await;
        if status != StatusCode::OK {
            assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{page}");
            refused = Some(n);
            break;
        }
    }
    assert_eq!(refused, Some(200), "the /48 is not limited");
    // Another /48 is not held back by it.
    visitor.forwarded_for = Some("2001:db8:8::1".to_owned());
    let (status, _) = visitor
        .post("/keys/replace", &[("email", "kim@example.com")])
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn setting_up_again_gives_a_link_bucket_made_before_its_byte_limit() {
    let nats = Nats::start().await;
    // A bucket as an older set-up made it: no byte limit.
    let made = link_bucket_bytes(&nats, -1).await;
    assert_eq!(made, racing::nats::buckets::SIGNUPS.max_bytes);
    assert!(made > 0);
    nats.set_up_with(&racing::nats::buckets::SnapshotBucket::default())
        .await;
    let mut stream = nats
        .setup
        .get_stream("KV_RACING_SIGNUPS")
        .await
        .expect("the link bucket's stream");
    let info = stream.info().await.expect("its info");
    assert_eq!(
        info.config.max_bytes,
        racing::nats::buckets::SIGNUPS.max_bytes
    );
}

/// The link bucket's stream as it stands: its settings and what it holds.
async fn link_bucket(nats: &Nats) -> async_nats::jetstream::stream::Info {
    let mut stream = nats
        .setup
        .get_stream("KV_RACING_SIGNUPS")
        .await
        .expect("the link bucket's stream");
    stream.info().await.expect("its info").clone()
}

/// Waits for a message to `to` that holds `text`, among those not in `seen`; returns it.
async fn mail_to(smtp: &Smtp, to: &str, text: &str, seen: usize) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found = smtp
            .messages()
            .into_iter()
            .skip(seen)
            .find(|m| m.contains(&format!("To: {to}")) && m.contains(text));
        if let Some(m) = found {
            return m;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no message to {to} with {text:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The form fields of a subscription of `email` to the trial plan.
fn subscription(email: &str) -> [(&str, &str); 4] {
    [
        ("name", "Flood"),
        ("email", email),
        ("plan", "trial"),
        ("terms", "yes"),
    ]
}

/// A service on `nats` with `adjust` made to its settings, and the visitor of a subscriber
/// of `email` to the trial plan whose key works; the key.
async fn with_subscriber(
    nats: &Nats,
    smtp: &Smtp,
    dir: &TempDir,
    email: &str,
    adjust: impl FnOnce(&mut racing::Config),
) -> (App, Visitor, String) {
    let mut app = start(nats, dir.path(), smtp, adjust).await;
    todays_card(nats, &mut app).await;
    let mut visitor = Visitor::new(&app);
    visitor.subscribe(email, "trial").await;
    visitor.follow(&smtp.message(1).await).await;
    let key = key_in(&smtp.message(2).await);
    api_becomes(&app, &key, StatusCode::OK).await;
    (app, visitor, key)
}

/// Sign-ups from a pool of addresses (each post from an address of its own, the
/// per-client limits raised to stand for the pool) fill what the link bucket lets them,
/// and the replacement form stays open: a subscriber whose key is compromised still gets
/// a link, and following it stops the key.
#[tokio::test]
async fn sign_ups_that_fill_the_link_bucket_leave_key_replacement_open() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let (app, mut ann, key) = with_subscriber(&nats, &smtp, &dir, "ann@example.com", |c| {
        c.signup.posts_per_client_hour = 10_000;
        c.signup.posts_per_network_hour = 10_000;
        c.signup.trusted_proxies =
            racing::subscribe::clients::TrustedProxies::parse("127.0.0.1").expect("a list");
    })
    .await;

    // A bucket of 32 KiB, filled by sign-ups from one address after another, each of a
    // network of its own.
    link_bucket_bytes(&nats, 32 * 1024).await;
    let mut flood = Visitor::new(&app);
    flood.open(&format!("{}/", app.base)).await;
    let mut taken = 0u32;
    let (status, page) = loop {
        flood.forwarded_for = Some(format!("198.18.{taken}.1"));
        let email = format!("flood{taken}@example.com");
        let (status, page) = flood.post("/subscribe", &subscription(&email)).await;
        if status != StatusCode::OK {
            break (status, page);
        }
        taken += 1;
        assert!(taken < 250, "the link bucket never filled");
    };
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{page}");
    assert!(taken > 10, "{taken} sign-ups taken: {page}");

    // The replacement form takes Ann's post, and its link stops her key at once.
    let seen = smtp.messages().len();
    let (status, page) = ann
        .post(
            "/keys/replace",
            &[("email", "ann@example.com"), ("compromised", "yes")],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let offer = mail_to(&smtp, "ann@example.com", "/confirm?t=", seen).await;
    let (status, page) = ann.follow(&offer).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let new = key_in(&mail_to(&smtp, "ann@example.com", "rk_", seen).await);
    api_becomes(&app, &new, StatusCode::OK).await;
    api_becomes(&app, &key, StatusCode::UNAUTHORIZED).await;

    // Sign-ups are still refused: the room the replacement took was never theirs.
    flood.forwarded_for = Some("198.19.0.1".to_owned());
    let (status, _) = flood
        .post("/subscribe", &subscription("late@example.com"))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
}

/// However often the replacement form is posted for one subscriber, at most three of its
/// links wait in the bucket at once: the posts beyond get a message saying that links are
/// waiting, with none in it, so the room kept for replacements cannot be filled through
/// the subscribers one knows of. A link followed makes room for another.
#[tokio::test]
async fn replacement_posts_leave_at_most_three_links_waiting_for_a_subscriber() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let (app, mut dee, _) = with_subscriber(&nats, &smtp, &dir, "dee@example.com", |c| {
        c.signup.mails_per_address_hour = 20;
    })
    .await;

    let before = link_bucket(&nats).await.state.messages;
    let mut stranger = Visitor::new(&app);
    stranger.open(&format!("{}/", app.base)).await;
    for n in 0..5 {
        let (status, page) = stranger
            .post("/keys/replace", &[("email", "dee@example.com")])
            .await;
        assert_eq!(status, StatusCode::OK, "post {n}: {page}");
        // One at a time, so that the messages arrive in the posts' order.
        smtp.message(3 + n).await;
    }
    let offers: Vec<String> = smtp.messages().into_iter().skip(2).collect();
    assert_eq!(offers.len(), 5);
    let with_links = offers.iter().filter(|m| m.contains("/confirm?t=")).count();
    assert_eq!(
        with_links, 3,
        "links mailed for one subscriber:\n{offers:#?}"
    );
    for note in &offers[3..] {
        assert!(note.contains("waiting"), "{note}");
    }
    // Three links, and one record that counts them.
    let added = link_bucket(&nats).await.state.messages - before;
    assert!(added <= 4, "{added} records added to the link bucket");

    // A link that waits still works, and once followed leaves the count: the next post
    // mails a link again.
    let (status, page) = dee.follow(&offers[2]).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    key_in(&smtp.message(8).await);
    stranger
        .post("/keys/replace", &[("email", "dee@example.com")])
        .await;
    let offer = smtp.message(9).await;
    assert!(offer.contains("/confirm?t="), "{offer}");
}

/// A replacement link's page lets whoever holds the mailbox stop the current keys at once,
/// whatever the form that sent it asked: a stranger's posts, which may have sent links
/// without "compromised", never leave the subscriber without a way to revoke a key now.
#[tokio::test]
async fn whoever_asked_for_it_a_replacement_link_can_stop_the_current_keys_at_once() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let (app, mut cy, key) = with_subscriber(&nats, &smtp, &dir, "cy@example.com", |_| {}).await;

    let mut stranger = Visitor::new(&app);
    stranger.open(&format!("{}/", app.base)).await;
    stranger
        .post("/keys/replace", &[("email", "cy@example.com")])
        .await;
    let offer = smtp.message(3).await;
    let (status, page) = cy.open(&crate::subscribe::link_in(&offer)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("name=\"compromised\""), "{page}");
    let token = crate::subscribe::hidden(&page, "token").expect("the link's token");
    let (status, page) = cy
        .post("/confirm", &[("token", &token), ("compromised", "yes")])
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let new = key_in(&smtp.message(4).await);
    api_becomes(&app, &new, StatusCode::OK).await;
    crate::subscribe::api_becomes_within(
        &app,
        &key,
        StatusCode::UNAUTHORIZED,
        Duration::from_secs(2),
    )
    .await;
}

/// A service that sets up its own NATS makes the link bucket keep a link for the link's
/// life: once that is over, the link has left the bucket, and takes no room there.
#[tokio::test]
async fn links_leave_the_bucket_once_their_life_is_over() {
    let nats = Nats::start_bare().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = start(&nats, dir.path(), &smtp, |c| {
        c.nats_setup = Some(nats.auth(racing::nats::Role::Setup));
        c.signup.link_ttl = Duration::from_secs(2);
    })
    .await;
    let mut eli = Visitor::new(&app);
    for n in 0..3 {
        let (status, page) = eli.subscribe(&format!("eli{n}@example.com"), "trial").await;
        assert_eq!(status, StatusCode::OK, "{page}");
    }
    let bucket = link_bucket(&nats).await;
    assert_eq!(bucket.config.max_age, Duration::from_secs(2));
    assert!(bucket.state.messages >= 3, "{:?}", bucket.state);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let state = link_bucket(&nats).await.state;
        if state.messages == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "links still in the bucket after their life: {state:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (status, page) = eli
        .open(&crate::subscribe::link_in(&smtp.message(1).await))
        .await;
    assert_eq!(status, StatusCode::GONE, "{page}");
}

/// The link bucket keeps links as long as the set-up's link life: setting up again with
/// another life brings an existing bucket's age to it, and a service whose links would
/// outlive the bucket's age offers them for the bucket's age, as the bucket keeps them.
#[tokio::test]
async fn the_link_bucket_s_age_follows_the_link_life_and_bounds_it() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = start(&nats, dir.path(), &smtp, |c| {
        c.signup.link_ttl = Duration::from_secs(48 * 3600);
    })
    .await;
    let mut fay = Visitor::new(&app);
    fay.subscribe("fay@example.com", "trial").await;
    let confirmation = smtp.message(1).await;
    assert!(
        confirmation.contains("within 24 hours"),
        "a link the bucket keeps 24 hours: {confirmation}"
    );
    app.stop().await;

    // Set up again, by a service with the set-up's credentials, with links of 3 hours.
    let dir = TempDir::new().expect("temp dir");
    let app = start(&nats, dir.path(), &smtp, |c| {
        c.nats_setup = Some(nats.auth(racing::nats::Role::Setup));
        c.signup.link_ttl = Duration::from_secs(3 * 3600);
    })
    .await;
    assert_eq!(
        link_bucket(&nats).await.config.max_age,
        Duration::from_secs(3 * 3600)
    );
    app.stop().await;
}

/// Form posts are counted per IPv4 /24 and per IPv6 /32 too, so that a pool of addresses
/// in one network cannot spread its posts over them: 100 an hour from a /24 (of at most
/// 20 a client), 500 from a /32 (of at most 200 a /48), by default.
#[tokio::test]
async fn form_posts_count_per_ipv4_24_and_per_ipv6_32_as_well() {
    let nats = Nats::start().await;
    let smtp = Smtp::start().await;
    let dir = TempDir::new().expect("temp dir");
    let app = start(&nats, dir.path(), &smtp, |c| {
        c.signup.trusted_proxies =
            racing::subscribe::clients::TrustedProxies::parse("127.0.0.1").expect("a list");
    })
    .await;
    let mut visitor = Visitor::new(&app);
    visitor.open(&format!("{}/", app.base)).await;
    let mut post_from = async |ip: String, n: u32| {
        visitor.forwarded_for = Some(ip);
        let email = format!("gil{n}@example.com");
        visitor
            .post("/keys/replace", &[("email", email.as_str())])
            .await
    };
    // A post from each of 101 addresses of one /24.
    let mut refused = None;
    for n in 1..=101u32 {
        let (status, page) = post_from(format!("203.0.113.{n}"), n).await;
        if status != StatusCode::OK {
            assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{page}");
            refused = Some(n);
            break;
        }
    }
    assert_eq!(refused, Some(101), "the /24 is not limited");
    assert_eq!(
        post_from("203.0.114.1".to_owned(), 0).await.0,
        StatusCode::OK,
        "another /24"
    );
    // A post from each of 501 /48s of one /32.
    let mut refused = None;
    for n in 0..=500u32 {
        let (status, page) = post_from(format!("2001:db8:{n:x}::1"), 1000 + n).await;
        if status != StatusCode::OK {
            assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{page}");
            refused = Some(n);
            break;
        }
    }
    assert_eq!(refused, Some(500), "the /32 is not limited");
    assert_eq!(
        post_from("2001:db9::1".to_owned(), 1).await.0,
        StatusCode::OK,
        "another /32"
    );
}
