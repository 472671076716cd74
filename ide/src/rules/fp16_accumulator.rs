//! `half/fp16-accumulator`: a `__half` or `__nv_bfloat16` variable accumulated in a loop.
//!
//! fp16 overflows at 65,504 and a running sum of ones stops at 2,048
//! (`pitfall-half-precision-math#P1`); bf16 keeps fp32's range but a sum of ones stops at
//! 256 (`#P2`). The rule fires on a scalar 16-bit local declared outside a loop and updated
//! additively inside it (`acc += x`, `acc = acc + x`, `acc = __hadd(acc, x)`,
//! `acc = __hfma(a, b, acc)`, and the `-` forms). Maxima and minima (`__hmax`), products,
//! loops of at most 16 known iterations, warp-shuffle reduction trees and packed
//! `__half2` accumulators (usually deliberate packed math) stay silent. A loop's count
//! comes from its constant header or from the kernel's launches (a bound every launch
//! passes as a constant; a grid-stride loop whose launch covers `n` in one trip per
//! thread is no accumulation). An fp16 sum over a count set at run time that nothing in
//! the file fixes (`fy < kh` in a convolution window) is a hint that states the
//! assumption of a long loop; grid- and block-stride loops (there to give each thread
//! many elements) and bf16 sums (8 significant bits: a short window already loses most
//! of each addend) stay warnings.
//!
//! The fix accumulates in `float`: the declaration, each update widened with
//! `__half2float` / `__bfloat162float` (`__hfma` becomes `fmaf`), stores of the
//! accumulator narrowed with `__float2half_rn` / `__float2bfloat16_rn`, and conversions of
//! it to float dropped. It is offered only when every use of the variable is one of these
//! and every added term is known to be 16-bit.
//!
//! ```cuda
//! // Before: the sum is rounded to fp16 every iteration.
//! __half acc = __float2half(0.f);
//! for (int i = tid; i < n; i += stride) acc = __hadd(acc, x[i]);
//! out[blockIdx.x] = acc;
//! // After: an fp32 accumulator, narrowed once.
//! float acc = 0.f;
//! for (int i = tid; i < n; i += stride) acc += __half2float(x[i]);
//! out[blockIdx.x] = __float2half_rn(acc);
//! ```

use kernaut_syntax::short_name;
use kernaut_syntax::{EnclosingKind, ExprShape, TextRange, Variable, VariableUse};

use super::{Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;
use kernaut_sema::context::loop_trips;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("fp16_accumulator.rs"),
    id: "half/fp16-accumulator",
    severity: Severity::Warning,
    wiki: &[
        "pitfall-half-precision-math#P1",
        "pitfall-half-precision-math#P2",
    ],
    run,
};

/// The largest known trip count of a loop whose sum is too short to matter.
const SHORT_LOOP: i64 = 16;

/// The two 16-bit formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Fp16,
    Bf16,
}

/// The 16-bit type names of a file: the built-in ones and the file's aliases of them
/// (`using half_t = __half;`), each with its format and whether it is packed (`__half2`).
struct Types(Vec<(String, Format, bool)>);

impl Types {
    fn of_file(file: &kernaut_syntax::SourceFile) -> Types {
        let mut out: Vec<(String, Format, bool)> = [
            "__half",
            "half",
            "__nv_bfloat16",
            "nv_bfloat16",
            "__half2",
            "half2",
            "__nv_bfloat162",
            "nv_bfloat162",
        ]
        .iter()
        .filter_map(|t| Some((t.to_string(), Format::of(t)?, t.ends_with('2'))))
        .collect();
        for (alias, ty) in super::type_aliases::type_aliases(file) {
            if let Some(&(_, f, packed)) = out.iter().find(|(t, _, _)| *t == ty) {
                out.push((alias, f, packed));
            }
        }
        Types(out)
    }

    /// The format of a scalar 16-bit type name.
    fn scalar(&self, word: &str) -> Option<Format> {
        self.0
            .iter()
            .find(|(t, _, packed)| t == word && !packed)
            .map(|(_, f, _)| *f)
    }
}

impl Format {
    fn of(ty: &str) -> Option<Format> {
        match ty {
            "__half" | "half" | "__half2" | "half2" => Some(Format::Fp16),
            "__nv_bfloat16" | "nv_bfloat16" | "__nv_bfloat162" | "nv_bfloat162" => {
                Some(Format::Bf16)
            }
            _ => None,
        }
    }

    fn widen(self) -> &'static str {
        match self {
            Format::Fp16 => "__half2float",
            Format::Bf16 => "__bfloat162float",
        }
    }

    fn narrow(self) -> &'static str {
        match self {
            Format::Fp16 => "__float2half_rn",
            Format::Bf16 => "__float2bfloat16_rn",
        }
    }
}

/// A 16-bit local: a scalar, or a packed pair (`__half2`).
struct Local {
    format: Format,
    /// Whether it is a packed pair; only fused multiply-adds into it are reported.
    packed: bool,
    ty: String,
    name: String,
    /// The declaration statement, through its `;`.
    decl: TextRange,
    /// The range of the type word.
    ty_range: TextRange,
    /// The initialiser, if any.
    init: Option<TextRange>,
}

/// An additive update `acc op= term`: the statement (without `;`), the terms added (their
/// ranges), and whether it is a fused multiply-add (`a * b`).
struct Update {
    range: TextRange,
    negate: bool,
    terms: Vec<TextRange>,
    fma: bool,
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    // Every 16-bit type's name (and so every alias's declaration) says `half` or
    // `bfloat16`: a file without either has no such local, and its tree is not walked.
    let text = ctx.text();
    if !text.contains("half") && !text.contains("bfloat16") {
        return;
    }
    let types = Types::of_file(ctx.file);
    for (local, all) in locals(ctx, &types) {
        let uses = uses(ctx, &local, &all);
        // Where the value is set anew (`v = 0`, `memset(&v, …)`): a loop whose every
        // iteration does so before the update carries no sum across its iterations.
        let resets: Vec<usize> = uses
            .iter()
            .filter_map(|u| match u {
                Use::Assign { range, .. } => Some(range.start),
                _ => None,
            })
            .chain(memsets(&all))
            .collect();
        // The first update in a long loop, else the first in a loop of unknown length.
        let mut found: Option<(&Update, Length)> = None;
        for u in &uses {
            let Use::Update(up) = u else { continue };
            if !up.fma && local.packed {
                continue;
            }
            match loop_length(ctx, up.range.start, local.decl.start, &resets) {
                Length::Short => {}
                Length::Long => {
                    found = Some((up, Length::Long));
                    break;
                }
                unknown => {
                    found.get_or_insert((up, unknown));
                }
            }
        }
        let Some((first, length)) = found else {
            continue;
        };
        // A term that shuffles (`__hadd(w, __shfl_down_sync(…))`) is a warp reduction,
        // not a running sum.
        let calls = ctx.file.calls_in(first.range.start);
        if calls.iter().any(|c| {
            short_name(&c.callee).starts_with("__shfl")
                && first
                    .terms
                    .iter()
                    .any(|t| t.start <= c.range.start && c.range.end <= t.end)
        }) {
            continue;
        }
        let (what, why, wiki) = match local.format {
            Format::Fp16 => (
                "an fp16",
                "fp16 overflows at 65,504 and a running sum stops growing at 2,048, where the ulp reaches 2",
                RULE.wiki[0],
            ),
            Format::Bf16 => (
                "a bf16",
                "bf16 has 7 mantissa bits, so a running sum of ones stops at 256 and any addend below about 0.4% of the total is lost",
                RULE.wiki[1],
            ),
        };
        // A count set at run time: for fp16 the finding rests on it being long. bf16
        // keeps 8 significant bits: by the 16th term of like size an addend keeps 4 of
        // them, so even a short window loses most of each term, and the warning stands.
        let (severity, loop_phrase, assumption) = match &length {
            Length::Unknown(condition) if local.format == Format::Fp16 => (
                Severity::Hint,
                format!("in a loop whose trip count is set at run time (`{condition}`)"),
                format!(
                    " (a hint only: this holds if the loop runs for many iterations, more than {SHORT_LOOP}; no constant or launch in the file fixes its count)"
                ),
            ),
            _ => (RULE.severity, "in a loop".to_string(), String::new()),
        };
        let message = if local.packed {
            format!(
                "`{}` is a packed {} (`{}`) accumulator that a fused multiply-add updates {loop_phrase}: each of its two lanes is rounded to {} after every step, and {why}; accumulate the products in `float` (two floats per pair) and convert once at the end{assumption}",
                local.name,
                &what[what.find(' ').map_or(0, |i| i + 1)..],
                local.ty,
                &what[what.find(' ').map_or(0, |i| i + 1)..],
            )
        } else {
            format!(
                "`{}` is {what} (`{}`) accumulator updated {loop_phrase}: {why}; accumulate in `float` and convert once at the end{assumption}",
                local.name, local.ty
            )
        };
        let fixes = if local.packed {
            Vec::new()
        } else {
            fix(ctx, &types, &local, &uses).into_iter().collect()
        };
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity,
            range: first.range.clone(),
            message,
            wiki: wiki.to_string(),
            fixes,
        });
    }
}

/// How the variable is used after its declaration.
enum Use {
    /// An additive update.
    Update(Update),
    /// Another assignment to it: `acc = 0` (resets are fine when the value is a literal),
    /// and the value's range.
    Assign { range: TextRange, value: TextRange },
    /// `__half2float(acc)`: the call's range.
    Widened(TextRange),
    /// `x = acc;` or `return acc;`: the name's range.
    Stored(TextRange),
    /// Anything else.
    Other,
}

/// Every 16-bit local declared in a function body, with a single declarator, and its
/// uses.
fn locals(ctx: &RuleContext, types: &Types) -> Vec<(Local, Vec<VariableUse>)> {
    let mut out = Vec::new();
    let of_type = |ty: &str| types.0.iter().find(|(t, _, _)| t == ty);
    for f in ctx.facts.kernels.iter().chain(&ctx.facts.device_functions) {
        let Some(body) = f.body_range.clone() else {
            continue;
        };
        let accept =
            |v: &Variable| !v.is_param && !v.shares_declaration && of_type(&v.ty).is_some();
        let names: Vec<&str> = types.0.iter().map(|(t, _, _)| t.as_str()).collect();
        for (v, uses) in ctx.file.variables_with_uses(&body, &names, &accept) {
            let Some(&(ref ty, format, packed)) = of_type(&v.ty) else {
                continue;
            };
            out.push((
                Local {
                    format,
                    packed,
                    ty: ty.clone(),
                    name: v.name,
                    decl: v.declaration,
                    ty_range: v.ty_range,
                    init: v.init,
                },
                uses,
            ));
        }
    }
    out.sort_by_key(|(l, _)| l.decl.start);
    out
}

/// Every use of `local` after its declaration (`all`), classified.
fn uses(ctx: &RuleContext, local: &Local, all: &[VariableUse]) -> Vec<Use> {
    let mut out = Vec::new();
    // Uses inside an assignment already classified are part of it.
    let mut skip_until = 0;
    for u in all {
        if u.range.start < skip_until {
            continue;
        }
        if let Some(w) = &u.write {
            match (w.op.as_str(), &w.value) {
                ("=" | "+=" | "-=", Some(value)) if u.operand == u.range => {
                    skip_until = w.range.end;
                    let mentions = all
                        .iter()
                        .any(|o| value.start <= o.range.start && o.range.end <= value.end);
                    out.push(classify_assignment(
                        ctx,
                        &local.name,
                        &w.op,
                        w.range.clone(),
                        value.clone(),
                        mentions,
                    ));
                }
                _ => out.push(Use::Other),
            }
            continue;
        }
        if u.operand == u.range && !u.address_of {
            if let Some((call, callee, 0)) = &u.argument_of {
                if callee.ends_with("__half2float") || callee.ends_with("__bfloat162float") {
                    out.push(Use::Widened(call.clone()));
                    continue;
                }
            }
            if u.stored {
                out.push(Use::Stored(u.range.clone()));
                continue;
            }
        }
        out.push(Use::Other);
    }
    out
}

/// Classifies the assignment `name op value` at `range` from the syntax's reading of the
/// value (`ExprShape`: a call and its arguments, a binary operation and its operands, a
/// name); `mentions` says whether the value reads the variable itself.
fn classify_assignment(
    ctx: &RuleContext,
    name: &str,
    op: &str,
    range: TextRange,
    value: TextRange,
    mentions: bool,
) -> Use {
    let term = |r: &TextRange| r.clone();
    let update = |negate: bool, terms: Vec<TextRange>, fma: bool| {
        Use::Update(Update {
            range: range.clone(),
            negate,
            terms,
            fma,
        })
    };
    match op {
        "+=" => return update(false, vec![term(&value)], false),
        "-=" => return update(true, vec![term(&value)], false),
        _ => {}
    }
    let is_name = |r: &TextRange| {
        ctx.file
            .expression_shape(r)
            .is_some_and(|e| e == ExprShape::Name(name.to_string()))
    };
    match ctx.file.expression_shape(&value) {
        Some(ExprShape::Call { callee, args }) => match (short_name(&callee), args.as_slice()) {
            ("__hadd" | "__hadd_rn", [a, b]) if is_name(a) => {
                return update(false, vec![term(b)], false)
            }
            ("__hadd" | "__hadd_rn", [a, b]) if is_name(b) => {
                return update(false, vec![term(a)], false)
            }
            ("__hsub" | "__hsub_rn", [a, b]) if is_name(a) => {
                return update(true, vec![term(b)], false)
            }
            ("__hfma" | "__hfma2", [a, b, c]) if is_name(c) => {
                return update(false, vec![term(a), term(b)], true)
            }
            _ => {}
        },
        Some(ExprShape::Binary { left, op, right }) if op == "+" || op == "-" => {
            if is_name(&left) {
                return update(op == "-", vec![term(&right)], false);
            }
            if is_name(&right) && op == "+" {
                return update(false, vec![term(&left)], false);
            }
        }
        _ => {}
    }
    if mentions {
        return Use::Other;
    }
    Use::Assign { range, value }
}

/// How long the loops around an update run ([`loop_length`]).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Length {
    /// No loop carries the sum, or each runs at most [`SHORT_LOOP`] times.
    Short,
    /// A loop is known to run more than [`SHORT_LOOP`] times, or is a grid- or
    /// block-stride loop no launch in the file fixes (written so that each thread takes
    /// many elements).
    Long,
    /// A loop runs a number of times set at run time (`t < taps`) that no launch fixes:
    /// the header's condition as written.
    Unknown(String),
}

/// How long the loops around `offset` run that do not contain the declaration at `decl`
/// and whose iterations do not each set the variable anew before `offset` (a reset at
/// one of `resets`, outside any branch).
///
/// A `for` loop's count is known from its constant header, or from the kernel's launches
/// (`sema::context::loop_trips`: a bound that every launch passes as a constant, a
/// grid-stride loop whose launches cover `n` in one trip per thread). More than
/// [`SHORT_LOOP`] known trips is long: past 16 terms of like size the sum is 16 times a
/// term, so each term added keeps at most 7 of fp16's 11 significant bits. A count set
/// at run time is unknown, except in a stride loop (`i += blockDim.x * gridDim.x`), whose
/// pattern is there to give each thread many elements.
fn loop_length(ctx: &RuleContext, offset: usize, decl: usize, resets: &[usize]) -> Length {
    let mut unknown = None;
    for e in ctx.enclosing(offset).iter() {
        if e.range.contains(&decl) {
            break;
        }
        let is_loop = matches!(
            e.kind,
            EnclosingKind::For { .. } | EnclosingKind::While { .. } | EnclosingKind::DoWhile { .. }
        );
        if is_loop
            && resets.iter().any(|&r| {
                e.range.contains(&r) && r < offset && runs_every_iteration(ctx, r, &e.range)
            })
        {
            // This loop and those around it carry no sum: the loops inside it decide.
            break;
        }
        match &e.kind {
            EnclosingKind::For {
                header,
                start,
                end,
                step,
                ..
            } => {
                let start = start
                    .as_deref()
                    .and_then(|s| ctx.facts.fold_text(s, e.range.start));
                let trips = match (start, *end, *step) {
                    (Some(s), Some(e), Some(st)) if st > 0 => Some((e - s + st - 1) / st),
                    _ => loop_trips::trips_at_launches(ctx, &e.range, &e.kind),
                };
                match trips {
                    Some(n) if n <= SHORT_LOOP => {}
                    Some(_) => return Length::Long,
                    None if is_stride_loop(header) => return Length::Long,
                    // At most a few trips, though the start differs by thread.
                    None if loop_trips::trips_at_most(ctx, &e.range, &e.kind)
                        .is_some_and(|n| n <= SHORT_LOOP) => {}
                    None => {
                        let condition = header.split(';').nth(1).unwrap_or(header).trim();
                        unknown.get_or_insert_with(|| condition.to_string());
                    }
                }
            }
            EnclosingKind::While { condition, .. } | EnclosingKind::DoWhile { condition, .. } => {
                // `while (i < n) { …; i += blockDim.x; }`: a stride loop.
                if is_stride_step(&ctx.text()[e.range.clone()]) {
                    return Length::Long;
                }
                unknown.get_or_insert_with(|| condition.to_string());
            }
            EnclosingKind::Function { .. } => break,
            _ => {}
        }
    }
    match unknown {
        Some(c) => Length::Unknown(c),
        None => Length::Short,
    }
}

/// Whether a `for` header steps by a launch dimension (`i += blockDim.x * gridDim.x`,
/// `i += stride` is not read here: the launch reading above follows such locals).
fn is_stride_loop(header: &str) -> bool {
    header.split(';').nth(2).is_some_and(is_stride_step)
}

/// Whether `text` steps a variable by a launch dimension (`+= blockDim.x`).
fn is_stride_step(text: &str) -> bool {
    text.match_indices("+=").any(|(i, _)| {
        let rest = &text[i + 2..];
        let step = &rest[..rest.find(';').unwrap_or(rest.len())];
        step.contains("blockDim") || step.contains("gridDim")
    })
}

/// The starts of the `memset(&name, …)` calls among a local's uses.
fn memsets(all: &[VariableUse]) -> Vec<usize> {
    all.iter()
        .filter(|u| u.address_of)
        .filter_map(|u| match &u.argument_of {
            Some((call, callee, 0)) if callee.ends_with("memset") => Some(call.start),
            _ => None,
        })
        .collect()
}

/// Whether the statement at `offset` runs in every iteration of the loop at `lp`: no
/// branch or inner loop lies between them.
fn runs_every_iteration(ctx: &RuleContext, offset: usize, lp: &TextRange) -> bool {
    // The innermost statement around it must be the loop: anything else between the two
    // (a branch, an inner loop) may skip it in some iterations.
    ctx.enclosing(offset)
        .first()
        .is_some_and(|e| e.range == *lp)
}

/// The fix, when every use can be rewritten.
fn fix(ctx: &RuleContext, types: &Types, local: &Local, uses: &[Use]) -> Option<Fix> {
    let text = ctx.text();
    let f = local.format;
    let mut edits = vec![TextEdit::replace(local.ty_range.clone(), "float")];
    if let Some(init) = &local.init {
        edits.push(TextEdit::replace(init.clone(), float_value(ctx, init, f)?));
    }
    for u in uses {
        match u {
            Use::Update(up) => {
                let terms: Option<Vec<String>> = up
                    .terms
                    .iter()
                    .map(|t| {
                        is_half_term(ctx, types, t, up.range.start)
                            .then(|| format!("{}({})", f.widen(), text[t.clone()].trim()))
                    })
                    .collect();
                let terms = terms?;
                let new = if up.fma {
                    format!("{0} = fmaf({1}, {2}, {0})", local.name, terms[0], terms[1])
                } else {
                    let op = if up.negate { "-=" } else { "+=" };
                    format!("{} {op} {}", local.name, terms[0])
                };
                edits.push(TextEdit::replace(up.range.clone(), new));
            }
            Use::Assign { range, value } => {
                let new = format!("{} = {}", local.name, float_value(ctx, value, f)?);
                edits.push(TextEdit::replace(range.clone(), new));
            }
            Use::Widened(range) => {
                edits.push(TextEdit::replace(range.clone(), local.name.clone()));
            }
            Use::Stored(range) => {
                edits.push(TextEdit::replace(
                    range.clone(),
                    format!("{}({})", f.narrow(), local.name),
                ));
            }
            Use::Other => return None,
        }
    }
    Some(Fix {
        safe: false,
        title: format!("Accumulate `{}` in float", local.name),
        edits,
    })
}

/// The 16-bit value at `value` written as a float: a literal or a conversion of one
/// (`__float2half(0.f)`, `__half(1)`, as the syntax reads the call) stays a literal,
/// anything else is widened.
fn float_value(ctx: &RuleContext, value: &TextRange, f: Format) -> Option<String> {
    let text = ctx.text();
    let v = text.get(value.clone())?.trim();
    if let Some(ExprShape::Call { callee, args }) = ctx.file.expression_shape(value) {
        if let (
            "__float2half"
            | "__float2half_rn"
            | "__float2bfloat16"
            | "__float2bfloat16_rn"
            | "__half"
            | "__nv_bfloat16"
            | "half"
            | "nv_bfloat16",
            [arg],
        ) = (short_name(&callee), args.as_slice())
        {
            let arg = text[arg.clone()].trim();
            return Some(float_literal(arg).unwrap_or_else(|| arg.to_string()));
        }
    }
    if let Some(l) = float_literal(v) {
        return Some(l);
    }
    Some(format!("{}({v})", f.widen()))
}

/// `0`, `0.f`, `1.0f`, `-2` written as a float literal.
fn float_literal(v: &str) -> Option<String> {
    let v = v.trim();
    let digits = v.trim_start_matches('-');
    if digits.is_empty()
        || !digits
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'f' || b == b'F')
    {
        return None;
    }
    if !digits.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let bare = v.trim_end_matches(['f', 'F']);
    Some(if bare.contains('.') {
        let bare = if bare.ends_with('.') {
            format!("{bare}0")
        } else {
            bare.to_string()
        };
        format!("{bare}f")
    } else {
        format!("{bare}.0f")
    })
}

/// Whether the term at `term` is known to be a 16-bit scalar: a subscript of a 16-bit
/// pointer or array, a 16-bit variable, a half intrinsic's result, or a product of such
/// (as the syntax reads the expression).
fn is_half_term(ctx: &RuleContext, types: &Types, term: &TextRange, at: usize) -> bool {
    match ctx.file.expression_shape(term) {
        None => false,
        Some(ExprShape::Binary { left, op, right }) if op == "*" => {
            is_half_term(ctx, types, &left, at) && is_half_term(ctx, types, &right, at)
        }
        Some(ExprShape::Binary { .. }) => false,
        Some(ExprShape::Call { callee, args }) => {
            let callee = short_name(&callee);
            matches!(
                callee,
                "__hmul"
                    | "__hadd"
                    | "__hsub"
                    | "__hfma"
                    | "__hneg"
                    | "__habs"
                    | "__float2half"
                    | "__float2half_rn"
                    | "__float2bfloat16"
                    | "__float2bfloat16_rn"
                    | "__low2half"
                    | "__high2half"
                    | "__low2bfloat16"
                    | "__high2bfloat16"
            ) || (callee == "__ldg"
                && args.first().is_some_and(|a| {
                    matches!(ctx.file.expression_shape(a), Some(ExprShape::Unary { op, .. }) if op == "&")
                }))
        }
        // `x[i]`, `*p`, `v`: the variable the term reads first.
        Some(_) => ctx
            .file
            .names_in(term)
            .first()
            .is_some_and(|(name, _)| declared_half(ctx, types, name, at)),
    }
}

/// Whether `name` is declared (as a parameter or local before `at`) with a 16-bit scalar
/// type or a pointer or array of one.
fn declared_half(ctx: &RuleContext, types: &Types, name: &str, at: usize) -> bool {
    let is_half_ty = |ty: &str| {
        ty.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| types.scalar(w).is_some())
    };
    if let Some(v) = ctx.file.variable_named(name, at) {
        return is_half_ty(&v.ty);
    }
    ctx.facts
        .shared
        .iter()
        .any(|d| d.name == name && is_half_ty(&d.element_type))
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix, check_messages, check_no_fix};

    const RULE: &str = "half/fp16-accumulator";

    #[test]
    fn hadd_accumulator_in_a_grid_stride_loop() {
        let fixture = r#"
#include <cuda_fp16.h>
__global__ void sum(const __half* x, __half* out, int n) {
    __half acc = __float2half(0.f);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc = __hadd(acc, x[i]);
     // ^^^^^^^^^^^^^^^^^^^^^^^ warning: `acc` is an fp16 (`__half`) accumulator updated in a loop
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"#;
        check(RULE, fixture);
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                warning: `acc` is an fp16 (`__half`) accumulator updated in a loop: fp16 overflows at 65,504 and a running sum stops growing at 2,048, where the ulp reaches 2; accumulate in `float` and convert once at the end (pitfall-half-precision-math#P1)
            "#]],
        );
    }

    #[test]
    fn bf16_accumulator_with_plus_equals() {
        check_messages(
            RULE,
            r#"
#include <cuda_bf16.h>
__global__ void dot(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, int n) {
    __nv_bfloat16 s = 0;
    int i = threadIdx.x;
    while (i < n) {
        s += a[i] * b[i];
        i += blockDim.x;
    }
    out[threadIdx.x] = s;
}
"#,
            expect![[r#"
                warning: `s` is a bf16 (`__nv_bfloat16`) accumulator updated in a loop: bf16 has 7 mantissa bits, so a running sum of ones stops at 256 and any addend below about 0.4% of the total is lost; accumulate in `float` and convert once at the end (pitfall-half-precision-math#P2)
            "#]],
        );
    }

    #[test]
    fn max_short_loops_shuffles_packed_and_fp32_stay_silent() {
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
__global__ void k(const __half* x, const __half2* y, __half* out, int n) {
    __half m = x[0];
    for (int i = 1; i < n; ++i)
        m = __hmax(m, x[i]);
    __half small = 0;
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        small = __hadd(small, x[i]);
    __half w = x[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1)
        w = __hadd(w, __shfl_down_sync(0xffffffff, w, o));
    __half2 p = y[0];
    for (int i = 1; i < n; ++i)
        p = __hadd2(p, y[i]);
    float acc = 0.f;
    for (int i = 0; i < n; ++i)
        acc += __half2float(x[i]);
    __half once = __hadd(x[0], x[1]);
    out[0] = m; out[1] = small; out[2] = w; out[3] = __low2half(p);
    out[4] = __float2half_rn(acc); out[5] = once;
}
"#,
        );
    }

    #[test]
    fn loop_counts_the_launches_fix_and_counts_set_at_run_time() {
        // `dot_one` is a grid-stride loop whose only launch covers `n` with one thread per
        // element: one trip, no sum. `blend` runs `taps` = 16 times at its only launch.
        // `window` runs `kh * kw` times, values no launch in the file fixes: a hint that
        // states the assumption (for bf16, whose 8 significant bits a short window already
        // exhausts, a warning). `dot_many` launches too few threads for `n`: many trips.
        check_messages(
            RULE,
            r#"
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define COUNT (1 << 20)
__global__ void dot_one(const half* x, const half* y, half* out, int n) {
    const int stride = gridDim.x * blockDim.x;
    half part = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        part = part + x[i] * y[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = part;
}
__global__ void dot_many(const half* x, half* out, int n) {
    half sum = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum = sum + x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
__global__ void blend(const __half* s, __half* out, int taps) {
    __half mix = __float2half(0.f);
    for (int t = 0; t < taps; ++t) mix = __hadd(mix, s[threadIdx.x * taps + t]);
    out[threadIdx.x] = mix;
}
__global__ void window(const __half* in, __half* out, int kh, int kw) {
    __half acc = __float2half(0.f);
    for (int fy = 0; fy < kh; ++fy)
        for (int fx = 0; fx < kw; ++fx) acc = __hadd(acc, in[fy * kw + fx + threadIdx.x]);
    out[threadIdx.x] = acc;
}
__global__ void window_bf16(const __nv_bfloat16* in, __nv_bfloat16* out, int kw) {
    __nv_bfloat16 b = 0;
    for (int fx = 0; fx < kw; ++fx) b += in[fx + threadIdx.x];
    out[threadIdx.x] = b;
}
void run(const half* x, const half* y, half* out, int k) {
    dim3 grid(COUNT / 256);
    dim3 block(256);
    dot_one<<<grid, block>>>(x, y, out, COUNT);
    dot_many<<<64, 256>>>(x, out, COUNT);
    blend<<<1, 256>>>(x, out, 16);
    window<<<1, 128>>>(x, out, k, k);
}
"#,
            expect![[r#"
                warning: `sum` is an fp16 (`half`) accumulator updated in a loop: fp16 overflows at 65,504 and a running sum stops growing at 2,048, where the ulp reaches 2; accumulate in `float` and convert once at the end (pitfall-half-precision-math#P1)
                hint: `acc` is an fp16 (`__half`) accumulator updated in a loop whose trip count is set at run time (`fx < kw`): fp16 overflows at 65,504 and a running sum stops growing at 2,048, where the ulp reaches 2; accumulate in `float` and convert once at the end (a hint only: this holds if the loop runs for many iterations, more than 16; no constant or launch in the file fixes its count) (pitfall-half-precision-math#P1)
                warning: `b` is a bf16 (`__nv_bfloat16`) accumulator updated in a loop: bf16 has 7 mantissa bits, so a running sum of ones stops at 256 and any addend below about 0.4% of the total is lost; accumulate in `float` and convert once at the end (pitfall-half-precision-math#P2)
            "#]],
        );
    }

    #[test]
    fn a_partial_set_anew_every_iteration_carries_no_sum() {
        // `part` is zeroed at the top of each iteration and folded into a float: the sum
        // the loop carries is `total`. A reset under a branch, or one outside the inner
        // loop that does the summing, leaves a carried fp16 sum.
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
#include <cstring>
__global__ void dot(const half2* a, const half2* b, float* out, int n) {
    float total = 0.f;
    half2 part;
    half2 kept;
    half2 inner;
    for (int k = threadIdx.x * 4; k + 3 < n; k += blockDim.x * 4) {
        memset(&part, 0, sizeof(half2));
        part = __hfma2(a[k], b[k], part);
        part = __hfma2(a[k + 1], b[k + 1], part);
        total += __low2float(part) + __high2float(part);
        if (k == 0) kept = __float2half2_rn(0.f);
        kept = __hfma2(a[k], b[k], kept);
     // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: `kept` is a packed fp16 (`half2`) accumulator
        inner = __float2half2_rn(0.f);
        for (int j = 0; j < n; ++j) {
            inner = __hfma2(a[j], b[j], inner);
         // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ hint: `inner` is a packed fp16 (`half2`) accumulator that a fused multiply-add updates in a loop whose trip count is set at run time (`j < n`)
        }
        total += __low2float(inner) + __low2float(kept);
    }
    out[threadIdx.x] = total;
}
"#,
        );
    }

    #[test]
    fn a_reset_through_a_cast_or_parentheses_is_a_use_of_the_local() {
        // `memset` of the address, cast or parenthesised, resets the local; a memset of
        // another local's address does not.
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
#include <cstring>
__global__ void dot(const half2* a, const half2* b, float* out, int n) {
    float total = 0.f;
    half2 part;
    half2 other;
    half2 next;
    for (int k = threadIdx.x * 2; k + 1 < n; k += blockDim.x * 2) {
        std::memset((void*)&part, 0, sizeof(half2));
        part = __hfma2(a[k], b[k], part);
        part = __hfma2(a[k + 1], b[k + 1], part);
        memset(&(next), 0, sizeof(half2));
        next = __hfma2(a[k], b[k], next);
        memset(&other, 0, sizeof(half2));
        total += __low2float(part) + __high2float(next);
    }
    half2 carried;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        memset(&next, 0, sizeof(half2));
        carried = __hfma2(a[k], b[k], carried);
     // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: `carried` is a packed fp16 (`half2`) accumulator
    }
    out[threadIdx.x] = total + __low2float(carried);
}
"#,
        );
    }

    #[test]
    fn fix_accumulates_in_float() {
        check_fix(
            RULE,
            r#"
__global__ void sum(const __half* x, __half* out, int n) {
    __half acc = __float2half(0.f);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc = __hadd(acc, x[i]);
    out[threadIdx.x] = acc;
}
"#,
            0,
            expect![[r#"
                // Accumulate `acc` in float
                __global__ void sum(const __half* x, __half* out, int n) {
                    float acc = 0.0f;
                    for (int i = threadIdx.x; i < n; i += blockDim.x)
                        acc += __half2float(x[i]);
                    out[threadIdx.x] = __float2half_rn(acc);
                }
            "#]],
        );
        check_fix(
            RULE,
            r#"
__device__ __nv_bfloat16 dot(const __nv_bfloat16* a, const __nv_bfloat16* b, int n) {
    __nv_bfloat16 s = a[0];
    for (int i = 1; i < n; ++i) {
        s = __hfma(a[i], b[i], s);
    }
    float check = __bfloat162float(s);
    return s;
}
"#,
            0,
            expect![[r#"
                // Accumulate `s` in float
                __device__ __nv_bfloat16 dot(const __nv_bfloat16* a, const __nv_bfloat16* b, int n) {
                    float s = __bfloat162float(a[0]);
                    for (int i = 1; i < n; ++i) {
                        s = fmaf(__bfloat162float(a[i]), __bfloat162float(b[i]), s);
                    }
                    float check = s;
                    return __float2bfloat16_rn(s);
                }
            "#]],
        );
    }

    #[test]
    fn comments_and_shadowing_names_are_not_uses() {
        // The text scan read the commented `acc = acc * 2` as a use it could not rewrite
        // and the inner block's own `acc` as this one, and offered no fix.
        check_fix(
            RULE,
            r#"
__global__ void sum(const __half* x, __half* out, int n) {
    __half acc = __float2half(0.f);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        acc = __hadd(acc, x[i]);
        // acc = acc * 2 would overflow
    }
    { float acc = 1.0f; out[n] = __float2half(acc * 2); }
    out[threadIdx.x] = acc;
}
"#,
            0,
            expect![[r#"
                // Accumulate `acc` in float
                __global__ void sum(const __half* x, __half* out, int n) {
                    float acc = 0.0f;
                    for (int i = threadIdx.x; i < n; i += blockDim.x) {
                        acc += __half2float(x[i]);
                        // acc = acc * 2 would overflow
                    }
                    { float acc = 1.0f; out[n] = __float2half(acc * 2); }
                    out[threadIdx.x] = __float2half_rn(acc);
                }
            "#]],
        );
    }

    #[test]
    fn fix_stops_at_the_end_of_the_declaring_block() {
        check_fix(
            RULE,
            r#"
__global__ void k(const __half* x, __half* out, int n) {
    {
        __half s = 0;
        for (int i = 0; i < n; ++i) s += x[i];
        out[0] = s;
    }
    float s = 1.f;
    out[1] = s;
}
"#,
            0,
            expect![[r#"
                // Accumulate `s` in float
                __global__ void k(const __half* x, __half* out, int n) {
                    {
                        float s = 0.0f;
                        for (int i = 0; i < n; ++i) s += __half2float(x[i]);
                        out[0] = __float2half_rn(s);
                    }
                    float s = 1.f;
                    out[1] = s;
                }
            "#]],
        );
    }

    #[test]
    fn no_fix_when_a_term_may_be_float_or_the_value_escapes() {
        check_no_fix(
            RULE,
            r#"
__global__ void k(const float* x, __half* out, int n) {
    __half acc = 0;
    for (int i = 0; i < n; ++i)
        acc += x[i];
    out[0] = acc;
}
"#,
        );
        check_no_fix(
            RULE,
            r#"
__device__ void consume(__half v);
__global__ void k(const __half* x, int n) {
    __half acc = 0;
    for (int i = 0; i < n; ++i)
        acc += x[i];
    consume(acc);
}
"#,
        );
    }

    #[test]
    fn packed_fma_and_aliased_accumulators() {
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
using half_t = __half;
typedef __half2 h2;
__global__ void dot2(const h2* a, const h2* b, float* out, int n) {
    h2 acc = __float2half2_rn(0.f);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc = __hfma2(a[i], b[i], acc);
     // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: `acc` is a packed fp16 (`h2`) accumulator that a fused multiply-add updates in a loop
    out[threadIdx.x] = __low2float(acc) + __high2float(acc);
}
__global__ void dot(const half_t* a, const half_t* b, half_t* out, int n) {
    half_t s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s = __hfma(a[i], b[i], s);
     // ^^^^^^^^^^^^^^^^^^^^^^^^^ warning: `s` is an fp16 (`half_t`) accumulator updated in a loop
    out[threadIdx.x] = s;
}
"#,
        );
    }

    #[test]
    fn packed_sums_short_packed_loops_and_float_aliases_stay_silent() {
        check(
            RULE,
            r#"
#include <cuda_fp16.h>
using acc_t = float;
typedef __half2 h2;
__global__ void k(const h2* a, const h2* b, const __half* x, float* out, int n) {
    h2 p = a[0];
    for (int i = 1; i < n; ++i)
        p = __hadd2(p, a[i]);
    h2 q = a[0];
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        q = __hfma2(a[i], b[i], q);
    acc_t s = 0;
    for (int i = 0; i < n; ++i)
        s += __half2float(x[i]);
    out[0] = __low2float(p) + __high2float(q) + s;
}
"#,
        );
    }

    #[test]
    fn fix_through_an_alias_keeps_the_float_widening() {
        check_fix(
            RULE,
            r#"
using half_t = __half;
__global__ void sum(const half_t* x, half_t* out, int n) {
    half_t acc = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc += x[i];
    out[threadIdx.x] = acc;
}
"#,
            0,
            expect![[r#"
                // Accumulate `acc` in float
                using half_t = __half;
                __global__ void sum(const half_t* x, half_t* out, int n) {
                    float acc = 0.0f;
                    for (int i = threadIdx.x; i < n; i += blockDim.x)
                        acc += __half2float(x[i]);
                    out[threadIdx.x] = __float2half_rn(acc);
                }
            "#]],
        );
    }

    #[test]
    fn the_assigned_value_is_read_from_the_syntax() {
        // A parenthesised sum, a comment between the operands and `__hadd` with the
        // local second are updates; `acc2 = acc2 * x[i]` and a sum of another local are
        // not.
        check(
            RULE,
            r#"
__global__ void k(const __half* x, __half* out, int n) {
    __half a = 0, unused = 0;
    __half p = 0;
    __half c = 0;
    __half h = 0;
    __half m = 1;
    __half o = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        p = (p + x[i]);
     // ^^^^^^^^^^^^^^ warning: `p` is an fp16 (`__half`) accumulator updated in a loop
        c = c /* running */ - x[i];
     // ^^^^^^^^^^^^^^^^^^^^^^^^^^ warning: `c` is an fp16 (`__half`) accumulator updated in a loop
        h = __hadd(x[i], (h));
     // ^^^^^^^^^^^^^^^^^^^^^ warning: `h` is an fp16 (`__half`) accumulator updated in a loop
        m = m * x[i];
        o = x[i] + x[0];
    }
    out[0] = p; out[1] = c; out[2] = h; out[3] = m; out[4] = o;
}
"#,
        );
    }

    #[test]
    fn fix_of_a_parenthesised_sum_and_a_commented_intrinsic() {
        check_fix(
            RULE,
            r#"
__global__ void k(const __half* x, __half* out, int n) {
    __half s = __half(0);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        s = (s + __ldg(&x[i]) * x[0]);
        s = __hadd(/* next */ x[i], s);
    }
    out[0] = s;
}
"#,
            0,
            expect![[r#"
                // Accumulate `s` in float
                __global__ void k(const __half* x, __half* out, int n) {
                    float s = 0.0f;
                    for (int i = threadIdx.x; i < n; i += blockDim.x) {
                        s += __half2float(__ldg(&x[i]) * x[0]);
                        s += __half2float(x[i]);
                    }
                    out[0] = __float2half_rn(s);
                }
            "#]],
        );
    }

    /// A lane's walk over a row the only launch fixes (`p` from the lane below `n / 8` in
    /// steps of 32, `n` = 512: 2 trips) and a walk over a cluster's blocks (16 at most)
    /// are short: nothing is said. With `n` = 40960 a lane walks up to 160 trips of 8
    /// updates, and the hint stands.
    #[test]
    fn walks_the_launch_or_the_hardware_keeps_short() {
        let kernel = |n: u32| {
            format!(
                r#"
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void row_dot(const half* w, const half* x, half* y, int n) {{
    int lane = threadIdx.x;
    half acc = __float2half(0.0f);
    for (int p = lane; p < n / 8; p += 32) {{
        #pragma unroll
        for (int i = 0; i < 8; i++) acc = __hfma(w[p * 8 + i], x[p * 8 + i], acc);
    }}
    y[blockIdx.x * 32 + lane] = acc;
}}
__global__ void gather(__half* out) {{
    extern __shared__ __half smem[];
    auto cluster = cg::this_cluster();
    const int size = cluster.dim_blocks().x;
    __half sum = __float2half(0.0f);
    for (int b = 0; b < size; b++)
        sum = __hadd(sum, cluster.map_shared_rank(smem, b)[threadIdx.x]);
    out[threadIdx.x] = sum;
}}
int main() {{
    row_dot<<<64, 32>>>(nullptr, nullptr, nullptr, {n});
}}
"#
            )
        };
        check(RULE, &kernel(512));
        check_messages(
            RULE,
            &kernel(40960),
            expect![[r#"
                hint: `acc` is an fp16 (`half`) accumulator updated in a loop whose trip count is set at run time (`p < n / 8`): fp16 overflows at 65,504 and a running sum stops growing at 2,048, where the ulp reaches 2; accumulate in `float` and convert once at the end (a hint only: this holds if the loop runs for many iterations, more than 16; no constant or launch in the file fixes its count) (pitfall-half-precision-math#P1)
            "#]],
        );
    }
}
