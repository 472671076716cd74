//! The real `kernaut-lsp` binary over stdio, spoken to in JSON-RPC as an editor does:
//! lifecycle, hover, diagnostics, quick fixes applied to the text, code lenses, inlay
//! hints, completion, symbols, wiki commands, UTF-16 positions, bad input and shutdown.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any single answer may take before the test gives up (a hang, not a budget).
const PATIENCE: Duration = Duration::from_secs(60);

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Notifications and server requests seen while waiting for something else.
    seen: Vec<Value>,
    next_id: i64,
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    serde_json::from_slice(&kernaut_test_utils::lsp::read_frame(r)?).ok()
}

impl Client {
    fn start() -> Client {
        Client::start_with_env(&[])
    }

    fn start_with_env(env: &[(&str, &str)]) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"));
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("KERNAUT_WIKI");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("kernaut-lsp starts");
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
        Client {
            child,
            stdin,
            messages: rx,
            seen: Vec::new(),
            next_id: 1,
        }
    }

    fn send(&mut self, v: &Value) {
        let body = serde_json::to_string(v).unwrap();
        write!(self.stdin, "{}", kernaut_test_utils::lsp::frame(&body)).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send_raw(&mut self, body: &str) {
        write!(self.stdin, "{}", kernaut_test_utils::lsp::frame(body)).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response (the whole message, with `result` or
    /// `error`). Requests from the server are answered with null.
    fn request_full(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + PATIENCE;
        loop {
            let m = self
                .next_message(deadline)
                .unwrap_or_else(|| panic!("no answer to {method}"));
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            self.keep(m);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let m = self.request_full(method, params);
        assert!(m.get("error").is_none(), "{method} failed: {m}");
        m["result"].clone()
    }

    fn keep(&mut self, m: Value) {
        if m.get("id").is_some() && m.get("method").is_some() {
            // A request from the server (progress creation, ...): answer it.
            let id = m["id"].clone();
            self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
        }
        self.seen.push(m);
    }

    fn next_message(&mut self, deadline: Instant) -> Option<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.messages.recv_timeout(left).ok()
    }

    /// Waits for a notification `method` whose params satisfy `pred` (looking first at
    /// those already seen).
    fn wait_for(&mut self, method: &str, pred: impl Fn(&Value) -> bool) -> Value {
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
                .next_message(deadline)
                .unwrap_or_else(|| panic!("no {method} notification; seen {:?}", self.seen));
            if m["method"] == method && pred(&m["params"]) {
                return m["params"].clone();
            }
            self.keep(m);
        }
    }

    fn initialize(&mut self, capabilities: Value, options: Value) -> Value {
        let r = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": capabilities, "initializationOptions": options}),
        );
        self.notify("initialized", json!({}));
        r
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": text}}),
        );
    }

    /// The diagnostics published for `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let p = self.wait_for("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && p["version"] == version
        });
        p["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    fn shutdown(mut self) {
        let r = self.request_full("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "{status}");
                return;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The (line, UTF-16 character) of the first occurrence of `needle` in `text`, plus
/// `delta` characters.
fn pos(text: &str, needle: &str, delta: usize) -> Value {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` in the text"));
    let before = &text[..at];
    let line = before.matches('\n').count();
    let col = before.rsplit('\n').next().unwrap().encode_utf16().count() + delta;
    json!({"line": line, "character": col})
}

/// Applies LSP text edits (UTF-16 positions) to `text`.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| -> usize {
        let line = p["line"].as_u64().unwrap() as usize;
        let ch = p["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let mut units = 0;
        for (i, c) in text[start..].char_indices() {
            if units >= ch || c == '\n' {
                return start + i;
            }
            units += c.len_utf16();
        }
        text.len()
    };
    let mut edits: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (a, b, t) in edits {
        out.replace_range(a..b, &t);
    }
    out
}

const TRANSPOSE: &str = "\
#include <cuda_fp16.h>
#define TILE 32
__global__ void transpose(float* out, const float* in, int n) {
    __shared__ float tile[TILE][TILE];
    __shared__ float padded[TILE][TILE + 1];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * n + x];
    padded[y][x] = in[y * n + x];
    __syncthreads();
    out[x * n + y] = tile[x][y] + padded[x][y];
}

__global__ void fma(__half2* o, __half2 a, __half2 b) {
    o[threadIdx.x] = __hfma2(a, b, o[threadIdx.x]);
}

__global__ void copy(float* out, const float* in, int n) {
    __shared__ float buf[256];
    asm volatile(\"cp.async.wait_group 0;\\n\" ::);
    for (int s = 0; s < n; ++s) {
        __pipeline_memcpy_async(&buf[threadIdx.x], &in[s * 256 + threadIdx.x], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        out[s * 256 + threadIdx.x] = __shfl_down(buf[(threadIdx.x + 1) % 256], 1);
    }
}

void launch(float* o, const float* i, int n) {
    transpose<<<dim3(n / 32, n / 32), dim3(32, 32)>>>(o, i, n);
}
";

fn hover_text(c: &mut Client, uri: &str, text: &str, needle: &str, delta: usize) -> String {
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": pos(text, needle, delta)}),
    );
    r["contents"]["value"].as_str().unwrap_or("").to_string()
}

#[test]
fn initialize_negotiates_utf8_when_offered_and_answers_capabilities() {
    let mut c = Client::start();
    let r = c.initialize(
        json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}),
        Value::Null,
    );
    assert_eq!(r["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(r["capabilities"]["textDocumentSync"]["change"], 2);
    for cap in [
        "hoverProvider",
        "codeActionProvider",
        "codeLensProvider",
        "inlayHintProvider",
        "completionProvider",
        "signatureHelpProvider",
        "documentSymbolProvider",
        "workspaceSymbolProvider",
    ] {
        assert!(!r["capabilities"][cap].is_null(), "{cap} missing: {r}");
    }
    assert_eq!(r["serverInfo"]["name"], "kernaut-lsp");
    c.shutdown();

    let mut c = Client::start();
    let r = c.initialize(json!({}), Value::Null);
    assert_eq!(r["capabilities"]["positionEncoding"], "utf-16");
    c.shutdown();
}

#[test]
fn hovers_on_intrinsics_ptx_in_asm_and_tiles() {
    let mut c = Client::start();
    c.initialize(json!({}), json!({"arch": "sm_90"}));
    let uri = "file:///tmp/kernaut-e2e/hover.cu";
    c.open(uri, TRANSPOSE);
    let h = hover_text(&mut c, uri, TRANSPOSE, "__hfma2", 3);
    assert!(h.contains("__hfma2"), "{h}");
    assert!(h.contains("__half2"), "the signature: {h}");
    let h = hover_text(&mut c, uri, TRANSPOSE, "cp.async.wait_group", 12);
    assert!(h.contains("cp.async.wait_group"), "{h}");
    // The unpadded tile read down a column: 32-way; the padded one: none.
    let h = hover_text(&mut c, uri, TRANSPOSE, "tile[x][y]", 1);
    assert!(h.contains("32-way"), "{h}");
    let h = hover_text(&mut c, uri, TRANSPOSE, "padded[x][y]", 1);
    assert!(!h.contains("-way"), "no conflict on the padded tile: {h}");
    assert!(
        h.to_lowercase().contains("no bank conflict") || h.contains("1 wavefront"),
        "{h}"
    );
    // A kernel: its occupancy at the launch found.
    let h = hover_text(&mut c, uri, TRANSPOSE, "transpose(float", 2);
    assert!(h.to_lowercase().contains("occupancy"), "{h}");
    // Nothing to say on a blank: null, not an error.
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 11, "character": 0}}),
    );
    assert!(r.is_null(), "{r}");
    c.shutdown();
}

#[test]
fn diagnostics_quick_fixes_and_allow_comments() {
    let cache = std::env::temp_dir().join(format!("kernaut-e2e-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let mut c = Client::start_with_env(&[("KERNAUT_CACHE_DIR", cache.to_str().unwrap())]);
    c.initialize(json!({}), json!({"arch": "sm_90"}));
    let uri = "file:///tmp/kernaut-e2e/diag.cu";
    c.open(uri, TRANSPOSE);
    let diags = c.diagnostics(uri, 1);
    let rules: Vec<&str> = diags.iter().filter_map(|d| d["code"].as_str()).collect();
    assert!(rules.contains(&"bank-conflict"), "{diags:#?}");
    assert!(rules.len() >= 3, "{rules:?}");
    // Opened again without a close (Emacs's eglot after a revert drops what it held): the
    // same diagnostics are published again, though nothing changed.
    c.open(uri, TRANSPOSE);
    assert_eq!(c.diagnostics(uri, 1), diags);
    for d in &diags {
        assert_eq!(d["source"], "kernaut");
        // A client that did not ask for `kernaut://` links gets the page as a file in
        // the cache folder, with the section as the fragment.
        let href = d["codeDescription"]["href"].as_str().unwrap();
        let (file, anchor) = href
            .strip_prefix("file://")
            .and_then(|f| f.split_once('#'))
            .unwrap_or_else(|| panic!("a file:// link with an anchor: {href}"));
        assert!(
            file.starts_with(&cache.join("wiki-pages").display().to_string()),
            "{href}"
        );
        let page = std::fs::read_to_string(file).unwrap();
        assert!(
            page.lines().any(|l| l.starts_with('#')
                && (l.contains(&format!(" {anchor}:"))
                    || l.to_lowercase()
                        .replace(' ', "-")
                        .ends_with(&anchor.to_lowercase()))),
            "the page holds the section {anchor}: {page}"
        );
        assert!(d["message"]
            .as_str()
            .unwrap()
            .contains(&format!("#{anchor})")));
    }
    // Every quick fix of every diagnostic, applied to the text, changes it and leaves
    // a file the server still reads.
    let mut fixes_applied = 0;
    for d in &diags {
        let actions = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}}),
        );
        let actions = actions.as_array().unwrap();
        let allow = actions
            .iter()
            .find(|a| a["title"].as_str().unwrap().starts_with("Allow"))
            .unwrap_or_else(|| panic!("an allow action for {d}"));
        let edits = allow["edit"]["changes"][uri].as_array().unwrap();
        let allowed = apply(TRANSPOSE, edits);
        assert!(allowed.contains(&format!(
            "// kernaut: allow({})",
            d["code"].as_str().unwrap()
        )));
        assert!(actions
            .iter()
            .any(|a| a["command"]["command"] == "kernaut.showPage"));
        for a in actions.iter().filter(|a| {
            a["kind"] == "quickfix" && !a["title"].as_str().unwrap().starts_with("Allow")
        }) {
            let edits = a["edit"]["changes"][uri].as_array().unwrap();
            let fixed = apply(TRANSPOSE, edits);
            assert_ne!(fixed, TRANSPOSE, "{}", a["title"]);
            fixes_applied += 1;
        }
    }
    assert!(fixes_applied > 0, "no quick fix among {diags:#?}");

    // The padding fix of the bank conflict, applied through the document: the
    // diagnostic at that line goes away.
    let conflict = diags.iter().find(|d| d["code"] == "bank-conflict").unwrap();
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": conflict["range"], "context": {"diagnostics": [conflict]}}),
    );
    let fix = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "quickfix" && a["isPreferred"] == true)
        .or_else(|| {
            actions
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["kind"] == "quickfix")
        })
        .unwrap()
        .clone();
    let edits = fix["edit"]["changes"][uri].as_array().unwrap().clone();
    let fixed = apply(TRANSPOSE, &edits);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": edits.iter().rev().map(|e| json!({"range": e["range"], "text": e["newText"]})).collect::<Vec<_>>()}),
    );
    let after = c.diagnostics(uri, 2);
    let line = conflict["range"]["start"]["line"].clone();
    assert!(
        !after
            .iter()
            .any(|d| d["code"] == "bank-conflict" && d["range"]["start"]["line"] == line),
        "fix `{}` left {after:#?}\n{fixed}",
        fix["title"]
    );
    c.shutdown();
}

#[test]
fn lenses_hints_symbols_completion_and_signature_help() {
    let mut c = Client::start();
    c.initialize(json!({}), json!({"arch": "sm_90"}));
    let uri = "file:///tmp/kernaut-e2e/lens.cu";
    c.open(uri, TRANSPOSE);
    let lenses = c.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap())
        .collect();
    // An occupancy lens and a report lens per kernel.
    assert_eq!(titles.len(), 6, "{titles:?}");
    assert_eq!(
        &titles[3..],
        [
            "report · top cost 41% `bank-conflict` (line 10)",
            "report · no costed finding",
            "report · no costed finding",
        ],
        "{titles:?}"
    );
    // The report lens's command returns the report as Markdown, its first line the lens's.
    let report_lens = &lenses.as_array().unwrap()[3]["command"];
    assert_eq!(report_lens["command"], "kernaut.kernelReport");
    let report = c.request(
        "workspace/executeCommand",
        json!({"command": "kernaut.kernelReport", "arguments": report_lens["arguments"]}),
    );
    assert_eq!(report["kernel"], "transpose");
    let md = report["markdown"].as_str().unwrap();
    assert!(
        md.starts_with("# Kernel report: `transpose` on sm_90\n"),
        "{md}"
    );
    assert!(
        md.contains("1. 41% of memory transactions · `bank-conflict` (line 10)"),
        "{md}"
    );
    assert!(
        titles[0].starts_with("occupancy ") && titles[0].contains("blocks/SM")
            || titles[0].contains("block/SM"),
        "{titles:?}"
    );
    let launch_line = TRANSPOSE[..TRANSPOSE.find("transpose<<<").unwrap()]
        .matches('\n')
        .count()
        + 1;
    assert!(
        titles[0].contains(&format!(
            "32×32 threads from the launch at line {launch_line}"
        )),
        "{titles:?}"
    );

    let hints = c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}}),
    );
    let labels: Vec<String> = hints
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["label"].as_str().unwrap().to_string())
        .collect();
    assert!(labels.contains(&": 4 KiB".to_string()), "{labels:?}");
    assert!(labels.contains(&": 4.1 KiB".to_string()), "{labels:?}");
    assert!(
        labels.contains(&"32-way conflict".to_string()),
        "{labels:?}"
    );
    // Switched off by configuration.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"kernaut": {"inlayHints": false, "codeLens": false}}}),
    );
    let hints = c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}}),
    );
    assert_eq!(hints, json!([]));
    let lenses = c.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(lenses, json!([]));

    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["transpose", "fma", "copy"]);
    let children: Vec<&str> = symbols[0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(children, ["tile", "padded"]);

    // Completion of an intrinsic being typed, with its signature.
    let text = format!("{TRANSPOSE}__device__ void f() {{ __hfm }}\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]}),
    );
    let r = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": pos(&text, "__hfm }", 5)}),
    );
    let items = r["items"].as_array().unwrap();
    let hfma2 = items
        .iter()
        .find(|i| i["label"] == "__hfma2")
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        hfma2["detail"].as_str().unwrap().contains("__half2"),
        "{hfma2}"
    );
    // Signature help inside the arguments, at the second one.
    let r = c.request(
        "textDocument/signatureHelp",
        json!({"textDocument": {"uri": uri}, "position": pos(&text, "__hfma2(a, b", 12)}),
    );
    assert_eq!(r["activeParameter"], 1, "{r}");
    assert!(
        r["signatures"][0]["label"]
            .as_str()
            .unwrap()
            .contains("__hfma2"),
        "{r}"
    );
    c.shutdown();
}

#[test]
fn wiki_commands_and_workspace_symbols() {
    let mut c = Client::start();
    // The VS Code extension resolves `kernaut://wiki/…` itself and says so.
    c.initialize(json!({}), json!({"wikiLinks": "kernaut"}));
    let hits = c.request(
        "workspace/executeCommand",
        json!({"command": "kernaut.search", "arguments": ["bank conflicts on a transposed tile", 5]}),
    );
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 5);
    assert!(
        hits.iter()
            .any(|h| h["id"].as_str().unwrap().contains("bank-conflict")),
        "{hits:?}"
    );
    let target = hits[0]["target"].as_str().unwrap().to_string();
    let page = c.request(
        "workspace/executeCommand",
        json!({"command": "kernaut.showPage", "arguments": [target]}),
    );
    assert!(
        page["markdown"].as_str().unwrap().starts_with("# "),
        "{page}"
    );
    let bad = c.request_full(
        "workspace/executeCommand",
        json!({"command": "kernaut.showPage", "arguments": ["no-such-page"]}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let symbols = c.request(
        "workspace/symbol",
        json!({"query": "async copy slower than plain loop"}),
    );
    let symbols = symbols.as_array().unwrap();
    assert!(!symbols.is_empty());
    assert!(symbols[0]["location"]["uri"]
        .as_str()
        .unwrap()
        .starts_with("kernaut://wiki/"));
    // Issue 28: an id opens exactly that page first; nonsense has no good match.
    let hits = c.request(
        "workspace/executeCommand",
        json!({"command": "kernaut.search", "arguments": ["skill-occupancy", 5]}),
    );
    assert_eq!(hits[0]["target"], "skill-occupancy", "{hits}");
    let hits = c.request(
        "workspace/executeCommand",
        json!({"command": "kernaut.search", "arguments": ["pizza recipe", 5]}),
    );
    assert_eq!(hits, json!([]));
    let symbols = c.request(
        "workspace/symbol",
        json!({"query": "pitfall-bank-conflict#P1"}),
    );
    assert!(
        symbols[0]["location"]["uri"]
            .as_str()
            .unwrap()
            .contains("pitfall-bank-conflict"),
        "{symbols}"
    );
    c.shutdown();
}

#[test]
fn utf16_positions_on_lines_with_non_ascii_comments() {
    let text = "// transposée 😀 naïve\n__global__ void k(__half2* o, __half2 a) { /* é */ o[0] = __hfma2(a, a, a); }\n";
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null);
    let uri = "file:///tmp/kernaut-e2e/utf16.cu";
    c.open(uri, text);
    let p = pos(text, "__hfma2", 2);
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": p}),
    );
    assert!(
        r["contents"]["value"].as_str().unwrap().contains("__hfma2"),
        "{r}"
    );
    // The range comes back in UTF-16 columns too.
    let start = pos(text, "__hfma2", 0);
    assert_eq!(r["range"]["start"], start, "{r}");
    // An incremental edit after the emoji: insert text at a UTF-16 column.
    let at = pos(text, "naïve", 0);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": at, "end": at}, "text": "très "}]}),
    );
    let edited = text.replace("naïve", "très naïve");
    let p = pos(&edited, "__hfma2", 2);
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": p}),
    );
    assert!(
        r["contents"]["value"].as_str().unwrap().contains("__hfma2"),
        "{r}"
    );
    c.shutdown();
}

#[test]
fn malformed_and_unknown_messages_do_not_kill_the_server() {
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null);
    c.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ");
    c.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 100, \"method\": \"textDocument/hover\", \"params\": {\"nonsense\": true}}");
    let r = c.request_full("kernaut/noSuchMethod", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    // A hover on a document never opened: null, not an error.
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///nowhere.cu"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(r.is_null());
    // Positions past the end of the document are clamped.
    let uri = "file:///tmp/kernaut-e2e/short.cu";
    c.open(uri, "int x;\n");
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 500, "character": 9999}}),
    );
    assert!(r.is_null());
    c.shutdown();
}

#[test]
fn a_broken_kernaut_toml_is_reported_and_defaults_are_used() {
    let dir = std::env::temp_dir().join(format!("kernaut-e2e-toml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".kernaut.toml"), "arch = [broken\n").unwrap();
    let file = dir.join("k.cu");
    std::fs::write(&file, TRANSPOSE).unwrap();
    let uri = format!("file://{}", file.display());
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null);
    c.open(&uri, TRANSPOSE);
    let m = c.wait_for("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains(".kernaut.toml")
    });
    assert!(m["message"].as_str().unwrap().contains("defaults"), "{m}");
    assert!(!c.diagnostics(&uri, 1).is_empty());
    c.shutdown();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn rule_levels_from_initialization_options() {
    let mut c = Client::start();
    c.initialize(json!({}), json!({"rules": {"bank-conflict": "off", "async-copy/wait-all-in-pipelined-loop": "error"}}));
    let uri = "file:///tmp/kernaut-e2e/levels.cu";
    c.open(uri, TRANSPOSE);
    let diags = c.diagnostics(uri, 1);
    assert!(
        !diags.iter().any(|d| d["code"] == "bank-conflict"),
        "{diags:#?}"
    );
    c.shutdown();
}

/// With a CUDA toolkit (found as the server finds it: `CUDA_HOME`, `PATH` or a Python
/// environment with NVIDIA's wheels), an open file is compiled in the background: the
/// lens shows the register count ptxas reported and a spilling kernel gets
/// `resources/spills`.
#[test]
fn compiled_register_counts_and_spills_with_a_toolkit() {
    if let Err(e) = kernaut_compiler::Toolkit::discover(&kernaut_compiler::ToolkitConfig::default())
    {
        eprintln!("skipped: no CUDA toolkit here ({e})");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kernaut-e2e-nvcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "\
__global__ void __launch_bounds__(1024, 2) spill(float* o, const float* in, int n) {
    float acc[96];
#pragma unroll
    for (int i = 0; i < 96; ++i) acc[i] = in[i * n + threadIdx.x];
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 96; ++i) s += acc[(i * 7) % 96] * acc[i];
    o[threadIdx.x] = s;
}
";
    let file = dir.join("spill.cu");
    std::fs::write(&file, text).unwrap();
    let uri = format!("file://{}", file.display());
    let mut c = Client::start();
    c.initialize(json!({}), json!({"arch": "sm_80"}));
    c.open(&uri, text);
    let p = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == uri.as_str()
            && p["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["code"] == "resources/spills"))
    });
    let d = p["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "resources/spills")
        .unwrap()
        .clone();
    assert!(
        d["message"].as_str().unwrap().contains("bytes stored"),
        "{d}"
    );
    let lenses = c.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let title = lenses[0]["command"]["title"].as_str().unwrap();
    assert!(
        title.contains(" regs") && !title.contains("~") && !title.contains("≤"),
        "{title}"
    );
    c.shutdown();
    std::fs::remove_dir_all(&dir).ok();
}

/// Misspelled rule ids reach the editor from the same `ide` data as `check`: a
/// `.kernaut.toml` key as a message with the closest id, an `allow(...)` id as a
/// `config/unknown-rule` hint whose one quick fix puts in the closest id.
#[test]
fn misspelled_rule_ids_are_shown() {
    let dir = std::env::temp_dir().join(format!("kernaut-e2e-misspelled-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(".kernaut.toml"),
        "[rules]\nbank-conflit = \"off\"\n",
    )
    .unwrap();
    let text = TRANSPOSE.replacen('\n', " // kernaut: allow(bank-conflit)\n", 1);
    let file = dir.join("k.cu");
    std::fs::write(&file, &text).unwrap();
    let uri = format!("file://{}", file.display());
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null);
    c.open(&uri, &text);
    let m = c.wait_for("window/showMessage", |p| {
        p["message"].as_str().unwrap_or("").contains("bank-conflit")
    });
    assert!(
        m["message"]
            .as_str()
            .unwrap()
            .contains("no such rule; did you mean \"bank-conflict\"?"),
        "{m}"
    );
    let diags = c.diagnostics(&uri, 1);
    let hint = diags
        .iter()
        .find(|d| d["code"] == "config/unknown-rule")
        .unwrap_or_else(|| panic!("{diags:#?}"));
    assert_eq!(hint["severity"], 4, "{hint}");
    assert!(hint["codeDescription"].is_null(), "{hint}");
    assert!(
        hint["message"]
            .as_str()
            .unwrap()
            .ends_with("did you mean `bank-conflict`?"),
        "{hint}"
    );
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": hint["range"], "context": {"diagnostics": [hint]}}),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["diagnostics"][0]["code"] == "config/unknown-rule")
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert_eq!(
        titles,
        ["Change `bank-conflit` to `bank-conflict`"],
        "{actions:#?}"
    );
    c.shutdown();
    std::fs::remove_dir_all(&dir).ok();
}

/// A `.kernaut.toml` in the workspace may not choose the compiler: its `nvcc` key is
/// ignored and the server says so; the script it names never runs.
#[test]
fn a_workspace_file_never_chooses_the_compiler() {
    let dir = std::env::temp_dir().join(format!("kernaut-e2e-evil-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("ran");
    let script = dir.join("evil.sh");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        dir.join(".kernaut.toml"),
        format!("nvcc = \"{}\"\n", script.display()),
    )
    .unwrap();
    let file = dir.join("k.cu");
    std::fs::write(&file, TRANSPOSE).unwrap();
    let uri = format!("file://{}", file.display());
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null);
    c.open(&uri, TRANSPOSE);
    let m = c.wait_for("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("`nvcc` is ignored")
    });
    assert!(
        m["message"].as_str().unwrap().contains("kernaut.nvcc"),
        "{m}"
    );
    assert!(!c.diagnostics(&uri, 1).is_empty());
    c.shutdown();
    assert!(!marker.exists(), "the workspace's script ran");
    std::fs::remove_dir_all(&dir).ok();
}

/// A `.cu` compiled only through a source of another folder, whose `CMakeLists.txt`
/// builds for sm_35: the editor reads the project's includes off its request path
/// (a huge folder never holds back the first diagnostics) and then gives the file its
/// includer's targets, as `check` does: its warp-synchronous tail through `volatile` runs
/// in lock-step there and is no finding.
#[test]
fn a_file_compiled_through_its_includer_gets_the_includers_targets() {
    let dir = std::env::temp_dir().join(format!("kernaut-e2e-includer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for d in [".git", "lib", "include/util"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("lib/CMakeLists.txt"),
        "project(sums)\nset(CUDA_NVCC_FLAGS \"-arch=sm_35\")\ninclude_directories(${CMAKE_CURRENT_SOURCE_DIR}/../include)\ncuda_add_library(sums sum.cu)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("lib/sum.cu"),
        "#include \"util/tail.cu\"\nvoid run(const int* in, int* out, int n) { block_sum<<<n, 64>>>(in, out); }\n",
    )
    .unwrap();
    let tail = "__global__ void block_sum(const int* in, int* out) {\n    __shared__ int part[64];\n    unsigned t = threadIdx.x;\n    part[t] = in[blockIdx.x * 64 + t];\n    __syncthreads();\n    if (t < 32) {\n        volatile int* w = part;\n        w[t] += w[t + 32];\n        w[t] += w[t + 16];\n        w[t] += w[t + 8];\n    }\n    if (t == 0) out[blockIdx.x] = part[0];\n}\n";
    let file = dir.join("include/util/tail.cu");
    std::fs::write(&file, tail).unwrap();
    let uri = format!("file://{}", file.display());
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null);
    c.open(&uri, tail);
    // Whatever came first, the file's diagnostics end with none.
    let clean = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == uri.as_str() && p["diagnostics"].as_array().is_some_and(|d| d.is_empty())
    });
    assert_eq!(clean["version"], 1);
    // The hover states the includer's target, which no occupancy table holds.
    let h = hover_text(&mut c, &uri, tail, "part[64]", 0);
    assert!(h.contains("**Occupancy**: not modelled for sm_35"), "{h}");
    c.shutdown();
    std::fs::remove_dir_all(&dir).ok();
}
