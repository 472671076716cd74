//! One project, four front ends, the same facts: `kernaut-lsp check`, the language
//! server, `ktui explain` and `ktui FILE.cu` all load `tests/data/project` through the
//! project loader, and must agree on the targets and where they came from (its
//! `CMakeLists.txt`), the register count and its source (`registers` of the
//! `.kernaut.toml` in `sub/`), the occupancy, the bank conflict of the transpose's read
//! (its tile sized by a header found through `include_dirs`), and the findings. When
//! one front end drifts, this test names it.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use kernaut_tui::app::model::{hover_at, Library, Panel, Workspace};
use serde_json::{json, Value};

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/project")
        .canonicalize()
        .unwrap()
}

fn source() -> PathBuf {
    project().join("sub/transpose.cu")
}

fn text() -> String {
    std::fs::read_to_string(source()).unwrap()
}

/// The 1-based line holding `needle`.
fn line_of(needle: &str) -> usize {
    text().lines().position(|l| l.contains(needle)).unwrap() + 1
}

/// `kernaut-lsp`, next to `ktui` (built with it by `cargo test --workspace`), or built.
fn kernaut_lsp() -> PathBuf {
    let ktui = PathBuf::from(env!("CARGO_BIN_EXE_ktui"));
    let lsp = ktui.with_file_name(format!("kernaut-lsp{}", std::env::consts::EXE_SUFFIX));
    if !lsp.is_file() {
        let target = ktui.parent().and_then(Path::parent).unwrap();
        let ok = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "kernaut-lsp", "--bin", "kernaut-lsp"])
            .env("CARGO_TARGET_DIR", target)
            .status()
            .unwrap()
            .success();
        assert!(ok, "building kernaut-lsp");
    }
    lsp
}

/// The facts one front end shows.
#[derive(Debug, PartialEq)]
struct Facts {
    targets: String,
    registers: String,
    occupancy: String,
    findings: Vec<(usize, String)>,
}

/// "NN %" or "NN.N %" figures in a text, first one.
fn percent(text: &str) -> String {
    let at = text.find('%').expect("an occupancy figure");
    let start = text[..at]
        .trim_end()
        .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or(0, |i| i + 1);
    text[start..at].trim().to_string()
}

fn check() -> Facts {
    let out = Command::new(kernaut_lsp())
        .args(["check", "--format", "json"])
        .arg(source())
        .env_remove("KERNAUT_WIKI")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut findings: Vec<(usize, String)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["line"].as_u64().unwrap() as usize,
                d["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    findings.sort();
    // `check` prints its targets in the text format.
    let text = Command::new(kernaut_lsp())
        .arg("check")
        .arg(source())
        .env_remove("KERNAUT_WIKI")
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&text.stderr);
    let targets = summary
        .lines()
        .find_map(|l| l.strip_prefix("targets: "))
        .unwrap_or_else(|| panic!("no targets line in {summary}{stderr}"))
        .to_string();
    Facts {
        targets,
        registers: String::new(),
        occupancy: String::new(),
        findings,
    }
}

fn explain() -> Facts {
    let at = format!("{}:{}:17", source().display(), line_of("__global__"));
    let out = Command::new(env!("CARGO_BIN_EXE_ktui"))
        .args(["explain", "--json", &at])
        .env_remove("KERNAUT_WIKI")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let occ = &v["occupancy"];
    Facts {
        targets: format!(
            "{} (from {})",
            v["targets"].as_str().unwrap(),
            v["targets_origin"].as_str().unwrap()
        ),
        registers: format!(
            "{} from {}",
            occ["regs_per_thread"],
            occ["regs_source"].as_str().unwrap()
        ),
        occupancy: format!("{}", (occ["occupancy"].as_f64().unwrap() * 100.0).round()),
        findings: Vec::new(),
    }
}

fn tui() -> Facts {
    let lib = Library::builtin().unwrap();
    let path = source().display().to_string();
    let ws = Workspace::open(&lib, &path, text(), None);
    let offset = text().find("transpose(").unwrap() + 2;
    let kernel = ws
        .panels_at(offset)
        .into_iter()
        .find_map(|p| match p {
            Panel::Kernel(k) => Some(k),
            _ => None,
        })
        .expect("a kernel panel");
    let view = kernaut_tui::app::model::occupancy_view(&kernel, None);
    let mut findings: Vec<(usize, String)> = ws
        .diagnostics()
        .iter()
        .map(|d| (d.line + 1, d.rule.clone()))
        .collect();
    findings.sort();
    let registers = kernel
        .sources
        .iter()
        .find_map(|s| s.strip_prefix("registers: from "))
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .to_string();
    // The same hover `ktui explain` prints, through the library.
    let (hover, _) = hover_at(
        kernaut_ide::Knowledge::load(&kernaut_ide::wiki::WikiConfig::builtin()).unwrap(),
        kernaut_ide::wiki::WikiConfig::builtin(),
        None,
        &path,
        &text(),
        offset,
    )
    .unwrap()
    .unwrap();
    assert!(hover
        .markdown
        .contains(&format!("Targets: {}.", ws.targets().describe())));
    Facts {
        targets: ws.targets().describe(),
        registers: format!("{} from {registers}", kernel.found.regs),
        occupancy: format!("{}", (view.result.unwrap().occupancy * 100.0).round()),
        findings,
    }
}

/// The server over stdio: diagnostics after opening the file, and the kernel's hover.
fn server() -> Facts {
    let mut child = Command::new(kernaut_lsp())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .env_remove("KERNAUT_WIKI")
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        while let Some(frame) = kernaut_test_utils::lsp::read_frame(&mut r) {
            let Ok(v) = serde_json::from_slice::<Value>(&frame) else {
                continue;
            };
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let mut send = |v: Value| {
        let body = serde_json::to_string(&v).unwrap();
        write!(stdin, "{}", kernaut_test_utils::lsp::frame(&body)).unwrap();
        stdin.flush().unwrap();
    };
    let root = format!("file://{}", project().display());
    let uri = format!("file://{}", source().display());
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": null, "rootUri": root, "capabilities": {},
        "initializationOptions": {"compile": false}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "cuda", "version": 1, "text": text()}}}),
    );
    // The last diagnostics published for the file within a quiet second.
    let mut diagnostics: Option<Vec<Value>> = None;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_secs(if diagnostics.is_some() {
            1
        } else {
            60
        })) {
            Ok(m)
                if m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri =>
            {
                diagnostics = Some(m["params"]["diagnostics"].as_array().unwrap().clone());
            }
            Ok(m) if m.get("id").is_some() && m.get("method").is_some() => {
                send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let mut findings: Vec<(usize, String)> = diagnostics
        .expect("diagnostics for the file")
        .iter()
        .filter(|d| d["source"] == "kernaut")
        .map(|d| {
            (
                d["range"]["start"]["line"].as_u64().unwrap() as usize + 1,
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    findings.sort();
    let line = line_of("__global__") - 1;
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": 17}}}),
    );
    let hover = loop {
        let m = rx.recv_timeout(Duration::from_secs(60)).expect("a hover");
        if m["id"] == 2 {
            break m["result"]["contents"]["value"]
                .as_str()
                .unwrap()
                .to_string();
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();
    let targets = hover
        .lines()
        .find_map(|l| l.strip_prefix("Targets: "))
        .unwrap()
        .trim_end_matches('.')
        .to_string();
    let occupancy_line = hover
        .lines()
        .find(|l| l.contains("Occupancy on"))
        .unwrap_or_else(|| panic!("{hover}"));
    let regs = occupancy_line
        .split("threads), ")
        .nth(1)
        .unwrap()
        .split(" registers")
        .next()
        .unwrap()
        .to_string();
    let source = if occupancy_line.contains("`registers` in `.kernaut.toml`") {
        ".kernaut.toml"
    } else {
        "?"
    };
    let result = hover
        .lines()
        .skip_while(|l| !l.contains("Occupancy on"))
        .skip(1)
        .find(|l| l.contains('%'))
        .unwrap();
    Facts {
        targets,
        registers: format!("{regs} from {source}"),
        occupancy: format!("{}", percent(result).parse::<f64>().unwrap().round()),
        findings,
    }
}

#[test]
fn every_front_end_shows_the_same_facts() {
    let check = check();
    let explain = explain();
    let tui = tui();
    let server = server();
    let cmake = project().join("CMakeLists.txt");
    let targets = format!("sm_80, sm_90a (from {}:4)", cmake.display());
    assert_eq!(check.targets, targets, "check");
    assert_eq!(explain.targets, targets, "ktui explain");
    assert_eq!(tui.targets, targets, "ktui FILE.cu");
    assert_eq!(server.targets, targets, "the server");
    assert_eq!(explain.registers, "64 from .kernaut.toml", "ktui explain");
    assert_eq!(tui.registers, explain.registers, "ktui FILE.cu");
    assert_eq!(server.registers, explain.registers, "the server");
    assert_eq!(tui.occupancy, explain.occupancy, "ktui FILE.cu");
    assert_eq!(server.occupancy, explain.occupancy, "the server");
    // The header's TILE sizes the tile: the transposed read is a 32-way conflict; the
    // fence needs sm_90 and the build also targets sm_80.
    let read = line_of("= tile[threadIdx.x]");
    let fence = line_of("fence.proxy");
    assert!(
        check.findings.contains(&(read, "bank-conflict".into())),
        "{:?}",
        check.findings
    );
    assert!(
        check
            .findings
            .contains(&(fence, "arch/requires-newer-sm".into())),
        "{:?}",
        check.findings
    );
    assert_eq!(tui.findings, check.findings, "ktui FILE.cu");
    assert_eq!(server.findings, check.findings, "the server");
}
