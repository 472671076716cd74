//! A guard in front of the protocol library's reader.
//!
//! `tower-lsp-server` reads stdin through a `tokio-util` framed reader, which ends the
//! stream after the first message it cannot decode: one malformed message from a client
//! would stop the server. This task reads the frames itself, passes well-formed messages
//! through unchanged, and replaces a malformed one by a `$/kernaut/malformedMessage`
//! notification (which the server ignores) after logging it, so the server lives on.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The largest message accepted (a 100,000-line file is about 4 MB).
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// Whether `body` is a JSON-RPC 2.0 message the library decodes.
fn well_formed(body: &[u8]) -> Result<(), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("no \"jsonrpc\": \"2.0\"".into());
    }
    match (obj.get("method"), obj.get("id")) {
        (Some(Value::String(_)), _) => Ok(()),
        (None, Some(_)) if obj.contains_key("result") || obj.contains_key("error") => Ok(()),
        _ => Err("neither a request, a notification nor a response".into()),
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Copies LSP frames from `input` to `output`, replacing malformed ones; returns when
/// `input` ends.
pub async fn sanitize(input: impl AsyncRead + Unpin, mut output: impl AsyncWrite + Unpin) {
    let mut reader = BufReader::new(input);
    loop {
        // Headers up to an empty line.
        let mut length: Option<usize> = None;
        let mut saw_header = false;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if saw_header {
                    break;
                }
                continue;
            }
            saw_header = true;
            if let Some((name, value)) = line.split_once(':') {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().ok();
                }
            }
        }
        let Some(length) = length.filter(|l| *l <= MAX_MESSAGE) else {
            eprintln!("kernaut-lsp: warn: a message without a valid Content-Length was skipped");
            continue;
        };
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let out = match well_formed(&body) {
            Ok(()) => frame(&body),
            Err(why) => {
                eprintln!("kernaut-lsp: warn: a malformed message was ignored: {why}");
                let note = serde_json::json!({
                    "jsonrpc": "2.0",
                    "method": "$/kernaut/malformedMessage",
                    "params": {"error": why},
                });
                frame(note.to_string().as_bytes())
            }
        };
        if output.write_all(&out).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_messages_from_junk() {
        assert!(well_formed(br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#).is_ok());
        assert!(well_formed(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).is_ok());
        assert!(well_formed(br#"{"jsonrpc":"2.0","id":1,"method":"#).is_err());
        assert!(well_formed(br#"{"id":1,"method":"x"}"#).is_err());
        assert!(well_formed(br#"[1,2]"#).is_err());
    }
}
