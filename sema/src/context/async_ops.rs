//! Shared by the async-copy and barrier rules: the calls of a function classified as async
//! copies, commits, waits and block barriers, seeing through small wrapper functions of the
//! same file (`cp_async_fence()`, `cp_async_wait<N>()` around inline PTX).

use kernaut_syntax::short_name;
use kernaut_syntax::FxHashMap as HashMap;

use kernaut_syntax::{CallSite, SymbolKind, TextRange};

use super::RuleContext;

/// What an async-copy or barrier call does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Issues an async copy into shared memory.
    Copy,
    /// Closes a batch of copies (`__pipeline_commit`, `cp.async.commit_group`).
    Commit,
    /// Waits for batches: `count` is the number allowed to stay pending, when constant;
    /// `count_range` the text that holds it.
    Wait {
        /// The pending-batch count, folded.
        count: Option<i64>,
        /// The count as written.
        count_text: Option<String>,
        /// Where the count is written (an argument, a template argument or a PTX operand).
        count_range: Option<TextRange>,
        /// Whether the wait also synchronises the block (`cooperative_groups::wait`).
        syncs_block: bool,
    },
    /// A barrier of the whole block (or a wider one).
    Barrier,
    /// A warp barrier, `__syncwarp()`.
    WarpBarrier,
}

/// A classified call.
#[derive(Clone, Debug)]
pub struct Op {
    /// What it does.
    pub kind: OpKind,
    /// The call.
    pub call: CallSite,
}

/// The last segment of a callee: `cuda::pipeline::producer_commit` → `producer_commit`.
pub fn base_name(callee: &str) -> &str {
    let s = short_name(callee);
    s.rsplit('.').next().unwrap_or(s)
}

/// The template arguments written right after the callee of `call`, and their range.
pub fn template_arg(text: &str, call: &CallSite) -> Option<(String, TextRange)> {
    let rest = text.get(call.callee_range.end..call.range.end)?;
    let trimmed = rest.trim_start();
    if !trimmed.starts_with('<') {
        return None;
    }
    let open = call.callee_range.end + (rest.len() - trimmed.len()) + 1;
    let mut depth = 1;
    for (i, c) in text[open..call.range.end].char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    let range = open..open + i;
                    return Some((text[range.clone()].trim().to_string(), range));
                }
            }
            _ => {}
        }
    }
    None
}

fn classify_direct(ctx: &RuleContext, call: &CallSite) -> Option<OpKind> {
    let text = ctx.text();
    if call.kind == SymbolKind::Ptx {
        let m = call.callee.as_str();
        return if m.starts_with("cp.async.commit_group") {
            Some(OpKind::Commit)
        } else if m.starts_with("cp.async.wait_all") {
            Some(wait(Some(0), None, None, false))
        } else if m.starts_with("cp.async.wait_group") {
            let arg = call.args.first().cloned();
            let count = arg.as_deref().and_then(|a| a.parse::<i64>().ok());
            let range = arg.as_deref().filter(|_| count.is_some()).and_then(|a| {
                text.get(call.range.clone())?
                    .find(a)
                    .map(|i| call.range.start + i..call.range.start + i + a.len())
            });
            Some(wait(count, arg, range, false))
        } else if m.starts_with("cp.async.ca") || m.starts_with("cp.async.cg") {
            Some(OpKind::Copy)
        } else if m.starts_with("bar.sync")
            || m.starts_with("barrier.sync")
            || m == "bar"
            || m == "barrier"
        {
            Some(OpKind::Barrier)
        } else {
            None
        };
    }
    let name = base_name(&call.callee);
    let receiver_is_group = || {
        let t = call.callee_text.to_ascii_lowercase();
        call.callee.contains("thread_block")
            || call.callee.contains("grid_group")
            || call.callee.contains("cluster_group")
            || t.contains("block")
            || t.contains("cta")
            || t.contains("grid")
    };
    Some(match name {
        "__pipeline_memcpy_async" | "memcpy_async" | "cp_async" | "cp_async_zfill" => OpKind::Copy,
        "__pipeline_commit" | "producer_commit" | "cp_async_fence" | "cp_async_commit" => {
            OpKind::Commit
        }
        "__pipeline_wait_prior" => {
            let arg = call.args.first().cloned();
            let count = arg
                .as_deref()
                .and_then(|a| ctx.facts.fold_text(a, call.range.start));
            wait(count, arg, call.arg_ranges.first().cloned(), false)
        }
        "pipeline_consumer_wait_prior" | "cp_async_wait" | "wait_prior" => {
            let (arg, range) =
                template_arg(text, call).map_or((None, None), |(a, r)| (Some(a), Some(r)));
            let count = arg
                .as_deref()
                .and_then(|a| ctx.facts.fold_text(a, call.range.start));
            wait(count, arg, range, false)
        }
        "cp_async_wait_all" => wait(Some(0), None, None, false),
        "consumer_wait" | "consumer_wait_for" | "consumer_wait_until" => {
            wait(None, None, None, false)
        }
        "wait"
            if call.callee.starts_with("cooperative_groups::")
                || call.callee_text.starts_with("cg::") =>
        {
            wait(Some(0), None, None, true)
        }
        "__syncthreads"
        | "__syncthreads_count"
        | "__syncthreads_and"
        | "__syncthreads_or"
        | "__barrier_sync" => OpKind::Barrier,
        "arrive_and_wait" | "barrier_sync" | "named_barrier_sync" => OpKind::Barrier,
        "sync" if call.kind != SymbolKind::Identifier && receiver_is_group() => OpKind::Barrier,
        "sync"
            if call.callee.starts_with("cooperative_groups::")
                || call.callee_text.starts_with("cg::") =>
        {
            OpKind::Barrier
        }
        "__syncwarp" => OpKind::WarpBarrier,
        _ => return None,
    })
}

fn wait(
    count: Option<i64>,
    count_text: Option<String>,
    count_range: Option<TextRange>,
    syncs_block: bool,
) -> OpKind {
    OpKind::Wait {
        count,
        count_text,
        count_range,
        syncs_block,
    }
}

/// Functions of the file that wrap one op: their name → the op their body performs (the
/// last classified call of the body wins, so a wrapper that waits then syncs is a barrier).
fn wrappers(ctx: &RuleContext) -> HashMap<String, OpKind> {
    let mut out = HashMap::default();
    let text = ctx.text();
    let mentioning = |b: &TextRange| {
        text.get(b.clone())
            .is_some_and(|t| ASYNC_NAMES.iter().chain(&["sync"]).any(|n| t.contains(n)))
    };
    let bodies: Vec<TextRange> = ctx
        .facts
        .device_functions
        .iter()
        .filter_map(|f| f.body_range.clone())
        .filter(mentioning)
        .collect();
    ctx.prefetch_calls(&bodies);
    for f in &ctx.facts.device_functions {
        let Some(body) = &f.body_range else {
            continue;
        };
        let mentions = text
            .get(body.clone())
            .is_some_and(|t| ASYNC_NAMES.iter().chain(&["sync"]).any(|n| t.contains(n)));
        if !mentions {
            continue;
        }
        let calls = ctx.calls_in_body(body.start);
        let ops: Vec<OpKind> = calls
            .iter()
            .filter_map(|c| classify_direct(ctx, c))
            .collect();
        let Some(last) = ops.last() else {
            continue;
        };
        if ops.contains(&OpKind::Barrier) {
            out.insert(f.name.clone(), OpKind::Barrier);
        } else {
            out.insert(f.name.clone(), last.clone());
        }
    }
    for (name, kind) in macro_wrappers(ctx) {
        out.entry(name).or_insert(kind);
    }
    out
}

/// Function-like and object-like macros that wrap one op, from the file's own
/// `#define`s and the headers' it includes (its prelude; the file's own definition of a
/// name wins): `#define CP_ASYNC_WAIT_GROUP(n) asm volatile("cp.async.wait_group %0;\n"
/// ::"n"(n))`, `#define CP_ASYNC_COMMIT_GROUP() asm volatile("cp.async.commit_group;\n" ::)`.
/// A wait whose count is written in the body (`wait_group 1`) keeps it; one whose count
/// is a parameter takes the call's argument, as a wrapper function's does.
fn macro_wrappers(ctx: &RuleContext) -> HashMap<String, OpKind> {
    let mut out = HashMap::default();
    let text = ctx.text();
    let own = if text.contains("define") {
        kernaut_syntax::macro_definitions(text)
    } else {
        Vec::new()
    };
    let header = ctx
        .facts
        .prelude()
        .into_iter()
        .flat_map(|p| p.macros.iter())
        .filter(|m| !own.iter().any(|o| o.name == m.name));
    for m in own.iter().chain(header) {
        if out.contains_key(&m.name) {
            continue;
        }
        if let Some(kind) = macro_op(&m.body) {
            out.insert(m.name.clone(), kind);
        }
    }
    out
}

/// The op a pattern of a macro body stands for, given the text after the pattern.
type OpOf = fn(&str) -> OpKind;

/// The op a macro body performs: the last one it names, or a barrier when it has one.
fn macro_op(body: &str) -> Option<OpKind> {
    if !ASYNC_NAMES
        .iter()
        .chain(&["sync"])
        .any(|n| body.contains(n))
    {
        return None;
    }
    let patterns: [(&str, OpOf); 10] = [
        ("cp.async.commit_group", |_| OpKind::Commit),
        ("cp.async.wait_all", |_| wait(Some(0), None, None, false)),
        ("cp.async.wait_group", |after| {
            let n: String = after
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            wait(n.parse().ok(), None, None, false)
        }),
        ("cp.async.ca", |_| OpKind::Copy),
        ("cp.async.cg", |_| OpKind::Copy),
        ("__pipeline_commit", |_| OpKind::Commit),
        ("__pipeline_wait_prior", |_| wait(None, None, None, false)),
        ("__pipeline_memcpy_async", |_| OpKind::Copy),
        ("__syncthreads", |_| OpKind::Barrier),
        ("bar.sync", |_| OpKind::Barrier),
    ];
    let mut found: Vec<(usize, OpKind)> = Vec::new();
    for (name, kind) in patterns {
        for (at, _) in body.match_indices(name) {
            found.push((at, kind(&body[at + name.len()..])));
        }
    }
    if found.iter().any(|(_, k)| *k == OpKind::Barrier) {
        return Some(OpKind::Barrier);
    }
    found.into_iter().max_by_key(|(at, _)| *at).map(|(_, k)| k)
}

/// The classified calls of the function whose body contains `offset`, in document order.
pub fn ops_in_function(
    ctx: &RuleContext,
    offset: usize,
    wrappers: &HashMap<String, OpKind>,
) -> Vec<Op> {
    let mut out = Vec::new();
    for call in ctx.calls_in_body(offset).iter() {
        let call = call.clone();
        let kind = match classify_direct(ctx, &call) {
            Some(k) => Some(k),
            None => wrappers.get(base_name(&call.callee)).map(|k| match k {
                // A wrapper's wait count is the call's template argument or argument.
                OpKind::Wait {
                    count: None,
                    syncs_block,
                    ..
                } => {
                    let (arg, range) = template_arg(ctx.text(), &call)
                        .map(|(a, r)| (Some(a), Some(r)))
                        .or_else(|| {
                            call.args
                                .first()
                                .map(|a| (Some(a.clone()), call.arg_ranges.first().cloned()))
                        })
                        .unwrap_or((None, None));
                    let count = arg
                        .as_deref()
                        .and_then(|a| ctx.facts.fold_text(a, call.range.start));
                    wait(count, arg, range, *syncs_block)
                }
                OpKind::Wait {
                    count, syncs_block, ..
                } => wait(*count, None, None, *syncs_block),
                other => other.clone(),
            }),
        };
        if let Some(kind) = kind {
            out.push(Op { kind, call });
        }
    }
    out
}

/// A function body and its classified calls.
pub type AsyncFunction = (TextRange, Vec<Op>);

/// Every function with a body (kernels and device functions) that mentions an async-copy
/// operation or a wrapper of one, and its classified calls; the rules read it through
/// [`RuleContext::async_functions`], which computes it once.
pub fn all_functions(ctx: &RuleContext) -> Vec<AsyncFunction> {
    let wrappers = wrappers(ctx);
    let mut names: Vec<&str> = ASYNC_NAMES.to_vec();
    names.extend(wrappers.keys().map(String::as_str));
    let bodies = ctx.bodies_mentioning(&names);
    ctx.prefetch_calls(&bodies);
    bodies
        .into_iter()
        .map(|body| {
            let ops = ops_in_function(ctx, body.start, &wrappers);
            (body, ops)
        })
        .collect()
}

/// Text that every function with an async copy, commit or wait mentions.
const ASYNC_NAMES: &[&str] = &["memcpy_async", "cp_async", "cp.async", "commit", "wait"];
