//! `weft build`: a source file to a module weft runs.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Build a C (pthreads), Zig (std.Thread) or WAT source file, or a folder
/// (a Cargo package, or one holding `main.c`, `main.zig` or `main.wat`),
/// into a module weft runs.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The source file (`.c`, `.zig`, `.wat`) or folder.
    source: PathBuf,
    /// Where to write the module (default: the source with `.wasm`).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Flags for the C compiler after `--` (`-- -DN=5 -I include`).
    #[arg(last = true)]
    flags: Vec<String>,
}

pub fn run(args: BuildArgs) -> Result<u8> {
    if let Some(output) = &args.output
        && super::common::same_file(&args.source, output)
    {
        anyhow::bail!(
            "`{}` is the source itself: the module would overwrite it (choose another -o)",
            output.display()
        );
    }
    let written = crate::build::build(&args.source, args.output.as_deref(), &args.flags)?;
    eprintln!("weft: built {}", written.display());
    Ok(super::EXIT_PASS)
}
