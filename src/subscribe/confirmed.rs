//! What the subscription flow does once an address is confirmed: makes a subscription's
//! key, offers a replacement, and replaces keys when the offer's link is followed.
//!
//! Two rules hold throughout. Mail about an existing subscription goes to the address
//! stored on its record, only: a sub-address of the same mailbox (`bob+x@`) that asks is
//! never sent anything about it, and the pages name no address but the one typed. And an
//! operator's revocation of a subscription's key (`racing keys revoke`) is a ban: the
//! subscription stays on the record with its key revoked, no replacement replaces it,
//! and subscribing to its plan again makes no key; `racing keys unrevoke` is the only
//! way back. A compromised replacement revokes keys too, but only keys it has replaced,
//! never a subscription's current key, so it bans nothing.

use axum::http::StatusCode;

use super::signup::Signup;
use super::store::{self, Subscriber, Subscription};

/// What the page after a followed link says.
pub struct Done {
    /// Its status: 200, or 503 when a key was made but its mail could not be written.
    pub status: StatusCode,
    /// Its heading.
    pub title: &'static str,
    /// Its text.
    pub text: String,
}

impl Done {
    fn ok(title: &'static str, text: String) -> Done {
        Done {
            status: StatusCode::OK,
            title,
            text,
        }
    }
}

/// How a page names the address a mail went to: the one typed, or, when the record's
/// address is another (another sub-address of the mailbox), words that do not reveal it.
fn named(typed: &str, stored: &str) -> String {
    if typed == stored {
        typed.to_owned()
    } else {
        "the address that subscribed".to_owned()
    }
}

/// The site's address, without a trailing `/`.
fn site(signup: &Signup) -> &str {
    signup.settings.public_url.trim_end_matches('/')
}

/// Makes the key of a confirmed subscription and mails it; the page to show.
pub async fn subscribe(
    signup: &Signup,
    email: &str,
    name: &str,
    plan_id: &str,
) -> anyhow::Result<Done> {
    let plan = signup
        .settings
        .plans
        .get(plan_id)
        .ok_or_else(|| anyhow::anyhow!("plan {plan_id} is no longer offered"))?;
    // Two tries: another replica may write the same record in between.
    for _ in 0..2 {
        let existing = signup.store.subscriber(email).await?;
        if let Some((record, _)) = &existing {
            // A subscription whose key the operator revoked is held still: no new key.
            if let Some(held) = store::holds(record, plan_id) {
                return remind(signup, email, record, held, &plan.name)
                    .map(|text| Done::ok("Subscribed", text));
            }
            if record.subscriptions.len() >= signup.settings.max_keys_per_address {
                return Ok(Done::ok(
                    "Subscribed",
                    format!(
                        "{email} holds {} already, the most one address may hold.",
                        crate::text::count(record.subscriptions.len(), "key", "keys")
                    ),
                ));
            }
        }
        // A mailbox that subscribed before keeps its address: the key goes there.
        let to = existing
            .as_ref()
            .map_or(email.to_owned(), |(record, _)| record.email.clone());
        let (key, key_record) = signup
            .registry
            .create_for(name, plan.limits(), &to, plan_id)
            .await?;
        let subscription = Subscription {
            plan: plan_id.to_owned(),
            key_id: key_record.id.clone(),
            confirmed_at: racing_events::Instant::now(),
            replaced_at: None,
            previous: Vec::new(),
        };
        let (mut record, revision) = match existing {
            Some((record, revision)) => (record, Some(revision)),
            None => (
                Subscriber {
                    email: email.to_owned(),
                    name: name.to_owned(),
                    subscriptions: Vec::new(),
                },
                None,
            ),
        };
        record.subscriptions.push(subscription);
        if let Err(e) = signup.store.save(&record, revision).await {
            // Written meanwhile elsewhere: this key is not recorded, so it goes.
            tracing::warn!(error = %e, key = %key_record.prefix(), "subscriber record changed meanwhile; again");
            signup.registry.revoke(&key_record.id).await?;
            continue;
        }
        tracing::info!(key = %key_record.prefix(), plan = plan_id, "subscription confirmed");
        let body = key_mail(signup, name, plan, &key);
        // The key exists now: a mail that cannot be written is no reason to say otherwise.
        if let Err(e) = signup.mailer.send(&to, "Your racing data API key", body) {
            tracing::error!(error = format!("{e:#}"), key = %key_record.prefix(), "the mail of a new key could not be written");
            return Ok(Done {
                status: StatusCode::SERVICE_UNAVAILABLE,
                title: "Your key was made",
                text: format!(
                    "Your key of the {} plan was made, but the message that carries it \
                     could not be written just now. In a few minutes, ask for it with \
                     the \"Lost or compromised key\" form at {}/: a new key comes by \
                     mail to {}.",
                    plan.name,
                    site(signup),
                    named(email, &to)
                ),
            });
        }
        return Ok(Done::ok(
            "Subscribed",
            format!(
                "Your key of the {} plan has been sent to {}.",
                plan.name,
                named(email, &to)
            ),
        ));
    }
    anyhow::bail!("the subscriber record kept changing")
}

/// Mails the record's address a reminder that it holds a key of `plan` already; the
/// page's text.
fn remind(
    signup: &Signup,
    email: &str,
    record: &Subscriber,
    held: &Subscription,
    plan: &str,
) -> anyhow::Result<String> {
    let body = format!(
        "Hello {},\n\nyou already hold a key of the {plan} plan (it starts with rk_{}), so \
         no second key was made. If it is lost or someone else may have it, use the \
         \"Lost or compromised key\" form at {}/ for a new one.\n",
        record.name,
        held.key_id,
        site(signup)
    );
    signup
        .mailer
        .send(&record.email, "Your racing data subscription", body)?;
    Ok(format!(
        "{email} already holds a key of the {plan} plan; we sent a reminder of how to \
         replace it to {}.",
        named(email, &record.email)
    ))
}

/// The message that carries a new key of `plan`.
fn key_mail(signup: &Signup, name: &str, plan: &super::plans::Plan, key: &str) -> String {
    format!(
        "Hello {name},\n\nyour API key for the {} plan of the racing data service:\n\n\
         {key}\n\nSend it with every request in the X-API-Key header, for example:\n\n\
         curl -H 'X-API-Key: {key}' \\\n  {}/api/v1/racecards/today\n\n\
         It allows {} (bursts of {}) and {}. \
         Keep it secret; if it is lost or someone else may have it, replace it with the \
         form at {}/.\n",
        plan.name,
        site(signup),
        crate::text::count(plan.rate_per_sec, "request a second", "requests a second"),
        plan.burst,
        crate::text::count(
            plan.live_connections,
            "live odds connection",
            "live odds connections"
        ),
        site(signup),
    )
}

/// The indices of the subscriptions of `record` a replacement replaces: those whose
/// current key the operator has not revoked.
async fn replaceable(signup: &Signup, record: &Subscriber) -> anyhow::Result<Vec<usize>> {
    let mut out = Vec::with_capacity(record.subscriptions.len());
    for (i, subscription) in record.subscriptions.iter().enumerate() {
        let key = signup.registry.get(&subscription.key_id).await?;
        if key.revoked_at.is_none() {
            out.push(i);
        }
    }
    Ok(out)
}

/// Mails the address that subscribed with `email`'s mailbox a link to replace its keys,
/// if it holds any that a replacement replaces.
pub async fn offer(signup: &Signup, email: &str, compromised: bool) -> anyhow::Result<()> {
    let Some((record, _)) = signup.store.subscriber(email).await? else {
        return Ok(());
    };
    if replaceable(signup, &record).await?.is_empty() {
        return Ok(());
    }
    let most = signup.settings.replacement_links;
    let issued = signup
        .store
        .issue_replacement(email, compromised, most, signup.settings.link_ttl)
        .await?;
    let Some(token) = issued else {
        // The links waiting are the subscriber's to use: each can stop the keys at once.
        metrics::counter!("racing_replacement_links_withheld_total").increment(1);
        let body = format!(
            "Hello {},\n\na link to replace your racing data API keys was asked for, but \
             as many links as this site keeps waiting for one subscriber ({most}) were sent \
             to you in the last {} and are still waiting to be followed, so no new one was \
             sent. Use the newest of them: its page can also stop your current keys at \
             once.\n\nIf you did not ask for this, ignore this message: nothing changes \
             without it.\n",
            record.name,
            signup.hours(),
        );
        return signup
            .mailer
            .send(&record.email, "Replace your racing data API key", body);
    };
    let what = if compromised {
        "Your current keys stop working as soon as you do."
    } else {
        "Your current keys keep working for a day after that, so you can deploy the new ones \
         first; if someone else may have them, tick the box on that page to stop them at once."
    };
    let body = format!(
        "Hello {},\n\nto replace your racing data API keys, open this link within \
         {} and press the button:\n\n{}\n\n{what}\n\nIf you did not ask for \
         this, ignore this message: nothing changes without it.\n",
        record.name,
        signup.hours(),
        signup.link(&token)
    );
    signup
        .mailer
        .send(&record.email, "Replace your racing data API key", body)
}

/// The page of a replacement for an address with nothing to replace.
fn nothing_to_replace(email: &str) -> Done {
    Done::ok("Keys replaced", format!("{email} holds no key."))
}

/// Replaces every key of `email`'s record that is not banned and mails the new ones to
/// the record's address; the page to show. The replaced keys, and every older key still
/// working, are revoked at once if `compromised`, else left a grace period.
///
/// The subscriber record is the truth about which keys are in use, so it changes first:
/// the new keys are made (unknown to anyone yet), then the record is saved over the
/// revision it was read at, naming them and listing every key they replace; only then are
/// the old keys retired and the mail written. A failure before the save undoes the new
/// keys and changes nothing; one after it leaves the record naming the keys in use, with
/// any key not yet retired still listed, so the next replacement retires it.
pub async fn replace(signup: &Signup, email: &str, compromised: bool) -> anyhow::Result<Done> {
    let Some((mut record, revision)) = signup.store.subscriber(email).await? else {
        return Ok(nothing_to_replace(email));
    };
    let chosen = replaceable(signup, &record).await?;
    if chosen.is_empty() {
        return Ok(nothing_to_replace(email));
    }
    let mut issued = Vec::with_capacity(chosen.len());
    for &i in &chosen {
        match signup
            .registry
            .issue_like(&record.subscriptions[i].key_id)
            .await
        {
            Ok(new) => issued.push(new),
            Err(e) => {
                undo(signup, &issued).await;
                return Err(e);
            }
        }
    }
    let now = racing_events::Instant::now();
    let mut lines = Vec::with_capacity(issued.len());
    for (&i, (key, new)) in chosen.iter().zip(&issued) {
        let subscription = &mut record.subscriptions[i];
        let old = std::mem::replace(&mut subscription.key_id, new.id.clone());
        subscription.previous.push(old);
        subscription.replaced_at = Some(now.clone());
        let plan = signup
            .settings
            .plans
            .get(&subscription.plan)
            .map_or(subscription.plan.clone(), |p| p.name.clone());
        lines.push(format!("{plan} plan: {key}"));
    }
    let revision = match signup.store.save(&record, Some(revision)).await {
        Ok(revision) => revision,
        Err(e) => {
            undo(signup, &issued).await;
            return Err(e.context("the subscriber record changed meanwhile; nothing was replaced"));
        }
    };
    let fate = retire_previous(signup, &mut record, revision, compromised).await;
    // The new keys go out whatever else failed: the record names them now.
    let body = format!(
        "Hello {},\n\nyour new racing data API keys:\n\n{}\n\n{fate}\n",
        record.name,
        lines.join("\n")
    );
    let to = named(email, &record.email);
    if let Err(e) = signup
        .mailer
        .send(&record.email, "Your new racing data API key", body)
    {
        tracing::error!(
            error = format!("{e:#}"),
            "the mail of replaced keys could not be written"
        );
        return Ok(Done {
            status: StatusCode::SERVICE_UNAVAILABLE,
            title: "Keys replaced",
            text: format!(
                "Your keys were replaced, but the message that carries the new ones could \
                 not be written just now. {fate} In a few minutes, ask for new ones with \
                 the \"Lost or compromised key\" form at {}/: they come by mail to {to}.",
                site(signup)
            ),
        });
    }
    Ok(Done::ok(
        "Keys replaced",
        format!("New keys have been sent to {to}. {fate}"),
    ))
}

/// Retires the keys each subscription of `record` replaced, at once if `compromised`
/// (revoked: they are no current key, so this bans nothing), and records the ones still
/// working; what became of them, as the page and the mail say it.
async fn retire_previous(
    signup: &Signup,
    record: &mut Subscriber,
    revision: u64,
    compromised: bool,
) -> String {
    let grace = (!compromised).then_some(signup.settings.grace);
    let mut not_retired = 0;
    for subscription in &mut record.subscriptions {
        let mut still = Vec::new();
        for id in std::mem::take(&mut subscription.previous) {
            match signup.registry.retire(&id, grace).await {
                Ok(false) => {
                    tracing::info!(key = %format!("rk_{id}"), compromised, "replaced key retired")
                }
                Ok(true) => still.push(id),
                Err(e) => {
                    tracing::error!(error = format!("{e:#}"), key = %format!("rk_{id}"), "retiring a replaced key");
                    not_retired += 1;
                    still.push(id);
                }
            }
        }
        subscription.previous = still;
    }
    if let Err(e) = signup.store.save(record, Some(revision)).await {
        // The keys retired stay listed: retiring them again is harmless.
        tracing::warn!(error = format!("{e:#}"), "recording the retired keys");
    }
    if not_retired > 0 {
        format!(
            "{not_retired} of your old keys could not be {} just now; replace your keys \
             again in a few minutes to finish.",
            if compromised { "revoked" } else { "retired" }
        )
    } else if compromised {
        "Your old keys were revoked: they no longer work, and open live odds connections \
         made with them were closed."
            .to_owned()
    } else {
        format!(
            "Your old keys keep working for {}, then stop.",
            crate::text::count(signup.settings.grace.as_secs() / 3600, "hour", "hours")
        )
    }
}

/// Revokes keys made for a replacement that did not happen.
async fn undo(signup: &Signup, issued: &[(String, crate::keys::record::KeyRecord)]) {
    for (_, record) in issued {
        if let Err(e) = signup.registry.revoke(&record.id).await {
            tracing::error!(error = format!("{e:#}"), key = %record.prefix(), "revoking a key of a replacement undone");
        }
    }
}
