//! The language server: protocol glue over `kernaut-ide`.
//!
//! One [`AnalysisHost`] behind a mutex owns the documents. No request is computed on the
//! message loop, so one slow request (a whole-file inlay hint on a 100,000-line file)
//! never delays another message:
//!
//! - **Order.** Messages are numbered as they are read ([`order`]). A handler first waits
//!   for its turn: after the previous message about the same document, and after the last
//!   message that changes what every document sees (configuration, `initialize`). An edit
//!   is applied to the host in its turn; a request takes its snapshot (an `Analysis`, the
//!   line index, the settings) in its turn. So a request sees exactly the text its
//!   document had when the request was sent, and requests about other documents do not
//!   wait for it.
//! - **Work.** The request then computes on its snapshot on a blocking thread, under
//!   `catch_unwind` (a panic becomes an `InternalError` response and a log line) and under
//!   a cancellation token of its own.
//! - **Cancellation.** Any change to the host (an edit, an open, a configuration) moves its
//!   revision: every query still running on an older snapshot unwinds at its next
//!   checkpoint and the request is answered `ContentModified`, never with a stale or empty
//!   answer. A `$/cancelRequest` drops the request's handler, and the handler's token
//!   stops its computation too.
//! - **Diagnostics.** Each change starts a sweep over every open document (the changed one
//!   first) on blocking threads, after a short debounce for bursts of edits; a newer
//!   change stops it and its own sweep takes over, so every edit ends in diagnostics for
//!   the document's last version, and a stale result is never published.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kernaut_ide::config::CONFIG_FILE_NAME;
use kernaut_ide::editor::InlayConfig;
use kernaut_ide::source_text::too_large_note;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{
    Analysis, AnalysisConfig, AnalysisHost, Cancellable, Change, FileId, Knowledge, LineIndex,
    ParsedFile, PositionEncoding, QueryError,
};
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::convert;
use crate::settings::Settings;
use kernaut_project::ProjectLoader;

pub mod order;

/// How loud the server's log is (`KERNAUT_LOG=error|warn|info|debug`, default `warn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Failures only.
    Error,
    /// Failures and problems with the user's files or settings.
    Warn,
    /// What the server is doing.
    Info,
    /// Everything.
    Debug,
}

impl LogLevel {
    /// The level from `KERNAUT_LOG`.
    pub fn from_env() -> LogLevel {
        match std::env::var("KERNAUT_LOG").ok().as_deref().map(str::trim) {
            Some("error") => LogLevel::Error,
            Some("info") => LogLevel::Info,
            Some("debug" | "trace") => LogLevel::Debug,
            _ => LogLevel::Warn,
        }
    }

    fn message_type(self) -> MessageType {
        match self {
            LogLevel::Error => MessageType::ERROR,
            LogLevel::Warn => MessageType::WARNING,
            LogLevel::Info => MessageType::INFO,
            LogLevel::Debug => MessageType::LOG,
        }
    }
}

/// An open document.
#[derive(Clone, Debug)]
struct Doc {
    id: FileId,
    uri: Uri,
    version: i32,
    /// The change counter when this document last changed; a diagnostics run started
    /// for an older one is dropped.
    generation: u64,
}

/// What a document's last `publishDiagnostics` said.
struct Published {
    version: i32,
    rules: Arc<Vec<kernaut_ide::diagnostic::RuleDiagnostic>>,
}

/// What the server holds between messages.
struct State {
    host: AnalysisHost,
    docs: HashMap<String, Doc>,
    encoding: PositionEncoding,
    settings: Settings,
    root: Option<PathBuf>,
    generation: u64,
    /// The project loader: `.kernaut.toml`, the build's targets and macros, include
    /// folders and compile flags of each file, read once per folder and build file.
    loader: ProjectLoader,
    /// The folders given a `.kernaut.toml`, to clear when one is saved.
    config_dirs: std::collections::HashSet<String>,
    /// Problems already shown, so that each is shown once.
    shown_problems: std::collections::HashSet<String>,
    /// What was last published for each open document: its version and the rules'
    /// diagnostics (shared with the host's cache), so that a sweep publishes only what
    /// changed.
    published: HashMap<String, Published>,
    /// Bumped by every change that schedules a diagnostics sweep; a sweep started for an
    /// older one stops (the newer sweep covers every document).
    sweep: u64,
    /// When the last edit arrived: an edit after a pause is diagnosed at once, one in a
    /// burst after the debounce.
    last_edit: Option<std::time::Instant>,
    /// The text of open documents too large to analyse
    /// (`kernaut_ide::source_text::MAX_ANALYSED_BYTES`), kept here for their edits and
    /// not given to the host.
    oversized: HashMap<String, String>,
}

impl State {
    /// The open `file:` documents, each with its id.
    fn file_docs(&self) -> Vec<(String, FileId)> {
        self.docs
            .iter()
            .filter(|(_, d)| d.uri.scheme().as_str() == "file")
            .map(|(k, d)| (k.clone(), d.id))
            .collect()
    }

    fn analysis_config(&self) -> AnalysisConfig {
        let arch = self.settings.arch;
        AnalysisConfig {
            arch: arch.unwrap_or(AnalysisConfig::default().arch),
            arch_configured: arch.is_some(),
            arch_origin: "the kernaut.arch setting".into(),
            default_block: self.settings.default_block,
            wiki: wiki_config(&self.settings),
            rules: self.settings.rules.clone(),
            threads: threads_from_env(),
            ..AnalysisConfig::default()
        }
    }
}

fn wiki_config(settings: &Settings) -> WikiConfig {
    let mut w = WikiConfig::builtin().with_env_paths(std::env::var_os("KERNAUT_WIKI").as_deref());
    w.dirs.extend(settings.wiki_paths.iter().cloned());
    w
}

/// `KERNAUT_THREADS`: how many threads one file's analysis may use (the server's own
/// work runs on tokio's blocking pool beside it).
fn threads_from_env() -> usize {
    std::env::var("KERNAUT_THREADS")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// The key of a document: its file path for `file:` URIs, else the URI itself.
fn doc_key(uri: &Uri) -> String {
    if uri.scheme().as_str() == "file" {
        if let Some(p) = uri.to_file_path() {
            return p.display().to_string();
        }
    }
    uri.as_str().to_string()
}

/// The built-in wiki (and `KERNAUT_WIKI`'s folders), loaded on a thread from the moment
/// the process starts, so that its index is built while the client initialises and the
/// first file parses.
struct Preload {
    slot: Mutex<Option<Option<Arc<Knowledge>>>>,
    ready: std::sync::Condvar,
    /// Notified when a diagnostics sweep has gone through every document: finding the
    /// toolkit (it runs `python3`) waits for the first, so that on a machine with few
    /// cores it does not slow the first hover and diagnostics.
    swept: tokio::sync::Notify,
}

impl Preload {
    fn start() -> Arc<Preload> {
        let p = Arc::new(Preload {
            slot: Mutex::new(None),
            ready: std::sync::Condvar::new(),
            swept: tokio::sync::Notify::new(),
        });
        let q = p.clone();
        let spawned = std::thread::Builder::new()
            .name("kernaut-wiki".into())
            .spawn(move || {
                let config = wiki_config(&Settings::default());
                let k = catch_unwind(AssertUnwindSafe(|| Knowledge::load(&config).ok()))
                    .ok()
                    .flatten()
                    .map(Arc::new);
                *q.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(k);
                q.ready.notify_all();
                // Parsing pages (user folders; the built-in ones come parsed) on several
                // threads leaves freed YAML values and copies in the allocator's arenas:
                // handed back to the system, they do not stay in the resident set.
                #[cfg(all(target_os = "linux", target_env = "gnu"))]
                // SAFETY: malloc_trim only returns free memory; glibc locks each arena.
                unsafe {
                    libc::malloc_trim(0);
                }
            });
        if spawned.is_err() {
            *p.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(None);
        }
        p
    }

    /// The preloaded wiki, waiting for it (`None` when it failed to load).
    fn wait(&self) -> Option<Arc<Knowledge>> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        while slot.is_none() {
            slot = self
                .ready
                .wait(slot)
                .unwrap_or_else(PoisonError::into_inner);
        }
        slot.clone().flatten()
    }
}

/// The language server (a clone is a handle on the same state, for background tasks).
#[derive(Clone)]
pub struct Server {
    client: Client,
    state: Arc<Mutex<State>>,
    log_level: LogLevel,
    /// Background compiles, when a CUDA toolkit was found.
    compiler: Arc<Mutex<Option<Compiler>>>,
    preload: Arc<Preload>,
    /// The order in which messages read and change the state.
    order: Arc<order::Order>,
}

/// The toolkit in use and its job queue.
struct Compiler {
    jobs: kernaut_compiler::CompileJobs,
    /// Whether `cuobjdump`/`nvdisasm` are there to read the SASS.
    sass: bool,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// A request's own cancellation: its computation stops when the handler ends before it
/// (the client cancelled the request and the library dropped the handler).
struct RequestToken(Arc<std::sync::atomic::AtomicU64>);

impl RequestToken {
    fn new() -> RequestToken {
        RequestToken(Arc::new(std::sync::atomic::AtomicU64::new(0)))
    }

    /// The token to install on the computation's thread.
    fn token(&self) -> kernaut_ide::syntax::cancel::CancelToken {
        kernaut_ide::syntax::cancel::CancelToken::new(self.0.clone(), 0)
    }
}

impl Drop for RequestToken {
    fn drop(&mut self) {
        self.0.store(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Inputs a request computes from, taken under the lock.
struct Snapshot {
    analysis: Analysis,
    id: FileId,
    lines: Arc<LineIndex>,
    enc: PositionEncoding,
    settings: Settings,
    uri: Uri,
}

impl Server {
    /// A server talking to `client`, its handlers taking turns in `order`.
    pub fn new(client: Client, order: Arc<order::Order>) -> Server {
        let host = AnalysisHost::new(AnalysisConfig {
            threads: threads_from_env(),
            ..AnalysisConfig::default()
        });
        Server {
            client,
            state: Arc::new(Mutex::new(State {
                host,
                docs: HashMap::new(),
                encoding: PositionEncoding::Utf16,
                settings: Settings::default(),
                root: None,
                generation: 0,
                loader: editor_loader(None),
                config_dirs: Default::default(),
                shown_problems: Default::default(),
                oversized: HashMap::new(),
                published: HashMap::new(),
                sweep: 0,
                last_edit: None,
            })),
            compiler: Arc::new(Mutex::new(None)),
            preload: Preload::start(),
            log_level: LogLevel::from_env(),
            order,
        }
    }

    /// Makes sure the host has a wiki before a request reads it: the preloaded one,
    /// unless the settings name other folders (then `load_wiki` brings it). Waits for
    /// the preload on a blocking thread.
    async fn ensure_knowledge(&self) {
        {
            let s = lock(&self.state);
            if s.host.analysis().knowledge().is_some() || !s.settings.wiki_paths.is_empty() {
                return;
            }
        }
        let (state, preload) = (self.state.clone(), self.preload.clone());
        let _ = tokio::task::spawn_blocking(move || ensure_knowledge(&state, &preload)).await;
    }

    /// Waits for this message's turn (see [`order`]).
    async fn turn(&self) -> order::Turn {
        self.order.admit().await
    }

    async fn log(&self, level: LogLevel, message: impl Into<String>) {
        log_to(&self.client, self.log_level, level, message.into()).await;
    }

    /// Runs `f` on a snapshot of the document `uri`, taken in the message's turn and
    /// computed on a blocking thread: `Ok(None)` for a document the server does not
    /// have, `ContentModified` when a change cancelled the query, an internal error (and
    /// a log line) for a failure or a panic.
    async fn on_doc<T: Send + 'static>(
        &self,
        what: &'static str,
        uri: &Uri,
        f: impl FnOnce(&Snapshot) -> Cancellable<T> + Send + 'static,
    ) -> Result<Option<T>> {
        let snap = {
            let _turn = self.turn().await;
            self.ensure_knowledge().await;
            let state = lock(&self.state);
            let Some(doc) = state.docs.get(&doc_key(uri)) else {
                return Ok(None);
            };
            let analysis = state.host.analysis();
            let Ok(lines) = analysis.line_index(doc.id) else {
                return Ok(None);
            };
            Snapshot {
                analysis,
                id: doc.id,
                lines,
                enc: state.encoding,
                settings: state.settings.clone(),
                uri: doc.uri.clone(),
            }
        };
        self.compute(what, uri.as_str(), move || f(&snap)).await
    }

    /// Computes `f` on a blocking thread under `catch_unwind` and a cancellation token
    /// that the handler's end cancels (a `$/cancelRequest` drops the handler): `Ok(None)`
    /// for an unknown document, `ContentModified` when a change cancelled it, an
    /// internal error (and a log line naming `what` and `subject`) for a failure or a
    /// panic.
    async fn compute<T: Send + 'static>(
        &self,
        what: &'static str,
        subject: &str,
        f: impl FnOnce() -> Cancellable<T> + Send + 'static,
    ) -> Result<Option<T>> {
        let request = RequestToken::new();
        let token = request.token();
        let joined = tokio::task::spawn_blocking(move || {
            catch_unwind(AssertUnwindSafe(|| {
                kernaut_ide::syntax::cancel::with_token(Some(token), f)
            }))
        })
        .await;
        drop(request);
        match joined {
            Ok(Ok(Ok(v))) => Ok(Some(v)),
            Ok(Ok(Err(QueryError::Cancelled))) => Err(Error::content_modified()),
            Ok(Ok(Err(QueryError::UnknownFile))) => Ok(None),
            Ok(Ok(Err(e))) => {
                self.log(LogLevel::Error, format!("{what} on {subject}: {e}"))
                    .await;
                Err(internal(format!("{what}: {e}")))
            }
            Ok(Err(p)) => {
                let m = panic_message(&*p);
                self.log(
                    LogLevel::Error,
                    format!("{what} on {subject} panicked: {m}"),
                )
                .await;
                Err(internal(format!("{what} panicked: {m}")))
            }
            Err(e) => {
                self.log(LogLevel::Error, format!("{what} on {subject}: {e}"))
                    .await;
                Err(internal(format!("{what}: {e}")))
            }
        }
    }

    /// Runs a notification's work under `catch_unwind`, logging a panic.
    async fn guard(&self, what: &'static str, f: impl FnOnce() -> Vec<String>) {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(problems) => {
                for p in problems {
                    self.client.show_message(MessageType::WARNING, &p).await;
                    self.log(LogLevel::Warn, p).await;
                }
            }
            Err(p) => {
                self.log(
                    LogLevel::Error,
                    format!("{what} panicked: {}", panic_message(&*p)),
                )
                .await;
            }
        }
    }

    /// Computes the diagnostics of every open document after `delay_ms`, document `key`
    /// first, and publishes those that changed, unless another change comes first.
    fn schedule_diagnostics(&self, key: String, delay_ms: u64) {
        spawn_diagnostics(
            self.state.clone(),
            self.preload.clone(),
            self.client.clone(),
            self.log_level,
            Some(key),
            delay_ms,
        );
    }

    /// Finds a CUDA toolkit and starts the background compiles; without one, everything
    /// else works and the log says why compiling is off.
    async fn start_compiler(&self) {
        let (config, explicit) = {
            let s = lock(&self.state);
            if !s.settings.compile {
                return;
            }
            let config = kernaut_compiler::ToolkitConfig {
                nvcc: s.settings.nvcc.clone(),
                ..kernaut_compiler::ToolkitConfig::default()
            };
            (config, s.settings.nvcc.is_some())
        };
        let found =
            tokio::task::spawn_blocking(move || kernaut_compiler::Toolkit::discover(&config)).await;
        let toolkit = match found {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                let m = format!("compiling is off: {e}");
                if explicit {
                    self.client
                        .show_message(MessageType::WARNING, format!("kernaut: {m}"))
                        .await;
                }
                self.log(LogLevel::Info, m).await;
                return;
            }
            Err(e) => {
                self.log(LogLevel::Error, format!("toolkit discovery: {e}"))
                    .await;
                return;
            }
        };
        self.log(
            LogLevel::Info,
            format!("compiling with {}", toolkit.describe()),
        )
        .await;
        let sass = toolkit.has_sass_tools();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let cache = Arc::new(kernaut_compiler::CompileCache::new(None));
        let jobs = kernaut_compiler::CompileJobs::new(
            toolkit,
            cache,
            kernaut_compiler::JobsConfig::default(),
            move |r| {
                let _ = tx.send(r);
            },
        );
        *self.compiler.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(Compiler { jobs, sass });
        let state = self.state.clone();
        let preload = self.preload.clone();
        let client = self.client.clone();
        let level = self.log_level;
        tokio::spawn(async move {
            while let Some(done) = rx.recv().await {
                let key = done.source_path.display().to_string();
                let output = match done.result {
                    Ok(o) => {
                        for d in &o.dropped_flags {
                            let m =
                                format!("compiling {key}: left out `{}` ({})", d.flag, d.reason);
                            log_to(&client, level, LogLevel::Info, m).await;
                        }
                        o
                    }
                    Err(e) => {
                        log_to(
                            &client,
                            level,
                            LogLevel::Info,
                            format!("compiling {key}: {e}"),
                        )
                        .await;
                        continue;
                    }
                };
                {
                    let mut s = lock(&state);
                    let Some(doc) = s.docs.get(&key).cloned() else {
                        continue;
                    };
                    let mut change = Change::new();
                    change.set_compiled(
                        doc.id,
                        Some(kernaut_project::compiled::to_compiled(
                            &output,
                            Path::new(&key),
                        )),
                    );
                    s.host.apply_change(change);
                    // The compile changes what diagnostics say: they run again, and
                    // the document is published with its compiler messages.
                    s.published.remove(&key);
                    s.generation += 1;
                    let g = s.generation;
                    if let Some(d) = s.docs.get_mut(&key) {
                        d.generation = g;
                    }
                }
                spawn_diagnostics(
                    state.clone(),
                    preload.clone(),
                    client.clone(),
                    level,
                    Some(key),
                    0,
                );
            }
        });
        let keys: Vec<String> = lock(&self.state).docs.keys().cloned().collect();
        for k in keys {
            self.submit_compile(&k, std::time::Duration::ZERO);
        }
    }

    /// Queues a background compile of document `key` (a file on disk).
    fn submit_compile(&self, key: &str, debounce: std::time::Duration) {
        let guard = self.compiler.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(compiler) = guard.as_ref() else {
            return;
        };
        let path = PathBuf::from(key);
        let (text, flags) = {
            let mut s = lock(&self.state);
            let Some(doc) = s.docs.get(key).cloned() else {
                return;
            };
            if doc.uri.scheme().as_str() != "file" {
                return;
            }
            let a = s.host.analysis();
            let Ok(text) = a.text(doc.id) else { return };
            let text = text.to_string();
            let arch = a.file_config(doc.id).arch.to_string();
            (text, s.loader.compile_flags(&path, &arch))
        };
        let mut request = kernaut_compiler::CompileRequest::new(path, text, flags);
        request.sass = compiler.sass;
        compiler.jobs.submit_after(request, debounce);
    }

    /// Reads, on a blocking thread, the project includes the loader wanted while it
    /// worked out builds without them (a file whose targets are its includers'), then
    /// works out the open files' builds again and publishes again where one changed.
    fn spawn_scans(&self) {
        let scans = lock(&self.state).loader.take_wanted_scans();
        if scans.is_empty() {
            return;
        }
        let (state, preload, client, level) = (
            self.state.clone(),
            self.preload.clone(),
            self.client.clone(),
            self.log_level,
        );
        tokio::spawn(async move {
            let mut scans = scans;
            while !scans.is_empty() {
                let read = tokio::task::spawn_blocking(move || {
                    scans
                        .into_iter()
                        .map(kernaut_project::ProjectScan::run)
                        .collect::<Vec<_>>()
                })
                .await;
                let Ok(read) = read else {
                    return;
                };
                let changed = {
                    let mut s = lock(&state);
                    let docs = s.file_docs();
                    let before: Vec<_> = docs
                        .iter()
                        .map(|(k, _)| s.loader.file_build(Path::new(k)))
                        .collect();
                    for r in read {
                        s.loader.add_scan(r);
                    }
                    let mut change = Change::new();
                    let mut changed = false;
                    for ((k, id), old) in docs.iter().zip(before) {
                        let build = s.loader.file_build(Path::new(k));
                        if build != old {
                            change.set_build(*id, Some(build));
                            changed = true;
                        }
                    }
                    if changed {
                        s.host.apply_change(change);
                    }
                    // An includer's own includers may live in another project.
                    scans = s.loader.take_wanted_scans();
                    changed
                };
                if changed {
                    spawn_diagnostics(
                        state.clone(),
                        preload.clone(),
                        client.clone(),
                        level,
                        None,
                        0,
                    );
                }
            }
        });
    }

    fn schedule_all(&self, delay_ms: u64) {
        spawn_diagnostics(
            self.state.clone(),
            self.preload.clone(),
            self.client.clone(),
            self.log_level,
            None,
            delay_ms,
        );
    }

    /// Reads the `.kernaut.toml` that applies to `path` (once per directory) into the
    /// host; a broken one is reported and left out.
    /// Reads from disk, on a blocking thread and without the lock, the quoted includes
    /// of `roots` (path, text), transitively, and gives the host those that are not open
    /// in the editor (an open buffer wins over the disk copy) and whose text it does not
    /// already hold. The host passes their macros to the files that include them; they
    /// get no diagnostics of their own. Returns whether the host changed.
    async fn load_includes(&self, roots: Vec<(String, Arc<str>)>) -> bool {
        if roots.is_empty() {
            return false;
        }
        // Each root with its include folders and targets (the project loader's).
        let (roots, targets): (Vec<kernaut_project::IncludeRoot>, Vec<_>) = {
            let mut s = lock(&self.state);
            roots
                .into_iter()
                .map(|(p, t)| {
                    let b = s.loader.file_build(Path::new(&p));
                    ((p, t, b.include_dirs), b.targets)
                })
                .unzip()
        };
        let first_targets = targets.into_iter().flatten().next();
        let loaded = tokio::task::spawn_blocking(move || {
            kernaut_project::read_includes(&roots, &HashMap::new())
        })
        .await;
        let Ok(loaded) = loaded else {
            return false;
        };
        for note in &loaded.notes {
            self.log(LogLevel::Debug, note.clone()).await;
        }
        let state = self.state.clone();
        let mut changed = false;
        self.guard("includes", || {
            let mut s = lock(&state);
            let mut change = Change::new();
            for (path, text) in loaded.headers {
                if s.docs.contains_key(&path) {
                    continue;
                }
                let id = s.host.file_id(&path);
                if s.host.analysis().text(id).ok() == Some(text.as_str()) {
                    continue;
                }
                // A header is compiled as part of its includer: its targets, unless its
                // own build names some.
                let mut build = s.loader.file_build(Path::new(&path));
                if build.targets.is_none() {
                    build.targets = first_targets.clone();
                }
                change.set_file(id, text);
                change.set_build(id, Some(build));
                changed = true;
            }
            if changed {
                s.host.apply_change(change);
            }
            Vec::new()
        })
        .await;
        changed
    }

    /// The open `file:` documents as include roots (path, text).
    fn open_roots(&self) -> Vec<(String, Arc<str>)> {
        let s = lock(&self.state);
        let a = s.host.analysis();
        s.docs
            .iter()
            .filter(|(_, d)| d.uri.scheme().as_str() == "file")
            .filter_map(|(k, d)| Some((k.clone(), Arc::from(a.text(d.id).ok()?))))
            .collect()
    }

    /// Gives the host what the project says about the file at `path` (id `id`): its
    /// `.kernaut.toml`, and its build's targets, macros and include folders. Returns the
    /// problems not shown before (a broken `.kernaut.toml`, unreadable build files,
    /// conflicting targets).
    fn read_project(
        state: &mut State,
        path: &Path,
        id: FileId,
        change: &mut Change,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        match state.loader.dir_config(path) {
            Ok(Some((folder, config))) => {
                let folder = folder.display().to_string();
                state.config_dirs.insert(folder.clone());
                change.set_dir_config(folder, Some(config));
            }
            Ok(None) => {}
            Err(e) => problems.push(format!(
                "{e:#}; kernaut uses its defaults for the files below it"
            )),
        }
        let build = state.loader.file_build(path);
        change.set_build(id, Some(build));
        problems.extend(state.loader.take_notes());
        problems.retain(|p| state.shown_problems.insert(p.clone()));
        problems
    }

    /// Loads the wiki the settings name, with `$/progress` when external folders are
    /// indexed, and hands it to the host.
    async fn load_wiki(&self) {
        let (config, external) = {
            let s = lock(&self.state);
            let c = wiki_config(&s.settings);
            let external = !c.dirs.is_empty();
            (c, external)
        };
        let progress = if external {
            let token = NumberOrString::String("kernaut/wiki-index".into());
            let _ = self.client.create_work_done_progress(token.clone()).await;
            Some(
                self.client
                    .progress(token, "kernaut: indexing the wiki")
                    .with_message(format!("{} folder(s)", config.dirs.len()))
                    .begin()
                    .await,
            )
        } else {
            None
        };
        let loaded = tokio::task::spawn_blocking(move || {
            catch_unwind(AssertUnwindSafe(|| Knowledge::load(&config)))
        })
        .await;
        match loaded {
            Ok(Ok(Ok(k))) => {
                let pages = k.wiki.pages().len();
                let problems: Vec<String> = k
                    .wiki
                    .diagnostics
                    .iter()
                    .map(|d| format!("wiki: {d}"))
                    .collect();
                lock(&self.state).host.set_knowledge(Arc::new(k));
                for p in problems.iter().take(20) {
                    self.log(LogLevel::Warn, p.clone()).await;
                }
                if !problems.is_empty() {
                    self.client
                        .show_message(
                            MessageType::WARNING,
                            format!("kernaut: {} wiki page problem(s); those pages are skipped (see the log)", problems.len()),
                        )
                        .await;
                }
                self.log(LogLevel::Info, format!("wiki loaded: {pages} pages"))
                    .await;
                if let Some(p) = progress {
                    p.finish_with_message(format!("{pages} pages")).await;
                }
            }
            other => {
                let why = match other {
                    Ok(Ok(Err(e))) => e.to_string(),
                    Ok(Err(p)) => panic_message(&*p),
                    Err(e) => e.to_string(),
                    Ok(Ok(Ok(_))) => unreachable!(),
                };
                self.client
                    .show_message(
                        MessageType::ERROR,
                        format!("kernaut: the wiki did not load: {why}"),
                    )
                    .await;
                if let Some(p) = progress {
                    p.finish_with_message("failed").await;
                }
            }
        }
    }
}

/// What a command computes from, taken in its turn.
struct CommandContext {
    analysis: Analysis,
    enc: PositionEncoding,
    /// The open documents' keys and ids.
    docs: HashMap<String, FileId>,
}

/// Executes a command (all but `kernaut.doctor`) on a snapshot.
fn execute(ctx: &CommandContext, command: &str, args: &[Value]) -> Result<Option<Value>> {
    let analysis = &ctx.analysis;
    match command {
        "kernaut.search" => {
            let query = args
                .first()
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("kernaut.search: expected [query, limit?]"))?;
            let limit = args.get(1).and_then(Value::as_u64).unwrap_or(20) as usize;
            let hits: Vec<Value> = analysis
                .search_wiki(query, limit.min(200))
                .iter()
                .map(|h| {
                    json!({
                        "id": h.id,
                        "anchor": h.anchor,
                        "title": h.title,
                        "kind": h.kind.as_str(),
                        "score": h.score,
                        "snippet": h.snippet,
                        "target": h.target(),
                    })
                })
                .collect();
            Ok(Some(Value::Array(hits)))
        }
        "kernaut.showPage" => {
            let target = args
                .first()
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("kernaut.showPage: expected [\"id#anchor\"]"))?;
            let page = analysis
                .wiki_page(target)
                .ok_or_else(|| invalid(&format!("kernaut.showPage: no wiki page `{target}`")))?;
            Ok(Some(
                json!({"id": page.id, "anchor": page.anchor, "title": page.title, "markdown": page.markdown}),
            ))
        }
        "kernaut.symbolPage" => {
            let arg = args
                .first()
                .ok_or_else(|| invalid("kernaut.symbolPage: expected [{uri, position}]"))?;
            let params: TextDocumentPositionParams = serde_json::from_value(json!({
                "textDocument": {"uri": arg.get("uri").cloned().unwrap_or(Value::Null)},
                "position": arg.get("position").cloned().unwrap_or(Value::Null),
            }))
            .map_err(|e| invalid(&format!("kernaut.symbolPage: {e}")))?;
            let Some(&id) = ctx.docs.get(&doc_key(&params.text_document.uri)) else {
                return Ok(None);
            };
            let Ok(lines) = analysis.line_index(id) else {
                return Ok(None);
            };
            let enc = ctx.enc;
            let offset = convert::offset(&lines, enc, params.position);
            let page = match analysis.page_at(id, offset) {
                Ok(p) => p,
                Err(QueryError::Cancelled) => return Err(Error::content_modified()),
                Err(e) => return Err(internal(e.to_string())),
            };
            Ok(page.and_then(|p| analysis.wiki_page(&p)).map(|page| {
                    json!({"id": page.id, "anchor": page.anchor, "title": page.title, "markdown": page.markdown})
                }))
        }
        "kernaut.kernelReport" => {
            let arg = args
                .first()
                .ok_or_else(|| invalid("kernaut.kernelReport: expected [{uri, kernel}]"))?;
            let uri: Uri = serde_json::from_value(arg.get("uri").cloned().unwrap_or(Value::Null))
                .map_err(|e| invalid(&format!("kernaut.kernelReport: {e}")))?;
            let kernel = arg
                .get("kernel")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("kernaut.kernelReport: expected [{uri, kernel}]"))?;
            let Some(&id) = ctx.docs.get(&doc_key(&uri)) else {
                return Ok(None);
            };
            let config = kernaut_ide::kernel_report::ReportConfig { what_ifs: true };
            match analysis.kernel_report(id, kernel, config) {
                Ok(Some(r)) => Ok(Some(json!({"kernel": r.kernel, "markdown": r.markdown()}))),
                Ok(None) => Ok(None),
                Err(QueryError::Cancelled) => Err(Error::content_modified()),
                Err(e) => Err(internal(e.to_string())),
            }
        }
        other => Err(invalid(&format!("unknown command `{other}`"))),
    }
}

/// The parse of document `id` with the protocol's `changes` applied in order (each
/// change's positions refer to the text after the ones before it), re-parsed
/// incrementally; `None` when the snapshot does not have the file.
fn edited(
    analysis: &Analysis,
    id: FileId,
    enc: PositionEncoding,
    changes: Vec<TextDocumentContentChangeEvent>,
) -> Option<ParsedFile> {
    let mut parsed = ParsedFile::of(analysis, id)?;
    let mut lines = analysis.line_index(id).ok();
    for c in changes {
        match c.range {
            Some(r) => {
                let index = lines
                    .take()
                    .unwrap_or_else(|| Arc::new(LineIndex::new(parsed.text())));
                let range = convert::text_range(&index, enc, r);
                parsed.apply_edit(range, &c.text);
            }
            None => {
                parsed = ParsedFile::parse(&c.text);
                lines = None;
            }
        }
    }
    Some(parsed)
}

/// Gives the host the preloaded wiki if it has none and the settings name no other
/// folders (those are loaded by `Server::load_wiki`, with progress).
fn ensure_knowledge(state: &Mutex<State>, preload: &Preload) {
    {
        let s = lock(state);
        if s.host.analysis().knowledge().is_some() || !s.settings.wiki_paths.is_empty() {
            return;
        }
    }
    let k = preload.wait();
    let mut s = lock(state);
    if s.host.analysis().knowledge().is_none() && s.settings.wiki_paths.is_empty() {
        if let Some(k) = k {
            s.host.set_knowledge(k);
        }
    }
}

fn internal(message: String) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: message.into(),
        data: None,
    }
}

fn invalid(message: &str) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.to_string().into(),
        data: None,
    }
}

async fn log_to(client: &Client, threshold: LogLevel, level: LogLevel, message: String) {
    if level > threshold {
        return;
    }
    eprintln!(
        "kernaut-lsp: {}: {message}",
        format!("{level:?}").to_lowercase()
    );
    client.log_message(level.message_type(), message).await;
}

/// A diagnostics sweep: after `delay_ms`, computes the diagnostics of every open
/// document (`first` before the others) and publishes those whose diagnostics or version
/// differ from what was last published, with compiler messages kept for them. An edit can
/// change other documents' diagnostics (a launch of their kernel, a header they include),
/// and a document whose inputs did not change costs a cache look-up. A later change stops
/// the sweep (the rules unwind at their next checkpoint), and the sweep that change
/// starts covers every document.
/// The editor's project loader: a project's includes are read off the request path
/// ([`Server::spawn_scans`]), so that opening a file in a huge folder publishes at once.
fn editor_loader(root: Option<PathBuf>) -> ProjectLoader {
    let mut loader = ProjectLoader::new(root);
    loader.defer_scans();
    loader
}

fn spawn_diagnostics(
    state: Arc<Mutex<State>>,
    preload: Arc<Preload>,
    client: Client,
    level: LogLevel,
    first: Option<String>,
    delay_ms: u64,
) {
    let ticket = {
        let mut s = lock(&state);
        s.sweep += 1;
        s.sweep
    };
    tokio::spawn(async move {
        if delay_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
        }
        // The rules cite the wiki: wait for it on the first run.
        {
            let (state, preload) = (state.clone(), preload.clone());
            let _ = tokio::task::spawn_blocking(move || ensure_knowledge(&state, &preload)).await;
        }
        let keys: Option<Vec<String>> = {
            let s = lock(&state);
            (s.sweep == ticket).then(|| s.docs.keys().cloned().collect())
        };
        let Some(mut keys) = keys else {
            let m = format!("diagnostics run {ticket}: a newer run took over before it began");
            log_to(&client, level, LogLevel::Debug, m).await;
            return;
        };
        let m = format!("diagnostics run {ticket}: {} open document(s)", keys.len());
        log_to(&client, level, LogLevel::Debug, m).await;
        keys.sort();
        if let Some(f) = &first {
            if let Some(i) = keys.iter().position(|k| k == f) {
                let k = keys.remove(i);
                keys.insert(0, k);
            }
        }
        for key in keys {
            if !diagnose(&state, &client, level, &key, ticket).await {
                // Stopped by a change: the sweep that change started takes over. Where none
                // did (a change that starts no sweep moved the revision), this one starts
                // again, so that no document is left unpublished.
                let newest = lock(&state).sweep == ticket;
                if newest {
                    log_to(
                        &client,
                        level,
                        LogLevel::Info,
                        format!("diagnostics of {key} were cancelled by a change that started no new run: computing them again"),
                    )
                    .await;
                    spawn_diagnostics(state, preload, client, level, Some(key), 50);
                } else {
                    let m = format!("diagnostics run {ticket}: a newer run took over at {key}");
                    log_to(&client, level, LogLevel::Debug, m).await;
                }
                return;
            }
        }
        log_to(
            &client,
            level,
            LogLevel::Debug,
            format!("diagnostics run {ticket}: done"),
        )
        .await;
        preload.swept.notify_one();
        // Every document is published: what the sweep and the edits before it freed goes
        // back to the system while the user types on.
        let _ = tokio::task::spawn_blocking(release_free_memory).await;
    });
}

/// Gives the allocator's free pages back to the system (glibc keeps them in its arenas
/// otherwise, so the server's resident memory would follow its busiest moment rather
/// than what it holds).
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator's arenas to the
    // system; it takes the arenas' locks like any allocation does.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Computes the diagnostics of document `key` for sweep `ticket` and publishes them if
/// they changed; `false` when the sweep is stale and should stop.
async fn diagnose(
    state: &Arc<Mutex<State>>,
    client: &Client,
    level: LogLevel,
    key: &str,
    ticket: u64,
) -> bool {
    let (analysis, doc, enc, before, links) = {
        let s = lock(state);
        if s.sweep != ticket {
            return false;
        }
        let Some(d) = s.docs.get(key) else {
            return true;
        };
        let before = s
            .published
            .get(key)
            .filter(|p| p.version == d.version)
            .map(|p| p.rules.clone());
        (
            s.host.analysis(),
            d.clone(),
            s.encoding,
            before,
            s.settings.wiki_links,
        )
    };
    let uri = doc.uri.clone();
    type Computed = Option<(
        Vec<Diagnostic>,
        Arc<Vec<kernaut_ide::diagnostic::RuleDiagnostic>>,
    )>;
    let computed = tokio::task::spawn_blocking(move || {
        catch_unwind(AssertUnwindSafe(|| -> Cancellable<Computed> {
            let found = analysis.diagnostics_shared(doc.id)?;
            if before.is_some_and(|b| Arc::ptr_eq(&b, &found) || *b == *found) {
                return Ok(None);
            }
            let lines = analysis.line_index(doc.id)?;
            let mut out: Vec<Diagnostic> = found
                .iter()
                .map(|d| convert::diagnostic(&lines, enc, &doc.uri, d))
                .collect();
            crate::wiki_files::relink(&analysis, links, &mut out);
            if let Some(compiled) = analysis.compiled(doc.id) {
                out.extend(crate::compile::diagnostics(&compiled.messages, &lines, enc));
            }
            Ok(Some((out, found)))
        }))
    })
    .await;
    let (diagnostics, rules) = match computed {
        Ok(Ok(Ok(Some(d)))) => d,
        Ok(Ok(Ok(None))) => {
            let m = format!("diagnostics of {key} unchanged since they were published");
            log_to(client, level, LogLevel::Debug, m).await;
            return true;
        }
        // A newer change: its sweep takes over.
        Ok(Ok(Err(QueryError::Cancelled))) => return false,
        Ok(Ok(Err(QueryError::UnknownFile))) => {
            let m = format!("diagnostics of {key}: the analysis does not hold the file");
            log_to(client, level, LogLevel::Debug, m).await;
            return true;
        }
        Ok(Ok(Err(e))) => {
            log_to(
                client,
                level,
                LogLevel::Error,
                format!("diagnostics of {}: {e}", uri.as_str()),
            )
            .await;
            return true;
        }
        Ok(Err(p)) => {
            log_to(
                client,
                level,
                LogLevel::Error,
                format!(
                    "diagnostics of {} panicked: {}",
                    uri.as_str(),
                    panic_message(&*p)
                ),
            )
            .await;
            return true;
        }
        Err(e) => {
            log_to(
                client,
                level,
                LogLevel::Error,
                format!("diagnostics task: {e}"),
            )
            .await;
            return true;
        }
    };
    // Published only if nothing changed meanwhile (the newer sweep publishes instead).
    // The publication lock keeps publications in the order their sweeps recorded them.
    let _order = PUBLISH_ORDER.lock().await;
    let current = {
        let mut s = lock(state);
        if s.sweep != ticket {
            return false;
        }
        let current = s.docs.get(key).is_some_and(|d| d.version == doc.version);
        if current {
            s.published.insert(
                key.to_string(),
                Published {
                    version: doc.version,
                    rules,
                },
            );
        }
        current
    };
    if !current {
        let m = format!("diagnostics of {key}: the document changed or closed meanwhile");
        log_to(client, level, LogLevel::Debug, m).await;
        return true;
    }
    let m = format!(
        "diagnostics of {key}: {} published (version {})",
        diagnostics.len(),
        doc.version
    );
    client
        .publish_diagnostics(uri, diagnostics, Some(doc.version))
        .await;
    log_to(client, level, LogLevel::Debug, m).await;
    true
}

/// Held from the last staleness check of a publication until it is sent.
static PUBLISH_ORDER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The commands the server executes.
pub const COMMANDS: [&str; 5] = [
    "kernaut.search",
    "kernaut.showPage",
    "kernaut.symbolPage",
    "kernaut.doctor",
    "kernaut.kernelReport",
];

impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding = convert::negotiate_encoding(&params);
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .and_then(|f| f.uri.to_file_path().map(|p| p.into_owned()))
            .or_else(|| {
                #[allow(deprecated)]
                params
                    .root_uri
                    .as_ref()
                    .and_then(|u| u.to_file_path().map(|p| p.into_owned()))
            });
        let _turn = self.turn().await;
        let mut problems = Vec::new();
        {
            let mut s = lock(&self.state);
            s.encoding = encoding;
            if let Some(opts) = &params.initialization_options {
                problems = s.settings.merge_json(opts);
            }
            s.loader = editor_loader(root.clone());
            s.root = root;
            let config = s.analysis_config();
            let mut change = Change::new();
            change.set_config(config);
            s.host.apply_change(change);
        }
        for p in problems {
            self.client.show_message(MessageType::WARNING, &p).await;
        }
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "kernaut-lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: ServerCapabilities {
                position_encoding: Some(convert::encoding_kind(encoding)),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                        ..TextDocumentSyncOptions::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::QUICKFIX,
                            CodeActionKind::new("source.kernaut.showPage"),
                        ]),
                        ..CodeActionOptions::default()
                    },
                )),
                code_lens_provider: Some(CodeLensOptions {
                    resolve_provider: Some(false),
                }),
                inlay_hint_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions::default()),
                signature_help_provider: Some(SignatureHelpOptions {
                    trigger_characters: Some(vec!["(".into(), ",".into()]),
                    ..SignatureHelpOptions::default()
                }),
                document_symbol_provider: Some(OneOf::Left(true)),
                workspace_symbol_provider: Some(OneOf::Left(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: COMMANDS.iter().map(|c| c.to_string()).collect(),
                    ..ExecuteCommandOptions::default()
                }),
                ..ServerCapabilities::default()
            },
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        // The built-in wiki is loading since the process started; folders named in the
        // settings are indexed here, with progress.
        let turn = self.turn().await;
        if !lock(&self.state).settings.wiki_paths.is_empty() {
            self.load_wiki().await;
            self.schedule_all(0);
        }
        drop(turn);
        // Finding the toolkit runs programs (`python3`, `nvcc --version`): messages after
        // this one do not wait for it, and it starts once the wiki is loaded and the first
        // diagnostics are out (or two seconds on, when no document is open), so that it
        // does not take a core from the first hover's wiki, parse and rules. The
        // documents opened meanwhile are compiled when it is found.
        let server = self.clone();
        tokio::spawn(async move {
            let preload = server.preload.clone();
            let wait = preload.clone();
            let _ = tokio::task::spawn_blocking(move || wait.wait()).await;
            let first = preload.swept.notified();
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), first).await;
            server.start_compiler().await
        });
    }

    async fn shutdown(&self) -> Result<()> {
        let _turn = self.turn().await;
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let key = doc_key(&doc.uri);
        let text = doc.text;
        // Requests about the document wait for it to be open (other documents' do not).
        let turn = self.turn().await;
        if let Some(note) = too_large_note(&key, text.len()) {
            // Kept for its edits, not analysed; the user is told why it stays silent.
            {
                let mut s = lock(&self.state);
                let id = s.host.file_id(&key);
                let mut change = Change::new();
                change.remove_file(id);
                s.host.apply_change(change);
                s.generation += 1;
                let generation = s.generation;
                s.docs.insert(
                    key.clone(),
                    Doc {
                        id,
                        uri: doc.uri.clone(),
                        version: doc.version,
                        generation,
                    },
                );
                s.oversized.insert(key.clone(), text);
            }
            self.client
                .show_message(MessageType::WARNING, format!("kernaut: {note}"))
                .await;
            self.log(LogLevel::Warn, note).await;
            return;
        }
        let root: Arc<str> = Arc::from(text.as_str());
        // A large file's parse runs on a blocking thread.
        let parsed = tokio::task::spawn_blocking(move || ParsedFile::parse(&text)).await;
        let Ok(parsed) = parsed else {
            self.log(
                LogLevel::Error,
                format!("parsing {} failed", doc.uri.as_str()),
            )
            .await;
            return;
        };
        let state = self.state.clone();
        self.guard("didOpen", || {
            let mut s = lock(&state);
            let mut change = Change::new();
            let id = s.host.file_id(&key);
            let problems = if doc.uri.scheme().as_str() == "file" {
                Self::read_project(&mut s, Path::new(&key), id, &mut change)
            } else {
                Vec::new()
            };
            change.set_parsed_file(id, parsed);
            s.host.apply_change(change);
            // A client that opens a document again without closing it (Emacs's eglot
            // after a revert) has dropped what it held: the sweep publishes it even
            // where nothing changed.
            s.published.remove(&key);
            s.generation += 1;
            let generation = s.generation;
            s.docs.insert(
                key.clone(),
                Doc {
                    id,
                    uri: doc.uri.clone(),
                    version: doc.version,
                    generation,
                },
            );
            problems
        })
        .await;
        // The project's headers it includes, from disk when they are not open.
        let includes_changed = doc.uri.scheme().as_str() == "file"
            && self.load_includes(vec![(key.clone(), root)]).await;
        drop(turn);
        if includes_changed {
            // Other open files may include the same headers.
            self.schedule_all(0);
        } else {
            self.schedule_diagnostics(key.clone(), 0);
        }
        self.spawn_scans();
        self.submit_compile(&key, std::time::Duration::ZERO);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let key = doc_key(&params.text_document.uri);
        let state = self.state.clone();
        let mut known = false;
        let version = params.text_document.version;
        let mut edit = None;
        // Applied in its turn: after the requests sent before it have taken their
        // snapshots, before those sent after it take theirs. Moving the host's revision
        // cancels whatever still computes on an older snapshot.
        let turn = self.turn().await;
        self.guard("didChange", || {
            let mut s = lock(&state);
            let Some(doc) = s.docs.get(&key).cloned() else {
                return vec![format!(
                    "didChange for {}, which is not open",
                    params.text_document.uri.as_str()
                )];
            };
            known = true;
            let enc = s.encoding;
            if let Some(mut text) = s.oversized.remove(&key) {
                // Edited as text; analysed again once it is small enough.
                for c in params.content_changes {
                    match c.range {
                        Some(r) => {
                            let range = convert::text_range(&LineIndex::new(&text), enc, r);
                            text.replace_range(range, &c.text);
                        }
                        None => text = c.text,
                    }
                }
                if too_large_note(&key, text.len()).is_some() {
                    s.oversized.insert(key.clone(), text);
                } else {
                    let mut change = Change::new();
                    change.set_file(doc.id, text);
                    s.host.apply_change(change);
                }
                s.generation += 1;
                let generation = s.generation;
                if let Some(d) = s.docs.get_mut(&key) {
                    d.version = params.text_document.version;
                    d.generation = generation;
                }
                return Vec::new();
            }
            // The re-parse runs below, on a blocking thread and outside the lock; moving
            // the revision now stops the work on older snapshots meanwhile.
            s.host.apply_change(Change::new());
            edit = Some((doc, s.host.analysis(), enc, params.content_changes));
            Vec::new()
        })
        .await;
        if let Some((doc, analysis, enc, changes)) = edit {
            // A large file's re-parse takes a while (an unterminated comment re-parses
            // everything after it): it must not hold the lock every handler takes.
            let parsed = tokio::task::spawn_blocking(move || {
                catch_unwind(AssertUnwindSafe(|| edited(&analysis, doc.id, enc, changes)))
            })
            .await;
            let parsed = match parsed {
                Ok(Ok(parsed)) => parsed,
                Ok(Err(p)) => {
                    let m = format!("didChange panicked: {}", panic_message(&*p));
                    self.log(LogLevel::Error, m).await;
                    None
                }
                Err(e) => {
                    self.log(LogLevel::Error, format!("didChange: {e}")).await;
                    None
                }
            };
            let mut s = lock(&state);
            if let Some(parsed) = parsed {
                let mut change = Change::new();
                change.set_parsed_file(doc.id, parsed);
                s.host.apply_change(change);
            }
            s.generation += 1;
            let generation = s.generation;
            if let Some(d) = s.docs.get_mut(&key) {
                d.version = version;
                d.generation = generation;
            }
        }
        drop(turn);
        if known {
            // The first edit after a pause is diagnosed at once; those that follow it
            // closely wait for the debounce (each also cancels the run before it).
            let delay = {
                let mut s = lock(&self.state);
                let now = std::time::Instant::now();
                let debounce = std::time::Duration::from_millis(s.settings.debounce_ms);
                let burst = s
                    .last_edit
                    .is_some_and(|t| now.duration_since(t) < debounce);
                s.last_edit = Some(now);
                if burst {
                    s.settings.debounce_ms
                } else {
                    0
                }
            };
            self.schedule_diagnostics(key, delay);
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        let key = doc_key(&params.text_document.uri);
        let turn = self.turn().await;
        if key.ends_with(CONFIG_FILE_NAME) {
            // A saved `.kernaut.toml`: read every configuration again.
            let state = self.state.clone();
            self.guard("didSave", || {
                let mut s = lock(&state);
                let mut change = Change::new();
                for folder in std::mem::take(&mut s.config_dirs) {
                    change.set_dir_config(folder, None);
                }
                s.loader.forget();
                s.shown_problems.clear();
                let docs = s.file_docs();
                let mut problems = Vec::new();
                for (k, id) in docs {
                    problems.extend(Self::read_project(&mut s, Path::new(&k), id, &mut change));
                }
                s.host.apply_change(change);
                problems
            })
            .await;
            self.schedule_all(0);
            self.spawn_scans();
            return;
        }
        // Includes added since the file was opened, or headers changed on disk.
        let root = {
            let s = lock(&self.state);
            s.docs
                .get(&key)
                .filter(|d| d.uri.scheme().as_str() == "file")
                .and_then(|d| Some((key.clone(), Arc::from(s.host.analysis().text(d.id).ok()?))))
        };
        let includes_changed = self.load_includes(root.into_iter().collect()).await;
        drop(turn);
        if includes_changed {
            self.schedule_all(0);
        } else {
            self.schedule_diagnostics(key.clone(), 0);
        }
        self.spawn_scans();
        self.submit_compile(&key, std::time::Duration::from_millis(200));
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let key = doc_key(&params.text_document.uri);
        let state = self.state.clone();
        let turn = self.turn().await;
        self.guard("didClose", || {
            let mut s = lock(&state);
            s.oversized.remove(&key);
            s.published.remove(&key);
            if let Some(doc) = s.docs.remove(&key) {
                let mut change = Change::new();
                change.remove_file(doc.id);
                s.host.apply_change(change);
            }
            Vec::new()
        })
        .await;
        self.client
            .publish_diagnostics(params.text_document.uri, Vec::new(), None)
            .await;
        // A closed header that open files include: its disk copy takes the buffer's place.
        // Other documents may have read the closed one (its launches, its macros).
        self.load_includes(self.open_roots()).await;
        drop(turn);
        self.schedule_all(0);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let state = self.state.clone();
        let mut wiki_changed = false;
        let turn = self.turn().await;
        self.guard("didChangeConfiguration", || {
            let mut s = lock(&state);
            let before = s.settings.wiki_paths.clone();
            let problems = s.settings.merge_json(&params.settings);
            wiki_changed = before != s.settings.wiki_paths;
            let config = s.analysis_config();
            let mut change = Change::new();
            change.set_config(config);
            s.host.apply_change(change);
            problems
        })
        .await;
        if wiki_changed {
            self.load_wiki().await;
        }
        drop(turn);
        self.schedule_all(0);
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let uri = p.text_document.uri.clone();
        let r = self
            .on_doc("hover", &uri, move |s| {
                let offset = convert::offset(&s.lines, s.enc, p.position);
                Ok(s.analysis.hover(s.id, offset)?.map(|h| Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: h.markdown,
                    }),
                    range: Some(convert::range(&s.lines, s.enc, &h.range)),
                }))
            })
            .await?;
        Ok(r.flatten())
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri.clone();
        self.on_doc("codeAction", &uri, move |s| {
            let range = convert::text_range(&s.lines, s.enc, params.range);
            let actions = s.analysis.code_actions(s.id, range)?;
            let only = params.context.only.as_ref();
            Ok(actions
                .iter()
                .map(|a| convert::code_action(&s.lines, s.enc, &s.uri, a))
                .filter(|a| match (only, a) {
                    (Some(kinds), CodeActionOrCommand::CodeAction(ca)) => {
                        ca.kind.as_ref().is_some_and(|k| {
                            kinds
                                .iter()
                                .any(|want| k.as_str().starts_with(want.as_str()))
                        })
                    }
                    _ => true,
                })
                .collect())
        })
        .await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri.clone();
        self.on_doc("codeLens", &uri, move |s| {
            if !s.settings.code_lens {
                return Ok(Vec::new());
            }
            let mut lenses: Vec<CodeLens> = s
                .analysis
                .code_lenses(s.id)?
                .iter()
                .map(|l| convert::code_lens(&s.lines, s.enc, l))
                .collect();
            lenses.extend(
                s.analysis
                    .report_lenses(s.id)?
                    .iter()
                    .map(|l| convert::report_lens(&s.lines, s.enc, &s.uri, l)),
            );
            Ok(lenses)
        })
        .await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri.clone();
        self.on_doc("inlayHint", &uri, move |s| {
            if !s.settings.inlay_hints {
                return Ok(Vec::new());
            }
            let range = convert::text_range(&s.lines, s.enc, params.range);
            Ok(s.analysis
                .inlay_hints(s.id, Some(range), InlayConfig::default())?
                .iter()
                .map(|h| convert::inlay_hint(&s.lines, s.enc, h))
                .collect())
        })
        .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        let uri = p.text_document.uri.clone();
        let r = self
            .on_doc("completion", &uri, move |s| {
                let offset = convert::offset(&s.lines, s.enc, p.position);
                let items: Vec<CompletionItem> = s
                    .analysis
                    .completions(s.id, offset)?
                    .iter()
                    .map(|c| convert::completion(&s.lines, s.enc, c))
                    .collect();
                Ok(
                    (!items.is_empty()).then_some(CompletionResponse::List(CompletionList {
                        is_incomplete: true,
                        items,
                    })),
                )
            })
            .await?;
        Ok(r.flatten())
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let p = params.text_document_position_params;
        let uri = p.text_document.uri.clone();
        let r = self
            .on_doc("signatureHelp", &uri, move |s| {
                let offset = convert::offset(&s.lines, s.enc, p.position);
                Ok(s.analysis
                    .signature_help(s.id, offset)?
                    .map(|h| SignatureHelp {
                        signatures: h
                            .signatures
                            .iter()
                            .map(|sig| SignatureInformation {
                                label: sig.clone(),
                                documentation: Some(Documentation::MarkupContent(MarkupContent {
                                    kind: MarkupKind::Markdown,
                                    value: h.documentation.clone(),
                                })),
                                parameters: None,
                                active_parameter: None,
                            })
                            .collect(),
                        active_signature: Some(0),
                        active_parameter: Some(h.active_parameter),
                    }))
            })
            .await?;
        Ok(r.flatten())
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let uri = params.text_document.uri.clone();
        self.on_doc("documentSymbol", &uri, move |s| {
            Ok(DocumentSymbolResponse::Nested(
                s.analysis
                    .outline(s.id)?
                    .iter()
                    .map(|o| convert::document_symbol(&s.lines, s.enc, o))
                    .collect(),
            ))
        })
        .await
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let query = params.query.trim().to_string();
        if query.is_empty() {
            return Ok(Some(WorkspaceSymbolResponse::Nested(Vec::new())));
        }
        let (analysis, links) = {
            let _turn = self.turn().await;
            self.ensure_knowledge().await;
            let s = lock(&self.state);
            (s.host.analysis(), s.settings.wiki_links)
        };
        let symbols = self
            .compute("workspace/symbol", &query.clone(), move || {
                let hits = analysis.search_wiki(&query, 30);
                Ok(hits
                    .iter()
                    .filter_map(|h| {
                        let uri = crate::wiki_files::href(&analysis, &h.target(), links)?;
                        Some(WorkspaceSymbol {
                            name: format!("{} — {}", h.target(), h.title),
                            kind: SymbolKind::STRING,
                            tags: None,
                            container_name: Some(format!("kernaut wiki ({})", h.kind.as_str())),
                            location: OneOf::Right(WorkspaceLocation { uri }),
                            data: Some(json!({"target": h.target()})),
                        })
                    })
                    .collect())
            })
            .await?;
        Ok(symbols.map(WorkspaceSymbolResponse::Nested))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let turn = self.turn().await;
        if params.command == "kernaut.doctor" {
            // What the server uses for the workspace, and why (reads the disk and asks
            // the toolkit its version: off the request thread).
            let (folder, options) = {
                let s = lock(&self.state);
                let folder = params
                    .arguments
                    .first()
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
                    .or_else(|| s.root.clone())
                    .unwrap_or_else(|| PathBuf::from("."));
                let options = kernaut_project::doctor::Options {
                    nvcc: s.settings.nvcc.clone(),
                    wiki: Some(wiki_config(&s.settings)),
                    encoding: Some(convert::encoding_kind(s.encoding).as_str().to_string()),
                    files: 8,
                    arch_setting: s.settings.arch.map(|a| a.to_string()),
                };
                (folder, options)
            };
            drop(turn);
            let report = tokio::task::spawn_blocking(move || {
                kernaut_project::doctor::examine(&folder, &options)
            })
            .await
            .map_err(|e| internal(format!("kernaut.doctor: {e}")))?;
            return Ok(Some(
                json!({"markdown": report.markdown(), "text": report.text()}),
            ));
        }
        self.ensure_knowledge().await;
        let ctx = {
            let s = lock(&self.state);
            CommandContext {
                analysis: s.host.analysis(),
                enc: s.encoding,
                docs: s.docs.iter().map(|(k, d)| (k.clone(), d.id)).collect(),
            }
        };
        drop(turn);
        let command = params.command.clone();
        let answer = self
            .compute("workspace/executeCommand", &params.command, move || {
                Ok(execute(&ctx, &command, &params.arguments))
            })
            .await?;
        answer.unwrap_or(Ok(None))
    }
}
