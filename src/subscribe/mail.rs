//! Mail to subscribers. A message is written to disk before anything else happens to it,
//! so none is lost: with SMTP configured (`RACING_SMTP_URL`) into a spool that a sender
//! task empties, retrying with backoff; without, as an `.eml` file in an outbox directory
//! a person reads (the embedded default and the demo).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context as _;
use lettre::message::header::ContentType;
use lettre::message::{Body, Mailbox, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport as _, Message, Tokio1Executor};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// First and longest waits between two attempts at the oldest message (before jitter).
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Where mail goes.
enum Transport {
    /// An SMTP server; messages wait in `spool` until it takes them.
    Smtp {
        smtp: AsyncSmtpTransport<Tokio1Executor>,
        spool: PathBuf,
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
    /// Messages waiting for the SMTP server.
    pub queued: usize,
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
    /// The whole message, RFC 5322.
    message: String,
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
        let transport = match smtp_url {
            Some(url) => {
                let smtp = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                    .map_err(|e| anyhow::anyhow!("RACING_SMTP_URL: {e}"))?
                    .timeout(Some(Duration::from_secs(20)))
                    .build();
                let spool = data_dir.join("mail").join("spool");
                std::fs::create_dir_all(&spool)
                    .with_context(|| format!("creating {}", spool.display()))?;
                Transport::Smtp { smtp, spool }
            }
            None => {
                let outbox = data_dir.join("mail").join("outbox");
                std::fs::create_dir_all(&outbox)
                    .with_context(|| format!("creating {}", outbox.display()))?;
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
        if let Transport::Smtp { spool, .. } = &self.transport {
            status.queued = spooled(spool).len();
        }
        status
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
        let name = format!(
            "{}-{}",
            jiff::Timestamp::now().as_millisecond(),
            uuid::Uuid::new_v4().simple()
        );
        let text = String::from_utf8_lossy(&message.formatted()).into_owned();
        match &self.transport {
            Transport::Outbox(dir) => {
                crate::files::write_private(&dir.join(format!("{name}.eml")), text.as_bytes())?;
                self.lock().sent += 1;
            }
            Transport::Smtp { spool, .. } => {
                let spooled = Spooled {
                    to: to.to_owned(),
                    message: text,
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

    /// Hands spooled messages to the SMTP server, oldest first, until `shutdown`; a
    /// failure is retried after a pause that doubles up to 5 minutes, with jitter, and
    /// starts again from a second after a message goes. Messages spooled before a restart
    /// go out after it. Returns at once without SMTP.
    pub async fn run(&self, shutdown: CancellationToken) {
        let Transport::Smtp { smtp, spool } = &self.transport else {
            return;
        };
        let mut pauses = crate::retry::Pauses::new(FIRST_BACKOFF, MAX_BACKOFF);
        loop {
            let mut waiting = spooled(spool);
            waiting.sort();
            let mut failed = false;
            for path in waiting {
                if shutdown.is_cancelled() {
                    return;
                }
                match self.deliver(smtp, &path).await {
                    Ok(()) => {
                        let mut status = self.lock();
                        status.sent += 1;
                        status.last_error = None;
                        pauses.reset();
                    }
                    Err(e) => {
                        let error = format!("{e:#}");
                        tracing::warn!(error, "mail not sent yet; retrying");
                        let mut status = self.lock();
                        status.failed_attempts += 1;
                        status.last_error = Some(error);
                        failed = true;
                        break;
                    }
                }
            }
            let pause = if failed {
                pauses.next_pause()
            } else {
                Duration::from_secs(60)
            };
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = self.wake.notified(), if !failed => {}
                _ = tokio::time::sleep(pause) => {}
            }
        }
    }

    async fn deliver(
        &self,
        smtp: &AsyncSmtpTransport<Tokio1Executor>,
        path: &Path,
    ) -> anyhow::Result<()> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let spooled: Spooled = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a spooled message", path.display()))?;
        let to = spooled.to.parse().context("recipient")?;
        let envelope = lettre::address::Envelope::new(Some(self.from.email.clone()), vec![to])
            .context("envelope")?;
        smtp.send_raw(&envelope, spooled.message.as_bytes())
            .await
            .context("the SMTP server did not take the message")?;
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))
    }
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

fn spooled(spool: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(spool)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
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
}
