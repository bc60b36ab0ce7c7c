//! The threads that answer the reads whose work grows with the data (a route that runs
//! apart, `route::Runs`, any `as_of` but a profile's or results'): a few threads of their
//! own, one for each core, each below the threads that answer the short reads (nice
//! [`NICE`], [`crate::load::give_way`]), so that a burst of them takes from the cards'
//! reads no more than the cores those leave idle, and a card waits for a core only the
//! short time the kernel takes to hand it over.
//!
//! Tokio's blocking pool would not do: its threads also write files and join threads
//! for the rest of the service, and a thread's priority, once lowered, cannot be raised
//! again without privileges, so a thread lowered for one read would stay low for all of
//! it. A read whose request has gone (its deadline passed, the client left) before a
//! thread takes it is dropped unread.

use std::cell::Cell;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// The nice value of the long reads' threads: the lowest, so that the kernel hands a core
/// to a short read as soon as it wakes; yet a nice value, not the idle policy of the
/// rebuild's worker, so that on a machine full of other work a long read still gets a
/// share of a core and may end within its deadline. Measured beside the card's reads
/// (BENCHMARKS.md, "Records by condition beside the card"), nice 10 left the card's p99 a
/// little higher than 19 did.
pub const NICE: i32 = 19;

type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// Whether this thread is one of the long reads'.
    static APART: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is a long reads' one: where a read may work an answer out
/// however long the data makes it (`Runs::ApartUnlessRemembered`).
pub(super) fn apart() -> bool {
    APART.with(Cell::get)
}

/// The long reads' threads; they end when the last clone is dropped.
#[derive(Clone)]
pub(super) struct LongReads {
    jobs: Sender<Job>,
}

impl LongReads {
    /// One thread for each core this process may run on.
    pub(super) fn start() -> std::io::Result<LongReads> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("long-read-{n}"))
                .spawn(move || work(&queue))?;
        }
        Ok(LongReads { jobs })
    }

    /// `read` on one of the threads, its result when it is done; `None` when the threads
    /// are gone. Dropping the result before a thread takes `read` drops it unread.
    pub(super) async fn answer<T: Send + 'static>(
        &self,
        read: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (sender, result) = oneshot::channel();
        let job: Job = Box::new(move || {
            if !sender.is_closed() {
                let _ = sender.send(read());
            }
        });
        self.jobs.send(job).ok()?;
        result.await.ok()
    }
}

/// A thread's life: lowered once, then each job in turn until the sender is gone.
fn work(queue: &Mutex<Receiver<Job>>) {
    crate::load::give_way(NICE);
    APART.with(|apart| apart.set(true));
    loop {
        // The lock is held only while waiting for the next job, not while it runs.
        let job = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_are_answered_on_lowered_threads_of_their_own() {
        let long = LongReads::start().expect("threads");
        let (name, nice) = long
            .answer(|| {
                let name = std::thread::current().name().map(str::to_owned);
                (name, rustix::process::getpriority_process(None).ok())
            })
            .await
            .expect("answered");
        assert!(name.is_some_and(|n| n.starts_with("long-read-")));
        if cfg!(target_os = "linux") {
            assert_eq!(nice, Some(NICE));
        }
        // This thread, a runtime's, keeps its own priority.
        assert_ne!(rustix::process::getpriority_process(None).ok(), Some(NICE));
    }

    #[tokio::test]
    async fn a_read_whose_request_went_before_it_began_is_not_read() {
        let long = LongReads::start().expect("threads");
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Every thread held until the gate opens.
        let (open, gate) = std::sync::mpsc::channel::<()>();
        let gate = Arc::new(Mutex::new(gate));
        let (took, taken) = tokio::sync::mpsc::unbounded_channel();
        let held: Vec<_> = (0..threads)
            .map(|_| {
                let (gate, took) = (gate.clone(), took.clone());
                let long = long.clone();
                tokio::spawn(async move {
                    long.answer(move || {
                        let _ = took.send(());
                        let _ = gate.lock().map(|g| g.recv());
                    })
                    .await
                })
            })
            .collect();
        let mut taken = taken;
        for _ in 0..threads {
            taken.recv().await.expect("a thread took its job");
        }
        let read = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = read.clone();
        let gone = long.answer(move || flag.store(true, std::sync::atomic::Ordering::SeqCst));
        // The request goes (its timeout) while the read waits for a thread.
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(50), gone)
                .await
                .is_err()
        );
        for _ in 0..threads {
            open.send(()).expect("a held thread");
        }
        for h in held {
            h.await.expect("joined").expect("answered");
        }
        // A read after it is answered, so the one dropped was taken off the queue by now.
        assert_eq!(long.answer(|| 1).await, Some(1));
        assert!(!read.load(std::sync::atomic::Ordering::SeqCst));
    }
}
