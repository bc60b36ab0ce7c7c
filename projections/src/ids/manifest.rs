//! The manifest of the applied ids: the runs that hold them and the filter saved in the
//! tree, as recorded at [`keys::IDS_MANIFEST`].

use serde::{Deserialize, Serialize};

use crate::keys;
use crate::kv::Kv;
use crate::kv::StoreError;

/// The runs of applied ids and the saved filter, as recorded at [`keys::IDS_MANIFEST`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Manifest {
    /// The number of the next run; numbers only grow.
    pub(super) next_run: u64,
    /// The generation of the next saved filter; generations only grow.
    pub(super) next_filter: u64,
    /// The runs that hold the applied ids, by the newest stream sequence they hold.
    pub(super) runs: Vec<Run>,
    /// The filter saved in the tree, if one is.
    pub(super) filter: Option<SavedFilter>,
}

/// A sorted run of applied ids.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(super) struct Run {
    pub(super) number: u64,
    pub(super) ids: u64,
    /// The stream sequences of the batches whose ids it holds, first and last.
    pub(super) seqs: (u64, u64),
    /// Whether the saved filter holds every id of the run: a restart reads the ids of the
    /// runs where it does not.
    pub(super) saved: bool,
}

/// A filter saved in the tree: chunks of
/// [`FILTER_CHUNK_BYTES`](super::limits::FILTER_CHUNK_BYTES) at `generation`, of its
/// layers' words one after the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct SavedFilter {
    pub(super) generation: u64,
    pub(super) format: String,
    /// 64-bit words of the filter, all layers together: a release that knew one layer
    /// alone takes a filter of several for one of another size, and builds its own.
    pub(super) words: u64,
    pub(super) hashes: u32,
    /// 64-bit words of each layer, oldest first, when there are several; none saved: one
    /// layer of `words` (as every filter was saved before there were layers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) layers: Vec<u64>,
}

impl SavedFilter {
    /// The words of each layer.
    pub(super) fn layer_words(&self) -> Vec<u64> {
        if self.layers.is_empty() {
            vec![self.words]
        } else {
            self.layers.clone()
        }
    }
}

pub(super) fn encode_manifest(manifest: &Manifest) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(manifest).map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(super) fn read_manifest(kv: &Kv) -> Result<Manifest, StoreError> {
    match kv.get(keys::IDS_MANIFEST)? {
        Some(v) => serde_json::from_slice(&v)
            .map_err(|e| StoreError::Corrupt(format!("the manifest of applied ids: {e}"))),
        None => Ok(Manifest::default()),
    }
}
