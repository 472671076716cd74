//! A slow request delays nothing else: the real server over stdio, with requests sent
//! without waiting for the one before (as editors do). A whole-file inlay-hint request
//! on a large file is the slow one; hovers on a small file are answered meanwhile, an
//! edit of the large file cancels it (`ContentModified`), a `$/cancelRequest` is
//! answered at once (`RequestCancelled`), and each request sees its document as it was
//! when the request was sent.

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

/// How long an answer may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(120);

struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
    /// Answers received and not yet taken.
    answers: HashMap<i64, Value>,
    /// The ids of the answers, in the order they arrived.
    arrived: Vec<i64>,
    /// The last diagnostics' version of each URI.
    published: HashMap<String, i64>,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("KERNAUT_WIKI")
            .env_remove("VIRTUAL_ENV")
            .env_remove("CONDA_PREFIX")
            .env_remove("CUDA_HOME")
            .env_remove("CUDA_PATH")
            .spawn()
            .expect("kernaut-lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(body) = kernaut_test_utils::lsp::read_frame(&mut r) {
                let m: Value = serde_json::from_slice(&body).expect("the server writes JSON");
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            rx,
            next_id: 1,
            answers: HashMap::new(),
            arrived: Vec::new(),
            published: HashMap::new(),
        };
        let id = c.send_request(
            "initialize",
            json!({"processId": null, "capabilities": {}, "initializationOptions": {"kernaut": {"arch": "sm_90", "diagnosticsDelayMs": 0}}}),
        );
        c.answer(id);
        c.notify("initialized", json!({}));
        c
    }

    fn send(&mut self, v: &Value) {
        let body = v.to_string();
        self.stdin
            .write_all(kernaut_test_utils::lsp::frame(&body).as_bytes())
            .unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request without waiting for it; returns its id.
    fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Reads one message from the server, keeping answers and diagnostics' versions.
    fn read_one(&mut self) {
        let m = self
            .rx
            .recv_timeout(PATIENCE)
            .expect("the server answers within the patience");
        match (m.get("id").and_then(Value::as_i64), m.get("method")) {
            (Some(id), None) => {
                self.arrived.push(id);
                self.answers.insert(id, m);
            }
            (None, Some(method)) if method == "textDocument/publishDiagnostics" => {
                let p = &m["params"];
                if let Some(v) = p["version"].as_i64() {
                    self.published
                        .insert(p["uri"].as_str().unwrap().to_string(), v);
                }
            }
            (Some(id), Some(_)) => {
                // A request from the server (progress): answered at once.
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            _ => {}
        }
    }

    /// The whole answer (with `result` or `error`) of request `id`.
    fn answer(&mut self, id: i64) -> Value {
        loop {
            if let Some(m) = self.answers.remove(&id) {
                return m;
            }
            self.read_one();
        }
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": text}}),
        );
    }

    /// Waits for diagnostics of `uri` at `version`.
    fn diagnosed(&mut self, uri: &str, version: i64) {
        while self.published.get(uri) != Some(&version) {
            self.read_one();
        }
    }

    fn hover(&mut self, uri: &str, line: u32, character: u32) -> i64 {
        self.send_request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
    }

    /// Asks for the inlay hints of a whole file of `lines` lines.
    fn whole_file_hints(&mut self, uri: &str, lines: usize) -> i64 {
        self.send_request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri}, "range": {
                "start": {"line": 0, "character": 0},
                "end": {"line": lines, "character": 0},
            }}),
        )
    }

    fn shutdown(mut self) {
        let id = self.send_request("shutdown", Value::Null);
        let r = self.answer(id);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// A small file with an intrinsic on its second line.
const SMALL: &str = "__global__ void k(__half2* o, __half2 a) {\n    o[0] = __hfma2(a, a, a);\n}\n";

fn big() -> String {
    kernaut_test_utils::gen::generated(20_000)
}

fn error_code(r: &Value) -> Option<i64> {
    r["error"]["code"].as_i64()
}

#[test]
fn a_slow_request_on_one_file_does_not_delay_another_files_requests() {
    let mut c = Client::start();
    let (big_uri, small_uri) = (
        "file:///tmp/kernaut-conc/big.cu",
        "file:///tmp/kernaut-conc/small.cu",
    );
    let big = big();
    let lines = big.lines().count();
    c.open(small_uri, SMALL);
    c.diagnosed(small_uri, 1);
    c.open(big_uri, &big);
    // The big file's inlay hints wait for its parse and compute for a while; the hovers
    // on the small file, sent after them, are answered first.
    let slow = c.whole_file_hints(big_uri, lines);
    let hovers: Vec<i64> = (0..3).map(|_| c.hover(small_uri, 1, 12)).collect();
    for &h in &hovers {
        let r = c.answer(h);
        assert!(
            r["result"]["contents"]["value"]
                .as_str()
                .unwrap_or("")
                .contains("__hfma2"),
            "{r}"
        );
    }
    let r = c.answer(slow);
    assert!(r["result"].as_array().is_some_and(|h| !h.is_empty()), "{r}");
    let order: Vec<i64> = c
        .arrived
        .iter()
        .copied()
        .filter(|i| *i == slow || hovers.contains(i))
        .collect();
    assert_eq!(
        order.last(),
        Some(&slow),
        "answers arrived in the order {order:?}"
    );
    c.shutdown();
}

#[test]
fn an_edit_cancels_a_slow_request_and_a_client_cancellation_is_answered_at_once() {
    let mut c = Client::start();
    let uri = "file:///tmp/kernaut-conc/big2.cu";
    let big = big();
    let lines = big.lines().count();
    c.open(uri, &big);
    // A request cancelled while it waits for the document's parse: answered at once,
    // before the parse is done (and so before the document's first diagnostics).
    let waiting = c.whole_file_hints(uri, lines);
    c.notify("$/cancelRequest", json!({"id": waiting}));
    let r = c.answer(waiting);
    assert_eq!(error_code(&r), Some(-32800), "{r}");
    assert_eq!(c.published.get(uri), None, "answered after the parse");
    c.diagnosed(uri, 1);
    // An edit right after the request: the request was computing on the old text, and is
    // answered "content modified", not with hints at stale positions.
    let slow = c.whole_file_hints(uri, lines);
    c.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "// edited\n"}],
        }),
    );
    let r = c.answer(slow);
    assert_eq!(error_code(&r), Some(-32801), "{r}");
    // The client gives up on a request: it is answered "request cancelled" before a
    // request sent after the cancellation.
    let slow = c.whole_file_hints(uri, lines + 1);
    c.notify("$/cancelRequest", json!({"id": slow}));
    let after = c.hover(uri, 0, 3);
    let r = c.answer(slow);
    assert_eq!(error_code(&r), Some(-32800), "{r}");
    let r = c.answer(after);
    assert!(r.get("error").is_none(), "{r}");
    c.shutdown();
}

#[test]
fn a_request_sees_its_document_as_it_was_when_the_request_was_sent() {
    let mut c = Client::start();
    let uri = "file:///tmp/kernaut-conc/order.cu";
    c.open(uri, SMALL);
    // Edits and hovers sent back to back: each hover sees the edits sent before it, and
    // none sent after it.
    let mut hovers = Vec::new();
    for version in 2..12 {
        c.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "\n"}],
            }),
        );
        // The intrinsic is now on line `version`.
        hovers.push(c.hover(uri, version as u32, 12));
    }
    let last = *hovers.last().unwrap();
    for h in hovers {
        let r = c.answer(h);
        if h == last {
            // No edit came after the last one.
            assert!(r.get("error").is_none(), "{r}");
        }
        match error_code(&r) {
            // A later edit may cancel it; it never answers about another text.
            Some(code) => assert_eq!(code, -32801, "{r}"),
            None => assert!(
                r["result"]["contents"]["value"]
                    .as_str()
                    .unwrap_or("")
                    .contains("__hfma2"),
                "{r}"
            ),
        }
    }
    c.shutdown();
}
