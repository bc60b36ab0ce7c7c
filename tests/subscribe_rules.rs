//! The rules the subscription flow keeps whoever asks: an operator's revocation is never
//! undone by the lost-key form, mail about a subscription goes to the address that
//! subscribed, the stores behind the forms are bounded, and a key whose mail could not be
//! written is said to exist. Against a real SMTP server, as `subscribe.rs`.

use std::time::Duration;

use reqwest::StatusCode;
use tempfile::TempDir;

use crate::subscribe::{api, api_becomes, key_in, start, todays_card, Smtp, Visitor};
use crate::support::Nats;

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
    let app = start(&nats, dir.path(), &smtp, |_| {}).await;
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
    // The replacement form says the same, whoever asks.
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
    let setup = racing::nats::Connection::open(
        &nats.url(),
        &nats.auth(racing::nats::Role::Setup),
        racing::nats::Role::Setup,
        racing::retry::PATIENCE,
    )
    .await
    .expect("the set-up connects");
    let settings = racing::nats::StreamSettings {
        name: "RACING".to_owned(),
        duplicate_window: Duration::from_secs(120),
        replicas: None,
    };
    racing::nats::set_up(&setup, &settings)
        .await
        .expect("set up again");
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
