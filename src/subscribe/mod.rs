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
mod limiter;
pub mod mail;
pub mod pages;
pub mod plans;
mod responses;
pub(crate) mod settings;
pub(crate) mod signup;
pub mod store;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, DefaultBodyLimit, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::{Form, Router};
use serde::Deserialize;

use csrf::{Csrf, Refusal};
use responses::{full, html, problem};
use signup::{Signup, CONFIRM};
use store::{LinkError, Pending};

/// Largest form body read, bytes.
const MAX_FORM_BYTES: usize = 8 * 1024;
/// Longest name or company kept, characters.
const MAX_NAME_CHARS: usize = 100;

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
