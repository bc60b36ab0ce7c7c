//! The NATS client protocol as a server speaks it, read from a byte stream: what the
//! live part's peer clients parse from nats-server's WebSocket frames, where one frame
//! may hold several operations and one message may be split across frames.

use anyhow::{bail, ensure, Context as _};
use bytes::{Buf as _, Bytes, BytesMut};

/// Longest control line accepted (nats-server's `max_control_line` default, 4 KiB): past
/// it, a line without its end is an error rather than a reason to buffer more.
pub const MAX_CONTROL_LINE: usize = 4096;

/// One operation a server sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `INFO {...}`: the server's information, its JSON.
    Info(Bytes),
    /// `MSG` or `HMSG`: a message on one of the client's subscriptions.
    Msg(Msg),
    /// `PING`: the client must answer `PONG`.
    Ping,
    /// `PONG`: the answer to the client's `PING`; everything the client sent before it
    /// has been processed (its subscriptions are in place).
    Pong,
    /// `+OK`, sent in verbose mode only.
    Ok,
    /// `-ERR '...'`: the server's complaint, without the quotes.
    Err(String),
}

/// A message delivered on a subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// The subject it was published to.
    pub subject: Bytes,
    /// The subscription it came on.
    pub sid: u64,
    /// The reply subject, if the publisher gave one.
    pub reply: Option<Bytes>,
    /// The header block (`NATS/1.0\r\n...`) of an `HMSG`.
    pub headers: Option<Bytes>,
    /// The payload.
    pub payload: Bytes,
}

/// Reads operations from the bytes a server sent, as they come in.
pub struct Parser {
    buf: BytesMut,
    max_payload: usize,
}

impl Parser {
    /// A parser that refuses messages of more than `max_payload` bytes (headers and
    /// payload), so that what it buffers is bounded.
    pub fn new(max_payload: usize) -> Parser {
        Parser {
            buf: BytesMut::with_capacity(8 * 1024),
            max_payload,
        }
    }

    /// Refuses messages of more than `max_payload` bytes from now on (the server's own
    /// limit, once its `INFO` has said it).
    pub fn set_max_payload(&mut self, max_payload: usize) {
        self.max_payload = max_payload;
    }

    /// Adds bytes the server sent (one WebSocket frame, or any part of the stream).
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole operation, if the bytes pushed so far hold one; an error if they
    /// are not the NATS protocol.
    pub fn next_op(&mut self) -> anyhow::Result<Option<Op>> {
        let Some(end) = self.buf.windows(2).position(|w| w == b"\r\n") else {
            ensure!(
                self.buf.len() <= MAX_CONTROL_LINE,
                "no end of line in {} bytes",
                self.buf.len()
            );
            return Ok(None);
        };
        ensure!(end <= MAX_CONTROL_LINE, "a control line of {end} bytes");
        let head = {
            let line = std::str::from_utf8(&self.buf[..end]).context("a control line not UTF-8")?;
            let line = line.trim_start();
            let (op, rest) = line
                .split_once([' ', '\t'])
                .unwrap_or((line.trim_end(), ""));
            let skipped = end - line.len();
            // Operations are case-insensitive; compared in place, with no copy per
            // message (the clients read hundreds of thousands a second).
            let is = |name: &str| op.eq_ignore_ascii_case(name);
            if is("MSG") {
                Head::Msg(Layout::of(line, rest, skipped, false)?)
            } else if is("HMSG") {
                Head::Msg(Layout::of(line, rest, skipped, true)?)
            } else if is("PING") {
                Head::Simple(Op::Ping)
            } else if is("PONG") {
                Head::Simple(Op::Pong)
            } else if is("+OK") {
                Head::Simple(Op::Ok)
            } else if is("-ERR") {
                Head::Simple(Op::Err(rest.trim().trim_matches('\'').to_owned()))
            } else if is("INFO") {
                Head::Info(skipped + line.len() - rest.len())
            } else {
                bail!("unknown operation `{}`", clip(line))
            }
        };
        let layout = match head {
            Head::Simple(op) => {
                self.buf.advance(end + 2);
                return Ok(Some(op));
            }
            Head::Info(at) => {
                let line = self.buf.split_to(end + 2).freeze();
                return Ok(Some(Op::Info(line.slice(at..end))));
            }
            Head::Msg(layout) => layout,
        };
        ensure!(
            layout.total <= self.max_payload,
            "a message of {} bytes, over {}",
            layout.total,
            self.max_payload
        );
        let whole = end + 2 + layout.total + 2;
        if self.buf.len() < whole {
            return Ok(None);
        }
        ensure!(
            &self.buf[whole - 2..whole] == b"\r\n",
            "a message of {} bytes not followed by an end of line",
            layout.total
        );
        let mut frame = self.buf.split_to(whole).freeze();
        let line = frame.split_to(end + 2);
        let mut body = frame.split_to(layout.total);
        let headers = layout.hmsg.then(|| body.split_to(layout.headers));
        Ok(Some(Op::Msg(Msg {
            subject: line.slice(layout.subject.0..layout.subject.1),
            sid: layout.sid,
            reply: layout.reply.map(|(a, b)| line.slice(a..b)),
            headers,
            payload: body,
        })))
    }
}

/// What a control line says.
enum Head {
    /// An operation of one line.
    Simple(Op),
    /// `INFO`, its JSON from this byte of the line.
    Info(usize),
    /// `MSG` or `HMSG`, followed by its bytes.
    Msg(Layout),
}

/// Where the parts of a `MSG` or `HMSG` are: byte ranges of its control line, and sizes.
struct Layout {
    /// `HMSG`: the first `headers` bytes are the header block.
    hmsg: bool,
    subject: (usize, usize),
    sid: u64,
    reply: Option<(usize, usize)>,
    /// Bytes of the header block (0 for `MSG`).
    headers: usize,
    /// Bytes of headers and payload.
    total: usize,
}

impl Layout {
    /// `rest` is the arguments of `line` (`subject sid [reply] [header-bytes]
    /// total-bytes`), which starts `skipped` bytes into the control line.
    fn of(line: &str, rest: &str, skipped: usize, headers: bool) -> anyhow::Result<Layout> {
        let base = skipped + line.len() - rest.len();
        // At most five arguments, held in place: no allocation per message.
        let mut held = [(0, ""); 5];
        let mut count = 0;
        let words = rest
            .split([' ', '\t'])
            .scan(base, |at, word| {
                let start = *at;
                *at += word.len() + 1;
                Some((start, word))
            })
            .filter(|(_, w)| !w.is_empty());
        for word in words {
            ensure!(
                count < held.len(),
                "a message line with over {} arguments: `{}`",
                held.len(),
                clip(line)
            );
            held[count] = word;
            count += 1;
        }
        let args = &held[..count];
        let sizes = if headers { 2 } else { 1 };
        ensure!(
            args.len() == 2 + sizes || args.len() == 3 + sizes,
            "a message line with {} arguments: `{}`",
            args.len(),
            clip(line)
        );
        let range = |(at, w): (usize, &str)| (at, at + w.len());
        let number = |w: &str| -> anyhow::Result<usize> {
            w.parse()
                .with_context(|| format!("`{w}` is not a size: `{}`", clip(line)))
        };
        let total = number(args[args.len() - 1].1)?;
        let header_bytes = if headers {
            number(args[args.len() - 2].1)?
        } else {
            0
        };
        ensure!(
            header_bytes <= total,
            "headers of {header_bytes} bytes in a message of {total}"
        );
        Ok(Layout {
            hmsg: headers,
            subject: range(args[0]),
            sid: args[1]
                .1
                .parse()
                .with_context(|| format!("`{}` is not a sid", args[1].1))?,
            reply: (args.len() == 3 + sizes).then(|| range(args[2])),
            headers: header_bytes,
            total,
        })
    }
}

/// The start of a line, for an error message.
fn clip(line: &str) -> &str {
    let mut end = line.len().min(80);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation the bytes hold, pushed in pieces of `step` bytes.
    fn ops(bytes: &[u8], step: usize) -> anyhow::Result<Vec<Op>> {
        let mut parser = Parser::new(1024);
        let mut out = Vec::new();
        for piece in bytes.chunks(step) {
            parser.push(piece);
            while let Some(op) = parser.next_op()? {
                out.push(op);
            }
        }
        ensure!(
            parser.buf.is_empty(),
            "{} bytes left over",
            parser.buf.len()
        );
        Ok(out)
    }

    fn msg(
        subject: &str,
        sid: u64,
        reply: Option<&str>,
        headers: Option<&str>,
        payload: &str,
    ) -> Op {
        Op::Msg(Msg {
            subject: Bytes::copy_from_slice(subject.as_bytes()),
            sid,
            reply: reply.map(|r| Bytes::copy_from_slice(r.as_bytes())),
            headers: headers.map(|h| Bytes::copy_from_slice(h.as_bytes())),
            payload: Bytes::copy_from_slice(payload.as_bytes()),
        })
    }

    const STREAM: &[u8] = b"INFO {\"server_id\":\"N1\",\"nonce\":\"abc\"}\r\n\
        PONG\r\n\
        MSG racing.odds.2026-11-21.1 1 14\r\n{\"event_id\":1}\r\n\
        PING\r\n\
        msg racing.odds.2026-11-21.2  7\t_INBOX.x 4\r\na\r\nb\r\n\
        HMSG racing.odds.2026-11-21.3 1 18 21\r\nNATS/1.0\r\nA: b\r\n\r\nxyz\r\n\
        MSG e 1 0\r\n\r\n\
        +OK\r\n\
        -ERR 'Permissions Violation for Subscription to \"racing.>\"'\r\n";

    fn expected() -> Vec<Op> {
        vec![
            Op::Info(Bytes::from_static(
                b"{\"server_id\":\"N1\",\"nonce\":\"abc\"}",
            )),
            Op::Pong,
            msg(
                "racing.odds.2026-11-21.1",
                1,
                None,
                None,
                "{\"event_id\":1}",
            ),
            Op::Ping,
            msg(
                "racing.odds.2026-11-21.2",
                7,
                Some("_INBOX.x"),
                None,
                "a\r\nb",
            ),
            msg(
                "racing.odds.2026-11-21.3",
                1,
                None,
                Some("NATS/1.0\r\nA: b\r\n\r\n"),
                "xyz",
            ),
            msg("e", 1, None, None, ""),
            Op::Ok,
            Op::Err("Permissions Violation for Subscription to \"racing.>\"".into()),
        ]
    }

    #[test]
    fn a_frame_of_several_operations_is_read_whole() {
        assert_eq!(ops(STREAM, STREAM.len()).expect("parsed"), expected());
    }

    #[test]
    fn operations_split_across_frames_anywhere_are_read_the_same() {
        for step in 1..40 {
            assert_eq!(
                ops(STREAM, step).expect("parsed"),
                expected(),
                "step {step}"
            );
        }
    }

    #[test]
    fn a_message_waits_for_its_payload() {
        let mut parser = Parser::new(1024);
        parser.push(b"MSG a 1 5\r\nhel");
        assert_eq!(parser.next_op().expect("fine so far"), None);
        parser.push(b"lo\r");
        assert_eq!(parser.next_op().expect("fine so far"), None);
        parser.push(b"\nPI");
        assert_eq!(
            parser.next_op().expect("parsed"),
            Some(msg("a", 1, None, None, "hello"))
        );
        assert_eq!(parser.next_op().expect("fine so far"), None);
    }

    #[test]
    fn what_is_not_the_protocol_is_an_error() {
        for bad in [
            &b"HELLO there\r\n"[..],
            b"MSG a 1\r\n",
            b"MSG a b 1\r\nx\r\n",
            b"MSG a 1 x\r\n",
            b"MSG a 1 2 3 4\r\n",
            b"MSG a 1 3\r\nabcd\r\n",
            b"HMSG a 1 5 3\r\n",
            b"MSG a 1 2000\r\n",
        ] {
            assert!(
                ops(bad, bad.len()).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut parser = Parser::new(1024);
        parser.push(&[b'x'; MAX_CONTROL_LINE + 1]);
        assert!(
            parser.next_op().is_err(),
            "a line without an end is bounded"
        );
    }
}
