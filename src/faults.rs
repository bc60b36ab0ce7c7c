//! Faults a test injects into a running service, to see it recover: a projector or a
//! rebuild that leaves its consumer unread, a rebuild whose consumer stalls or that fails
//! while it holds the projector, a rebuild or a projector that panics, a disk filled under
//! the projector, a live session's replay held before its snapshots.
//! Nothing in the service arms them; each costs an atomic read where it would strike.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::supervise::lock;

/// The faults armed in one service; see [`crate::app::Application::faults`].
#[derive(Debug, Default)]
pub struct Faults {
    before_batch: Mutex<Option<Gate>>,
    before_fold: Mutex<Option<Gate>>,
    before_hold: Mutex<Option<Gate>>,
    before_snapshots: Mutex<Option<Gate>>,
    stalls_while_holding: AtomicU32,
    hold_failure: Mutex<Option<Gate>>,
    projector_panics: AtomicU32,
    disk_room_unchecked: AtomicBool,
    rebuild_panics: AtomicU32,
    lost_store_files: AtomicU32,
}

/// A point where a task tells the test it has arrived and waits until the test lets it go.
#[derive(Debug)]
struct Gate {
    arrived: oneshot::Sender<()>,
    go: oneshot::Receiver<()>,
}

impl Faults {
    /// Makes the next rebuild stop before it folds its first batch, as a worker held
    /// stopped under load does, with its consumer left unread: the first channel says it
    /// has stopped there, and it goes on when the second is sent to (or dropped).
    pub fn pause_rebuild_before_fold(&self) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        Gate::set(&self.before_fold)
    }

    /// Makes the next rebuild stop once it has caught up with the projector, before it
    /// holds it: the first channel says it has stopped there, and it goes on when the
    /// second is sent to (or dropped).
    pub fn pause_rebuild_before_hold(&self) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        Gate::set(&self.before_hold)
    }

    /// Makes the next `reads` reads of a rebuild's consumer while it holds the projector
    /// deliver nothing, as a consumer paused by load or a stream leader's election does.
    pub fn stall_rebuild_while_holding(&self, reads: u32) {
        self.stalls_while_holding.store(reads, Ordering::SeqCst);
    }

    /// Makes the next rebuild fail while it holds the projector, once it has folded the
    /// first messages it was waiting for into its store: the first channel says it has
    /// stopped there, and it fails when the second is sent to (or dropped).
    pub fn fail_rebuild_while_holding(&self) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        Gate::set(&self.hold_failure)
    }

    /// Makes the next rebuild panic once it has caught up with the projector, before it
    /// holds it.
    pub fn panic_rebuild(&self) {
        self.rebuild_panics.store(1, Ordering::SeqCst);
    }

    /// Makes the projector commit without looking for room on its disk first, as when
    /// another process fills the disk between its look and its commit.
    pub fn skip_disk_room_check(&self) {
        self.disk_room_unchecked.store(true, Ordering::SeqCst);
    }

    /// Whether the projector commits without looking for room on its disk.
    pub(crate) fn disk_room_unchecked(&self) -> bool {
        self.disk_room_unchecked.load(Ordering::Relaxed)
    }

    /// Makes the projector's next `times` commits fail as sled fails on a store that lost
    /// a file (a blob a page points at, gone): with the I/O error `ENOENT`.
    pub fn lose_store_file(&self, times: u32) {
        self.lost_store_files.store(times, Ordering::SeqCst);
    }

    /// The error of a commit that finds a file of its store missing, if one is armed.
    pub(crate) fn store_file_lost(&self) -> Result<(), racing_projections::StoreError> {
        if take_one(&self.lost_store_files) {
            let lost = std::io::Error::from_raw_os_error(nix::libc::ENOENT);
            return Err(racing_projections::StoreError::io(lost));
        }
        Ok(())
    }

    /// Makes the projector stop before its next batch, with the batch's first message
    /// taken: the first channel says it has stopped there, and it goes on when the second
    /// is sent to (or dropped).
    pub fn pause_projector_before_batch(&self) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        Gate::set(&self.before_batch)
    }

    /// Makes the next `since` replay of a live session stop before it reads the snapshots
    /// that end it, its journals read: the first channel says it has stopped there, and it
    /// goes on when the second is sent to (or dropped).
    pub fn pause_replay_before_snapshots(&self) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        Gate::set(&self.before_snapshots)
    }

    /// Makes the projector panic at its next `times` batches.
    pub fn panic_projector(&self, times: u32) {
        self.projector_panics.store(times, Ordering::SeqCst);
    }

    /// Where a rebuild is about to fold a batch it read up to the projector's checkpoint.
    pub(crate) async fn rebuild_before_fold(&self) {
        Gate::pass(&self.before_fold).await;
    }

    /// Where a rebuild is about to hold the projector.
    pub(crate) async fn rebuild_before_hold(&self) {
        if take_one(&self.rebuild_panics) {
            panic!("a panic injected into a rebuild (test fault)");
        }
        Gate::pass(&self.before_hold).await;
    }

    /// Whether this read of a rebuild's consumer, while holding, delivers nothing.
    pub(crate) fn rebuild_read_stalls(&self) -> bool {
        take_one(&self.stalls_while_holding)
    }

    /// Whether a rebuild holding the projector fails here (once the test lets it).
    pub(crate) async fn rebuild_hold_fails(&self) -> bool {
        Gate::pass(&self.hold_failure).await
    }

    /// Where the projector is about to fold a batch, its first message taken.
    pub(crate) async fn projector_before_batch(&self) {
        Gate::pass(&self.before_batch).await;
    }

    /// Where a live session's `since` replay is about to read its snapshots.
    pub(crate) async fn replay_before_snapshots(&self) {
        Gate::pass(&self.before_snapshots).await;
    }

    /// Panics if a projector panic is armed.
    pub(crate) fn projector_batch(&self) {
        if take_one(&self.projector_panics) {
            panic!("a panic injected into the projector (test fault)");
        }
    }
}

impl Gate {
    /// Arms a gate in `slot`: the channel that says a task has arrived, and the one that
    /// lets it go.
    fn set(slot: &Mutex<Option<Gate>>) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        let (arrived, reached) = oneshot::channel();
        let (release, go) = oneshot::channel();
        *lock(slot) = Some(Gate { arrived, go });
        (reached, release)
    }

    /// Stops at the gate armed in `slot`, if there is one, until the test lets it go;
    /// whether there was one.
    async fn pass(slot: &Mutex<Option<Gate>>) -> bool {
        let gate = lock(slot).take();
        let Some(gate) = gate else { return false };
        let _ = gate.arrived.send(());
        let _ = gate.go.await;
        true
    }
}

/// Takes one from an armed count; `false` when there is none.
fn take_one(count: &AtomicU32) -> bool {
    count
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}
