//! The real `kernaut-lsp` binary fed hostile input over stdio: broken frames, wrong
//! `Content-Length`s, invalid JSON, unknown methods, out-of-range and stale edits, a
//! 50 MB file, a file of one 1 MB line and a NUL-filled file. After each, the server
//! answers what the protocol says it should and keeps serving.

use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any single answer may take before the test gives up (a hang, not a budget).
const PATIENCE: Duration = Duration::from_secs(60);

const KERNEL: &str = "\
#include <cuda_fp16.h>
__global__ void transpose(float* out, const float* in) {
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
__global__ void fma(__half2* o, __half2 a, __half2 b) {
    o[threadIdx.x] = __hfma2(a, b, o[threadIdx.x]);
}
";

struct Server {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    seen: Vec<Value>,
    next_id: i64,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("KERNAUT_WIKI")
            .spawn()
            .expect("kernaut-lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(body) = kernaut_test_utils::lsp::read_frame(&mut r) {
                let v = serde_json::from_slice(&body).expect("the server writes JSON");
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut s = Server {
            child,
            stdin,
            messages: rx,
            seen: Vec::new(),
            next_id: 1000,
        };
        let r = s.request("initialize", json!({"processId": null, "capabilities": {}}));
        assert!(r.get("result").is_some(), "{r}");
        s.notify("initialized", json!({}));
        s
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        let body = v.to_string();
        self.raw(kernaut_test_utils::lsp::frame(&body).as_bytes());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn next(&mut self, deadline: Instant) -> Option<Value> {
        let m = self
            .messages
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .ok()?;
        if m.get("id").is_some() && m.get("method").is_some() {
            let id = m["id"].clone();
            self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
        }
        Some(m)
    }

    /// The response with `id` (whole, with `result` or `error`).
    fn response(&mut self, id: Value) -> Value {
        if let Some(i) = self
            .seen
            .iter()
            .position(|m| m["id"] == id && m.get("method").is_none())
        {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let m = self
                .next(deadline)
                .unwrap_or_else(|| panic!("no response to {id}; seen {:?}", self.seen));
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
            self.seen.push(m);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(json!(id))
    }

    fn notification(&mut self, method: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self
            .seen
            .iter()
            .position(|m| m["method"] == method && pred(&m["params"]))
        {
            return self.seen.remove(i)["params"].clone();
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let m = self
                .next(deadline)
                .unwrap_or_else(|| panic!("no {method}; seen {:?}", self.seen));
            if m["method"] == method && pred(&m["params"]) {
                return m["params"].clone();
            }
            self.seen.push(m);
        }
    }

    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let p = self.notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && p["version"] == version
        });
        p["diagnostics"].as_array().cloned().unwrap()
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": text}}),
        );
    }

    /// Whether the server still hovers `__hfma2` in a freshly opened small file.
    fn assert_serving(&mut self) {
        let uri = format!("file:///tmp/kernaut-hostile/alive{}.cu", self.next_id);
        self.open(&uri, KERNEL);
        let r = self.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 8, "character": 22}}),
        );
        let text = r["result"]["contents"]["value"].as_str().unwrap_or("");
        assert!(text.contains("__hfma2"), "{r}");
    }

    /// The peak resident memory of the server in MB (Linux).
    fn peak_rss_mb(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024)
    }

    fn shutdown(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + PATIENCE;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn hover_request(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "workspace/symbol", "params": {"query": "bank conflict"}})
        .to_string()
}

#[test]
fn a_content_length_shorter_or_longer_than_the_body_loses_no_request() {
    let mut s = Server::start();
    let (a, b) = (hover_request(1), hover_request(2));
    // Shorter: the header says 10, the body is whole; the next frame is well formed.
    s.raw(format!("Content-Length: 10\r\n\r\n{a}").as_bytes());
    s.raw(kernaut_test_utils::lsp::frame(&b).as_bytes());
    assert!(s.response(json!(1))["result"].is_array());
    assert!(s.response(json!(2))["result"].is_array());
    // Longer: the header says 500; the next message follows at once.
    let (c, d) = (hover_request(3), hover_request(4));
    s.raw(format!("Content-Length: 500\r\n\r\n{c}").as_bytes());
    s.raw(kernaut_test_utils::lsp::frame(&d).as_bytes());
    assert!(s.response(json!(3))["result"].is_array());
    assert!(s.response(json!(4))["result"].is_array());
    // Longer, and nothing follows for a while: the body is taken once the input pauses.
    let e = hover_request(5);
    s.raw(format!("Content-Length: 900\r\n\r\n{e}").as_bytes());
    assert!(s.response(json!(5))["result"].is_array());
    s.assert_serving();
    s.shutdown();
}

#[test]
fn invalid_json_and_non_messages_are_answered_with_errors() {
    let mut s = Server::start();
    // Truncated JSON with a readable id: ParseError with that id.
    s.raw(kernaut_test_utils::lsp::frame(r#"{"jsonrpc": "2.0", "id": 7, "method": "#).as_bytes());
    let r = s.response(json!(7));
    assert_eq!(r["error"]["code"], -32700, "{r}");
    // JSON but not JSON-RPC (no version): InvalidRequest.
    s.raw(
        kernaut_test_utils::lsp::frame(r#"{"id": 8, "method": "textDocument/hover"}"#).as_bytes(),
    );
    let r = s.response(json!(8));
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // An id the protocol library cannot read (an object): InvalidRequest with id null.
    s.raw(
        kernaut_test_utils::lsp::frame(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"a"}"#).as_bytes(),
    );
    let r = s.response(Value::Null);
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // Junk between frames, a header without a length, a length that is no number.
    s.raw(b"\x00\x01garbage\r\n\r\n");
    s.raw(b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}");
    s.raw(b"Content-Length: -5\r\n\r\n");
    // Unknown methods: a request gets MethodNotFound, notifications are ignored.
    let r = s.request("kernaut/noSuchMethod", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    s.notify("$/noSuchNotification", json!({}));
    s.notify("noSuchNotification", json!([1, 2]));
    // Wrong parameters: InvalidParams.
    let r = s.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    s.assert_serving();
    s.shutdown();
}

#[test]
fn a_message_over_the_limit_is_read_past_and_reported() {
    let mut s = Server::start();
    // 65 MiB in a didOpen: skipped without holding it, and the user is told.
    let text = "x".repeat(65 << 20);
    let body = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///tmp/kernaut-hostile/huge.cu", "languageId": "cuda-cpp", "version": 1, "text": text}}}).to_string();
    drop(text);
    s.raw(kernaut_test_utils::lsp::frame(&body).as_bytes());
    drop(body);
    let m = s.notification("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("a file was not opened")
    });
    assert!(
        m["message"]
            .as_str()
            .unwrap()
            .contains("over the limit of 64 MB"),
        "{m}"
    );
    s.assert_serving();
    if let Some(mb) = s.peak_rss_mb() {
        assert!(mb < 200, "peak RSS {mb} MB after a skipped 65 MiB message");
    }
    s.shutdown();
}

#[test]
fn a_50_mb_file_is_kept_but_not_analysed_and_the_user_is_told() {
    let mut s = Server::start();
    let uri = "file:///tmp/kernaut-hostile/big.cu";
    let line = "__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n";
    let text = line.repeat(50_000_000 / line.len());
    s.open(uri, &text);
    let m = s.notification("window/showMessage", |p| {
        p["message"].as_str().unwrap_or("").contains("big.cu")
    });
    assert!(
        m["message"]
            .as_str()
            .unwrap()
            .contains("over the 8 MB kernaut analyses"),
        "{m}"
    );
    let r = s.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 3}}),
    );
    assert!(r["result"].is_null(), "{r}");
    s.assert_serving();
    // Cut down to a small file by edits, it is analysed again.
    let lines = text.lines().count();
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 0}, "end": {"line": lines, "character": 0}}, "text": ""},
            {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": KERNEL},
        ]}),
    );
    drop(text);
    let d = s.diagnostics(uri, 2);
    assert!(
        d.iter().any(|d| d["code"] == "smem/bank-conflict-transpose"
            || d["message"].as_str().unwrap_or("").contains("bank")),
        "{d:?}"
    );
    if let Some(mb) = s.peak_rss_mb() {
        assert!(mb < 600, "peak RSS {mb} MB with a 50 MB file open");
    }
    s.shutdown();
}

#[test]
fn a_file_of_one_long_line_and_a_nul_filled_file_are_served() {
    let mut s = Server::start();
    let long = "/tmp/kernaut-hostile/long.cu";
    let uri = format!("file://{long}");
    let text = format!(
        "__global__ void k(float* a) {{ a[0] = 0{}; }}\n",
        " + 1".repeat(250_000)
    );
    s.open(&uri, &text);
    s.diagnostics(&uri, 1);
    let r = s.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 500_000}}),
    );
    assert!(r.get("error").is_none(), "{r}");
    let nul = "file:///tmp/kernaut-hostile/nul.cu";
    s.open(nul, &"\0".repeat(1 << 20));
    s.diagnostics(nul, 1);
    let r = s.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": nul}, "position": {"line": 0, "character": 1000}}),
    );
    assert!(r.get("error").is_none(), "{r}");
    s.assert_serving();
    s.shutdown();
}

#[test]
fn edits_out_of_range_and_stale_versions_keep_the_document_consistent() {
    let mut s = Server::start();
    let uri = "file:///tmp/kernaut-hostile/edits.cu";
    s.open(uri, KERNEL);
    s.diagnostics(uri, 1);
    // Positions past the end (a line far below, a column far right) mean the end.
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 900, "character": 5}, "end": {"line": 901, "character": 0}}, "text": "__global__ void tail() {}\n"},
            {"range": {"start": {"line": 0, "character": 9999}, "end": {"line": 0, "character": 99999}}, "text": " // edited"},
        ]}),
    );
    s.diagnostics(uri, 2);
    // A start after the end: taken as the range between them.
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "#define ONE 1\n#include <cuda_fp16.h> // edited\n"},
        ]}),
    );
    s.diagnostics(uri, 3);
    // A stale version (lower than the last): the edit is the client's text, applied.
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 1}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "// stale\n"},
        ]}),
    );
    s.diagnostics(uri, 1);
    // A change to a document never opened is ignored.
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///tmp/kernaut-hostile/never.cu", "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"},
        ]}),
    );
    let r = s.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let names: Vec<&str> = r["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["transpose", "fma", "tail"], "{r}");
    let r = s.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 10, "character": 22}}),
    );
    assert!(
        r["result"]["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("__hfma2"),
        "{r}"
    );
    s.assert_serving();
    s.shutdown();
}
