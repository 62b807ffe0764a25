//! Zig programs using `std.Thread`, built with `zig build-exe` for
//! `wasm32-wasi` with shared memory. The SDK (`guest-sdk/zig/weft.zig`) is
//! made importable as `@import("weft")`; it also provides the thread-safe
//! page allocator Zig's wasm target lacks.

use super::c::{zig_command, zig_tool};
use super::{BuildError, SdkDir, run_tool};
use std::path::Path;

/// The Zig SDK, written to a temporary folder named after its contents.
const WEFT_ZIG: &str = include_str!("../../../guest-sdk/zig/weft.zig");

/// Compiles the Zig file `source` into `output`.
///
/// # Errors
///
/// [`BuildError::MissingTool`] when zig cannot be found,
/// [`BuildError::Compile`] with the compiler's output.
pub fn build(source: &Path, output: &Path) -> Result<(), BuildError> {
    let zig = zig_command()?;
    // A folder of the SDK's contents, the same for every build: its name
    // reaches the module's debug information.
    let sdk = SdkDir::shared("zig", &[("weft.zig", WEFT_ZIG)])?;
    let name = output
        .file_stem()
        .map_or("main".into(), |s| s.to_string_lossy().into_owned());
    let mut command = zig_tool(&zig);
    command
        .args([
            "build-exe",
            "-target",
            "wasm32-wasi",
            "-mcpu=generic+atomics+bulk_memory",
        ])
        .args([
            "-fno-single-threaded",
            "-O",
            "ReleaseSafe",
            "--import-memory",
            "--shared-memory",
        ])
        .args([
            "--max-memory=1073741824",
            "--export=wasi_thread_start",
            "--name",
            &name,
        ])
        .arg(format!("-femit-bin={}", output.display()))
        .args(["--dep", "weft"])
        .arg(format!("-Mroot={}", source.display()))
        .arg(format!("-Mweft={}", sdk.path().join("weft.zig").display()));
    run_tool(command, "zig build-exe", source)
}
