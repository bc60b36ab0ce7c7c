//! What the subscription flow keeps in NATS, beside the keys, so that every replica shares
//! it: one record per subscriber address in `{stream}_SUBSCRIBERS` (who, which plans,
//! when, the prefix of each key), and in `{stream}_SIGNUPS` the single-use links waiting
//! to be followed, with a count per subscriber of the replacement links among them. The
//! link bucket keeps a link for the links' life and holds at most 64 MiB, a share of which
//! only replacement links may fill ([`Store::has_room`]).

use std::time::Duration;

use anyhow::{bail, Context as _};
use async_nats::jetstream::{self, kv};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::keys::digest::{hex, unhex};

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

/// The replacement links of one mailbox waiting to be followed, so that their number is
/// bounded: each by its record's key and when it expires.
#[derive(Default, Serialize, Deserialize)]
struct Waiting {
    links: Vec<WaitingLink>,
}

#[derive(Serialize, Deserialize)]
struct WaitingLink {
    /// The link record's key in the bucket.
    key: String,
    /// Unix seconds.
    expires: i64,
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

    /// Whether the link bucket has room for another link with `reserve_percent` of it
    /// left free beside: the subscription form leaves the share kept for replacement links
    /// (so that sign-ups never close the replacement form), the replacement form none.
    /// A form is refused while there is no room (see [`LINK_ROOM`]).
    pub async fn has_room(&self, reserve_percent: u32) -> anyhow::Result<bool> {
        let info = self
            .signups
            .stream
            .get_info()
            .await
            .context("asking the size of the link bucket")?;
        let Ok(most) = u64::try_from(info.config.max_bytes) else {
            return Ok(true);
        };
        let reserve = most / 100 * u64::from(reserve_percent.min(100));
        Ok(most == 0
            || info
                .state
                .bytes
                .saturating_add(LINK_ROOM)
                .saturating_add(reserve)
                <= most)
    }

    /// How long the link bucket keeps a link; zero: for ever.
    pub async fn link_age(&self) -> anyhow::Result<Duration> {
        let info = self
            .signups
            .stream
            .get_info()
            .await
            .context("asking the age of the link bucket")?;
        Ok(info.config.max_age)
    }

    /// Records a link to follow within `ttl`; returns its token, which only the e-mail
    /// carries (the bucket holds its hash).
    pub async fn issue(&self, pending: Pending, ttl: Duration) -> anyhow::Result<String> {
        let token = new_token();
        self.record_link(&token, pending, expires(ttl)).await?;
        Ok(token)
    }

    async fn record_link(
        &self,
        token: &str,
        pending: Pending,
        expires: jiff::Timestamp,
    ) -> anyhow::Result<()> {
        let record = PendingRecord {
            pending,
            expires_at: racing_events::Instant::text(expires),
        };
        self.signups
            .create(token_key(token), serde_json::to_vec(&record)?.into())
            .await
            .context("recording the link")?;
        Ok(())
    }

    /// Records a link that replaces the keys of `email`'s mailbox, to follow within `ttl`,
    /// unless `most` of its replacement links are waiting already (whoever asked for
    /// them): its token, or `None`. The count is kept in the bucket beside the links, so
    /// it holds across replicas, and each counted link leaves it once followed or expired.
    pub async fn issue_replacement(
        &self,
        email: &str,
        compromised: bool,
        most: usize,
        ttl: Duration,
    ) -> anyhow::Result<Option<String>> {
        let key = waiting_key(email);
        let expires = expires(ttl);
        // A few tries: another replica may count a link of the mailbox at the same moment.
        for _ in 0..4 {
            let (mut waiting, revision) = self.waiting(&key).await?;
            let now = jiff::Timestamp::now().as_second();
            waiting.links.retain(|l| l.expires > now);
            if waiting.links.len() >= most {
                return Ok(None);
            }
            let token = new_token();
            waiting.links.push(WaitingLink {
                key: token_key(&token),
                expires: expires.as_second(),
            });
            let bytes = serde_json::to_vec(&waiting)?.into();
            // Written meanwhile elsewhere: counted again from what is there now.
            let counted = match revision {
                Some(r) => match self.signups.update(&key, bytes, r).await {
                    Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => false,
                    done => done.map(|_| true).context("counting a replacement link")?,
                },
                None => match self.signups.create(&key, bytes).await {
                    Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => false,
                    done => done.map(|_| true).context("counting a replacement link")?,
                },
            };
            if !counted {
                continue;
            }
            let pending = Pending::Replace {
                email: email.to_owned(),
                compromised,
            };
            self.record_link(&token, pending, expires).await?;
            return Ok(Some(token));
        }
        bail!("the count of a mailbox's replacement links kept changing")
    }

    /// The replacement links of the mailbox whose count is under `key`, with the count's
    /// revision (`None`: no count yet, or one deleted).
    async fn waiting(&self, key: &str) -> anyhow::Result<(Waiting, Option<u64>)> {
        match self.signups.entry(key).await? {
            Some(entry) if entry.operation == kv::Operation::Put => {
                let waiting = serde_json::from_slice(&entry.value)
                    .context("an unreadable count of replacement links")?;
                Ok((waiting, Some(entry.revision)))
            }
            Some(entry) => Ok((Waiting::default(), Some(entry.revision))),
            None => Ok((Waiting::default(), None)),
        }
    }

    /// Takes the followed replacement link `link` (a record's key) off its mailbox's
    /// count. Best effort: a count left high falls with the link's expiry.
    async fn followed_replacement(&self, email: &str, link: &str) {
        let key = waiting_key(email);
        for _ in 0..4 {
            let Ok((mut waiting, Some(revision))) = self.waiting(&key).await else {
                return;
            };
            let before = waiting.links.len();
            waiting.links.retain(|l| l.key != link);
            if waiting.links.len() == before {
                return;
            }
            let Ok(bytes) = serde_json::to_vec(&waiting) else {
                return;
            };
            if self
                .signups
                .update(&key, bytes.into(), revision)
                .await
                .is_ok()
            {
                return;
            }
        }
        tracing::warn!("a followed replacement link stays counted until it expires");
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
            Ok(()) => {
                if let Pending::Replace { email, .. } = &pending {
                    self.followed_replacement(email, &token_key(token)).await;
                }
                Ok(Ok(pending))
            }
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

/// The life of the links mailed, given the one configured and how long the link bucket
/// keeps a link (zero: for ever): the lesser, so that no link leaves the bucket while its
/// mail says it works. A difference means the bucket was set up with another
/// `RACING_LINK_TTL_HOURS` (or before its age followed it): `racing setup` with this one
/// mends it.
pub fn link_life(configured: Duration, kept: Duration) -> Duration {
    let hours = |d: Duration| d.as_secs().div_ceil(3600);
    if !kept.is_zero() && kept < configured {
        tracing::warn!(
            configured_hours = hours(configured),
            bucket_hours = hours(kept),
            "the link bucket keeps links for less than RACING_LINK_TTL_HOURS: links are \
             offered for the bucket's age; `racing setup` with the same \
             RACING_LINK_TTL_HOURS brings the bucket to it"
        );
        return kept;
    }
    if kept.is_zero() || kept > configured {
        tracing::warn!(
            configured_hours = hours(configured),
            bucket_hours = hours(kept),
            "the link bucket keeps links past RACING_LINK_TTL_HOURS: expired links take \
             its room until then; `racing setup` with the same RACING_LINK_TTL_HOURS \
             brings the bucket to it"
        );
    }
    configured
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

/// The key of the count of a mailbox's replacement links: a hash of the mailbox, as its
/// record's.
fn waiting_key(email: &str) -> String {
    format!(
        "w.{}",
        hex(&Sha256::digest(normalise(&mailbox(email)).as_bytes())[..16])
    )
}

/// A link's token: 128 random bits, in hex.
fn new_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// When a link issued now for `ttl` expires.
fn expires(ttl: Duration) -> jiff::Timestamp {
    jiff::Timestamp::now()
        + jiff::SignedDuration::try_from(ttl).unwrap_or(jiff::SignedDuration::ZERO)
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
    fn a_link_lives_no_longer_than_the_bucket_keeps_it() {
        let hours = |h: u64| Duration::from_secs(h * 3600);
        assert_eq!(link_life(hours(48), hours(24)), hours(24));
        assert_eq!(link_life(hours(24), hours(24)), hours(24));
        assert_eq!(link_life(hours(1), hours(24)), hours(1));
        assert_eq!(link_life(hours(24), Duration::ZERO), hours(24));
    }

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
        assert_eq!(
            waiting_key("Ann+x@Example.com"),
            waiting_key("ann@example.com")
        );
        assert_ne!(
            waiting_key("ann@example.com"),
            waiting_key("bob@example.com")
        );
        assert_eq!(
            waiting_key("ann@example.com")[2..],
            address_key("ann@example.com")[2..]
        );
    }
}
