//! The one interface every read model implements: take each change a batch makes to the
//! source records (`facts.rs`), add its own writes to the batch it is handed, and once the
//! batch is folded, write what it renders. The fold (`fold.rs`) calls each model in a
//! declared order and owns nothing of theirs; a model reaches storage only through
//! [`State`] (get, prefix scan, the batch's puts and deletes), and the source records the
//! batch holds decoded through [`Facts`].

use crate::facts::{Change, Facts};
use crate::kv::StoreError;
use crate::state::State;

/// A read model: one of the views the API serves, folded from the log.
pub(crate) trait ReadModel {
    /// Folds in one change: the records it keeps of its own written through `s`, the
    /// documents the change touched noted for [`ReadModel::render`].
    fn apply<S: State>(&mut self, s: &mut S, change: &Change<'_>) -> Result<(), StoreError>;

    /// Writes what the changes since the last render touched, once each however many
    /// changes touched it; `seq` is the sequence of the last change, which the documents
    /// written reflect. `facts` holds decoded what the batch holds of the source records,
    /// as written to `s`: read there, they need not be decoded again.
    fn render<S: State>(&mut self, s: &mut S, seq: u64, facts: &Facts) -> Result<(), StoreError>;

    /// Writes, once the batch is folded and rendered, the records the model keeps for
    /// itself alone and held decoded through the batch: no document and no other model
    /// reads them, so they carry no position. Nothing by default.
    fn finish<S: State>(&mut self, _: &mut S) -> Result<(), StoreError> {
        Ok(())
    }
}
