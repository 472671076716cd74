//! Cooperative groups: which threads a group's `sync()` waits for, read from the group's
//! resolved type (`cooperative_groups::thread_block_tile<32>::sync`), else from the
//! receiver as written and the variable it names (`auto t = cg::tiled_partition<16>(b)`).
//! The barrier rules (`context::barriers`) and the race model share it.

use kernaut_syntax::lex::is_identifier;
use kernaut_syntax::{short_name, CallSite};

/// The threads a cooperative group holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupScope {
    /// A tile of `N` threads (`None` where the size is not written).
    Tile(Option<u32>),
    /// The block.
    Block,
    /// The thread-block cluster.
    Cluster,
    /// The grid.
    Grid,
}

/// The scope of a cooperative group's `sync()` (`block.sync()`, `tile.sync()`,
/// `cooperative_groups::sync(g)`): the group's resolved type, else the receiver as
/// written and the variable it names. `None` for a group whose threads are not known (a
/// `coalesced_group`, an unknown receiver). The barrier rules and the race model ask the same.
pub fn sync_scope(file: &kernaut_syntax::SourceFile, call: &CallSite) -> Option<GroupScope> {
    // A member call names its group through the receiver's type or the receiver as
    // written; `cooperative_groups::sync(g)` through its argument.
    let receiver = match call.callee_text.rsplit_once('.') {
        Some((r, _)) => r.to_string(),
        None => call
            .arg_ranges
            .first()
            .and_then(|r| file.text().get(r.clone()))
            .unwrap_or("")
            .to_string(),
    };
    group_scope(&call.callee, &receiver, file, call.range.start)
}

/// The scope of a cooperative group, from its resolved type (`callee`, as in
/// `cooperative_groups::thread_block_tile<32>::sync`) or its name as written.
fn group_scope(
    callee: &str,
    receiver: &str,
    file: &kernaut_syntax::SourceFile,
    at: usize,
) -> Option<GroupScope> {
    let facts = file.facts();
    let ty = callee.to_ascii_lowercase();
    let r = receiver.trim().to_ascii_lowercase();
    if ty.contains("coalesced_group") || r.contains("coalesced_threads") {
        return None;
    }
    if let Some(i) = ty.find("thread_block_tile<") {
        let n = ty[i + "thread_block_tile<".len()..]
            .split(['>', ','])
            .next()
            .and_then(|n| facts.fold_text(n.trim(), at))
            .and_then(|n| u32::try_from(n).ok());
        return Some(GroupScope::Tile(n));
    }
    if let Some(i) = r.find("tiled_partition<") {
        let n = r[i + "tiled_partition<".len()..]
            .split(['>', ','])
            .next()
            .and_then(|n| facts.fold_text(n.trim(), at))
            .and_then(|n| u32::try_from(n).ok());
        return Some(GroupScope::Tile(n));
    }
    if ty.contains("thread_block_tile") || r.contains("tiled_partition") {
        let name = receiver
            .trim()
            .rsplit(['.', ':', '>', ' ', '('])
            .next()
            .unwrap_or("");
        return Some(GroupScope::Tile(tile_size_of(file, name, at)));
    }
    if ty.contains("grid_group") || r.contains("this_grid()") {
        return Some(GroupScope::Grid);
    }
    if ty.contains("cluster_group") || r.contains("this_cluster()") {
        return Some(GroupScope::Cluster);
    }
    if ty.contains("thread_block") || r.contains("this_thread_block()") {
        return Some(GroupScope::Block);
    }
    // A receiver of no known type: by the usual names only.
    let word = r.rsplit(['.', ':', '>', ' ', '(']).next().unwrap_or("");
    let name = receiver
        .trim()
        .rsplit(['.', ':', '>', ' ', '('])
        .next()
        .unwrap_or("");
    if let Some(n) = tile_size_of(file, name, at) {
        return Some(GroupScope::Tile(Some(n)));
    }
    match word {
        "block" | "cta" | "tb" | "thread_block" => Some(GroupScope::Block),
        "grid" => Some(GroupScope::Grid),
        "cluster" => Some(GroupScope::Cluster),
        "tile" | "warp" | "tile32" | "warp_tile" => Some(GroupScope::Tile(None)),
        _ => None,
    }
}

/// The size of the tile the variable `name` holds at `at`, from its last definition
/// before `at` (its initialiser or an assignment): `auto t = cg::tiled_partition<16>(block);`
/// or `cg::thread_group t = cg::tiled_partition(block, 16);`.
fn tile_size_of(file: &kernaut_syntax::SourceFile, name: &str, at: usize) -> Option<u32> {
    let name = name.trim();
    if !is_identifier(name) {
        return None;
    }
    let v = file.variable_named(name, at)?;
    let mut value = v.init.clone().filter(|r| r.end <= at);
    for u in file.uses_of(&v) {
        match u.write {
            Some(w) if w.op == "=" && w.range.end <= at => value = w.value,
            _ => {}
        }
    }
    let value = value?;
    let call = file.calls_in(value.start).into_iter().find(|c| {
        value.start <= c.range.start
            && c.range.end <= value.end
            && short_name(&c.callee) == "tiled_partition"
    })?;
    let size = match file.template_argument_ranges(&call.callee_range).first() {
        Some(r) => r.clone(),
        None => call.arg_ranges.get(1)?.clone(),
    };
    let written = file.text().get(size)?;
    file.facts()
        .fold_text(written.trim(), at)
        .and_then(|n| u32::try_from(n).ok())
}
