//! LSP framing for tests and benchmarks that drive a server over stdio.

use std::io::BufRead;

/// Reads one `Content-Length`-framed message body; `None` at the end of the stream or on
/// a broken frame.
pub fn read_frame(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    Some(body)
}

/// `body` with its `Content-Length` header.
pub fn frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}
