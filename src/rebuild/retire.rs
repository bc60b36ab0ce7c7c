//! The end of a store that a rebuild replaced, once it is closed
//! ([`ReadModels::close`](crate::read_models::ReadModels::close)): its directory removed
//! a little at a time, giving way to requests (or moved aside, when it was damaged).

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::load::{Curve, GiveWay, REQUESTS_FIRST};
use crate::read_models;

/// Bytes a file is cut by at a time before it is removed: the kernel frees a file's
/// cached pages and its blocks as it is cut or removed, and a cut of 16 MiB took long
/// enough to be a long wait for a request queued behind it.
const CUT_BYTES: u64 = 1 << 20;

/// The removal's share of the time: as a catch-up's, down to a two-hundredth while the
/// requests' threads wait (under reads that saturate the machine, 4 GiB would take some
/// ten to fifteen minutes, by the steps' times; not measured). Nothing waits for it but
/// the disk space. This share, with cuts of 1 MiB, gave the reads in the catch-up right
/// after a swap a lower p99 than a tenth (a catch-up's floor) or a fiftieth did (one run
/// each).
const REMOVAL: Curve = Curve {
    floor: 0.005,
    ..REQUESTS_FIRST
};

/// The directory of a replaced store, closed, removed, or moved aside if it was damaged.
/// A removal stops when `stop` is cancelled (the service stopping, which would otherwise
/// wait for it): the next start removes what is left (`read_models::remove_stale`).
pub(super) fn retire(old_dir: &Path, data_dir: &Path, repair: bool, stop: &CancellationToken) {
    let started = Instant::now();
    if repair {
        let aside = read_models::damaged_aside(data_dir);
        match std::fs::rename(old_dir, &aside) {
            Ok(()) => tracing::error!(
                moved_to = %aside.display(),
                "damaged read models replaced by rebuilt ones and moved aside"
            ),
            Err(e) => tracing::error!(
                store = %old_dir.display(),
                error = %e,
                "moving the damaged read models aside"
            ),
        }
    } else if read_models::active_dir(data_dir).is_ok_and(|active| active != old_dir) {
        match remove(old_dir, stop) {
            Ok(paused) => tracing::info!(
                store = %old_dir.display(),
                ms = started.elapsed().as_millis() as u64,
                paused_ms = paused.as_millis() as u64,
                "removed the replaced read models"
            ),
            Err(e) => tracing::warn!(
                store = %old_dir.display(),
                error = %e,
                "removing the replaced read models"
            ),
        }
    }
}

/// Removes the store directory `dir` while the service answers: a little at a time,
/// giving way to requests ([`remove_giving_way`]), until `stop` is cancelled. Returns how
/// long it paused. A stopped removal leaves the rest to the next start
/// (`read_models::remove_stale`), which removes every store directory not in use.
pub(super) fn remove(dir: &Path, stop: &CancellationToken) -> std::io::Result<Duration> {
    let mut pace = Pace {
        give_way: GiveWay::new(REMOVAL),
        paused: Duration::ZERO,
        stop,
    };
    remove_giving_way(dir, &mut pace)?;
    Ok(pace.paused)
}

/// How a removal goes: giving way to requests, the pauses so far, and whether to stop.
struct Pace<'a> {
    give_way: GiveWay,
    paused: Duration,
    stop: &'a CancellationToken,
}

impl Pace<'_> {
    /// After a step that took `ran`: the pause the requests want, in slices of at most
    /// [`load::PERIOD`](crate::load::PERIOD) so that a stop is seen; an error once stopped.
    fn after(&mut self, ran: Duration) -> std::io::Result<()> {
        let mut pause = self.give_way.pause_after(ran);
        while !pause.is_zero() && !self.stop.is_cancelled() {
            let slice = pause.min(crate::load::PERIOD);
            std::thread::sleep(slice);
            self.paused += slice;
            pause -= slice;
        }
        if self.stop.is_cancelled() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "the service is stopping; the next start removes the rest",
            ));
        }
        Ok(())
    }
}

/// Removes `dir` and all it holds, each file cut down [`CUT_BYTES`] at a time first,
/// pausing after each step as `pace` says. Removed at once, a large store took a thread
/// for seconds, and the reads' p99 in the catch-up right after a rebuild's swap was several
/// times what it was with the removal left out.
fn remove_giving_way(dir: &Path, pace: &mut Pace<'_>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            remove_giving_way(&path, pace)?;
            continue;
        }
        if kind.is_file() {
            let file = std::fs::OpenOptions::new().write(true).open(&path)?;
            let mut len = file.metadata()?.len();
            while len > CUT_BYTES {
                len -= CUT_BYTES;
                let began = Instant::now();
                file.set_len(len)?;
                pace.after(began.elapsed())?;
            }
        }
        let began = Instant::now();
        std::fs::remove_file(&path)?;
        pace.after(began.elapsed())?;
    }
    std::fs::remove_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_removed_whole_with_its_large_files_cut_first() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = dir.path().join("read-models");
        std::fs::create_dir_all(store.join("blobs")).expect("mkdir");
        let big = std::fs::File::create(store.join("db")).expect("create");
        big.set_len(3 * CUT_BYTES + 5).expect("a sparse file");
        std::fs::write(store.join("conf"), b"conf").expect("write");
        for i in 0..3 {
            std::fs::write(store.join("blobs").join(i.to_string()), b"blob").expect("write");
        }
        remove(&store, &CancellationToken::new()).expect("removed");
        assert!(!store.exists());
        assert!(dir.path().exists(), "only the directory given goes");
    }

    #[test]
    fn a_removal_stops_when_the_service_does() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = dir.path().join("read-models");
        std::fs::create_dir_all(&store).expect("mkdir");
        let big = std::fs::File::create(store.join("db")).expect("create");
        big.set_len(3 * CUT_BYTES).expect("a sparse file");
        let stop = CancellationToken::new();
        stop.cancel();
        let stopped = remove(&store, &stop).expect_err("stopped");
        assert_eq!(stopped.kind(), std::io::ErrorKind::Interrupted);
        assert!(store.exists(), "left to the next start");
    }
}
