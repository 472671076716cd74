//! The user-visible budgets of the language server, measured on the real binary over
//! stdio on a generated 10,000-line file (`cargo bench -p kernaut-lsp --bench server`):
//! process start to the first hover with text, open to the first diagnostics, hover
//! latency (p50/p99 of 200 hovers), a one-line edit to fresh diagnostics (p50 of 20), and
//! the server's peak resident memory. Budgets: 150 ms, 300 ms, 5 ms, 50 ms, 50 MB.
//! Results in `docs/BENCHMARKS.md`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    serde_json::from_slice(&kernaut_test_utils::lsp::read_frame(r)?).ok()
}

struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    rx: Receiver<Value>,
    id: i64,
}

impl Server {
    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "{}", kernaut_test_utils::lsp::frame(&body)).unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self
                .rx
                .recv_timeout(Duration::from_secs(60))
                .expect("an answer");
            if m["id"] == id && m.get("method").is_none() {
                return m["result"].clone();
            }
        }
    }

    fn wait_diagnostics(&mut self, version: i64) {
        loop {
            let m = self
                .rx
                .recv_timeout(Duration::from_secs(60))
                .expect("diagnostics");
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version
            {
                return;
            }
        }
    }

    fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    }
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let text = kernaut_test_utils::gen::generated(10_000);
    let uri = "file:///bench/gen.cu";
    let target = text.find("__shfl_down").unwrap() + 3;
    let line_col = |offset: usize| {
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        json!({"line": before.matches('\n').count(), "character": before.len() - line_start})
    };
    let t0 = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kernaut-lsp starts");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        while let Some(m) = read_message(&mut r) {
            if tx.send(m).is_err() {
                break;
            }
        }
    });
    let mut s = Server {
        child,
        stdin,
        rx,
        id: 0,
    };
    s.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let opened = Instant::now();
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": text}}}));
    let first_hover = loop {
        let r = s.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": line_col(target)}),
        );
        if r["contents"]["value"]
            .as_str()
            .is_some_and(|v| !v.is_empty())
        {
            break ms(t0.elapsed());
        }
    };
    s.wait_diagnostics(1);
    let first_diagnostics = ms(opened.elapsed());
    // Hovers at identifiers spread through the file.
    let step = text.len() / 200;
    let mut hovers = Vec::new();
    for i in 0..200 {
        let mut at = i * step;
        while at < text.len() && !text.as_bytes()[at].is_ascii_alphabetic() {
            at += 1;
        }
        let t = Instant::now();
        s.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": line_col(at.min(text.len()))}),
        );
        hovers.push(ms(t.elapsed()));
    }
    // One-line edits in the middle of the file, each answered by fresh diagnostics.
    let line = line_col(text.len() / 2)["line"].as_u64().unwrap();
    let mut edits = Vec::new();
    for v in 2..22 {
        let t = Instant::now();
        s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": v},
            "contentChanges": [{"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": format!("// edit {v}\n")}]
        }}));
        s.wait_diagnostics(v);
        edits.push(ms(t.elapsed()));
    }
    let rss = s.peak_rss_mb();
    s.request("shutdown", Value::Null);
    s.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = s.child.wait();
    println!(
        "kernaut-lsp on a generated 10,000-line file ({} bytes)",
        text.len()
    );
    println!("  process start to first hover  {first_hover:8.1} ms   (budget 150)");
    println!("  open to first diagnostics     {first_diagnostics:8.1} ms   (budget 300)");
    println!(
        "  hover p50 / p99               {:8.2} / {:.2} ms (budget p99 5)",
        percentile(&mut hovers, 0.5),
        percentile(&mut hovers, 0.99)
    );
    println!(
        "  edit to fresh diagnostics p50 {:8.1} ms   (budget 50; max {:.1})",
        percentile(&mut edits, 0.5),
        percentile(&mut edits, 1.0)
    );
    println!("  peak RSS                      {rss:8.1} MB   (budget 50)");
}
