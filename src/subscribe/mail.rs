//! Mail to subscribers. A message is written to disk before anything else happens to it,
//! so none is lost: with SMTP configured (`RACING_SMTP_URL`) into a spool that a sender
//! task empties; without, as an `.eml` file in an outbox directory a person reads (the
//! embedded default and the demo).
//!
//! The spool is never held up by one message. Each message keeps its own attempts and
//! its own next attempt: a refusal for good (an SMTP 5xx, such as an address the relay
//! rejects) sets it aside at once, with its reason, under `mail/failed`; a refusal for
//! now (4xx) waits a pause that doubles per message, and is set aside after
//! [`MAX_ATTEMPTS`] or [`MAX_AGE`]; the other messages go on meanwhile. Only a relay that
//! cannot be reached at all (no connection, TLS, a timeout) ends a pass, since every
//! message would meet it; those attempts count against no message.
//!
//! A message leaves no API key on disk once it has gone: a sent message is removed from
//! the spool, a set-aside one keeps its recipient, subject and reason but not its text,
//! and the outbox keeps a message [`OUTBOX_KEEP`](upkeep::OUTBOX_KEEP), long enough to read
//! it.
//!
//! Every directory is bounded: the spool by [`MAX_AGE`] (and the rates of the forms
//! that write it), `mail/failed` by [`SET_ASIDE_KEEP`](upkeep::SET_ASIDE_KEEP) and
//! [`MAX_SET_ASIDE`](upkeep::MAX_SET_ASIDE), the outbox by
//! [`OUTBOX_KEEP`](upkeep::OUTBOX_KEEP); a temporary file a crash left inside a write
//! (which may hold a key) is removed at start (`upkeep`).

mod upkeep;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context as _;
use lettre::message::header::ContentType;
use lettre::message::{Body, Mailbox, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport as _, Message, Tokio1Executor};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::retry::Pauses;
use upkeep::{files, prune_outbox, prune_set_aside, remove_leftovers, PRUNE_EVERY};

/// First and longest waits before the relay is tried again after it could not be
/// reached (before jitter).
const RELAY_FIRST_BACKOFF: Duration = Duration::from_secs(1);
const RELAY_MAX_BACKOFF: Duration = Duration::from_secs(300);
/// First and longest waits before a message the relay refused for now is tried again
/// (before jitter); the pause doubles with each of its attempts.
const MESSAGE_FIRST_BACKOFF: Duration = Duration::from_secs(5);
const MESSAGE_MAX_BACKOFF: Duration = Duration::from_secs(3600);
/// A message refused for now this many times is set aside.
pub const MAX_ATTEMPTS: u32 = 20;
/// A message not sent this long after it was written is set aside.
pub const MAX_AGE: Duration = Duration::from_secs(2 * 24 * 3600);
/// Longest wait between two passes over the spool when nothing wakes the sender.
const IDLE_PASS: Duration = Duration::from_secs(60);
/// Longest reason kept for a failure, characters.
const MAX_REASON_CHARS: usize = 500;

/// Where mail goes.
enum Transport {
    /// An SMTP server; messages wait in `spool` until it takes them, and those it
    /// refuses for good go to `failed`.
    Smtp {
        smtp: Box<AsyncSmtpTransport<Tokio1Executor>>,
        spool: PathBuf,
        failed: PathBuf,
    },
    /// No SMTP: each message is a file here.
    Outbox(PathBuf),
}

/// Where mail stands, for `/status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailStatus {
    /// `smtp` or `outbox`.
    pub transport: String,
    /// The outbox directory, without SMTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outbox: Option<String>,
    /// Messages waiting for the SMTP server, deferred ones included.
    pub queued: usize,
    /// Of those, messages the server refused for now, waiting for their next attempt, as
    /// the sender's last whole pass over the spool found them.
    #[serde(default)]
    pub deferred: usize,
    /// Messages set aside for good (refused, or out of attempts or time), under
    /// `mail/failed` with their reasons.
    #[serde(default)]
    pub failed: usize,
    /// Messages handed over since start.
    pub sent: u64,
    /// Failed attempts since start.
    pub failed_attempts: u64,
    /// The last failure, if the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// A message waiting in the spool.
#[derive(Serialize, Deserialize)]
struct Spooled {
    to: String,
    /// The subject, kept if the message is set aside.
    #[serde(default)]
    subject: String,
    /// The whole message, RFC 5322.
    message: String,
    /// Unix milliseconds: when it was written (0 in a spool written before this was
    /// kept: then its file's name says).
    #[serde(default)]
    queued_at: i64,
    /// Attempts the relay refused for now.
    #[serde(default)]
    attempts: u32,
    /// Unix milliseconds: not tried again before.
    #[serde(default)]
    next_attempt: i64,
    /// Why the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_error: Option<String>,
}

/// A message set aside: who it was for and why, without its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetAside {
    /// The recipient.
    pub to: String,
    /// The subject.
    pub subject: String,
    /// RFC 3339: when it was written.
    pub queued_at: String,
    /// RFC 3339: when it was set aside.
    pub failed_at: String,
    /// Attempts made.
    pub attempts: u32,
    /// Why: the relay's answer, or the limit reached.
    pub reason: String,
}

/// What one attempt at a message came to.
enum Outcome {
    Sent,
    /// Refused for now (4xx): this message waits, the others go on.
    Deferred(String),
    /// Refused for good (5xx), or not a message at all: set aside.
    Refused(String),
    /// The relay could not be reached: the pass ends.
    Unreachable(String),
}

/// Sends mail from one address, through SMTP or into an outbox.
pub struct Mailer {
    from: Mailbox,
    transport: Transport,
    status: Mutex<MailStatus>,
    wake: tokio::sync::Notify,
}

impl Mailer {
    /// Mail from `from` through `smtp_url` (`smtp://host:port`, `smtp://host?tls=required`
    /// for STARTTLS, `smtps://user:pass@host` for TLS with a login), spooled under
    /// `data_dir/mail/spool`; or, with no URL, into `data_dir/mail/outbox`.
    pub fn new(smtp_url: Option<&str>, from: &str, data_dir: &Path) -> anyhow::Result<Mailer> {
        let from: Mailbox = from
            .parse()
            .with_context(|| format!("RACING_MAIL_FROM `{from}` is not an address"))?;
        let mail = data_dir.join("mail");
        let transport = match smtp_url {
            Some(url) => {
                let smtp = Box::new(
                    AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                        .map_err(|e| anyhow::anyhow!("RACING_SMTP_URL: {e}"))?
                        .timeout(Some(Duration::from_secs(20)))
                        .build(),
                );
                let (spool, failed) = (mail.join("spool"), mail.join("failed"));
                for dir in [&spool, &failed] {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                    remove_leftovers(dir);
                }
                prune_set_aside(&failed);
                Transport::Smtp {
                    smtp,
                    spool,
                    failed,
                }
            }
            None => {
                let outbox = mail.join("outbox");
                std::fs::create_dir_all(&outbox)
                    .with_context(|| format!("creating {}", outbox.display()))?;
                remove_leftovers(&outbox);
                Transport::Outbox(outbox)
            }
        };
        let status = MailStatus {
            transport: match &transport {
                Transport::Smtp { .. } => "smtp".into(),
                Transport::Outbox(_) => "outbox".into(),
            },
            outbox: match &transport {
                Transport::Outbox(dir) => Some(dir.display().to_string()),
                Transport::Smtp { .. } => None,
            },
            ..MailStatus::default()
        };
        Ok(Mailer {
            from,
            transport,
            status: Mutex::new(status),
            wake: tokio::sync::Notify::new(),
        })
    }

    /// The outbox directory, when there is no SMTP server.
    pub fn outbox(&self) -> Option<&Path> {
        match &self.transport {
            Transport::Outbox(dir) => Some(dir),
            Transport::Smtp { .. } => None,
        }
    }

    /// Where mail stands.
    pub fn status(&self) -> MailStatus {
        let mut status = self.lock().clone();
        if let Transport::Smtp { spool, failed, .. } = &self.transport {
            // Counted from the directories' listings; the deferred, which need each
            // message read, as the sender's last pass found them.
            status.queued = files(spool).len();
            status.failed = files(failed).len();
        }
        status
    }

    /// The messages set aside, oldest first.
    pub fn set_aside(&self) -> Vec<SetAside> {
        let Transport::Smtp { failed, .. } = &self.transport else {
            return Vec::new();
        };
        let mut paths = files(failed);
        paths.sort();
        paths
            .iter()
            .filter_map(|p| std::fs::read(p).ok())
            .filter_map(|b| serde_json::from_slice(&b).ok())
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MailStatus> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes a plain-text message to `to` where it cannot be lost, then lets the sender
    /// know. An error means nothing was written.
    pub fn send(&self, to: &str, subject: &str, body: String) -> anyhow::Result<()> {
        let to_box: Mailbox = to.parse().context("not a mail address")?;
        // Lines kept under 76 characters let the message go as plain 7 or 8 bit text
        // rather than quoted-printable, so a person reading the .eml, or copying a link or
        // a key out of it, sees them whole.
        let body = Body::new(wrap(&body, 72));
        let message = Message::builder()
            .from(self.from.clone())
            .to(to_box)
            .subject(subject)
            .singlepart(
                SinglePart::builder()
                    .header(ContentType::TEXT_PLAIN)
                    .body(body),
            )
            .context("making the message")?;
        let now = jiff::Timestamp::now().as_millisecond();
        let name = format!("{now}-{}", uuid::Uuid::new_v4().simple());
        let text = String::from_utf8_lossy(&message.formatted()).into_owned();
        match &self.transport {
            Transport::Outbox(dir) => {
                crate::files::write_private(&dir.join(format!("{name}.eml")), text.as_bytes())?;
                self.lock().sent += 1;
            }
            Transport::Smtp { spool, .. } => {
                let spooled = Spooled {
                    to: to.to_owned(),
                    subject: subject.to_owned(),
                    message: text,
                    queued_at: now,
                    attempts: 0,
                    next_attempt: now,
                    last_error: None,
                };
                crate::files::write_private(
                    &spool.join(format!("{name}.json")),
                    &serde_json::to_vec(&spooled)?,
                )?;
                self.wake.notify_one();
            }
        }
        Ok(())
    }

    /// Sends until `shutdown`: with SMTP, passes over the spool, oldest first, each
    /// message when its next attempt is due (messages spooled before a restart go out
    /// after it); with an outbox, removes its messages once they are
    /// [`OUTBOX_KEEP`](upkeep::OUTBOX_KEEP) old.
    pub async fn run(&self, shutdown: CancellationToken) {
        let (smtp, spool, failed) = match &self.transport {
            Transport::Smtp {
                smtp,
                spool,
                failed,
            } => (smtp, spool, failed),
            Transport::Outbox(dir) => return prune_outbox(dir, shutdown).await,
        };
        let mut relay = Pauses::new(RELAY_FIRST_BACKOFF, RELAY_MAX_BACKOFF);
        let mut pruned = std::time::Instant::now();
        loop {
            if pruned.elapsed() >= PRUNE_EVERY {
                prune_set_aside(failed);
                pruned = std::time::Instant::now();
            }
            let (unreachable, next_due) = self.pass(smtp, spool, failed, &shutdown).await;
            self.publish_metrics();
            let pause = if unreachable {
                relay.next_pause()
            } else {
                relay.reset();
                next_due.map_or(IDLE_PASS, |due| due.min(IDLE_PASS))
            };
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = self.wake.notified(), if !unreachable => {}
                _ = tokio::time::sleep(pause) => {}
            }
        }
    }

    /// One pass over the spool: every message that is due, oldest first. Returns whether
    /// the relay could not be reached, and how long until the next message is due.
    async fn pass(
        &self,
        smtp: &AsyncSmtpTransport<Tokio1Executor>,
        spool: &Path,
        failed: &Path,
        shutdown: &CancellationToken,
    ) -> (bool, Option<Duration>) {
        let mut waiting = files(spool);
        waiting.sort();
        let mut next_due: Option<i64> = None;
        let mut deferred = 0;
        for path in waiting {
            if shutdown.is_cancelled() {
                break;
            }
            let now = jiff::Timestamp::now().as_millisecond();
            let mut spooled = match read_spooled(&path) {
                Ok(s) => s,
                Err(e) => {
                    // Not a message this sender can ever send; its text stays out of the
                    // failed directory with the rest.
                    let broken = Spooled {
                        to: String::new(),
                        subject: String::new(),
                        message: String::new(),
                        queued_at: queued_at_of(&path, 0),
                        attempts: 0,
                        next_attempt: 0,
                        last_error: None,
                    };
                    self.set_message_aside(&path, failed, &broken, format!("{e:#}"));
                    continue;
                }
            };
            spooled.queued_at = queued_at_of(&path, spooled.queued_at);
            if spooled.next_attempt > now {
                deferred += usize::from(spooled.attempts > 0);
                next_due =
                    Some(next_due.map_or(spooled.next_attempt, |d| d.min(spooled.next_attempt)));
                continue;
            }
            let age = Duration::from_millis(u64::try_from(now - spooled.queued_at).unwrap_or(0));
            if age > MAX_AGE {
                let reason = format!(
                    "not sent within {} hours; last error: {}",
                    MAX_AGE.as_secs() / 3600,
                    spooled.last_error.as_deref().unwrap_or("none")
                );
                self.set_message_aside(&path, failed, &spooled, reason);
                continue;
            }
            match self.deliver(smtp, &spooled).await {
                Outcome::Sent => {
                    if let Err(e) = std::fs::remove_file(&path) {
                        // Sent, but still spooled: it would go twice. Say so loudly.
                        tracing::error!(error = %e, path = %path.display(), "a sent message could not be removed from the spool");
                    }
                    let mut status = self.lock();
                    status.sent += 1;
                    status.last_error = None;
                    metrics::counter!("racing_mail_sent_total").increment(1);
                }
                Outcome::Refused(reason) => {
                    self.failed_attempt(&reason);
                    self.set_message_aside(&path, failed, &spooled, reason);
                }
                Outcome::Deferred(reason) => {
                    self.failed_attempt(&reason);
                    spooled.attempts += 1;
                    if spooled.attempts >= MAX_ATTEMPTS {
                        let reason =
                            format!("refused {MAX_ATTEMPTS} times for now; last: {reason}");
                        self.set_message_aside(&path, failed, &spooled, reason);
                        continue;
                    }
                    let pause = message_pause(spooled.attempts);
                    spooled.next_attempt =
                        now + i64::try_from(pause.as_millis()).unwrap_or(i64::MAX / 2);
                    spooled.last_error = Some(reason.clone());
                    tracing::warn!(to = %spooled.to, attempts = spooled.attempts, error = reason, "mail deferred");
                    if let Err(e) = rewrite(&path, &spooled) {
                        tracing::error!(error = format!("{e:#}"), "recording a deferred message");
                    }
                    deferred += 1;
                    next_due = Some(
                        next_due.map_or(spooled.next_attempt, |d| d.min(spooled.next_attempt)),
                    );
                }
                Outcome::Unreachable(reason) => {
                    tracing::warn!(
                        error = reason,
                        "the SMTP server cannot be reached; retrying"
                    );
                    self.failed_attempt(&reason);
                    return (true, None);
                }
            }
        }
        self.lock().deferred = deferred;
        let now = jiff::Timestamp::now().as_millisecond();
        let until =
            next_due.map(|due| Duration::from_millis(u64::try_from(due - now).unwrap_or(0)));
        (false, until)
    }

    fn failed_attempt(&self, reason: &str) {
        let mut status = self.lock();
        status.failed_attempts += 1;
        status.last_error = Some(reason.to_owned());
    }

    /// Moves a message out of the spool for good, keeping who it was for and why but not
    /// its text (which may hold a key).
    fn set_message_aside(&self, path: &Path, failed: &Path, spooled: &Spooled, reason: String) {
        let reason: String = reason.chars().take(MAX_REASON_CHARS).collect();
        tracing::error!(to = %spooled.to, reason, "mail set aside: it will not be sent");
        let record = SetAside {
            to: spooled.to.clone(),
            subject: spooled.subject.clone(),
            queued_at: rfc3339(spooled.queued_at),
            failed_at: racing_events::Instant::now(),
            attempts: spooled.attempts,
            reason,
        };
        let name = path.file_name().map_or_else(
            || format!("{}.json", uuid::Uuid::new_v4().simple()),
            |n| n.to_string_lossy().into_owned(),
        );
        let written = serde_json::to_vec(&record)
            .map_err(anyhow::Error::from)
            .and_then(|bytes| crate::files::write_private(&failed.join(name), &bytes));
        match written.and_then(|()| {
            std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))
        }) {
            Ok(()) => metrics::counter!("racing_mail_failed_total").increment(1),
            Err(e) => tracing::error!(error = format!("{e:#}"), "setting a message aside"),
        }
    }

    async fn deliver(
        &self,
        smtp: &AsyncSmtpTransport<Tokio1Executor>,
        spooled: &Spooled,
    ) -> Outcome {
        let to = match spooled.to.parse() {
            Ok(to) => to,
            Err(e) => return Outcome::Refused(format!("recipient `{}`: {e}", spooled.to)),
        };
        let envelope = match lettre::address::Envelope::new(Some(self.from.email.clone()), vec![to])
        {
            Ok(envelope) => envelope,
            Err(e) => return Outcome::Refused(format!("envelope: {e}")),
        };
        match smtp.send_raw(&envelope, spooled.message.as_bytes()).await {
            Ok(_) => Outcome::Sent,
            Err(e) if e.is_permanent() => Outcome::Refused(format!("refused: {e}")),
            Err(e) if e.is_transient() => Outcome::Deferred(format!("refused for now: {e}")),
            Err(e) => Outcome::Unreachable(format!("{e}")),
        }
    }

    /// The mail gauges, from the spool as it stands.
    fn publish_metrics(&self) {
        let status = self.status();
        metrics::gauge!("racing_mail_queued").set(status.queued as f64);
        metrics::gauge!("racing_mail_deferred").set(status.deferred as f64);
        metrics::gauge!("racing_mail_set_aside").set(status.failed as f64);
    }
}

/// The pause before a message's next attempt once the relay has refused it for now
/// `attempts` times: doubling from [`MESSAGE_FIRST_BACKOFF`] up to
/// [`MESSAGE_MAX_BACKOFF`], lengthened by up to a quarter of itself at random so that
/// messages deferred together spread out.
fn message_pause(attempts: u32) -> Duration {
    let doubled = MESSAGE_FIRST_BACKOFF.saturating_mul(1u32 << attempts.saturating_sub(1).min(20));
    let pause = doubled.min(MESSAGE_MAX_BACKOFF);
    pause + pause.mul_f64(rand::random::<f64>() / 4.0)
}

fn read_spooled(path: &Path) -> anyhow::Result<Spooled> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a spooled message", path.display()))
}

fn rewrite(path: &Path, spooled: &Spooled) -> anyhow::Result<()> {
    crate::files::write_private(path, &serde_json::to_vec(spooled)?)
}

/// When a spooled message was written: as recorded, or else from its file's name
/// (unix milliseconds, then the rest).
fn queued_at_of(path: &Path, recorded: i64) -> i64 {
    if recorded > 0 {
        return recorded;
    }
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('-').next())
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| jiff::Timestamp::now().as_millisecond())
}

fn rfc3339(millis: i64) -> String {
    jiff::Timestamp::from_millisecond(millis)
        .map_or_else(|_| millis.to_string(), racing_events::Instant::text)
}

/// `text` with each paragraph's lines wrapped at `width` characters; a word longer than
/// that (a link, a key) keeps a line of its own.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut column = 0;
        for word in line.split(' ').filter(|w| !w.is_empty()) {
            let len = word.chars().count();
            if column > 0 && column + 1 + len > width {
                out.push('\n');
                column = 0;
            } else if column > 0 {
                out.push(' ');
                column += 1;
            }
            out.push_str(word);
            column += len;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::upkeep::{prune_older_than, MAX_SET_ASIDE, OUTBOX_KEEP};
    use super::*;

    #[test]
    fn paragraphs_wrap_and_links_keep_a_line() {
        let link = format!("http://127.0.0.1:8080/confirm?t={}", "a".repeat(32));
        let text = format!("word {}\n\n{link}\n", "longer ".repeat(30));
        let wrapped = wrap(&text, 72);
        assert!(wrapped
            .lines()
            .all(|l| l.chars().count() <= 72 || l == link));
        assert!(wrapped.lines().any(|l| l == link));
        assert_eq!(
            wrapped.split_whitespace().count(),
            text.split_whitespace().count()
        );
    }

    #[test]
    fn a_message_is_written_whole_to_the_outbox() {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let mailer = Mailer::new(None, "racing <keys@racing.invalid>", dir.path()).expect("mailer");
        let link = format!("http://127.0.0.1:8080/confirm?t={}", "b".repeat(32));
        mailer
            .send(
                "ann@example.com",
                "Hello",
                format!("Follow this:\n\n{link}\n"),
            )
            .expect("written");
        let outbox = mailer.outbox().expect("an outbox");
        let file = std::fs::read_dir(outbox)
            .expect("outbox")
            .filter_map(Result::ok)
            .next()
            .expect("a message");
        let text = std::fs::read_to_string(file.path()).expect("text");
        assert!(text.contains(&link), "{text}");
        assert!(!text.contains("quoted-printable"), "{text}");
        assert_eq!(mailer.status().sent, 1);
    }

    #[test]
    fn a_deferred_message_waits_longer_each_time_up_to_the_cap() {
        let pauses: Vec<Duration> = (1..=MAX_ATTEMPTS).map(message_pause).collect();
        assert!(pauses[0] >= MESSAGE_FIRST_BACKOFF);
        assert!(pauses[0] < MESSAGE_FIRST_BACKOFF * 2);
        assert!(pauses[3] >= MESSAGE_FIRST_BACKOFF * 8);
        assert!(pauses
            .iter()
            .all(|p| *p <= MESSAGE_MAX_BACKOFF + MESSAGE_MAX_BACKOFF / 4));
        assert!(pauses[MAX_ATTEMPTS as usize - 1] >= MESSAGE_MAX_BACKOFF);
    }

    #[test]
    fn the_outbox_forgets_its_messages_once_they_are_old() {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let mailer = Mailer::new(None, "racing <keys@racing.invalid>", dir.path()).expect("mailer");
        mailer
            .send("ann@example.com", "Key", "rk_secret".into())
            .expect("written");
        let outbox = mailer.outbox().expect("an outbox");
        prune_older_than(outbox, OUTBOX_KEEP);
        assert_eq!(std::fs::read_dir(outbox).expect("outbox").count(), 1);
        std::thread::sleep(Duration::from_millis(20));
        prune_older_than(outbox, Duration::from_millis(1));
        assert_eq!(std::fs::read_dir(outbox).expect("outbox").count(), 0);
    }

    #[test]
    fn old_set_aside_records_and_leftover_temporary_files_go_at_start() {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let (spool, failed) = (
            dir.path().join("mail/spool"),
            dir.path().join("mail/failed"),
        );
        for d in [&spool, &failed] {
            std::fs::create_dir_all(d).expect("a directory");
        }
        // A crash inside a write leaves its temporary file, holding a key.
        let leftover = spool.join("1700000000000-0a.tmp");
        std::fs::write(&leftover, "rk_secret").expect("written");
        let old = failed.join("1600000000000-0b.json");
        std::fs::write(&old, "{}").expect("written");
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(40 * 24 * 3600);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .and_then(|f| f.set_modified(long_ago))
            .expect("aged");
        for n in 0..(MAX_SET_ASIDE as u64 + 10) {
            let name = format!("{}-{n:x}.json", 1_700_000_000_000 + n);
            std::fs::write(failed.join(name), "{}").expect("written");
        }
        Mailer::new(
            Some("smtp://127.0.0.1:1"),
            "racing <keys@racing.invalid>",
            dir.path(),
        )
        .expect("mailer");
        assert!(!leftover.exists(), "a leftover temporary file stays");
        assert!(!old.exists(), "a set-aside record 40 days old stays");
        let kept = files(&failed);
        assert_eq!(kept.len(), MAX_SET_ASIDE, "set-aside records kept");
        // The newest are the ones kept.
        assert!(failed
            .join(format!("{}-{:x}.json", 1_700_000_010_009u64, 10_009))
            .exists());
    }
}
