//! Cancellation of long computations, and the thread budget.
//!
//! A front end that owns an analysis host bumps a shared revision counter on every change;
//! a computation started on an older revision runs with a [`CancelToken`] installed on its
//! thread ([`with_token`]) and stops at the next [`checkpoint`] by unwinding with a
//! [`Cancelled`] payload, which the host's query guard turns back into an error value. The
//! parallel helpers of this crate carry the token over to their worker threads, so a
//! cancelled parse or analysis stops on every core.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Arc;
//! use kernaut_syntax::cancel::{checkpoint, with_token, CancelToken, Cancelled};
//!
//! let revision = Arc::new(AtomicU64::new(1));
//! let token = CancelToken::new(revision.clone(), 1);
//! revision.store(2, Ordering::SeqCst); // a change arrives
//! let r = std::panic::catch_unwind(|| with_token(Some(token), checkpoint));
//! assert!(r.unwrap_err().is::<Cancelled>());
//! ```

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The unwinding payload of a cancelled computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cancelled: the file or configuration changed")
    }
}

impl std::error::Error for Cancelled {}

/// The revision a computation started on, and the counter that says whether it is
/// still current.
#[derive(Clone, Debug)]
pub struct CancelToken {
    current: Arc<AtomicU64>,
    revision: u64,
    /// The token of the work this work is part of (a request a client may give up on),
    /// which cancels it too.
    outer: Option<Arc<CancelToken>>,
}

impl CancelToken {
    /// A token for work started at `revision` of the counter `current`.
    pub fn new(current: Arc<AtomicU64>, revision: u64) -> CancelToken {
        CancelToken {
            current,
            revision,
            outer: None,
        }
    }

    /// This token, cancelled also when `outer` is (the token of the work this is part
    /// of, such as [`current`]).
    pub fn within(mut self, outer: Option<CancelToken>) -> CancelToken {
        self.outer = outer.map(Arc::new);
        self
    }

    /// Whether the counter has moved past the token's revision, or the outer work was
    /// cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.current.load(Ordering::Relaxed) != self.revision
            || self.outer.as_ref().is_some_and(|o| o.is_cancelled())
    }
}

thread_local! {
    static CURRENT: RefCell<Option<CancelToken>> = const { RefCell::new(None) };
}

/// Runs `f` with `token` installed on this thread (none: `f` cannot be cancelled), then
/// restores the token that was there before, also when `f` unwinds.
pub fn with_token<R>(token: Option<CancelToken>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<CancelToken>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            let _ = CURRENT.try_with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), token));
    let _restore = Restore(previous);
    f()
}

/// The token installed on this thread, to hand to a worker thread.
pub fn current() -> Option<CancelToken> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Whether the computation running on this thread has been cancelled.
pub fn is_cancelled() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(CancelToken::is_cancelled))
}

/// Unwinds with [`Cancelled`] when the computation on this thread has been cancelled.
/// Call it between units of work, never while holding a lock.
pub fn checkpoint() {
    if is_cancelled() {
        std::panic::resume_unwind(Box::new(Cancelled));
    }
}

/// The most threads a parse or analysis may use; 0 means "not set" (one per core, at
/// most 8).
static MAX_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads one large file's parse and analysis may use (the host's
/// configuration; 0 restores the default of one per core, at most 8).
pub fn set_max_threads(n: usize) {
    MAX_THREADS.store(n, Ordering::Relaxed);
}

/// How many threads a large file's parse and analysis may use: what
/// [`set_max_threads`] set, else one per core, at most 8.
pub fn threads() -> usize {
    match MAX_THREADS.load(Ordering::Relaxed) {
        0 => {
            static DEFAULT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
            *DEFAULT.get_or_init(|| {
                std::thread::available_parallelism()
                    .map_or(1, |n| n.get())
                    .min(8)
            })
        }
        n => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_token_never_cancels() {
        checkpoint();
        assert!(!is_cancelled());
    }

    #[test]
    fn an_outer_token_cancels_the_work_inside_it() {
        let request = Arc::new(AtomicU64::new(0));
        let revision = Arc::new(AtomicU64::new(3));
        let outer = CancelToken::new(request.clone(), 0);
        let inner = CancelToken::new(revision.clone(), 3).within(Some(outer));
        assert!(!inner.is_cancelled());
        request.store(1, Ordering::SeqCst); // the client gave up on the request
        assert!(inner.is_cancelled());
    }

    #[test]
    fn token_is_restored_after_unwinding() {
        let counter = Arc::new(AtomicU64::new(5));
        let outer = CancelToken::new(counter.clone(), 5);
        with_token(Some(outer), || {
            let inner = CancelToken::new(counter.clone(), 4);
            let r = std::panic::catch_unwind(|| with_token(Some(inner), checkpoint));
            assert!(r.unwrap_err().is::<Cancelled>());
            assert!(!is_cancelled());
        });
        assert!(current().is_none());
    }
}
