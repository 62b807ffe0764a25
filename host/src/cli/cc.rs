//! `weft cc` and `weft c++`: compiler drivers for a project's own build.

use crate::build::driver::{Driver, drive};
use anyhow::Result;
use clap::Args;
use std::ffi::OsString;

/// A C compiler for a project's own build (`make CC="weft cc"`, CMake with
/// the toolchain file `weft setup` writes, `./configure CC="weft cc"`): it
/// takes a C compiler's arguments and compiles and links for weft, with
/// what `weft build` adds (weft's target and wasi-libc with threads, the
/// SDK header `weft.h`, debug information, no optimisation and assertions
/// on unless the arguments say otherwise). It exits as a compiler does.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct CcArgs {
    /// The compiler's arguments (`-c main.c -o main.o`, `-o prog a.o b.o`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

/// As `weft cc`, for C++ (`make CXX="weft c++"`): std threads, mutexes,
/// atomics and condition variables from zig's libc++ with threads; no
/// exceptions (what would throw aborts, which weft reports).
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct CxxArgs {
    /// The compiler's arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

pub fn run_c(args: CcArgs) -> Result<u8> {
    Ok(drive(Driver::C, &args.args)?)
}

pub fn run_cxx(args: CxxArgs) -> Result<u8> {
    Ok(drive(Driver::Cpp, &args.args)?)
}
