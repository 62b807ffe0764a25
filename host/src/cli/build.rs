//! `weft build`: a source file to a module weft runs.

use crate::output_paths::{Kind, Outputs};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Build a C (pthreads), C++, Zig (std.Thread), Rust or WAT source file,
/// the C or C++ files of one program, or a folder (a Cargo package, or one
/// holding C or C++ files, a `main.zig` or a `main.wat`), into a module
/// weft runs. A C or C++ project with its own build (make, CMake,
/// configure) uses `weft cc` and `weft c++` as its compilers instead.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The source file (`.c`, `.cpp`, `.zig`, `.rs`, `.wat`), the C or C++
    /// files of one program, or a folder.
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// Where to write the module (default: the first source with `.wasm`).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Flags for the C compiler after `--` (`-- -DN=5 -I include`).
    #[arg(last = true)]
    flags: Vec<String>,
}

pub fn run(args: BuildArgs) -> Result<u8> {
    let outputs = args.sources.iter().fold(Outputs::new(), |outputs, source| {
        outputs.input("a source", source)
    });
    outputs
        .output("-o", Kind::Module, args.output.as_deref())
        .check()?;
    let written = crate::build::build_program(&args.sources, args.output.as_deref(), &args.flags)?;
    eprintln!("weft: built {}", written.display());
    Ok(super::EXIT_PASS)
}
