//! A guard around the protocol library's stdio.
//!
//! `tower-lsp-server` 0.23 reads stdin through a `tokio-util` framed reader, which ends the
//! stream after the first message it cannot decode: one malformed message from a client
//! would stop the server (see `docs/upstream/tower-lsp-server-malformed-frame.md`). This
//! guard reads the frames itself and hands the library only well-formed messages,
//! re-framed with their true length. It also sits on the way out, so that it can answer a
//! malformed message itself, between whole frames of the library's output:
//!
//! - invalid JSON: a `ParseError` (-32700) response; a JSON value that is no JSON-RPC
//!   message: an `InvalidRequest` (-32600) response. Both carry the message's `id` when
//!   one can be read, else `null`, as JSON-RPC 2.0 says;
//! - a `Content-Length` shorter or longer than the body: the body is found by where the
//!   next header starts (or the input pausing) and passed on when it is a well-formed
//!   message; what cannot be read as one is skipped up to the next `Content-Length`;
//! - junk between frames is skipped up to the next `Content-Length` header;
//! - a message over [`MAX_MESSAGE`] is read past without being held in memory, answered
//!   with an error (a request) or a `window/showMessage` (a notification).
//!
//! Every skip is logged on stderr.

use std::sync::Arc;
use std::time::Duration;

use memchr::memmem;
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::Mutex;

/// The largest message accepted: 64 MiB (a 100,000-line file is about 4 MB, and the
/// server analyses files up to `kernaut_ide::source_text::MAX_ANALYSED_BYTES`).
pub const MAX_MESSAGE: usize = 64 << 20;

/// How long the input must pause before a body whose declared length has not arrived is
/// taken as it is, or before a too-short body is completed with what follows it.
const SETTLE: Duration = Duration::from_millis(150);

/// The longest header block read before the bytes are taken as junk.
const MAX_HEADER: usize = 4096;

/// What one frame of input turned out to be.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A well-formed JSON-RPC message (its body, without the header).
    Message(Vec<u8>),
    /// Something that is not; `head` is the start of its bytes, to find an `id` in.
    Malformed {
        /// Why it was refused.
        why: Malformation,
        /// The first bytes of the message (at most 4 KiB).
        head: Vec<u8>,
    },
}

/// Why a frame was refused.
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum Malformation {
    /// The body is not JSON.
    NotJson(String),
    /// The body is JSON but no JSON-RPC 2.0 message.
    NotJsonRpc(String),
    /// The header has no usable `Content-Length`.
    BadHeader(String),
    /// The message is longer than [`MAX_MESSAGE`].
    TooLarge(usize),
    /// The input ended inside the body.
    Truncated {
        /// The length the header declared.
        declared: usize,
        /// The bytes that came.
        got: usize,
    },
}

impl std::fmt::Display for Malformation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformation::NotJson(e) => write!(f, "not JSON: {e}"),
            Malformation::NotJsonRpc(e) => write!(f, "not a JSON-RPC 2.0 message: {e}"),
            Malformation::BadHeader(e) => write!(f, "bad header: {e}"),
            Malformation::TooLarge(n) => write!(
                f,
                "a message of {:.1} MB is over the limit of {} MB",
                *n as f64 / 1e6,
                MAX_MESSAGE >> 20
            ),
            Malformation::Truncated { declared, got } => write!(
                f,
                "the input ended after {got} of the {declared} bytes the header declared"
            ),
        }
    }
}

/// The fields of a message the protocol library needs, read without keeping `params`.
#[derive(Deserialize)]
struct Probe {
    jsonrpc: Option<Value>,
    method: Option<Value>,
    #[serde(default, deserialize_with = "some")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    error: Option<Value>,
}

fn some<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

/// An `id` the library accepts: an integer, a string or null.
fn valid_id(id: &Value) -> bool {
    id.is_i64() || id.is_string() || id.is_null()
}

/// Whether `body` is a JSON-RPC 2.0 message the library decodes (without stopping).
pub fn well_formed(body: &[u8]) -> Result<(), Malformation> {
    let probe: Probe = serde_json::from_slice(body).map_err(|e| {
        if e.is_data() {
            Malformation::NotJsonRpc(e.to_string())
        } else {
            Malformation::NotJson(e.to_string())
        }
    })?;
    let bad = |why: &str| Err(Malformation::NotJsonRpc(why.into()));
    if probe.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return bad("no \"jsonrpc\": \"2.0\"");
    }
    if probe.id.as_ref().is_some_and(|id| !valid_id(id)) {
        return bad("an id that is neither an integer, a string nor null");
    }
    match (&probe.method, &probe.id) {
        (Some(Value::String(_)), _) => Ok(()),
        (Some(_), _) => bad("a method that is not a string"),
        (None, Some(_)) if probe.result => Ok(()),
        (None, Some(_)) => match &probe.error {
            Some(e)
                if e.get("code").is_some_and(Value::is_i64)
                    && e.get("message").is_some_and(Value::is_string) =>
            {
                Ok(())
            }
            Some(_) => bad("an error without an integer code and a message"),
            None => bad("neither a request, a notification nor a response"),
        },
        (None, None) => bad("neither a request, a notification nor a response"),
    }
}

/// The position of the next `Content-Length` (any case) in `buf`.
fn find_header(buf: &[u8]) -> Option<usize> {
    memmem::find_iter(buf, b"ontent-").find_map(|i| {
        let start = i.checked_sub(1)?;
        let rest = buf.get(i + 7..i + 13)?;
        (matches!(buf[start], b'c' | b'C') && rest.eq_ignore_ascii_case(b"length")).then_some(start)
    })
}

/// The end of the header block at the start of `buf` (after its empty line).
fn header_end(buf: &[u8]) -> Option<usize> {
    let crlf = memmem::find(buf, b"\r\n\r\n").map(|i| i + 4);
    let lf = memmem::find(buf, b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The declared length in a header block.
fn content_length(headers: &[u8]) -> Result<usize, String> {
    let text = String::from_utf8_lossy(headers);
    for line in text.lines() {
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                return value
                    .trim()
                    .parse()
                    .map_err(|_| format!("Content-Length `{}` is not a number", value.trim()));
            }
        }
    }
    Err("no Content-Length".into())
}

fn trim_end(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &b[..n]
}

enum Fill {
    Data,
    Idle,
    Eof,
}

/// Reads frames from a byte stream, resynchronising after broken ones.
pub struct FrameReader<R> {
    input: R,
    buf: Vec<u8>,
    eof: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader of `input`.
    pub fn new(input: R) -> Self {
        FrameReader {
            input,
            buf: Vec::new(),
            eof: false,
        }
    }

    /// Reads more input; with `wait`, gives up after that long without data.
    async fn fill(&mut self, wait: Option<Duration>) -> Fill {
        if self.eof {
            return Fill::Eof;
        }
        let mut chunk = vec![0u8; 64 * 1024];
        let read = self.input.read(&mut chunk);
        let n = match wait {
            Some(w) => match tokio::time::timeout(w, read).await {
                Ok(r) => r,
                Err(_) => return Fill::Idle,
            },
            None => read.await,
        };
        match n {
            Ok(0) | Err(_) => {
                self.eof = true;
                Fill::Eof
            }
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Fill::Data
            }
        }
    }

    /// The next frame; `None` when the input has ended.
    pub async fn next(&mut self) -> Option<Frame> {
        loop {
            // Junk before a header is skipped.
            match find_header(&self.buf) {
                Some(p) => {
                    if !trim_end(&self.buf[..p]).is_empty() {
                        eprintln!(
                            "kernaut-lsp: warn: {} bytes of input before a header were skipped",
                            p
                        );
                    }
                    self.buf.drain(..p);
                }
                None => {
                    // Keep what could be the start of a header.
                    let keep = self.buf.len().min(14);
                    let cut = self.buf.len() - keep;
                    if !trim_end(&self.buf[..cut]).is_empty() {
                        eprintln!(
                            "kernaut-lsp: warn: {cut} bytes of input outside any message were skipped"
                        );
                    }
                    self.buf.drain(..cut);
                    if let Fill::Eof = self.fill(None).await {
                        return None;
                    }
                    continue;
                }
            }
            let Some(end) = header_end(&self.buf) else {
                if self.buf.len() > MAX_HEADER {
                    // Not a header after all: look for the next one.
                    self.buf.drain(..1);
                    continue;
                }
                if let Fill::Eof = self.fill(None).await {
                    return None;
                }
                continue;
            };
            let declared = match content_length(&self.buf[..end]) {
                Ok(n) => n,
                Err(why) => {
                    let head = self.buf[..end].to_vec();
                    self.buf.drain(..end);
                    return Some(Frame::Malformed {
                        why: Malformation::BadHeader(why),
                        head,
                    });
                }
            };
            self.buf.drain(..end);
            if declared > MAX_MESSAGE {
                return Some(self.skip(declared).await);
            }
            return Some(self.body(declared).await);
        }
    }

    /// Reads past a message too large to hold, keeping its head.
    async fn skip(&mut self, declared: usize) -> Frame {
        let mut left = declared;
        let mut head = Vec::new();
        loop {
            let n = left.min(self.buf.len());
            if head.len() < 4096 {
                let k = n.min(4096 - head.len());
                head.extend_from_slice(&self.buf[..k]);
            }
            self.buf.drain(..n);
            left -= n;
            if left == 0 {
                break;
            }
            if let Fill::Eof = self.fill(None).await {
                break;
            }
        }
        Frame::Malformed {
            why: Malformation::TooLarge(declared),
            head,
        }
    }

    /// Reads a body that the header says is `declared` bytes long.
    async fn body(&mut self, declared: usize) -> Frame {
        let mut scanned = 0;
        let mut idle_checked = false;
        while self.buf.len() < declared {
            // A header inside the body: the declared length was too long when what comes
            // before it is a whole message.
            if let Some(p) = find_header(&self.buf[scanned..]).map(|p| p + scanned) {
                if well_formed(trim_end(&self.buf[..p])).is_ok() {
                    eprintln!(
                        "kernaut-lsp: warn: a message declared {declared} bytes but held {p}; read as {p}"
                    );
                    let body: Vec<u8> = self.buf.drain(..p).collect();
                    return Frame::Message(trim_end(&body).to_vec());
                }
                scanned = p + 1;
            } else {
                scanned = self.buf.len().saturating_sub(14);
            }
            let wait = (!idle_checked).then_some(SETTLE);
            match self.fill(wait).await {
                Fill::Data => idle_checked = false,
                Fill::Idle => {
                    idle_checked = true;
                    if well_formed(trim_end(&self.buf)).is_ok() {
                        eprintln!(
                            "kernaut-lsp: warn: a message declared {declared} bytes but held {}; read as {}",
                            self.buf.len(),
                            self.buf.len()
                        );
                        let body = std::mem::take(&mut self.buf);
                        return Frame::Message(trim_end(&body).to_vec());
                    }
                }
                Fill::Eof => {
                    let body = std::mem::take(&mut self.buf);
                    if well_formed(trim_end(&body)).is_ok() {
                        return Frame::Message(trim_end(&body).to_vec());
                    }
                    return Frame::Malformed {
                        why: Malformation::Truncated {
                            declared,
                            got: body.len(),
                        },
                        head: body[..body.len().min(4096)].to_vec(),
                    };
                }
            }
        }
        let why = match well_formed(&self.buf[..declared]) {
            Ok(()) => return Frame::Message(self.buf.drain(..declared).collect()),
            Err(why) => why,
        };
        // The declared length may be too long: a header inside the body after a whole
        // message.
        let mut from = 0;
        while let Some(p) = find_header(&self.buf[from..declared]).map(|p| p + from) {
            if well_formed(trim_end(&self.buf[..p])).is_ok() {
                eprintln!(
                    "kernaut-lsp: warn: a message declared {declared} bytes but held {p}; read as {p}"
                );
                let body: Vec<u8> = self.buf.drain(..p).collect();
                return Frame::Message(trim_end(&body).to_vec());
            }
            from = p + 1;
        }
        // The declared length may be too short: the body would go on up to the next
        // header, which may not have come yet. (Or one byte too long: the next header
        // then starts just before `declared`.)
        let mut scanned = declared.saturating_sub(13);
        loop {
            if let Some(p) = find_header(&self.buf[scanned..]).map(|p| p + scanned) {
                return self.short_or_malformed(declared, p, why);
            }
            scanned = self.buf.len().saturating_sub(14).max(scanned);
            if !matches!(self.fill(Some(SETTLE)).await, Fill::Data) {
                let end = self.buf.len();
                return self.short_or_malformed(declared, end, why);
            }
        }
    }

    /// The body ends at `end` rather than at `declared` if that makes it a message;
    /// otherwise it is malformed, and what is skipped never reaches into a header at `end`.
    fn short_or_malformed(&mut self, declared: usize, end: usize, why: Malformation) -> Frame {
        let candidate = trim_end(&self.buf[..end]);
        if end != declared && well_formed(candidate).is_ok() {
            eprintln!(
                "kernaut-lsp: warn: a message declared {declared} bytes but held {}; read as {}",
                candidate.len(),
                candidate.len()
            );
            let body = candidate.to_vec();
            self.buf.drain(..end);
            return Frame::Message(body);
        }
        let cut = declared.min(end);
        let head = self.buf[..cut.min(4096)].to_vec();
        self.buf.drain(..cut);
        Frame::Malformed { why, head }
    }
}

/// The `id` of a message that could not be read whole: from its JSON when it parses,
/// else the first `"id": …` in its bytes; `None` for a notification or no id at all.
pub fn recover_id(head: &[u8]) -> Option<Value> {
    if let Ok(v) = serde_json::from_slice::<Value>(head) {
        return v.get("id").filter(|id| valid_id(id)).cloned();
    }
    let i = memmem::find(head, b"\"id\"")?;
    let rest = head[i + 4..]
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start();
    let end = if rest.first() == Some(&b'"') {
        1 + memchr::memchr(b'"', &rest[1..])? + 1
    } else {
        rest.iter()
            .position(|c| !(c.is_ascii_digit() || *c == b'-'))
            .unwrap_or(rest.len())
    };
    serde_json::from_slice::<Value>(&rest[..end])
        .ok()
        .filter(valid_id)
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// What the guard says to the client about a malformed message, if anything: an error
/// response for what may be a request, a `window/showMessage` for a notification too
/// large to read. A malformed response from the client gets no answer.
pub fn answer(why: &Malformation, head: &[u8]) -> Option<Value> {
    let id = recover_id(head);
    let looks_like_response = memmem::find(head, b"\"method\"").is_none()
        && (memmem::find(head, b"\"result\"").is_some()
            || memmem::find(head, b"\"error\"").is_some());
    if looks_like_response {
        return None;
    }
    let code = match why {
        Malformation::NotJson(_) | Malformation::Truncated { .. } => -32700,
        Malformation::NotJsonRpc(_) | Malformation::BadHeader(_) => -32600,
        Malformation::TooLarge(_) => {
            if id.is_none() {
                let what = if memmem::find(head, b"textDocument/didOpen").is_some() {
                    "a file was not opened"
                } else {
                    "a message was skipped"
                };
                return Some(json!({
                    "jsonrpc": "2.0",
                    "method": "window/showMessage",
                    "params": {"type": 2, "message": format!("kernaut: {what}: {why}")},
                }));
            }
            -32600
        }
    };
    Some(json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code, "message": format!("kernaut-lsp: {why}")},
    }))
}

/// Copies frames from `input` to the library's `to_server`, answering malformed ones
/// on `out`; returns when `input` ends.
async fn read_side(
    input: impl AsyncRead + Unpin,
    mut to_server: impl AsyncWrite + Unpin,
    out: Arc<Mutex<Box<dyn AsyncWrite + Unpin + Send>>>,
) {
    let mut reader = FrameReader::new(input);
    while let Some(f) = reader.next().await {
        match f {
            Frame::Message(body) => {
                let header = format!("Content-Length: {}\r\n\r\n", body.len());
                if to_server.write_all(header.as_bytes()).await.is_err()
                    || to_server.write_all(&body).await.is_err()
                    || to_server.flush().await.is_err()
                {
                    return;
                }
            }
            Frame::Malformed { why, head } => {
                eprintln!("kernaut-lsp: warn: a malformed message was skipped: {why}");
                if let Some(a) = answer(&why, &head) {
                    let mut o = out.lock().await;
                    let _ = o.write_all(&frame(a.to_string().as_bytes())).await;
                    let _ = o.flush().await;
                }
            }
        }
    }
}

/// Copies the library's output to `out` a whole frame at a time.
async fn write_side(
    from_server: impl AsyncRead + Unpin,
    out: Arc<Mutex<Box<dyn AsyncWrite + Unpin + Send>>>,
) {
    let mut reader = FrameReader::new(from_server);
    while let Some(f) = reader.next().await {
        let body = match f {
            Frame::Message(b) => b,
            Frame::Malformed { .. } => continue,
        };
        let mut o = out.lock().await;
        if o.write_all(&frame(&body)).await.is_err() || o.flush().await.is_err() {
            return;
        }
    }
}

/// Puts the guard between `stdin`/`stdout` and the library: returns the streams the
/// library reads and writes, and the task that copies its output (await it after the
/// library returns so that its last messages are written).
pub fn guard(
    stdin: impl AsyncRead + Unpin + Send + 'static,
    stdout: impl AsyncWrite + Unpin + Send + 'static,
) -> (DuplexStream, DuplexStream, tokio::task::JoinHandle<()>) {
    let out: Arc<Mutex<Box<dyn AsyncWrite + Unpin + Send>>> =
        Arc::new(Mutex::new(Box::new(stdout)));
    let (to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, from_server) = tokio::io::duplex(1 << 20);
    tokio::spawn(read_side(stdin, to_server, out.clone()));
    let writer = tokio::spawn(write_side(from_server, out));
    (server_in, server_out, writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_messages_from_junk() {
        assert!(well_formed(br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#).is_ok());
        assert!(well_formed(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).is_ok());
        assert!(
            well_formed(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#).is_ok()
        );
        assert!(well_formed(br#"{"jsonrpc":"2.0","method":"n","params":{"a":[1]}}"#).is_ok());
        assert!(matches!(
            well_formed(br#"{"jsonrpc":"2.0","id":1,"method":"#),
            Err(Malformation::NotJson(_))
        ));
        assert!(well_formed(br#"{"id":1,"method":"x"}"#).is_err());
        assert!(well_formed(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#).is_err());
        assert!(well_formed(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#).is_err());
        assert!(well_formed(br#"{"jsonrpc":"2.0","id":1,"error":"bad"}"#).is_err());
        assert!(well_formed(br#"[1,2]"#).is_err());
    }

    #[test]
    fn recovers_ids_from_broken_messages() {
        assert_eq!(
            recover_id(br#"{"jsonrpc":"2.0","id": 7,"method":"#),
            Some(json!(7))
        );
        assert_eq!(
            recover_id(br#"{"jsonrpc":"2.0","id":"a-1","meth"#),
            Some(json!("a-1"))
        );
        assert_eq!(recover_id(br#"{"jsonrpc":"2.0","method":"x""#), None);
    }

    async fn frames_of(input: &[u8]) -> Vec<Frame> {
        let mut r = FrameReader::new(input);
        let mut out = Vec::new();
        while let Some(f) = r.next().await {
            out.push(f);
        }
        out
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    const A: &str = r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#;
    const B: &str = r#"{"jsonrpc":"2.0","id":2,"method":"b"}"#;

    #[test]
    fn a_wrong_content_length_loses_no_message() {
        rt().block_on(async {
            // Shorter than the body.
            let input = format!(
                "Content-Length: 10\r\n\r\n{A}Content-Length: {}\r\n\r\n{B}",
                B.len()
            );
            let f = frames_of(input.as_bytes()).await;
            assert_eq!(f, vec![Frame::Message(A.into()), Frame::Message(B.into())]);
            // Longer than the body.
            let input = format!(
                "Content-Length: 60\r\n\r\n{A}Content-Length: {}\r\n\r\n{B}",
                B.len()
            );
            let f = frames_of(input.as_bytes()).await;
            assert_eq!(f, vec![Frame::Message(A.into()), Frame::Message(B.into())]);
            // Junk and a header without a length, then a message.
            let input = format!(
                "garbage\r\nContent-Length: x\r\n\r\nContent-Length: {}\r\n\r\n{B}",
                B.len()
            );
            let f = frames_of(input.as_bytes()).await;
            assert!(
                matches!(
                    f[0],
                    Frame::Malformed {
                        why: Malformation::BadHeader(_),
                        ..
                    }
                ),
                "{f:?}"
            );
            assert_eq!(f[1], Frame::Message(B.into()));
        });
    }

    /// `PROPTEST_CASES` when set (longer local runs), else `default` (CI).
    fn cases(default: u32) -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// Bytes that hold no header (junk a client may write between frames).
    fn junk() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(|mut b| {
            b.retain(|c| !matches!(c, b'C' | b'c'));
            b
        })
    }

    /// A well-formed message with an id and some text (quotes, backslashes, a
    /// `Content-Length` inside a string).
    fn message(id: i64, text: &str) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": "m", "params": {"text": text}}).to_string()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(cases(128)))]

        /// Well-formed frames with junk between them, delivered in chunks of any size:
        /// every message comes out, in order, unchanged.
        #[test]
        fn framing_survives_junk_between_frames(
            texts in proptest::collection::vec("[a-z \"\\\\]{0,30}(Content-Length: 9)?", 1..6),
            junks in proptest::collection::vec(junk(), 6),
            chunk in 1usize..64,
        ) {
            let msgs: Vec<String> = texts.iter().enumerate().map(|(i, t)| message(i as i64, t)).collect();
            let mut input = Vec::new();
            for (m, j) in msgs.iter().zip(&junks) {
                input.extend_from_slice(j);
                input.extend_from_slice(format!("Content-Length: {}\r\n\r\n{m}", m.len()).as_bytes());
            }
            let frames = rt().block_on(async {
                let (mut tx, rx) = tokio::io::duplex(64);
                let feed = tokio::spawn(async move {
                    for c in input.chunks(chunk) {
                        tx.write_all(c).await.unwrap();
                    }
                });
                let mut r = FrameReader::new(rx);
                let mut out = Vec::new();
                while let Some(f) = r.next().await {
                    out.push(f);
                }
                feed.await.unwrap();
                out
            });
            let got: Vec<Frame> = frames
                .into_iter()
                .filter(|f| !matches!(f, Frame::Malformed { why: Malformation::BadHeader(_), .. }))
                .collect();
            let want: Vec<Frame> = msgs.iter().map(|m| Frame::Message(m.clone().into_bytes())).collect();
            proptest::prop_assert_eq!(got, want);
        }

        /// A declared length off by any amount, in either direction: the message after
        /// it still comes out whole.
        #[test]
        fn a_wrong_length_costs_at_most_its_own_message(
            first in "[a-z ]{0,40}",
            delta in -30i64..30,
        ) {
            let (a, b) = (message(1, &first), message(2, "after"));
            let declared = (a.len() as i64 + delta).max(0);
            let input = format!("Content-Length: {declared}\r\n\r\n{a}Content-Length: {}\r\n\r\n{b}", b.len());
            let frames = rt().block_on(frames_of(input.as_bytes()));
            proptest::prop_assert_eq!(frames.last(), Some(&Frame::Message(b.into_bytes())));
            if delta != 0 {
                // The first is recovered, or reported; never merged into the second.
                proptest::prop_assert!(frames.len() == 2, "{:?}", frames);
            }
        }

        /// Arbitrary bytes: the reader ends without a panic, and what it passes on is
        /// well formed.
        #[test]
        fn arbitrary_bytes_end_cleanly(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            let frames = rt().block_on(frames_of(&bytes));
            for f in frames {
                if let Frame::Message(body) = f {
                    proptest::prop_assert!(well_formed(&body).is_ok());
                }
            }
        }
    }
}
