//! A rebuild's fold in a process of its own: `racing rebuild-worker`, which the service
//! starts (a hidden command, not for people). The service reads the log as before and
//! hands each batch of messages to the worker on its standard input; the worker folds them
//! into the fresh store as a bulk load (each batch folds while the one before it is
//! written, each write atomic with its checkpoint: `Loader`), and answers with the
//! checkpoint the batch reaches, a JSON line on its standard output. When its input
//! closes it waits for the last write, does the upkeep of the applied ids that is due,
//! flushes the store and exits, and the service opens the store to fold the last messages
//! itself, holding the projector, up to exactly its checkpoint.
//!
//! Why a process: sled 0.34 takes a process-wide lock for each commit (`apply_batch`), and
//! every read of every store in the process waits for it; a rebuild folding beside the
//! store in use held the API's reads for each of its commits. In a process of its own, the
//! rebuild's commits hold no reader, so they can be as large as a catch-up's, and the
//! worker runs under the idle scheduling policy, so that the API's requests have the CPU
//! first.
//!
//! The frames on its input: a message is `M`, then its stream sequence, the messages the
//! stream held past it (u64 each), when JetStream stored it (i128 nanoseconds), its
//! subject and its payload (a u32 length, then the bytes), all little-endian; `C` ends a
//! batch, to be committed.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream;
use racing_projections::{Loader, Options, Store};
use rustix::process::Pid;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::pace::Pacer;
use crate::projector::bulk::{fold_decoded, load_decoded};
use crate::projector::decoded::Decoded;
use crate::read_models::LET_GO_PATIENCE;

/// A message's frame starts with this.
const MESSAGE: u8 = b'M';
/// The end of a batch.
const COMMIT: u8 = b'C';
/// Longest subject or payload a frame may carry (NATS's own payload limit is far below).
const MAX_PART: usize = 64 << 20;
/// The nice value of the worker where the idle policy cannot be had: the lowest.
const NICE: i32 = 19;

/// `racing rebuild-worker`: what the service tells the worker.
#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    /// The fresh store's directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// The stream the store is built from (`racing::nats::stream_identity`).
    #[arg(long)]
    pub stream_identity: String,
    /// The store's page cache, in bytes.
    #[arg(long)]
    pub cache_bytes: u64,
    /// The store's filter of applied event ids, in bytes: its first layer.
    #[arg(long)]
    pub id_filter_bytes: usize,
    /// The most bytes of all that filter's layers.
    #[arg(long)]
    pub id_filter_most_bytes: usize,
    /// The most bytes of records the load holds in memory ([`racing_projections::Loader`]);
    /// 0: a commit a batch.
    #[arg(long)]
    pub replay_bytes: usize,
}

/// What the worker answers after each batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Reached {
    /// The fresh store's checkpoint once the batch is written (a load's write may still be
    /// in progress; the worker waits for it before it exits).
    pub checkpoint: u64,
    /// Messages the stream held past the batch's last one.
    pub pending: u64,
}

/// Runs the worker, on the calling thread (and the threads sled starts from it), until its
/// input ends.
pub async fn run(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    die_with_parent()?;
    lower_priority();
    let options = Options {
        id_filter_bytes: args.id_filter_bytes,
        id_filter_most_bytes: args.id_filter_most_bytes,
        cache_bytes: args.cache_bytes,
        replay_bytes: args.replay_bytes,
    };
    // The service loaded the store's start (a snapshot, a copy) and dropped it just now.
    let store = Store::open_once_let_go(&args.dir, options, LET_GO_PATIENCE)
        .with_context(|| format!("opening {}", args.dir.display()))?;
    store.set_stream(&args.stream_identity)?;
    let mut input = std::io::BufReader::with_capacity(1 << 20, std::io::stdin().lock());
    let mut output = std::io::stdout().lock();
    // A bulk load: each batch folds while the one before it is written ([`Loader`]).
    let mut loader = match options.replay_bytes {
        0 => None,
        budget => Some(Loader::new(&store, budget)?),
    };
    while !input.fill_buf().context("reading the batches")?.is_empty() {
        let batch = std::iter::from_fn(|| next_message(&mut input).transpose());
        // One write a batch: nothing in this process waits for it.
        let (checkpoint, pending) = match loader.as_mut() {
            Some(loader) => load_decoded(loader, batch)?,
            None => fold_decoded(&store, batch, |_| false)
                .map(|(stats, pending)| (stats.checkpoint, pending))?,
        };
        let reached = Reached {
            checkpoint,
            pending,
        };
        serde_json::to_writer(&mut output, &reached)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    if let Some(mut loader) = loader {
        loader.finish()?;
    }
    // The merges and the filter's save that the fold left due run here, where they hold
    // no reader, not in the service's first batches after the swap.
    store.settle_applied_ids()?;
    store.flush().await?;
    Ok(ExitCode::SUCCESS)
}

/// Has the kernel kill this process when the service's thread that started it ends. The
/// service stops the worker for part of each period while requests are busy ([`Pacer`]);
/// a worker stopped when the service dies would never read the end of its input, and would
/// stay stopped, holding its store, for good. Killed, it leaves a store the next start
/// removes as stale. (The service starts it from a thread that lives as long as its handle
/// of the worker: `spawn_from_a_thread_of_its_own`.)
fn die_with_parent() -> anyhow::Result<()> {
    #[cfg(target_os = "linux")]
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .context("asking to die with the service")?;
    Ok(())
}

/// Puts this thread, and so the threads sled starts from it when the store opens (Linux
/// keeps a policy and a nice value per thread, and a new thread inherits them), below
/// everything else on the machine: the idle policy where there is one (below even nice
/// 19, sched(7)), else the lowest nice value. Under the idle policy a request's thread
/// that wakes takes the core from the worker at once, and a core running only the worker
/// counts as idle when the scheduler places a thread that wakes.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy};
        let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
        let set = thread_priority::set_thread_priority_and_policy(
            thread_priority::thread_native_id(),
            ThreadPriority::Min,
            idle,
        );
        match set {
            Ok(()) => return,
            Err(e) => {
                tracing::warn!(error = ?e, "the rebuild worker could not take the idle policy")
            }
        }
    }
    if let Err(e) = rustix::process::setpriority_process(None, NICE) {
        tracing::warn!(error = %e, "the rebuild worker could not lower its priority");
    }
}

/// Appends `m`'s frame to `out`.
pub(super) fn encode(m: &jetstream::Message, out: &mut Vec<u8>) -> anyhow::Result<()> {
    let info = m
        .info()
        .map_err(|e| anyhow::anyhow!("message metadata: {e}"))?;
    out.push(MESSAGE);
    out.extend_from_slice(&info.stream_sequence.to_le_bytes());
    out.extend_from_slice(&info.pending.to_le_bytes());
    out.extend_from_slice(&info.published.unix_timestamp_nanos().to_le_bytes());
    for part in [m.subject.as_bytes(), &m.payload[..]] {
        let len = u32::try_from(part.len()).context("a message of over 4 GiB")?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(part);
    }
    Ok(())
}

/// The next message of the batch being read, or `None` at its end.
fn next_message(input: &mut impl Read) -> anyhow::Result<Option<Decoded>> {
    let mut tag = [0; 1];
    input
        .read_exact(&mut tag)
        .context("the input ended inside a batch")?;
    match tag[0] {
        COMMIT => return Ok(None),
        MESSAGE => {}
        other => anyhow::bail!("a frame that starts with byte {other}"),
    }
    let mut head = [0; 32];
    input.read_exact(&mut head).context("a message's frame")?;
    let (seq, rest) = head.split_at(8);
    let (pending, published) = rest.split_at(8);
    let seq = u64::from_le_bytes(seq.try_into()?);
    let pending = u64::from_le_bytes(pending.try_into()?);
    let published = i128::from_le_bytes(published.try_into()?);
    let subject = String::from_utf8(part(input)?).context("a subject that is not UTF-8")?;
    let payload = bytes::Bytes::from(part(input)?);
    Ok(Some(Decoded::new(
        seq,
        pending,
        published,
        subject.into(),
        payload,
    )))
}

/// A length-prefixed part of a frame.
fn part(input: &mut impl Read) -> anyhow::Result<Vec<u8>> {
    let mut len = [0; 4];
    input.read_exact(&mut len).context("a message's frame")?;
    let len = u32::from_le_bytes(len) as usize;
    anyhow::ensure!(
        len <= MAX_PART,
        "a part of {len} bytes in a message's frame"
    );
    let mut bytes = vec![0; len];
    input.read_exact(&mut bytes).context("a message's frame")?;
    Ok(bytes)
}

/// The service's end of a worker.
pub(super) struct Worker {
    /// Gives the API the CPU first, from the worker's first answer on (by then it dies with
    /// the service, [`die_with_parent`]). Declared before `child`, so that it is dropped,
    /// and sends no more signals, before the child is killed and reaped.
    pacer: Option<Pacer>,
    /// How long the worker was held stopped by pacers that have ended.
    held: Duration,
    child: Child,
    /// Keeps the thread that started the worker: it ends when this is dropped, and the
    /// worker with it ([`die_with_parent`]).
    _parent: std::sync::mpsc::Sender<()>,
    input: Option<ChildStdin>,
    replies: Lines<BufReader<ChildStdout>>,
    /// The last line the worker wrote on its standard error, once it has ended.
    said: tokio::task::JoinHandle<String>,
    /// The fresh store's checkpoint, as the worker last answered.
    checkpoint: u64,
}

/// Starts `command` from a thread of its own, which lives until the sender returned is
/// dropped. The worker asks to die with the thread that started it ([`die_with_parent`]):
/// were that one of the runtime's, one that tokio retires (`block_in_place` makes a worker
/// a blocking thread, which ends when idle) would take the worker with it.
fn spawn_from_a_thread_of_its_own(
    mut command: tokio::process::Command,
) -> anyhow::Result<(Child, std::sync::mpsc::Sender<()>)> {
    let runtime = tokio::runtime::Handle::current();
    let (spawned, child) = std::sync::mpsc::sync_channel(1);
    let (keep, kept) = std::sync::mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("rebuild-parent".to_owned())
        .spawn(move || {
            let _runtime = runtime.enter();
            let _ = spawned.send(command.spawn());
            // Until the worker's handle is dropped.
            let _ = kept.recv();
        })?;
    let child = child
        .recv()
        .context("the thread starting the worker ended")??;
    Ok((child, keep))
}

impl Worker {
    /// Starts `program`'s `rebuild-worker` on the store at `dir`, which it makes if there is
    /// none (or which a snapshot filled up to `checkpoint`), built from the stream
    /// `identity`. The worker is killed if this is dropped.
    pub(super) fn start(
        program: &Path,
        dir: &Path,
        options: Options,
        identity: &str,
        checkpoint: u64,
    ) -> anyhow::Result<Worker> {
        let mut command = tokio::process::Command::new(program);
        // Nothing of the service's environment (NATS credentials, API keys) but its logs'
        // settings: the worker needs none of it.
        command.env_clear();
        for setting in ["RACING_LOG", "RACING_LOG_FORMAT"] {
            if let Some(value) = std::env::var_os(setting) {
                command.env(setting, value);
            }
        }
        command
            .arg("rebuild-worker")
            .arg("--dir")
            .arg(dir)
            .args(["--stream-identity", identity])
            .args(["--cache-bytes", &options.cache_bytes.to_string()])
            .args(["--id-filter-bytes", &options.id_filter_bytes.to_string()])
            .args([
                "--id-filter-most-bytes",
                &options.id_filter_most_bytes.to_string(),
            ])
            .args(["--replay-bytes", &options.replay_bytes.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let (mut child, parent) = spawn_from_a_thread_of_its_own(command)
            .with_context(|| format!("starting {} rebuild-worker", program.display()))?;
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(input), Some(output), Some(errors)) = pipes else {
            anyhow::bail!("the rebuild worker's standard streams are missing");
        };
        let said = tokio::spawn(async move {
            let mut lines = BufReader::new(errors).lines();
            let mut last = String::new();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(worker = %line, "rebuild worker");
                last = line;
            }
            last
        });
        Ok(Worker {
            pacer: None,
            held: Duration::ZERO,
            child,
            _parent: parent,
            input: Some(input),
            replies: BufReader::new(output).lines(),
            said,
            checkpoint,
        })
    }

    /// The fresh store's checkpoint, as the worker last answered (where it started before
    /// it has).
    pub(super) fn checkpoint(&self) -> u64 {
        self.checkpoint
    }

    /// Has the worker fold and commit `messages`; what it reached.
    pub(super) async fn fold(
        &mut self,
        messages: &[jetstream::Message],
    ) -> anyhow::Result<Reached> {
        let mut frames = Vec::with_capacity(messages.iter().map(|m| m.payload.len() + 64).sum());
        for m in messages {
            encode(m, &mut frames)?;
        }
        frames.push(COMMIT);
        let Some(input) = self.input.as_mut() else {
            anyhow::bail!("the rebuild worker's input is closed");
        };
        let sent = async {
            input.write_all(&frames).await?;
            input.flush().await
        };
        if let Err(e) = sent.await {
            return Err(self.ended(&format!("took no batch ({e})")).await);
        }
        let line = match self.replies.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => return Err(self.ended("answered nothing").await),
            Err(e) => return Err(self.ended(&format!("answered nothing ({e})")).await),
        };
        let reached: Reached = serde_json::from_str(&line)
            .with_context(|| format!("the rebuild worker answered {line:?}"))?;
        self.checkpoint = reached.checkpoint;
        if self.pacer.is_none() {
            self.pacer = self
                .child
                .id()
                .and_then(|id| Pid::from_raw(i32::try_from(id).ok()?))
                .map(Pacer::start);
        }
        Ok(reached)
    }

    /// How long the worker has been held stopped, so that requests had the CPU.
    pub(super) fn held(&self) -> Duration {
        self.held + self.pacer.as_ref().map_or(Duration::ZERO, Pacer::held)
    }

    /// Lets the worker run unpaced from now on: before it is waited for (which reaps it).
    fn unpace(&mut self) {
        if let Some(pacer) = self.pacer.take() {
            self.held += pacer.held();
        }
    }

    /// Closes the worker's input and waits for it to flush the store and exit.
    pub(super) async fn finish(mut self) -> anyhow::Result<()> {
        self.unpace();
        drop(self.input.take());
        let status = self.child.wait().await?;
        if status.success() {
            return Ok(());
        }
        Err(self.ended("did not finish").await)
    }

    /// Why the worker stopped: its exit and its last words.
    async fn ended(&mut self, what: &str) -> anyhow::Error {
        self.unpace();
        drop(self.input.take());
        let status = match self.child.wait().await {
            Ok(status) => status.to_string(),
            Err(e) => format!("unknown ({e})"),
        };
        let said = (&mut self.said).await.unwrap_or_default();
        anyhow::anyhow!("the rebuild worker {what}: it ended with {status}, saying {said:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scheduling policy of the calling thread, from `/proc` (the 41st field of its
    /// `stat`, counted after the command name, which may hold spaces).
    #[cfg(target_os = "linux")]
    fn policy() -> u32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("stat");
        let (_, after_name) = stat.rsplit_once(')').expect("a command name");
        // Fields from the 3rd on: the 41st is the 39th of these.
        after_name
            .split_whitespace()
            .nth(38)
            .and_then(|f| f.parse().ok())
            .expect("a policy")
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_worker_takes_the_idle_policy_and_its_threads_inherit_it() {
        const SCHED_IDLE: u32 = 5;
        // On a thread of its own: the policy stays with the thread.
        let (after, child) = std::thread::spawn(|| {
            lower_priority();
            let child = std::thread::spawn(policy).join().expect("child");
            (policy(), child)
        })
        .join()
        .expect("thread");
        assert_eq!((after, child), (SCHED_IDLE, SCHED_IDLE));
    }

    fn frame(seq: u64, subject: &str, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![MESSAGE];
        out.extend_from_slice(&seq.to_le_bytes());
        out.extend_from_slice(&7u64.to_le_bytes());
        out.extend_from_slice(&1_700_000_000_000_000_000i128.to_le_bytes());
        for part in [subject.as_bytes(), payload] {
            out.extend_from_slice(&(part.len() as u32).to_le_bytes());
            out.extend_from_slice(part);
        }
        out
    }

    #[test]
    fn a_batch_is_read_message_by_message_up_to_its_end() {
        let mut input = frame(3, "racing.horses.H1", b"not json");
        input.extend(frame(4, "racing.odds.x", b"{}"));
        input.push(COMMIT);
        let mut input = &input[..];
        let first = next_message(&mut input).expect("read").expect("a message");
        assert_eq!((first.seq, first.pending), (3, 7));
        assert_eq!(first.published, 1_700_000_000_000_000_000);
        assert_eq!(first.subject.as_str(), "racing.horses.H1");
        assert!(first.envelope.is_err(), "refused, as the projector would");
        let second = next_message(&mut input).expect("read").expect("a message");
        assert_eq!(second.seq, 4);
        assert!(next_message(&mut input).expect("read").is_none(), "the end");
        assert!(input.is_empty());
    }

    #[test]
    fn a_cut_or_garbled_frame_is_an_error() {
        let whole = frame(3, "racing.horses.H1", b"{}");
        for cut in [0, 1, 20, whole.len() - 1] {
            let err = next_message(&mut &whole[..cut]).expect_err("cut");
            assert!(format!("{err:#}").contains("ended") || format!("{err:#}").contains("frame"));
        }
        let err = next_message(&mut &b"X"[..]).expect_err("garbled");
        assert!(err.to_string().contains("starts with byte 88"), "{err}");
        let mut huge = vec![MESSAGE];
        huge.extend_from_slice(&[0; 32]);
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        let err = next_message(&mut &huge[..]).expect_err("too long");
        assert!(
            err.to_string().contains("bytes in a message's frame"),
            "{err}"
        );
    }
}
