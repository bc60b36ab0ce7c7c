//! A key's connection cap across replicas. Each replica admits connections in its own
//! memory, so on their own N replicas would give a key N times its cap. Replicas announce
//! themselves in the key-value bucket `{stream}_REPLICAS` (key `r.<replica>`), whose values
//! live [`TTL`], so a replica that dies drops out on its own; and each writes there the
//! open live odds connections of each key (key `c.<replica>.<key id>`, their opening
//! times). A replica admits a new connection only while its own and the others' open
//! connections of the key are fewer than the key's cap. (A key's rate is shared through
//! its use, in [`super::usage`].)
//!
//! Counts are written as they change and again with the presence every [`REFRESH`]; the
//! others' are kept in memory through a watch, so admitting reads no NATS. Until a count
//! reaches the others (a NATS round trip, or up to [`REFRESH`] if a write failed), two
//! replicas admitting at once may both admit: the cap can be overshot for that long.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use async_nats::jetstream::{self, kv};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::digest::KeyId;
use super::registry::{keep_watching, load};
use crate::nats::buckets;

/// How long a value lives in the bucket: a replica silent this long is gone.
pub const TTL: Duration = buckets::REPLICAS.max_age;
/// How often a replica writes its presence and its counts again.
pub const REFRESH: Duration = Duration::from_secs(5);
/// Longest value of opening times read from another replica, bytes.
const MAX_VALUE: usize = 64 * 1024;
/// Longest a leaving replica waits to say so.
const LEAVE: Duration = Duration::from_secs(1);

/// A key's connections on one replica: their opening times, unix milliseconds.
type Opened = Vec<u64>;

/// What the other replicas said, each value until it lapses.
#[derive(Default)]
struct Others {
    replicas: HashMap<String, Instant>,
    open: HashMap<KeyId, HashMap<String, (Opened, Instant)>>,
}

/// This replica's own connections.
#[derive(Default)]
struct Local {
    /// Oldest first.
    open: HashMap<KeyId, Opened>,
    /// Keys whose connections changed since they were last written.
    dirty: HashSet<KeyId>,
    /// The last opening time handed out, so that each is unique here.
    last: u64,
}

/// This replica's view of the others and of every key's connections.
pub struct Replicas {
    id: String,
    /// Replicas live, this one included.
    live: AtomicU32,
    others: RwLock<Others>,
    local: Mutex<Local>,
    /// Woken when a local count changes, to write it.
    changed: Notify,
}

impl Replicas {
    /// A replica that shares nothing, as if alone (until [`Replicas::start`] is used).
    pub fn solo() -> Arc<Replicas> {
        Arc::new(Replicas {
            id: format!("{:016x}", rand::random::<u64>()),
            live: AtomicU32::new(1),
            others: RwLock::default(),
            local: Mutex::default(),
            changed: Notify::new(),
        })
    }

    /// Joins the replicas of `stream`: opens `{stream}_REPLICAS` (the set-up made it),
    /// reads what the others said, announces this replica, and keeps all of it current
    /// until `shutdown`.
    pub async fn start(
        js: &jetstream::Context,
        stream: &str,
        shutdown: CancellationToken,
    ) -> anyhow::Result<Arc<Replicas>> {
        let store = buckets::REPLICAS.open(js, stream).await?;
        let replicas = Replicas::solo();
        let mut watch = store.watch_with_history(">").await?;
        let seen = load(&store, &mut watch, |entry| replicas.apply(entry)).await;
        if let Err(e) = seen {
            tracing::warn!(error = format!("{e:#}"), "reading the replicas bucket");
        }
        replicas.write(&store, true).await;
        tracing::info!(
            replica = replicas.id,
            live = replicas.live(),
            "joined the replicas"
        );
        let following = replicas.clone();
        tokio::spawn(keep_watching(
            store.clone(),
            watch,
            "replicas",
            shutdown.clone(),
            move |entry| following.apply(entry),
        ));
        tokio::spawn(replicas.clone().announce(store, shutdown));
        Ok(replicas)
    }

    /// This replica's id in the bucket.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Replicas live, this one included.
    pub fn live(&self) -> u32 {
        self.live.load(Ordering::Relaxed).max(1)
    }

    /// Whether the replica of `id` is live: this one, or another whose presence has not
    /// lapsed (it announces itself every [`REFRESH`]; [`TTL`] after its last word it is
    /// gone).
    pub fn is_live(&self, id: &str) -> bool {
        id == self.id
            || self
                .read()
                .replicas
                .get(id)
                .is_some_and(|lapses| *lapses > Instant::now())
    }

    /// Opens a connection of `key` if its open connections on every replica are fewer
    /// than `max`; returns its opening time, its place among them.
    pub fn open(&self, key: KeyId, max: usize) -> Option<u64> {
        let others = self.others_open(key);
        let mut local = self.lock();
        let mine = local.open.get(&key).map_or(0, Vec::len);
        if mine + others >= max {
            return None;
        }
        let now = u64::try_from(jiff::Timestamp::now().as_millisecond()).unwrap_or(0);
        let at = now.max(local.last + 1);
        local.last = at;
        local.open.entry(key).or_default().push(at);
        local.dirty.insert(key);
        drop(local);
        self.changed.notify_one();
        Some(at)
    }

    /// Closes the connection of `key` opened at `at`.
    pub fn close(&self, key: KeyId, at: u64) {
        let mut local = self.lock();
        if let Some(open) = local.open.get_mut(&key) {
            open.retain(|t| *t != at);
            if open.is_empty() {
                local.open.remove(&key);
            }
        }
        local.dirty.insert(key);
        drop(local);
        self.changed.notify_one();
    }

    /// How many open connections of `key`, on every replica, are older than the one
    /// opened here at `at` (ties go to the replica of lower id), so that the newest can be
    /// closed when the key's cap is lowered: every replica counts the same.
    pub fn older(&self, key: KeyId, at: u64) -> usize {
        let now = Instant::now();
        let others = self.read();
        let theirs: usize = others.open.get(&key).map_or(0, |per| {
            per.iter()
                .filter(|(_, (_, lapses))| *lapses > now)
                .map(|(id, (opened, _))| {
                    let before = |t: &&u64| **t < at || (**t == at && *id < self.id);
                    opened.iter().filter(before).count()
                })
                .sum()
        });
        let mine = self
            .lock()
            .open
            .get(&key)
            .map_or(0, |open| open.iter().filter(|t| **t < at).count());
        theirs + mine
    }

    /// The other replicas' open connections of `key`.
    fn others_open(&self, key: KeyId) -> usize {
        let now = Instant::now();
        self.read().open.get(&key).map_or(0, |per| {
            per.values()
                .filter(|(_, lapses)| *lapses > now)
                .map(|(opened, _)| opened.len())
                .sum()
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Others> {
        self.others.read().unwrap_or_else(|p| p.into_inner())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Local> {
        self.local.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes in what another replica said.
    fn apply(&self, entry: &kv::Entry) {
        let lapses = lapse_of(entry);
        let put = entry.operation == kv::Operation::Put;
        let mut others = self.others.write().unwrap_or_else(|p| p.into_inner());
        let mut parts = entry.key.splitn(3, '.');
        match (parts.next(), parts.next(), parts.next()) {
            (_, Some(id), _) if id == self.id => {}
            (Some("r"), Some(id), None) if put => {
                others.replicas.insert(id.to_owned(), lapses);
            }
            (Some("r"), Some(id), None) => {
                // A replica that left says so: its connections went with it.
                others.replicas.remove(id);
                others.open.retain(|_, per| {
                    per.remove(id);
                    !per.is_empty()
                });
            }
            (Some("c"), Some(id), Some(key)) => {
                let Ok(key) = u64::from_str_radix(key, 16).map(KeyId) else {
                    return;
                };
                let opened: Opened = match put && entry.value.len() <= MAX_VALUE {
                    true => serde_json::from_slice(&entry.value).unwrap_or_default(),
                    false => Vec::new(),
                };
                let per = others.open.entry(key).or_default();
                if opened.is_empty() {
                    per.remove(id);
                    if per.is_empty() {
                        others.open.remove(&key);
                    }
                } else {
                    per.insert(id.to_owned(), (opened, lapses));
                }
            }
            _ => {}
        }
        self.count(&others, Instant::now());
    }

    /// Forgets what lapsed.
    fn prune(&self) {
        let now = Instant::now();
        let mut others = self.others.write().unwrap_or_else(|p| p.into_inner());
        others.replicas.retain(|_, lapses| *lapses > now);
        others.open.retain(|_, per| {
            per.retain(|_, (_, lapses)| *lapses > now);
            !per.is_empty()
        });
        self.count(&others, now);
    }

    fn count(&self, others: &Others, now: Instant) {
        let live = others.replicas.values().filter(|l| **l > now).count();
        let live = u32::try_from(live).unwrap_or(u32::MAX).saturating_add(1);
        if self.live.swap(live, Ordering::Relaxed) != live {
            tracing::info!(live, "replicas live");
        }
    }

    /// Writes the counts that changed, or with `full` the presence and every count.
    async fn write(&self, store: &kv::Store, full: bool) {
        let writes: Vec<(KeyId, Opened)> = {
            let mut local = self.lock();
            let mut keys = std::mem::take(&mut local.dirty);
            if full {
                keys.extend(local.open.keys().copied());
            }
            keys.into_iter()
                .map(|k| (k, local.open.get(&k).cloned().unwrap_or_default()))
                .collect()
        };
        if full {
            let now = racing_events::Instant::now();
            if let Err(e) = store.put(format!("r.{}", self.id), now.into()).await {
                tracing::debug!(error = %e, "announcing this replica");
            }
        }
        for (key, opened) in writes {
            let value = serde_json::to_vec(&opened).unwrap_or_default();
            let name = format!("c.{}.{:016x}", self.id, key.0);
            if let Err(e) = store.put(name, value.into()).await {
                tracing::debug!(error = %e, "writing open connections");
                // Written again at the next refresh.
                self.lock().dirty.insert(key);
            }
        }
    }

    /// Writes counts as they change and everything every [`REFRESH`] until `shutdown`;
    /// then says this replica left.
    async fn announce(self: Arc<Self>, store: kv::Store, shutdown: CancellationToken) {
        let mut refresh = tokio::time::interval_at(Instant::now() + REFRESH, REFRESH);
        refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let full = tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = refresh.tick() => true,
                _ = self.changed.notified() => false,
            };
            self.write(&store, full).await;
            if full {
                self.prune();
            }
        }
        let leave = store.delete(format!("r.{}", self.id));
        if let Ok(Err(e)) = tokio::time::timeout(LEAVE, leave).await {
            tracing::debug!(error = %e, "saying this replica left");
        }
    }
}

/// When a value lapses here: [`TTL`] after it was written, as far as the clocks agree.
/// The bucket keeps no value longer than [`TTL`], so an age past it says only that this
/// host's clock is ahead of the NATS server's: the value is then taken as just written,
/// rather than as lapsed, so that a replica whose clock runs ahead still counts the
/// others' connections (at worst a dead replica's count stays [`TTL`] longer).
fn lapse_of(entry: &kv::Entry) -> Instant {
    let written = entry.created.unix_timestamp_nanos() / 1_000_000;
    let now = i128::from(jiff::Timestamp::now().as_millisecond());
    let ttl = TTL.as_millis() as i128;
    let age = match now - written {
        age if age > ttl => 0,
        age => age.max(0),
    };
    Instant::now() + Duration::from_millis(u64::try_from(ttl - age).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_admitted_while_its_connections_everywhere_are_under_its_cap() {
        let replicas = Replicas::solo();
        let key = KeyId(7);
        let first = replicas.open(key, 2).expect("first");
        let second = replicas.open(key, 2).expect("second");
        assert!(second > first);
        assert_eq!(replicas.open(key, 2), None);
        assert_eq!(
            (replicas.older(key, first), replicas.older(key, second)),
            (0, 1)
        );
        // Another replica's connection, opened between the two.
        let lapses = Instant::now() + TTL;
        replicas.others.write().expect("lock").open.insert(
            key,
            HashMap::from([("other".to_owned(), (vec![first], lapses))]),
        );
        replicas.close(key, first);
        assert_eq!(replicas.open(key, 2), None, "one here, one there");
        assert_eq!(replicas.older(key, second), 1);
        replicas.close(key, second);
        assert!(replicas.open(key, 2).is_some());
    }
}
