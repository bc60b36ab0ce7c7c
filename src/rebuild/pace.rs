//! A rebuild's worker gives way to the API's requests: while the rest of the machine is
//! busy, the worker runs only part of each [`PERIOD`], and is stopped for the rest.
//!
//! The worker already runs under the idle scheduling policy, so a request's thread that wakes
//! takes a core from it at once. On a machine whose cores the requests keep busy it still
//! costs them: it fills the gaps between their bursts, and their threads come back to caches
//! it has filled with its own pages. With `wrk` reading documents at 64 connections on two
//! cores, the reads' p99 was 4.2 ms with the worker stopped and 6.4 ms with it running
//! (BENCHMARKS.md, "Tenth stop"). No scheduling policy says "run only where it does not slow
//! the others down"; stopping the worker (`SIGSTOP`) and continuing it (`SIGCONT`) does, and
//! holds even a commit, which no pause inside the worker could cut.
//!
//! The load is the machine's: the CPU time the kernel counts busy on all cores, less the
//! worker's own. (The runtime's own busy share was tried first: under a saturating load of
//! reads it read 0.6 to 0.8, since its threads wait on the kernel and on sled, and the worker
//! was then hardly held.) The worker's share of a period falls from all of it while the
//! others keep less than [`EASY`] of the machine busy, to [`FLOOR`] at [`FULL`] and above:
//! under any load the worker is let run part of each period. Since it also runs under the
//! idle policy, on a machine the requests saturate it gets little of that part, and a
//! rebuild then moves slowly; it runs at full pace again as soon as the load eases.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, Signal};

/// How often the worker's share is worked out again, from the load of the period before.
pub(super) const PERIOD: Duration = Duration::from_millis(100);
/// The machine's busy share (without the worker) up to which the worker runs all the time.
const EASY: f64 = 0.5;
/// The busy share at and above which it runs only [`FLOOR`] of the time.
const FULL: f64 = 0.9;
/// The least share of each period the worker runs.
const FLOOR: f64 = 0.2;

/// The share of a period the worker may run when the rest of the machine was busy for `load`
/// of its capacity (0 to 1) in the period before.
pub(super) fn share(load: f64) -> f64 {
    if load.is_nan() || load <= EASY {
        return 1.0;
    }
    let over = ((load - EASY) / (FULL - EASY)).min(1.0);
    1.0 - over * (1.0 - FLOOR)
}

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
        let mut load = Load::of(pid);
        Pacer::by(pid, move || load.since_last())
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
                    let run = share(load());
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

fn lock(control: &Mutex<Control>) -> std::sync::MutexGuard<'_, Control> {
    control
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How much of the machine's CPU everything but the worker asked for, from one look to the
/// next: the CPU time the kernel counts busy, less the worker's own (Linux's `/proc`;
/// elsewhere nothing is known, and the worker is never held).
struct Load {
    worker: Pid,
    last: Option<Ticks>,
}

/// Clock ticks since boot: all CPUs', those they were busy, the worker's.
#[derive(Clone, Copy)]
struct Ticks {
    all: u64,
    busy: u64,
    worker: u64,
}

impl Load {
    fn of(worker: Pid) -> Load {
        let mut load = Load { worker, last: None };
        load.since_last();
        load
    }

    /// From 0 (the machine idle but for the worker) to 1 (every core busy without it)
    /// since the last call; 0 when it cannot be read.
    fn since_last(&mut self) -> f64 {
        let now = ticks(self.worker);
        let load = match (self.last, now) {
            (Some(last), Some(now)) if now.all > last.all => {
                let worker = now.worker.saturating_sub(last.worker);
                let others = now.busy.saturating_sub(last.busy).saturating_sub(worker);
                others as f64 / (now.all - last.all) as f64
            }
            _ => 0.0,
        };
        self.last = now;
        tracing::debug!(load, "the machine's load, for the rebuild's pace");
        load.clamp(0.0, 1.0)
    }
}

/// The ticks now, from `/proc/stat` and the worker's `/proc/<pid>/stat`.
fn ticks(worker: Pid) -> Option<Ticks> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    // `cpu  user nice system idle iowait irq softirq steal ...` (guests are within user).
    let cpu: Vec<u64> = stat
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .take(8)
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let all: u64 = cpu.iter().sum();
    let idle = cpu.get(3)? + cpu.get(4)?;
    let own = std::fs::read_to_string(format!("/proc/{}/stat", worker.as_raw_nonzero())).ok()?;
    // After the command name (which may hold spaces): state is the 1st field, user and
    // system time the 12th and 13th.
    let (_, after_name) = own.rsplit_once(')')?;
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(Ticks {
        all,
        busy: all.saturating_sub(idle),
        worker: user + system,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_runs_all_the_time_on_an_easy_machine_and_a_floor_of_it_on_a_full_one() {
        for load in [0.0, 0.3, EASY, f64::NAN] {
            assert_eq!(share(load), 1.0, "at {load}");
        }
        for load in [FULL, 0.95, 1.0] {
            assert!((share(load) - FLOOR).abs() < 1e-9, "at {load}");
        }
        let between: Vec<f64> = [0.55, 0.6, 0.7, 0.8, 0.85].map(share).to_vec();
        assert!(
            between.windows(2).all(|w| w[0] > w[1]),
            "less as the load grows: {between:?}"
        );
        assert!(between.iter().all(|s| (FLOOR..1.0).contains(s)));
    }

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

    #[cfg(target_os = "linux")]
    #[test]
    fn the_ticks_count_the_machine_and_the_workers_own_cpu_time() {
        let me = rustix::process::getpid();
        let before = ticks(me).expect("readable");
        assert!(before.all >= before.busy && before.busy >= before.worker);
        let spin = std::time::Instant::now();
        let mut n = 0_u64;
        while spin.elapsed() < Duration::from_millis(300) {
            n = std::hint::black_box(n.wrapping_add(1));
        }
        let after = ticks(me).expect("readable");
        assert!(after.worker > before.worker, "the spin counted: {n}");
        assert!(after.all > before.all);
        // Its own time is not the others' load: this process was the one busy.
        let mut load = Load {
            worker: me,
            last: Some(before),
        };
        assert!((0.0..=1.0).contains(&load.since_last()));
    }
}
