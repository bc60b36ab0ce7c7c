//! Room for a snapshot before it is sent: in the snapshots' bucket (its byte limit, which
//! the set-up derives from the snapshots kept, refusing past it rather than dropping old
//! chunks), and in JetStream's file storage, which the bucket shares with the log: a
//! snapshot that would leave the log less than the stated margin is not sent, since a
//! cache of the log must never stop the log. The disk beside the read models is looked at
//! where the file is written and fetched (`crate::disk::room_beside_store`).

use anyhow::Context as _;
use async_nats::jetstream;
use serde::{Deserialize, Serialize};

use super::settings::Settings;

/// Bytes JetStream stores for each chunk beside its payload: its subject, its header and
/// the record's own bytes, with room to spare. A margin chosen, not measured.
const PER_CHUNK: u64 = 256;
/// Bytes of an object's metadata message, with room to spare.
const META: u64 = 4096;

/// Why a snapshot was not written or sent: the room it lacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lack {
    /// The disk beside the read models.
    Disk,
    /// The snapshots' bucket's own limit.
    Bucket,
    /// JetStream's storage the log shares.
    Log,
}

impl Lack {
    /// Its name in the metrics' `reason` label.
    pub fn label(self) -> &'static str {
        match self {
            Lack::Disk => "disk",
            Lack::Bucket => "bucket",
            Lack::Log => "log",
        }
    }
}

/// The bytes JetStream stores for an object of `file` bytes.
pub fn stored_bytes(file: u64) -> u64 {
    let chunks = file.div_ceil(super::upload::CHUNK as u64);
    file.saturating_add(chunks.saturating_mul(PER_CHUNK))
        .saturating_add(META)
}

/// What JetStream's storage holds and allows, where a snapshot would go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Storage {
    /// The bucket's stream's name.
    pub bucket: String,
    /// Its byte limit; negative: none.
    pub bucket_max: i64,
    /// Bytes it holds.
    pub bucket_bytes: u64,
    /// Copies of it in the cluster.
    pub copies: u64,
    /// Bytes the account's streams hold, every copy counted.
    pub account_bytes: u64,
    /// The account's own limit of file storage, every copy counted, where it has one.
    pub account_max: Option<i64>,
}

impl Storage {
    /// As the bucket's stream and the account's use say.
    pub fn of(bucket: &jetstream::stream::Info, account: &Account) -> Storage {
        Storage {
            bucket: bucket.config.name.clone(),
            bucket_max: bucket.config.max_bytes,
            bucket_bytes: bucket.state.bytes,
            copies: bucket.config.num_replicas.max(1) as u64,
            account_bytes: account.storage,
            account_max: account.limits.max_storage.filter(|m| *m > 0),
        }
    }
}

/// The account's use of JetStream's file storage and its limit, as `$JS.API.INFO` says:
/// read here rather than through the client's own type, which nats-server 2.9's answer
/// (without the reserved bytes) does not fill.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Account {
    /// Bytes its streams hold, every copy counted.
    #[serde(default)]
    pub storage: u64,
    /// Its limits.
    #[serde(default)]
    pub limits: AccountLimits,
}

/// An account's limits, of those read here.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AccountLimits {
    /// Bytes of file storage its streams may hold, every copy counted; -1: no limit.
    #[serde(default)]
    pub max_storage: Option<i64>,
}

/// The account's use of JetStream's storage, now.
pub async fn account(js: &jetstream::Context) -> anyhow::Result<Account> {
    use async_nats::jetstream::response::Response;
    let answer: Response<Account> = js
        .request("INFO", &serde_json::json!({}))
        .await
        .context("asking JetStream for the account's use")?;
    match answer {
        Response::Ok(account) => Ok(account),
        Response::Err { error } => Err(anyhow::anyhow!("JetStream's account information: {error}")),
    }
}

/// Whether an object of `file` bytes fits in the bucket and leaves the log its margin
/// of JetStream's storage: against the account's own limit where it has one, else the
/// server's `max_file_store` as the settings state it, else (not known) the bucket's
/// alone; per copy, as each server holds one copy of each stream and the account's use
/// counts them all. `Ok(false)`: the log's room was not known. `Err` says why not, and
/// what to change.
pub fn check(file: u64, storage: &Storage, settings: &Settings) -> Result<bool, (Lack, String)> {
    let need = stored_bytes(file);
    let mib = |b: u64| b.div_ceil(1 << 20);
    if let Ok(max) = u64::try_from(storage.bucket_max) {
        let left = max.saturating_sub(storage.bucket_bytes);
        if need > left {
            return Err((
                Lack::Bucket,
                format!(
                    "the snapshots' bucket {} has {} MiB of its {} MiB left and the snapshot \
                     needs {} MiB: `racing setup` sizes it again from the snapshots in it, \
                     or RACING_SNAPSHOT_BUCKET_MIB states its size (docs/operations.md)",
                    storage.bucket,
                    mib(left),
                    mib(max),
                    mib(need)
                ),
            ));
        }
    }
    let copies = storage.copies.max(1);
    let (limit, whose) = match storage.account_max.map(u64::try_from) {
        Some(Ok(max)) => (max / copies, "the account's limit"),
        _ => match settings.file_store {
            Some(max) => (max, "RACING_NATS_FILE_STORE_MIB"),
            None => return Ok(false),
        },
    };
    let used = storage.account_bytes / copies;
    let left = limit.saturating_sub(used).saturating_sub(need);
    if left < settings.log_margin {
        return Err((
            Lack::Log,
            format!(
                "sending the snapshot ({} MiB) would leave the log {} MiB of JetStream's {} MiB \
                 ({whose}), less than RACING_SNAPSHOT_LOG_MARGIN_MIB ({} MiB): give JetStream \
                 more storage, or keep fewer snapshots (RACING_SNAPSHOT_KEEP)",
                mib(need),
                left >> 20,
                limit >> 20,
                mib(settings.log_margin)
            ),
        ));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(bucket_max: i64, bucket_bytes: u64, used: u64, account_max: Option<i64>) -> Storage {
        Storage {
            bucket: "OBJ_RACING_SNAPSHOTS".into(),
            bucket_max,
            bucket_bytes,
            copies: 1,
            account_bytes: used,
            account_max,
        }
    }

    #[test]
    fn a_snapshot_is_sent_only_where_the_bucket_and_the_log_have_room_for_it() {
        let mib = 1 << 20;
        let settings = |file_store| Settings {
            file_store,
            log_margin: 100 * mib,
            ..Settings::default()
        };
        let file = 10 * mib;
        // Nothing known of the server: only the bucket's limit counts.
        assert_eq!(
            check(file, &storage(-1, 0, 0, None), &settings(None)),
            Ok(false)
        );
        let full = storage((15 * mib) as i64, 6 * mib, 0, None);
        let (lack, why) = check(file, &full, &settings(None)).expect_err("full");
        assert_eq!(lack, Lack::Bucket, "{why}");
        // The server's limit as stated: 1000 MiB, 880 used, 10 more leave 110 >= 100.
        let server = settings(Some(1000 * mib));
        assert_eq!(
            check(file, &storage(-1, 0, 880 * mib, None), &server),
            Ok(true)
        );
        let (lack, why) =
            check(file, &storage(-1, 0, 895 * mib, None), &server).expect_err("tight");
        assert_eq!(lack, Lack::Log, "{why}");
        assert!(why.contains("RACING_NATS_FILE_STORE_MIB"), "{why}");
        // The account's own limit counts first.
        let account = storage(-1, 0, 895 * mib, Some((1000 * mib) as i64));
        let (lack, why) = check(file, &account, &settings(None)).expect_err("the account's");
        assert_eq!(lack, Lack::Log, "{why}");
        assert!(why.contains("the account's limit"), "{why}");
        // Three copies: the account counts each, a server holds one.
        let three = Storage {
            copies: 3,
            ..storage(-1, 0, 3 * 880 * mib, None)
        };
        assert_eq!(check(file, &three, &server), Ok(true));
    }
}
