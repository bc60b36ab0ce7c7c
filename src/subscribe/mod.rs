//! Subscribing on the pricing page (`docs/api.md`, Keys): the plans and the forms at
//! `/` and `/pricing`, with no key; double opt-in by e-mail, after which the key is sent
//! to the confirmed address; and self-service replacement of a lost or compromised key.
//!
//! Keys are made through the key registry, so every replica accepts them at once;
//! subscriber records and the single-use links live in NATS beside them ([`store`]).
//! A key appears only in the message that carries it: never in a page, a URL or a log.

pub mod clients;
pub mod confirmed;
pub mod csrf;
pub mod mail;
pub mod pages;
pub mod plans;
pub mod store;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, DefaultBodyLimit, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Form, Router};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde::Deserialize;

use crate::keys::registry::Registry;
use csrf::{Csrf, Refusal};
use mail::Mailer;
use plans::Plans;
use store::{LinkError, Pending, Store};

/// Where the links in messages lead: a page with one button, which posts back here.
/// Short, so that a link fits a line of a plain-text message.
const CONFIRM: &str = "/confirm";

/// Largest form body read, bytes.
const MAX_FORM_BYTES: usize = 8 * 1024;
/// Replacement offers looked up and mailed at once; the others wait their turn.
const REPLACEMENT_OFFERS: usize = 16;
/// Longest name or company kept, characters.
const MAX_NAME_CHARS: usize = 100;

/// How the subscription pages behave.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The plans on offer.
    pub plans: Plans,
    /// `None`: mail goes to an outbox under the data directory.
    pub smtp_url: Option<String>,
    /// The sender of every message.
    pub mail_from: String,
    /// The base of the links in messages and of the pricing page's example, e.g.
    /// `https://racing.example.com`.
    pub public_url: String,
    /// How the pricing page tells visitors to reach the operator about the plans sold by
    /// contact: an e-mail or web address, or any text; `None`: "the operator of this
    /// service".
    pub contact: Option<String>,
    /// How long a link in a message may be followed; at most the link bucket's age, which
    /// keeps a link that long (the service takes the lesser at start).
    pub link_ttl: Duration,
    /// Most keys one address may hold (one per plan).
    pub max_keys_per_address: usize,
    /// How long a replaced key keeps working when not compromised.
    pub grace: Duration,
    /// Form posts per client address per hour.
    pub posts_per_client_hour: u32,
    /// Form posts per IPv6 /48 per hour, its /64 clients together.
    pub posts_per_network_hour: u32,
    /// Form posts per IPv6 /32 per hour, its /48s together.
    pub posts_per_ipv6_32_hour: u32,
    /// Form posts per IPv4 /24 per hour, its addresses together.
    pub posts_per_ipv4_24_hour: u32,
    /// Percent of the link bucket that subscription posts leave free, for replacement
    /// links: sign-ups that fill the rest never close key replacement.
    pub reserve_percent: u32,
    /// Replacement links that may wait to be followed for one subscriber at once, so that
    /// replacement posts cannot fill the reserve either.
    pub replacement_links: usize,
    /// Messages per e-mail address per hour (its sub-addresses, `name+tag@`, counted
    /// as one).
    pub mails_per_address_hour: u32,
    /// The proxies whose forwarding header names the client of a form post.
    pub trusted_proxies: clients::TrustedProxies,
}

impl Settings {
    /// Form posts an hour allowed from one network of `prefix`, its clients together.
    pub fn per_network_hour(&self, prefix: clients::Prefix) -> u32 {
        match prefix {
            clients::Prefix::Ipv4_24 => self.posts_per_ipv4_24_hour,
            clients::Prefix::Ipv6_48 => self.posts_per_network_hour,
            clients::Prefix::Ipv6_32 => self.posts_per_ipv6_32_hour,
        }
    }
}

/// The subscription flow, shared by its handlers.
pub struct Signup {
    settings: Settings,
    store: Store,
    registry: Registry,
    mailer: Arc<Mailer>,
    csrf: Csrf,
    by_client: Limiter<clients::Client>,
    /// One limit per wider network a client is in.
    by_network: [(clients::Prefix, Limiter<clients::Network>); 3],
    by_address: Limiter<String>,
    /// Replacement offers being looked up and mailed, after their pages were sent.
    replacing: tokio::sync::Semaphore,
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

    fn link(&self, token: &str) -> String {
        format!(
            "{}{CONFIRM}?t={token}",
            self.settings.public_url.trim_end_matches('/')
        )
    }

    /// How long a link may be followed, as a message says it: `24 hours`, `1 hour`.
    fn hours(&self) -> String {
        let hours = self.settings.link_ttl.as_secs().div_ceil(3600);
        crate::text::count(hours, "hour", "hours")
    }
}

/// The public pages: paths the API pipeline hands over without a key.
pub fn routes(signup: Arc<Signup>) -> Router {
    Router::new()
        .route("/", get(pricing))
        .route("/pricing", get(pricing))
        .route("/subscribe", axum::routing::post(subscribe))
        .route("/keys/replace", axum::routing::post(replace))
        .route(CONFIRM, get(link_page).post(follow))
        .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
        .with_state(signup)
}

/// The public pages' paths, each answered without a key.
pub const PUBLIC_PAGES: [&str; 5] = ["/", "/pricing", "/subscribe", "/keys/replace", CONFIRM];

/// An HTML answer.
fn html(status: StatusCode, body: String) -> Response {
    let mut response = (status, Html(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Nothing may frame the forms, and the pages load nothing from elsewhere.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    response
}

fn problem(status: StatusCode, title: &str, text: &str) -> Response {
    html(status, pages::message(title, text))
}

/// The 429 page: when to come back.
fn too_many(wait: Duration) -> Response {
    let minutes = wait.as_secs().div_ceil(60).max(1);
    let mut response = problem(
        StatusCode::TOO_MANY_REQUESTS,
        "Too many requests",
        &format!(
            "Please come back in {}.",
            crate::text::count(minutes, "minute", "minutes")
        ),
    );
    if let Ok(v) = HeaderValue::from_str(&wait.as_secs().max(1).to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// The 503 page of a form while the link bucket is full: nothing was recorded or sent.
fn full() -> Response {
    let mut response = problem(
        StatusCode::SERVICE_UNAVAILABLE,
        "Too many forms are waiting",
        "More links are waiting to be followed than this site keeps just now, so this \
         form was not taken and nothing was sent. Please try again in an hour.",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("3600"));
    response
}

/// Keys in a limiter's map below which it is never pruned.
const PRUNE_FROM: usize = 10_000;

/// An hourly limit per key whose map is pruned of the keys whose limit has filled up
/// again, so a flood of distinct keys does not grow it for ever; pruned only once it has
/// doubled since the last prune, so that the walk over the map costs each post O(1)
/// amortised rather than O(n) once it is large.
struct Limiter<K: std::hash::Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
    /// The map's length past which the next post prunes it.
    prune_past: AtomicUsize,
}

impl<K: std::hash::Hash + Eq + Clone> Limiter<K> {
    /// `n` posts an hour per key, all at once if need be.
    fn per_hour(n: u32) -> Limiter<K> {
        let n = NonZeroU32::new(n.max(1)).unwrap_or(NonZeroU32::MIN);
        Limiter::new(Quota::per_hour(n).allow_burst(n))
    }

    fn new(quota: Quota) -> Limiter<K> {
        Limiter {
            limiter: RateLimiter::keyed(quota),
            prune_past: AtomicUsize::new(PRUNE_FROM),
        }
    }

    /// Counts a post of `key`: the 429 page if its limit is spent.
    fn check(&self, key: &K) -> Option<Response> {
        use governor::clock::{Clock, DefaultClock};
        if self.limiter.len() > self.prune_past.load(Ordering::Relaxed) {
            self.limiter.retain_recent();
            let left = self.limiter.len();
            self.prune_past
                .store(left.saturating_mul(2).max(PRUNE_FROM), Ordering::Relaxed);
        }
        self.limiter
            .check_key(key)
            .err()
            .map(|not_until| too_many(not_until.wait_time_from(DefaultClock::default().now())))
    }
}

/// The form cookie of a request, if any.
fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == csrf::COOKIE)
        .map(|(_, value)| value.to_owned())
        .filter(|v| v.len() == 32 && v.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A page with a form: the cookie the request carried, or a fresh one set with it, and
/// the token of that cookie.
fn with_form(signup: &Signup, headers: &HeaderMap, make: impl FnOnce(&str) -> String) -> Response {
    let (value, fresh) = match cookie(headers) {
        Some(v) => (v, false),
        None => (Csrf::cookie(), true),
    };
    let token = signup
        .csrf
        .token(&value, jiff::Timestamp::now().as_second());
    let mut response = html(StatusCode::OK, make(&token));
    if fresh {
        let set = format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=7200",
            csrf::COOKIE
        );
        if let Ok(v) = HeaderValue::from_str(&set) {
            response.headers_mut().insert(header::SET_COOKIE, v);
        }
    }
    response
}

/// A post's form token checked against its cookie: the page that refuses it, if it does
/// not hold.
fn forged(signup: &Signup, headers: &HeaderMap, token: Option<&str>) -> Option<Response> {
    let now = jiff::Timestamp::now().as_second();
    match signup.csrf.check(cookie(headers).as_deref(), token, now) {
        Ok(()) => None,
        Err(Refusal::Missing) => Some(problem(
            StatusCode::FORBIDDEN,
            "This form cannot be accepted",
            "It did not come from this site's page, or your browser refused its cookie. \
             Open the page again and resend it.",
        )),
        Err(Refusal::Stale) => Some(problem(
            StatusCode::FORBIDDEN,
            "This form has expired",
            "It was open for more than two hours. Open the page again and resend it.",
        )),
    }
}

/// Counts a post of `form` refused for `reason` in `racing_form_posts_refused_total`, so
/// that an operator sees which bound holds; returns the page that refuses it.
fn refused(form: &'static str, reason: &'static str, page: Response) -> Response {
    metrics::counter!("racing_form_posts_refused_total", "form" => form, "reason" => reason)
        .increment(1);
    page
}

/// What a post of `form` that asks for mail passes first: its token, then the client's
/// hourly limit, then those of the wider networks it is in (an IPv4 /24; an IPv6 /48 and
/// /32). The page that refuses it, if one fails.
fn refused_post(
    signup: &Signup,
    headers: &HeaderMap,
    csrf: Option<&str>,
    peer: SocketAddr,
    form: &'static str,
) -> Option<Response> {
    if let Some(page) = forged(signup, headers, csrf) {
        return Some(refused(form, "token", page));
    }
    let client = signup.settings.trusted_proxies.client(peer, headers);
    if let Some(page) = signup.by_client.check(&client) {
        return Some(refused(form, "client", page));
    }
    signup.by_network.iter().find_map(|(prefix, limiter)| {
        let page = limiter.check(&client.network(*prefix)?)?;
        Some(refused(form, prefix.name(), page))
    })
}

fn internal(e: anyhow::Error) -> Response {
    tracing::error!(error = format!("{e:#}"), "subscription flow");
    problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        "Nothing was changed. Please try again in a few minutes.",
    )
}

async fn pricing(State(signup): State<Arc<Signup>>, headers: HeaderMap) -> Response {
    with_form(&signup, &headers, |token| {
        pages::pricing(&signup.settings, token, "/docs")
    })
}

#[derive(Deserialize)]
struct SubscribeForm {
    csrf: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    plan: String,
    terms: Option<String>,
}

async fn subscribe(
    State(signup): State<Arc<Signup>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<SubscribeForm>,
) -> Response {
    if let Some(page) = refused_post(&signup, &headers, form.csrf.as_deref(), peer, "subscribe") {
        return page;
    }
    let bad = |text: &str| problem(StatusCode::BAD_REQUEST, "Please check the form", text);
    let name = form.name.trim();
    if name.is_empty()
        || name.chars().count() > MAX_NAME_CHARS
        || name.chars().any(char::is_control)
    {
        return bad("A name or company of 1 to 100 characters is needed.");
    }
    let email = match store::check_address(&form.email) {
        Ok(e) => e,
        Err(_) => return bad("That is not an e-mail address."),
    };
    let Some(plan) = signup
        .settings
        .plans
        .get(&form.plan)
        .filter(|p| p.self_service)
    else {
        return bad("Choose one of the plans on the page.");
    };
    if form.terms.as_deref() != Some("yes") {
        return bad("The terms of use must be accepted to subscribe.");
    }
    if let Some(page) = signup.by_address.check(&store::mailbox(&email)) {
        return refused("subscribe", "mailbox", page);
    }
    // Sign-ups leave the reserve free, for replacement links.
    let reserve = signup.settings.reserve_percent;
    match signup.store.has_room(reserve).await {
        Ok(true) => {}
        Ok(false) => return refused("subscribe", "room", full()),
        Err(e) => return internal(e),
    }
    let pending = Pending::Subscribe {
        email: email.clone(),
        name: name.to_owned(),
        plan: plan.id.clone(),
    };
    let token = match signup.store.issue(pending, signup.settings.link_ttl).await {
        Ok(t) => t,
        // Another post, here or on another replica, may have taken the last room.
        Err(e) if matches!(signup.store.has_room(reserve).await, Ok(false)) => {
            tracing::warn!(error = format!("{e:#}"), "the link bucket is full");
            return refused("subscribe", "room", full());
        }
        Err(e) => return internal(e),
    };
    // The name is anyone's text until the address is confirmed: it goes in no mail
    // before that, so the form cannot carry a stranger's message to any address.
    let body = format!(
        "Hello,\n\nto confirm your subscription to the {} plan of the racing data \
         service, open this link within {} and press the button:\n\n{}\n\n\
         If you did not ask for this, ignore this message: nothing happens without it.\n",
        plan.name,
        signup.hours(),
        signup.link(&token)
    );
    if let Err(e) = signup
        .mailer
        .send(&email, "Confirm your racing data subscription", body)
    {
        return internal(e);
    }
    html(
        StatusCode::OK,
        pages::message(
            "Check your e-mail",
            &format!(
                "We sent a link to {email} to confirm the address. Your key comes in the \
                 next message once you have followed it, within {}.",
                signup.hours()
            ),
        ),
    )
}

#[derive(Deserialize)]
struct LinkQuery {
    t: Option<String>,
}

#[derive(Deserialize)]
struct LinkForm {
    csrf: Option<String>,
    #[serde(default)]
    token: String,
    /// A replacement link's box: stop the current keys at once.
    compromised: Option<String>,
}

fn link_problem(error: LinkError) -> Response {
    match error {
        LinkError::Damaged => problem(
            StatusCode::BAD_REQUEST,
            "This link is incomplete",
            "Part of it was lost or changed on the way here. Copy the whole link from the \
             message, or open it from the message itself.",
        ),
        LinkError::Unknown => problem(
            StatusCode::GONE,
            "This link cannot be used",
            "It was used already, or it was never sent. Each link works once.",
        ),
        LinkError::Expired => problem(
            StatusCode::GONE,
            "This link has expired",
            "Send the form again for a fresh link.",
        ),
    }
}

/// The page behind a link: what it will do, and a button to do it (a mail scanner that
/// fetches the link uses nothing up).
async fn link_page(
    State(signup): State<Arc<Signup>>,
    headers: HeaderMap,
    Query(query): Query<LinkQuery>,
) -> Response {
    let token = query.t.unwrap_or_default();
    let pending = match signup.store.peek(&token).await {
        Err(e) => return internal(e),
        Ok(Err(e)) => return link_problem(e),
        Ok(Ok(pending)) => pending,
    };
    // Whoever holds the mailbox may stop the current keys at once from any replacement
    // link, whatever the form that sent it asked: a stranger's posts, which may have sent
    // the links the subscriber has, never leave it without a way to revoke a key now.
    let offer_stop = matches!(
        pending,
        Pending::Replace {
            compromised: false,
            ..
        }
    );
    let (title, text) = match &pending {
        Pending::Subscribe { email, plan, .. } => (
            "Confirm subscription",
            format!(
                "Confirm {email} for the {} plan; your key is sent to that address.",
                signup
                    .settings
                    .plans
                    .get(plan)
                    .map_or(plan.as_str(), |p| p.name.as_str())
            ),
        ),
        Pending::Replace {
            email,
            compromised: true,
        } => (
            "Replace my key",
            format!("New keys for {email}; the current ones stop working at once."),
        ),
        Pending::Replace { email, .. } => (
            "Replace my key",
            format!("New keys for {email}; the current ones keep working for a while."),
        ),
    };
    with_form(&signup, &headers, |csrf| {
        pages::confirm(title, &text, CONFIRM, &token, csrf, offer_stop)
    })
}

/// Follows a link: once, whichever replica answers.
async fn follow(
    State(signup): State<Arc<Signup>>,
    headers: HeaderMap,
    Form(form): Form<LinkForm>,
) -> Response {
    if let Some(page) = forged(&signup, &headers, form.csrf.as_deref()) {
        return page;
    }
    let pending = match signup.store.consume(&form.token).await {
        Err(e) => return internal(e),
        Ok(Err(e)) => return link_problem(e),
        Ok(Ok(p)) => p,
    };
    let done = match pending {
        Pending::Subscribe { email, name, plan } => {
            confirmed::subscribe(&signup, &email, &name, &plan).await
        }
        Pending::Replace { email, compromised } => {
            let stop = compromised || form.compromised.as_deref() == Some("yes");
            confirmed::replace(&signup, &email, stop).await
        }
    };
    match done {
        Ok(done) => html(done.status, pages::message(done.title, &done.text)),
        Err(e) => internal(e),
    }
}

#[derive(Deserialize)]
struct ReplaceForm {
    csrf: Option<String>,
    #[serde(default)]
    email: String,
    compromised: Option<String>,
}

async fn replace(
    State(signup): State<Arc<Signup>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<ReplaceForm>,
) -> Response {
    if let Some(page) = refused_post(&signup, &headers, form.csrf.as_deref(), peer, "replace") {
        return page;
    }
    let Ok(email) = store::check_address(&form.email) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "Please check the form",
            "That is not an e-mail address.",
        );
    };
    if let Some(page) = signup.by_address.check(&store::mailbox(&email)) {
        return refused("replace", "mailbox", page);
    }
    // Asked whoever posts, so that the answer tells nothing of the address. A replacement
    // may take the whole bucket, the reserve that sign-ups leave free included.
    match signup.store.has_room(0).await {
        Ok(true) => {}
        Ok(false) => return refused("replace", "room", full()),
        Err(e) => return internal(e),
    }
    let compromised = form.compromised.as_deref() == Some("yes");
    // The answer, and the work done before it, are the same whether or not the address
    // subscribed, so that neither the page nor its timing tells anybody who did: the
    // look-up and the mail happen after it, off the request.
    let page = html(
        StatusCode::OK,
        pages::message(
            "Check your e-mail",
            &format!(
                "If {email} holds a key, we sent a link to replace it, valid for {}, to \
                 the address that subscribed.",
                signup.hours()
            ),
        ),
    );
    let job = signup.clone();
    tokio::spawn(async move {
        let _running = match job.replacing.acquire().await {
            Ok(permit) => permit,
            Err(_) => return,
        };
        if let Err(e) = confirmed::offer(&job, &email, compromised).await {
            tracing::error!(error = format!("{e:#}"), "offering a key replacement");
        }
    });
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_map_is_pruned_only_once_it_has_doubled() {
        let quota = Quota::with_period(Duration::from_millis(200)).expect("a period");
        let limiter = Limiter::new(quota);
        for n in 0..10_001u32 {
            let _ = limiter.limiter.check_key(&n);
        }
        // Past 10,000 keys, the first post prunes: none has filled up again yet.
        assert!(limiter.check(&u32::MAX).is_none());
        assert!(limiter.limiter.len() > 10_000);
        // A key is forgotten once its period has passed twice over.
        std::thread::sleep(Duration::from_millis(600));
        // Every key has filled up again, but the map has not doubled since: no walk.
        assert!(limiter.check(&(u32::MAX - 1)).is_none());
        assert!(
            limiter.limiter.len() > 10_000,
            "the whole map walked again: {} keys left",
            limiter.limiter.len()
        );
        // Once it has doubled, it is pruned.
        for n in 10_001..20_010u32 {
            let _ = limiter.limiter.check_key(&n);
        }
        std::thread::sleep(Duration::from_millis(600));
        assert!(limiter.check(&(u32::MAX - 2)).is_none());
        assert!(limiter.limiter.len() < 10, "{}", limiter.limiter.len());
    }
}
