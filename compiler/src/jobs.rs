//! Compiling in the background: one job per file, debounced, one at a time, the
//! stale run cancelled when a newer text arrives.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::{CancelFlag, CompileCache, CompileError, CompileOutput, CompileRequest, Toolkit};

/// How [`CompileJobs`] schedules work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobsConfig {
    /// How long a file must stay unchanged before it is compiled (typing on `didChange`
    /// keeps pushing the job back).
    pub debounce: Duration,
}

impl Default for JobsConfig {
    fn default() -> Self {
        JobsConfig {
            debounce: Duration::from_millis(500),
        }
    }
}

/// A finished job, handed to the callback.
#[derive(Debug, Clone)]
pub struct JobResult {
    /// The request's `source_path`.
    pub source_path: PathBuf,
    /// The compilation, or why there is none. A job replaced by a newer one for the
    /// same file reports [`CompileError::Cancelled`].
    pub result: Result<Arc<CompileOutput>, CompileError>,
}

struct Pending {
    request: CompileRequest,
    due: Instant,
}

#[derive(Default)]
struct State {
    pending: HashMap<PathBuf, Pending>,
    /// The file being compiled and its cancel flag.
    running: Option<(PathBuf, CancelFlag)>,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A background compiler: [`CompileJobs::submit`] never blocks on nvcc. One worker
/// thread runs one compilation at a time (memory-friendly), through a
/// [`CompileCache`], and calls `on_done` on that thread with each result.
pub struct CompileJobs {
    shared: Arc<Shared>,
    debounce: Duration,
    worker: Option<thread::JoinHandle<()>>,
}

impl CompileJobs {
    /// Starts the worker thread.
    pub fn new(
        toolkit: Toolkit,
        cache: Arc<CompileCache>,
        config: JobsConfig,
        on_done: impl Fn(JobResult) + Send + 'static,
    ) -> CompileJobs {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let worker_shared = shared.clone();
        let worker = thread::Builder::new()
            .name("kernaut-nvcc".into())
            .spawn(move || worker_loop(&worker_shared, &toolkit, &cache, &on_done))
            .ok();
        CompileJobs {
            shared,
            debounce: config.debounce,
            worker,
        }
    }

    /// Queues `request` for its file after the configured debounce (for `didChange`),
    /// replacing a queued one for the same file and cancelling a running one (its
    /// result is [`CompileError::Cancelled`]).
    pub fn submit(&self, request: CompileRequest) {
        self.submit_after(request, self.debounce);
    }

    /// [`CompileJobs::submit`] with its own delay (`Duration::ZERO` on save or open).
    pub fn submit_after(&self, request: CompileRequest, debounce: Duration) {
        let mut state = self.shared.lock();
        let path = request.source_path.clone();
        if let Some((running, cancel)) = &state.running {
            if *running == path {
                cancel.store(true, Ordering::Relaxed);
            }
        }
        state.pending.insert(
            path,
            Pending {
                request,
                due: Instant::now() + debounce,
            },
        );
        self.shared.wake.notify_all();
    }

    /// Drops the queued job for `path` and cancels a running one (a closed file).
    pub fn cancel(&self, path: &std::path::Path) {
        let mut state = self.shared.lock();
        state.pending.remove(path);
        if let Some((running, cancel)) = &state.running {
            if running == path {
                cancel.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Whether anything is queued or running.
    pub fn is_busy(&self) -> bool {
        let state = self.shared.lock();
        !state.pending.is_empty() || state.running.is_some()
    }
}

impl Drop for CompileJobs {
    /// Cancels the running job, drops the queue and joins the worker.
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.shutdown = true;
            state.pending.clear();
            if let Some((_, cancel)) = &state.running {
                cancel.store(true, Ordering::Relaxed);
            }
            self.shared.wake.notify_all();
        }
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn worker_loop(
    shared: &Shared,
    toolkit: &Toolkit,
    cache: &CompileCache,
    on_done: &dyn Fn(JobResult),
) {
    loop {
        let (request, cancel) = {
            let mut state = shared.lock();
            loop {
                if state.shutdown {
                    return;
                }
                let now = Instant::now();
                let next = state
                    .pending
                    .iter()
                    .min_by_key(|(_, p)| p.due)
                    .map(|(path, p)| (path.clone(), p.due));
                match next {
                    Some((path, due)) if due <= now => {
                        let Some(p) = state.pending.remove(&path) else {
                            continue;
                        };
                        let cancel: CancelFlag = Arc::new(AtomicBool::new(false));
                        state.running = Some((path, cancel.clone()));
                        break (p.request, cancel);
                    }
                    Some((_, due)) => {
                        state = shared
                            .wake
                            .wait_timeout(state, due - now)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                    }
                    None => {
                        state = shared.wake.wait(state).unwrap_or_else(|p| p.into_inner());
                    }
                }
            }
        };
        let result = cache.compile(toolkit, &request, &cancel);
        shared.lock().running = None;
        on_done(JobResult {
            source_path: request.source_path,
            result,
        });
    }
}
