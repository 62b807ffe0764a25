//! `weft setup`: installs what `weft build` needs.

use super::EXIT_PASS;
use anyhow::Result;
use clap::Args;
use std::io::Write as _;

/// Install what building guests needs, for a `weft` installed anywhere:
/// the `wasm32-wasip1-threads` Rust target (with rustup) and zig (for C,
/// C++ and Zig; PyPI's `ziglang` package, into a virtual environment in
/// `$XDG_DATA_HOME/weft` or `~/.local/share/weft`); and writes there the
/// CMake toolchain file (`toolchain.cmake`) that builds a CMake project
/// with `weft cc` and `weft c++`. What is there already is kept; running
/// it again changes nothing.
#[derive(Args, Debug)]
pub struct SetupArgs {}

pub fn run(_args: SetupArgs) -> Result<u8> {
    let mut stdout = super::terminal::stdout();
    crate::build::setup::setup(&mut |line| {
        let _ = writeln!(stdout, "weft setup: {line}");
    })?;
    let _ = writeln!(
        stdout,
        "weft setup: ready: `weft build` builds C, C++, Zig, WAT and Rust guests"
    );
    Ok(EXIT_PASS)
}
