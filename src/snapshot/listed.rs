//! The snapshots as the service lists them: each in the bucket as its metadata describes
//! it, and one just written and sent.

use serde::{Deserialize, Serialize};

/// A snapshot in the bucket, as its metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    /// Its object's name.
    pub name: String,
    /// Its store's layout version.
    pub layout: String,
    /// The last stream sequence its records hold.
    pub checkpoint: u64,
    /// The stream they were built from.
    pub stream: String,
    /// The SHA-256 of its file, in hex.
    pub digest: String,
    /// Records it holds.
    pub records: u64,
    /// Bytes of its file.
    pub bytes: u64,
    /// Bytes the store it was written from took on its disk: about what a store loaded
    /// from it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_bytes: Option<u64>,
    /// When it was written (RFC 3339).
    pub created_at: String,
    /// The replica that wrote it.
    pub replica: String,
}

impl Listed {
    /// About the bytes a store loaded from it takes: what its writer's took, or for a
    /// snapshot that does not say, [`STORE_PER_FILE_BYTE`] times its file.
    pub fn store_estimate(&self) -> u64 {
        self.store_bytes
            .unwrap_or_else(|| self.bytes.saturating_mul(STORE_PER_FILE_BYTE))
    }
}

/// Bytes of a store per byte of its snapshot's file, for a snapshot whose metadata does
/// not say: a large store (the bench's) takes fewer than this, the tests' small ones
/// more. A margin chosen between them.
const STORE_PER_FILE_BYTE: u64 = 16;

/// A snapshot written and sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Created {
    /// What it is.
    pub listed: Listed,
    /// Bytes of its records, uncompressed.
    pub record_bytes: u64,
    /// Seconds writing its file took (the frozen view read, compressed).
    pub write_secs: f64,
    /// Seconds sending it took.
    pub send_secs: f64,
    /// Older snapshots removed after it.
    pub removed: Vec<String>,
}
