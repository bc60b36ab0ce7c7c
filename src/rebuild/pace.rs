//! A rebuild's worker gives way to the API's requests: while the rest of the machine is
//! busy, the worker runs only part of each [`PERIOD`], and is stopped for the rest.
//!
//! The worker already runs under the idle scheduling policy, so a request's thread that
//! wakes takes a core from it at once. On a machine whose cores the requests keep busy it
//! still costs them: it fills the gaps between their bursts, and their threads come back to
//! caches it has filled with its own pages. With `wrk` reading documents on two cores, the
//! reads' p99 was clearly higher with the worker running than with it stopped. No
//! scheduling policy says "run only where it does not slow the others down"; stopping the
//! worker (`SIGSTOP`) and continuing it (`SIGCONT`) does, and holds even a commit, which no
//! pause inside the worker could cut.
//!
//! The load is the machine's: the CPU time the kernel counts busy on all cores, less the
//! worker's own ([`Busy`]). (The runtime's own busy share was tried first: under a
//! saturating load of reads it read well short of busy, since its threads wait on the
//! kernel and on sled, and the worker was then hardly held.) The worker's share of a period
//! falls from all of it while the others keep less than half the machine busy, to a fifth
//! at 90% and above ([`CURVE`]): under any load the worker is let run part of each period.
//! Since it also runs under the idle policy, on a machine the requests saturate it gets
//! little of that part, and a rebuild then moves slowly; it runs at full pace again as soon
//! as the load eases.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, Signal};

use crate::load::{Busy, Curve, PERIOD};
use crate::supervise::lock;

/// The worker's share of a period, from the machine's busy share without it: all of the
/// period up to half busy, a fifth of it at 90% and above.
const CURVE: Curve = Curve {
    easy: 0.5,
    full: 0.9,
    floor: 0.2,
};

/// Stops and continues a worker process, one period after another, while it lives.
pub(super) struct Pacer {
    control: Arc<Mutex<Control>>,
    /// Nanoseconds the worker has been held stopped.
    held: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

/// Who is paced, and whether pacing has ended: once it has, no signal is sent again (the
/// process may have been reaped, and its number given to another).
struct Control {
    pid: Pid,
    ended: bool,
}

impl Pacer {
    /// Paces the process `pid` against the load of the rest of the machine. The caller
    /// must drop the pacer before it reaps the process.
    pub(super) fn start(pid: Pid) -> Pacer {
        let mut load = Busy::without(pid);
        Pacer::by(pid, move || {
            let load = load.since_last();
            tracing::debug!(load, "the machine's load, for the rebuild's pace");
            load
        })
    }

    /// Paces `pid` by the load `load` says each period.
    fn by(pid: Pid, mut load: impl FnMut() -> f64 + Send + 'static) -> Pacer {
        let control = Arc::new(Mutex::new(Control { pid, ended: false }));
        let held = Arc::new(AtomicU64::new(0));
        let task = tokio::spawn({
            let control = control.clone();
            let held = held.clone();
            async move {
                loop {
                    let run = CURVE.share(load());
                    if run >= 1.0 {
                        tokio::time::sleep(PERIOD).await;
                        continue;
                    }
                    let on = PERIOD.mul_f64(run);
                    tokio::time::sleep(on).await;
                    if !send(&control, Signal::STOP) {
                        return;
                    }
                    let off = PERIOD.saturating_sub(on);
                    tokio::time::sleep(off).await;
                    if !send(&control, Signal::CONT) {
                        return;
                    }
                    let off = u64::try_from(off.as_nanos()).unwrap_or(u64::MAX);
                    held.fetch_add(off, Ordering::Relaxed);
                }
            }
        });
        Pacer {
            control,
            held,
            task,
        }
    }

    /// How long the worker has been held stopped so far.
    pub(super) fn held(&self) -> Duration {
        Duration::from_nanos(self.held.load(Ordering::Relaxed))
    }
}

impl Drop for Pacer {
    /// Leaves the worker running, and sends it nothing more.
    fn drop(&mut self) {
        self.task.abort();
        let mut control = lock(&self.control);
        if !control.ended {
            control.ended = true;
            let _ = rustix::process::kill_process(control.pid, Signal::CONT);
        }
    }
}

/// Sends `signal` unless pacing has ended; whether it goes on.
fn send(control: &Mutex<Control>, signal: Signal) -> bool {
    let mut control = lock(control);
    if control.ended {
        return false;
    }
    match rustix::process::kill_process(control.pid, signal) {
        Ok(()) => true,
        Err(e) => {
            // Gone: nothing to pace.
            tracing::debug!(error = %e, "the rebuild's worker takes no signal");
            control.ended = true;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state letter of process `pid` (`T` when stopped), from `/proc`.
    fn state(pid: u32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
        let (_, after_name) = stat.rsplit_once(')').expect("a command name");
        after_name.trim_start().chars().next().expect("a state")
    }

    /// A process to pace, which does nothing for a minute: it, its id, its `Pid`.
    fn sleeper() -> (tokio::process::Child, u32, Pid) {
        let child = tokio::process::Command::new("sleep")
            .arg("60")
            .kill_on_drop(true)
            .spawn()
            .expect("sleep");
        let id = child.id().expect("running");
        let pid = Pid::from_raw(i32::try_from(id).expect("a pid")).expect("not 0");
        (child, id, pid)
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_paced_process_is_stopped_part_of_each_period_and_left_running_when_pacing_ends() {
        let (mut child, id, pid) = sleeper();

        let pacer = Pacer::by(pid, || 1.0);
        let mut seen = String::new();
        let until = tokio::time::Instant::now() + PERIOD * 10;
        while tokio::time::Instant::now() < until {
            let now = state(id);
            if !seen.ends_with(now) {
                seen.push(now);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(
            seen.contains('T') && seen.contains("TS"),
            "stopped and continued: {seen}"
        );
        assert!(pacer.held() >= PERIOD, "held {:?}", pacer.held());

        drop(pacer);
        for _ in 0..(PERIOD * 3).as_millis() / 5 {
            assert_ne!(state(id), 'T', "not stopped once pacing ends");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        child.kill().await.expect("killed");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_idle_machine_holds_nothing() {
        let (mut child, id, pid) = sleeper();
        let pacer = Pacer::by(pid, || 0.2);
        for _ in 0..(PERIOD * 5).as_millis() / 5 {
            assert_ne!(state(id), 'T');
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(pacer.held(), Duration::ZERO);
        drop(pacer);
        child.kill().await.expect("killed");
    }
}
