//! How much of the machine's CPU others want, for background work that gives way to them:
//! a rebuild's worker process and its removal of a store no longer used
//! ([`crate::rebuild`]), and the projector's catch-up ([`crate::projector`]). Each look
//! says how much was wanted since the look before, and a [`Curve`] turns that into the
//! share of the time the background work may run.
//!
//! Two measures, for two kinds of background work:
//!
//! - [`Busy`]: the CPU time the kernel counts busy on all cores, less a process's own.
//!   Right for a process under the idle scheduling policy (a rebuild's worker): the others
//!   get all they ask for, so what they got is what they wanted.
//! - [`Waiting`]: the time the threads that answer requests spent runnable but waiting
//!   for a core. Right for threads at their own priority ([`GiveWay`]): the kernel
//!   shares the cores between them, so what the requests' threads got says little of
//!   what they wanted, but any time they spent waiting is time the work took from them.
//!
//! Both read Linux's `/proc`; elsewhere nothing is known, and nothing gives way.
//!
//! A thread of its own for long work gives way by priority instead ([`give_way`]).

use std::time::Duration;

use rustix::process::Pid;

/// How often background work looks at the load again, from the load since its last look.
pub const PERIOD: Duration = Duration::from_millis(100);

/// The share of the time background work may run, from the load since the last look:
/// all of it up to `easy`, falling in a line to `floor` at `full` and above. Under any
/// load the work gets `floor` of the time, so that it ends.
#[derive(Debug, Clone, Copy)]
pub struct Curve {
    /// The load up to which the work runs all the time.
    pub easy: f64,
    /// The load at and above which it runs only `floor` of the time.
    pub full: f64,
    /// The least share of the time it runs.
    pub floor: f64,
}

impl Curve {
    /// The share of the time the work may run under `load` (all of it if unknown).
    pub fn share(&self, load: f64) -> f64 {
        if load.is_nan() || load <= self.easy {
            return 1.0;
        }
        let over = ((load - self.easy) / (self.full - self.easy)).min(1.0);
        1.0 - over * (1.0 - self.floor)
    }
}

/// The machine's busy share without one process: from 0 (idle but for it) to 1 (every
/// core busy without it), from one look to the next.
pub struct Busy {
    process: Pid,
    last: Option<BusyTicks>,
}

/// Clock ticks since boot: all CPUs', those they were busy, the process's.
#[derive(Clone, Copy)]
struct BusyTicks {
    all: u64,
    busy: u64,
    process: u64,
}

impl Busy {
    /// The machine's load without `process`, from now on.
    pub fn without(process: Pid) -> Busy {
        let mut load = Busy {
            process,
            last: None,
        };
        load.since_last();
        load
    }

    /// Since the last look; 0 when it cannot be read.
    pub fn since_last(&mut self) -> f64 {
        let now = busy_ticks(self.process);
        let load = match (self.last, now) {
            (Some(last), Some(now)) if now.all > last.all => {
                let process = now.process.saturating_sub(last.process);
                let others = now.busy.saturating_sub(last.busy).saturating_sub(process);
                others as f64 / (now.all - last.all) as f64
            }
            _ => 0.0,
        };
        self.last = now;
        load.clamp(0.0, 1.0)
    }
}

/// The ticks now, from `/proc/stat` and the process's `/proc/<pid>/stat`.
fn busy_ticks(process: Pid) -> Option<BusyTicks> {
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
    let own = std::fs::read_to_string(format!("/proc/{}/stat", process.as_raw_nonzero())).ok()?;
    // After the command name (which may hold spaces): state is the 1st field, user and
    // system time the 12th and 13th.
    let (_, after_name) = own.rsplit_once(')')?;
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(BusyTicks {
        all,
        busy: all.saturating_sub(idle),
        process: user + system,
    })
}

/// The name of the threads of the runtime that answers requests (`racing serve` names
/// them so): those whose waits [`Waiting`] counts for work that gives way to them.
pub const REQUEST_THREADS: &str = "racing-requests";

/// How many of this process's threads of one name were waiting for a core, on average,
/// from one look to the next: 0 when none waited, 1 when one always did (or two half the
/// time). Each thread's wait is the kernel's count of the time it was runnable but not
/// running (`/proc/self/task/<tid>/schedstat`). Only threads of the name count: sled's
/// writers and flusher, busy with the background work's own writes, wait too.
pub struct Waiting {
    /// The threads' name (`comm`, at most 15 bytes).
    name: &'static str,
    /// Each such thread's wait at the last look, nanoseconds, by thread id.
    waits: Vec<(i32, u64)>,
    at: std::time::Instant,
}

impl Waiting {
    /// The waits of this process's threads named `name`, from now on.
    pub fn of(name: &'static str) -> Waiting {
        let mut waiting = Waiting {
            name,
            waits: Vec::new(),
            at: std::time::Instant::now(),
        };
        waiting.since_last();
        waiting
    }

    /// Since the last look; 0 when it cannot be read or no such thread ran. A thread
    /// that began since counts from its start, one that ended since does not count.
    pub fn since_last(&mut self) -> f64 {
        let now = std::time::Instant::now();
        let elapsed = now.duration_since(self.at).as_nanos() as f64;
        self.at = now;
        let mut waits = self.waits_now();
        waits.sort_unstable();
        let waited: u64 = waits
            .iter()
            .map(|&(tid, wait)| {
                let before = self
                    .waits
                    .binary_search_by_key(&tid, |&(t, _)| t)
                    .map_or(0, |i| self.waits[i].1);
                wait.saturating_sub(before)
            })
            .sum();
        self.waits = waits;
        if elapsed <= 0.0 {
            return 0.0;
        }
        waited as f64 / elapsed
    }

    fn waits_now(&self) -> Vec<(i32, u64)> {
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return Vec::new();
        };
        tasks
            .flatten()
            .filter_map(|task| {
                let tid: i32 = task.file_name().to_str()?.parse().ok()?;
                let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
                if comm.trim_end() != self.name {
                    return None;
                }
                // `run_ns wait_ns timeslices`
                let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
                let wait = stat.split_whitespace().nth(1)?.parse().ok()?;
                Some((tid, wait))
            })
            .collect()
    }
}

/// The share of the time work that gives way to requests runs, from how many of the
/// threads that answer requests were waiting for a core since the last look
/// ([`Waiting`]): all of it while under a quarter of a thread waited on average, a tenth
/// of it at half a thread and above. Tuned on the projector's catch-up under reads that
/// saturate the machine: against a floor of a fifth, a tenth gave reads a p99 as low or
/// lower (two runs); reaching it at half a thread instead of one gave a lower p99 again
/// (one run each), for catch-ups over twice as long.
pub const REQUESTS_FIRST: Curve = Curve {
    easy: 0.25,
    full: 0.5,
    floor: 0.1,
};

/// The pace of work that gives way to requests while it runs at their own priority: the
/// projector's catch-up, the removal of a store a rebuild replaced. Such work's threads
/// share the cores with the requests' (lowering a thread's priority cannot be undone
/// without privileges, and a thread of lower priority holding a lock the requests need
/// would hold them), so what the requests' threads got says little of what they wanted;
/// the time they spent waiting for a core does. The work goes in steps of a few
/// milliseconds, and after each it pauses so that it runs its curve's share of the time
/// (as [`REQUESTS_FIRST`]), looked at again every [`PERIOD`]. It starts at the floor: at
/// full pace until the first look, it held the requests back for that long. Work that must
/// end while the requests never ease can be given a patience ([`GiveWay::with_patience`]).
pub struct GiveWay {
    curve: Curve,
    waiting: Waiting,
    looked: std::time::Instant,
    share: f64,
    /// When it started giving way.
    began: std::time::Instant,
    /// How long it may run at no more than its curve's floor.
    patience: Option<Duration>,
}

impl GiveWay {
    /// The pace from now on, by `curve`.
    pub fn new(curve: Curve) -> GiveWay {
        let now = std::time::Instant::now();
        GiveWay {
            curve,
            waiting: Waiting::of(REQUEST_THREADS),
            looked: now,
            share: curve.floor,
            began: now,
            patience: None,
        }
    }

    /// The same pace for `patience`; after it, its least share rises in a line from the
    /// curve's floor to all of the time at twice `patience`, whatever the requests want:
    /// so that work the requests would otherwise hold back for as long as they last (the
    /// projector's catch-up under reads that saturate the machine) ends after all.
    pub fn with_patience(self, patience: Duration) -> GiveWay {
        GiveWay {
            patience: Some(patience),
            ..self
        }
    }

    /// The least share of the time after giving way for `gave_way`.
    fn floor_after(&self, gave_way: Duration) -> f64 {
        let floor = self.curve.floor;
        match self.patience {
            Some(p) if gave_way > p && !p.is_zero() => {
                let over = ((gave_way - p).as_secs_f64() / p.as_secs_f64()).min(1.0);
                floor + over * (1.0 - floor)
            }
            _ => floor,
        }
    }

    /// Whether the work now runs only part of the time.
    pub fn gives_way(&self) -> bool {
        self.share < 1.0
    }

    /// The pause after a step that took `ran`.
    pub fn pause_after(&mut self, ran: Duration) -> Duration {
        if self.looked.elapsed() >= PERIOD {
            let waiting = self.waiting.since_last();
            self.looked = std::time::Instant::now();
            self.share = self
                .curve
                .share(waiting)
                .max(self.floor_after(self.began.elapsed()));
            tracing::debug!(waiting, share = self.share, "giving way to requests");
        }
        if self.share >= 1.0 {
            return Duration::ZERO;
        }
        ran.mul_f64((1.0 - self.share) / self.share)
    }
}

/// Lowers the calling thread to `nice`, for threads that do nothing but background or
/// long work (the long reads' threads of `src/http/`): Linux keeps a nice value per thread,
/// and a thread started from it inherits it. Elsewhere the value is the whole process's,
/// and nothing is done. It cannot be undone without privileges, so it is for threads of
/// their own, never a pool's that other work shares.
pub fn give_way(nice: i32) {
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(None, nice) {
        tracing::warn!(error = %e, nice, "a thread could not lower its priority");
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// `work` on a thread of its own named `name`, lowered to `nice` ([`give_way`]), awaited:
/// long reads and writes of a whole store beside the API and the projector.
pub async fn on_own_thread<T: Send + 'static>(
    name: &str,
    nice: i32,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<T> {
    let (done, result) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            give_way(nice);
            let _ = done.send(work());
        })?;
    result
        .await
        .map_err(|_| std::io::Error::other(format!("the thread {name} ended")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn giving_way_starts_at_the_floor_pausing_for_the_rest_of_its_share() {
        let mut pace = GiveWay::new(REQUESTS_FIRST);
        assert!(pace.gives_way());
        // (Not yet due to look again at the threads' waits, which this test does not set.)
        pace.looked = std::time::Instant::now();
        // Before the first look: the floor's share of the time, so paused for the rest.
        let floor = REQUESTS_FIRST.floor;
        let pause = pace.pause_after(Duration::from_millis(10));
        let rest = Duration::from_millis(10).mul_f64((1.0 - floor) / floor);
        assert!(pause > Duration::from_millis(10), "{pause:?}");
        assert!(
            pause.abs_diff(rest) < Duration::from_micros(1),
            "{pause:?} against {rest:?}"
        );
        // At full pace: no pause, and steps of their full length.
        pace.share = 1.0;
        pace.looked = std::time::Instant::now();
        assert!(!pace.gives_way());
        assert_eq!(pace.pause_after(Duration::from_millis(10)), Duration::ZERO);
    }

    #[test]
    fn past_its_patience_giving_way_rises_to_all_of_the_time_at_twice_it() {
        let patience = Duration::from_secs(10);
        let pace = GiveWay::new(REQUESTS_FIRST).with_patience(patience);
        let floor = REQUESTS_FIRST.floor;
        let after = |secs: f64| pace.floor_after(Duration::from_secs_f64(secs));
        assert_eq!(after(0.0), floor);
        assert_eq!(after(10.0), floor);
        assert!(
            (after(15.0) - (floor + 1.0) / 2.0).abs() < 1e-9,
            "{}",
            after(15.0)
        );
        assert_eq!(after(20.0), 1.0);
        assert_eq!(after(600.0), 1.0);
        // Without a patience, the floor for ever.
        assert_eq!(
            GiveWay::new(REQUESTS_FIRST).floor_after(Duration::from_secs(600)),
            floor
        );

        // At its next look, work that has given way for twice its patience runs all of the
        // time, however much the requests want: no pause.
        let mut pace = GiveWay::new(REQUESTS_FIRST).with_patience(patience);
        let long_ago = std::time::Instant::now() - 2 * patience;
        pace.began = long_ago;
        pace.looked = long_ago;
        assert_eq!(pace.pause_after(Duration::from_millis(10)), Duration::ZERO);
        assert!(!pace.gives_way());
    }

    const CURVE: Curve = Curve {
        easy: 0.5,
        full: 0.9,
        floor: 0.2,
    };

    #[test]
    fn work_runs_all_the_time_under_an_easy_load_and_a_floor_of_it_under_a_full_one() {
        for load in [0.0, 0.3, CURVE.easy, f64::NAN] {
            assert_eq!(CURVE.share(load), 1.0, "at {load}");
        }
        for load in [CURVE.full, 0.95, 1.0, 7.0] {
            assert!((CURVE.share(load) - CURVE.floor).abs() < 1e-9, "at {load}");
        }
        let between: Vec<f64> = [0.55, 0.6, 0.7, 0.8, 0.85].map(|l| CURVE.share(l)).to_vec();
        assert!(
            between.windows(2).all(|w| w[0] > w[1]),
            "less as the load grows: {between:?}"
        );
        assert!(between.iter().all(|s| (CURVE.floor..1.0).contains(s)));
    }

    /// Keeps the calling thread busy for `time`.
    fn spin(time: Duration) -> u64 {
        let spin = std::time::Instant::now();
        let mut n = 0_u64;
        while spin.elapsed() < time {
            n = std::hint::black_box(n.wrapping_add(1));
        }
        n
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_busy_load_counts_the_machine_without_the_process() {
        let me = rustix::process::getpid();
        let before = busy_ticks(me).expect("readable");
        assert!(before.all >= before.busy && before.busy >= before.process);
        let n = spin(Duration::from_millis(300));
        let after = busy_ticks(me).expect("readable");
        assert!(after.process > before.process, "the spin counted: {n}");
        assert!(after.all > before.all);
        let mut load = Busy {
            process: me,
            last: Some(before),
        };
        assert!((0.0..=1.0).contains(&load.since_last()));
    }

    /// Threads that want more cores than the machine has wait for them; only those of
    /// the name asked for are counted.
    #[cfg(target_os = "linux")]
    #[test]
    fn threads_of_a_name_kept_from_a_core_are_counted_waiting_and_no_others() {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let spinners = 2 * cores + 2;
        let (started, ready) = std::sync::mpsc::channel();
        let handles: Vec<_> = (0..spinners)
            .map(|_| {
                let started = started.clone();
                std::thread::Builder::new()
                    .name("load-test-spin".into())
                    .spawn(move || {
                        let _ = started.send(());
                        spin(Duration::from_millis(600))
                    })
                    .expect("a thread")
            })
            .collect();
        for _ in 0..spinners {
            ready.recv().expect("started");
        }
        let mut spinning = Waiting::of("load-test-spin");
        let mut nobody = Waiting::of("load-test-none");
        std::thread::sleep(Duration::from_millis(400));
        let (waited, none) = (spinning.since_last(), nobody.since_last());
        for h in handles {
            let _ = h.join();
        }
        // More runnable threads than cores: on average at least one waited.
        assert!(
            waited > 0.5,
            "{spinners} spinning on {cores} cores: {waited}"
        );
        assert_eq!(none, 0.0, "no thread of that name");
    }
}
