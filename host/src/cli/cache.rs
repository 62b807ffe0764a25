//! `weft cache`: where the instrumented and compiled modules weft keeps
//! between commands are, how much they take, and clearing them.

use super::EXIT_PASS;
use crate::runtime::compile_cache;
use anyhow::{Context, Result};
use clap::Args;
use std::io::Write as _;

/// Show the folder of instrumented and compiled modules weft keeps between
/// commands (so that a second command on a module starts at once), or
/// clear it. Set
/// `WEFT_CACHE_DIR` to move it, `WEFT_CACHE_DIR=off` to turn it off.
#[derive(Args, Debug)]
pub struct CacheArgs {
    /// Remove every module the folder holds.
    #[arg(long)]
    clear: bool,
}

pub fn run(args: CacheArgs) -> Result<u8> {
    let mut stdout = super::terminal::stdout();
    let Some(dir) = compile_cache::folder() else {
        let _ = writeln!(
            stdout,
            "the cache is off (WEFT_CACHE_DIR=off, or no home folder)"
        );
        return Ok(EXIT_PASS);
    };
    if args.clear {
        let freed = compile_cache::clear(&dir)
            .with_context(|| format!("cannot clear `{}`", dir.display()))?;
        let _ = writeln!(
            stdout,
            "cleared {}: {:.1} MiB freed",
            dir.display(),
            freed as f64 / (1 << 20) as f64
        );
    } else {
        let (entries, bytes) = compile_cache::usage(&dir);
        let _ = writeln!(
            stdout,
            "{}: {entries} instrumented and compiled modules, {:.1} MiB (at most {} MiB kept)",
            dir.display(),
            bytes as f64 / (1 << 20) as f64,
            compile_cache::MOST_BYTES >> 20
        );
    }
    Ok(EXIT_PASS)
}
