//! What the subscription flow keeps in NATS, beside the keys, so that every replica shares
//! it: one record per subscriber address in `{stream}_SUBSCRIBERS` (who, which plans,
//! when, the prefix of each key), and the single-use links waiting to be followed in
//! `{stream}_SIGNUPS`, which JetStream forgets after a week and which holds at most
//! 64 MiB ([`Store::has_room`]).

use std::time::Duration;

use anyhow::{bail, Context as _};
use async_nats::jetstream::{self, kv};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::keys::{hex, unhex};

/// Room a link record needs in its bucket, its largest (a 254-byte address, a
/// 100-character name) with its subject and headers and some to spare: the forms refuse
/// a post once less is left, before the bucket itself would, so that a server that drops
/// old records to make room (as nats-server 2.9 does for a limit set on a bucket after it
/// was made) never loses a link that was sent.
const LINK_ROOM: u64 = 2048;

/// A subscriber: an address and the plans it holds a key of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscriber {
    /// The address, as confirmed.
    pub email: String,
    /// The name or company given.
    pub name: String,
    /// One per plan subscribed.
    pub subscriptions: Vec<Subscription>,
}

/// One confirmed subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    /// The plan's id.
    pub plan: String,
    /// The id of its current key (`rk_` + this is the prefix).
    pub key_id: String,
    /// RFC 3339: when it was confirmed.
    pub confirmed_at: String,
    /// RFC 3339: when its key was last replaced, if ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_at: Option<String>,
    /// The ids of the keys it replaced that may still work (in their grace period, or not
    /// yet retired when a replacement was cut short): a compromised replacement revokes
    /// them with the current one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous: Vec<String>,
}

/// What following a link does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pending {
    /// Confirms a subscription: a key of `plan` for `email`.
    Subscribe {
        /// The address to confirm.
        email: String,
        /// The name or company given.
        name: String,
        /// The plan asked for.
        plan: String,
    },
    /// Replaces every key of `email`; the old ones are revoked at once if `compromised`.
    Replace {
        /// The subscriber's address.
        email: String,
        /// Whether the subscriber said the key is compromised.
        compromised: bool,
    },
}

#[derive(Serialize, Deserialize)]
struct PendingRecord {
    #[serde(flatten)]
    pending: Pending,
    /// RFC 3339.
    expires_at: String,
}

/// Why a link was not followed.
#[derive(Debug, PartialEq, Eq)]
pub enum LinkError {
    /// Not a token such as links carry, even without the white space a copy may add
    /// around it: a link cut short or changed on its way.
    Damaged,
    /// Never issued, or already used.
    Unknown,
    /// Issued, but past its expiry.
    Expired,
}

/// The subscription buckets of a stream.
#[derive(Clone)]
pub struct Store {
    subscribers: kv::Store,
    signups: kv::Store,
}

impl Store {
    /// Opens `{stream}_SUBSCRIBERS` and `{stream}_SIGNUPS`, which the set-up made.
    pub async fn open(js: &jetstream::Context, stream: &str) -> anyhow::Result<Store> {
        use crate::nats::buckets::{SIGNUPS, SUBSCRIBERS};
        Ok(Store {
            subscribers: SUBSCRIBERS.open(js, stream).await?,
            signups: SIGNUPS.open(js, stream).await?,
        })
    }

    /// The secret every replica signs its forms' tokens with: made by the first replica
    /// that asks (create-if-absent), read by the others.
    pub async fn form_secret(&self) -> anyhow::Result<[u8; 32]> {
        let fresh: [u8; 32] = rand::random();
        let key = "secret.forms";
        // Another replica may make it at the same moment: reading is what counts.
        let created = self.subscribers.create(key, hex(&fresh).into()).await;
        let stored = match (self.subscribers.get(key).await?, created) {
            (Some(stored), _) => stored,
            (None, Err(e)) => return Err(anyhow::Error::new(e).context("making the form secret")),
            (None, Ok(_)) => anyhow::bail!("the form secret was made, then not found"),
        };
        std::str::from_utf8(&stored)
            .ok()
            .and_then(unhex)
            .context("an unreadable form secret")
    }

    /// The record of `email`, with its revision for [`Store::save`].
    /// Sub-addresses of one mailbox share one record.
    pub async fn subscriber(&self, email: &str) -> anyhow::Result<Option<(Subscriber, u64)>> {
        let key = address_key(email);
        let found = match self.subscribers.entry(&key).await? {
            Some(entry) if entry.operation == kv::Operation::Put => Some(entry),
            _ => self.move_record_of_sub_address(email, &key).await?,
        };
        let Some(entry) = found else {
            return Ok(None);
        };
        let record =
            serde_json::from_slice(&entry.value).context("an unreadable subscriber record")?;
        Ok(Some((record, entry.revision)))
    }

    /// A record kept under a sub-address's own key, as records were before sub-addresses
    /// shared their mailbox's, moved to the mailbox's key (`key`).
    async fn move_record_of_sub_address(
        &self,
        email: &str,
        key: &str,
    ) -> anyhow::Result<Option<kv::Entry>> {
        let old = exact_address_key(email);
        if old == key {
            return Ok(None);
        }
        let value = match self.subscribers.entry(&old).await? {
            Some(entry) if entry.operation == kv::Operation::Put => entry.value,
            _ => return Ok(None),
        };
        if let Err(e) = self.subscribers.create(key, value).await {
            if e.kind() != kv::CreateErrorKind::AlreadyExists {
                return Err(e.into());
            }
            // Another sub-address's record is there already: the mailbox keeps that one.
        }
        self.subscribers.delete(&old).await?;
        Ok(self.subscribers.entry(key).await?)
    }

    /// Writes `record`: created if `revision` is `None`, else only if it is still at
    /// `revision` (another replica may have changed it meanwhile: then an error). Returns
    /// the revision written.
    pub async fn save(&self, record: &Subscriber, revision: Option<u64>) -> anyhow::Result<u64> {
        let key = address_key(&record.email);
        let bytes = serde_json::to_vec(record)?.into();
        Ok(match revision {
            None => self.subscribers.create(&key, bytes).await?,
            Some(r) => self.subscribers.update(&key, bytes, r).await?,
        })
    }

    /// Whether the link bucket has room for another link; the forms are refused while it
    /// has not (see [`LINK_ROOM`]).
    pub async fn has_room(&self) -> anyhow::Result<bool> {
        let info = self
            .signups
            .stream
            .get_info()
            .await
            .context("asking the size of the link bucket")?;
        let Ok(most) = u64::try_from(info.config.max_bytes) else {
            return Ok(true);
        };
        Ok(most == 0 || info.state.bytes.saturating_add(LINK_ROOM) <= most)
    }

    /// Records a link to follow within `ttl`; returns its token, which only the e-mail
    /// carries (the bucket holds its hash).
    pub async fn issue(&self, pending: Pending, ttl: Duration) -> anyhow::Result<String> {
        let token = format!("{:032x}", rand::random::<u128>());
        let expires = jiff::Timestamp::now()
            + jiff::SignedDuration::try_from(ttl).unwrap_or(jiff::SignedDuration::ZERO);
        let record = PendingRecord {
            pending,
            expires_at: expires.to_string(),
        };
        self.signups
            .create(token_key(&token), serde_json::to_vec(&record)?.into())
            .await
            .context("recording the link")?;
        Ok(token)
    }

    /// What the link of `token` is for, without using it.
    pub async fn peek(&self, token: &str) -> anyhow::Result<Result<Pending, LinkError>> {
        Ok(self.lookup(token).await?.map(|(pending, _)| pending))
    }

    /// Uses the link of `token`: once only, on whichever replica, and before it expires.
    pub async fn consume(&self, token: &str) -> anyhow::Result<Result<Pending, LinkError>> {
        let token = token.trim();
        let (pending, revision) = match self.lookup(token).await? {
            Ok(found) => found,
            Err(e) => return Ok(Err(e)),
        };
        // Deleting at the revision read: of two replicas following the same link at
        // once, one deletes it and the other is refused.
        match self
            .signups
            .delete_expect_revision(token_key(token), Some(revision))
            .await
        {
            Ok(()) => Ok(Ok(pending)),
            Err(_) => Ok(Err(LinkError::Unknown)),
        }
    }

    async fn lookup(&self, token: &str) -> anyhow::Result<Result<(Pending, u64), LinkError>> {
        // A link copied out of a message often brings a line end (`%0D`) or a space.
        let token = token.trim();
        if token.len() != 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Err(LinkError::Damaged));
        }
        let Some(entry) = self.signups.entry(token_key(token)).await? else {
            return Ok(Err(LinkError::Unknown));
        };
        if entry.operation != kv::Operation::Put {
            return Ok(Err(LinkError::Unknown));
        }
        let record: PendingRecord =
            serde_json::from_slice(&entry.value).context("an unreadable link record")?;
        let expired = record
            .expires_at
            .parse::<jiff::Timestamp>()
            .map_or(true, |t| t <= jiff::Timestamp::now());
        if expired {
            return Ok(Err(LinkError::Expired));
        }
        Ok(Ok((record.pending, entry.revision)))
    }
}

/// An address as compared: trimmed and lower-cased.
pub fn normalise(email: &str) -> String {
    email.trim().to_lowercase()
}

/// The mailbox an address delivers to, as the per-address limits count it: the address
/// without its sub-address tag (`ann+news@example.com` is `ann@example.com`).
pub fn mailbox(email: &str) -> String {
    let email = normalise(email);
    if let Some((local, domain)) = email.rsplit_once('@') {
        if let Some((user, _tag)) = local.split_once('+') {
            if !user.is_empty() {
                return format!("{user}@{domain}");
            }
        }
    }
    email
}

/// A subscriber's record name: a hash of the mailbox, so no address is a bucket key and
/// the sub-addresses of one mailbox share one record (and its cap on keys).
fn address_key(email: &str) -> String {
    exact_address_key(&mailbox(email))
}

fn exact_address_key(email: &str) -> String {
    format!(
        "a.{}",
        hex(&Sha256::digest(normalise(email).as_bytes())[..16])
    )
}

fn token_key(token: &str) -> String {
    format!("t.{}", hex(&Sha256::digest(token.as_bytes())[..16]))
}

/// A subscriber record that holds a plan at most once.
pub fn holds<'a>(subscriber: &'a Subscriber, plan: &str) -> Option<&'a Subscription> {
    subscriber.subscriptions.iter().find(|s| s.plan == plan)
}

/// Checks an address as the form gives it: one `@`, no spaces or controls, 3 to 254
/// characters.
pub fn check_address(email: &str) -> anyhow::Result<String> {
    let email = normalise(email);
    let ok = (3..=254).contains(&email.len())
        && email.matches('@').count() == 1
        && !email.starts_with('@')
        && !email.ends_with('@')
        && !email
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '<' || c == '>')
        && email.parse::<lettre::Address>().is_ok();
    if !ok {
        bail!("that is not an e-mail address");
    }
    Ok(email)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_and_compared_lower_case() {
        assert_eq!(
            check_address(" Ann@Example.COM ").expect("an address"),
            "ann@example.com"
        );
        for bad in [
            "", "ann", "@x", "a@", "a b@c.d", "a@@b", "<a@b.c>", "a@b\n.c",
        ] {
            assert!(check_address(bad).is_err(), "{bad:?}");
        }
        assert_eq!(address_key("A@b.c"), address_key("a@B.C "));
        assert_eq!(mailbox("Ann+News@Example.com"), "ann@example.com");
        assert_eq!(
            address_key("ann+a@example.com"),
            address_key("ann@example.com")
        );
        assert_eq!(mailbox("+tag@example.com"), "+tag@example.com");
        assert_eq!(mailbox("ann@example.com"), "ann@example.com");
        assert_ne!(token_key("a"), token_key("b"));
    }
}
