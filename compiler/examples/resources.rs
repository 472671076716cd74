//! Prints the resource table of a CUDA file, the way `kernaut-lsp check --resources`
//! could: `cargo run -p kernaut-compiler --example resources -- file.cu [sm_80] [--sass]`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use kernaut_compiler::{
    find_compile_commands, flags_for, CompileCache, CompileRequest, Toolkit, ToolkitConfig,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let file = PathBuf::from(
        args.next()
            .ok_or("usage: resources FILE.cu [sm_XX] [--sass]")?,
    );
    let rest: Vec<String> = args.collect();
    let arch = rest
        .iter()
        .find(|a| a.starts_with("sm_"))
        .cloned()
        .unwrap_or_else(|| "sm_80".into());
    let sass = rest.iter().any(|a| a == "--sass");

    let toolkit = Toolkit::discover(&ToolkitConfig::default())?;
    println!("toolkit: {}", toolkit.describe());
    let database = find_compile_commands(&file, None);
    let flags = flags_for(&file, database.as_deref(), &arch)?;
    println!("flags: {} ({:?})", flags.args.join(" "), flags.origin);
    for d in &flags.dropped {
        println!("dropped: {} ({})", d.flag, d.reason);
    }
    let mut request = CompileRequest::new(&file, std::fs::read_to_string(&file)?, flags);
    request.sass = sass && toolkit.has_sass_tools();

    let cache = CompileCache::new(None);
    let cancel = Arc::default();
    let start = Instant::now();
    let out = cache.compile(&toolkit, &request, &cancel)?;
    let fresh = start.elapsed();
    let start = Instant::now();
    let again = cache.compile(&toolkit, &request, &cancel)?;
    println!(
        "compiled in {fresh:.2?}; again from the cache ({}) in {:.2?}",
        again.from_cache,
        start.elapsed()
    );

    println!(
        "{:<8} {:>5} {:>12} {:>7} {:>7} {:>6}  kernel",
        "arch", "regs", "spill st/ld", "stack", "smem", "cmem"
    );
    for k in &out.kernels {
        println!(
            "{:<8} {:>5} {:>12} {:>7} {:>7} {:>6}  {}",
            k.arch,
            k.registers,
            format!("{}/{}", k.spill_store_bytes, k.spill_load_bytes),
            k.stack_frame_bytes,
            k.static_shared_bytes,
            k.constant_bytes,
            k.name
        );
        if let Some(s) = out.sass_for(&k.mangled, &k.arch) {
            let top: Vec<String> = s
                .top_opcodes(4)
                .iter()
                .map(|(op, _, pct)| format!("{op} {pct:.0}%"))
                .collect();
            println!(
                "         SASS: {} instructions, LDL {} STL {}, async copies {:?}; {}",
                s.instructions,
                s.ldl,
                s.stl,
                s.async_copy_mode(),
                top.join(", ")
            );
        }
    }
    for m in &out.messages {
        let place = match (&m.file, m.line) {
            (Some(f), Some(l)) => format!("{}:{l}:{}", f.display(), m.column.unwrap_or(1)),
            _ => "-".into(),
        };
        println!("{:?} [{}] {place}: {}", m.severity, m.tool, m.message);
    }
    Ok(())
}
