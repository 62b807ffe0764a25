//! Zig programs using `std.Thread`, built with `zig build-exe` for
//! `wasm32-wasi` with shared memory. The SDK (`guest-sdk/zig/weft.zig`) is
//! made importable as `@import("weft")`; it also provides the thread-safe
//! page allocator Zig's wasm target lacks.

use super::BuildError;
use super::c::zig_command;
use std::path::Path;
use std::process::Command;

/// The Zig SDK, written to a temporary folder for each build.
const WEFT_ZIG: &str = include_str!("../../../guest-sdk/zig/weft.zig");

/// Compiles the Zig file `source` into `output`.
///
/// # Errors
///
/// [`BuildError::MissingTool`] when zig cannot be found,
/// [`BuildError::Compile`] with the compiler's output.
pub fn build(source: &Path, output: &Path) -> Result<(), BuildError> {
    let zig = zig_command()?;
    let sdk_dir = std::env::temp_dir().join(format!("weft-zig-sdk-{}", std::process::id()));
    std::fs::create_dir_all(&sdk_dir).map_err(|e| BuildError::Io(e.to_string()))?;
    let sdk = sdk_dir.join("weft.zig");
    std::fs::write(&sdk, WEFT_ZIG).map_err(|e| BuildError::Io(e.to_string()))?;
    let name = output
        .file_stem()
        .map_or("main".into(), |s| s.to_string_lossy().into_owned());
    let result = Command::new(&zig[0])
        .args(&zig[1..])
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
            "--max-memory=67108864",
            "--export=wasi_thread_start",
            "--name",
            &name,
        ])
        .arg(format!("-femit-bin={}", output.display()))
        .args(["--dep", "weft"])
        .arg(format!("-Mroot={}", source.display()))
        .arg(format!("-Mweft={}", sdk.display()))
        .output();
    let _ = std::fs::remove_dir_all(&sdk_dir);
    let out = result
        .map_err(|e| BuildError::MissingTool(format!("cannot run zig ({}): {e}", zig.join(" "))))?;
    if !out.status.success() {
        return Err(BuildError::Compile {
            tool: "zig build-exe".into(),
            file: source.display().to_string(),
            output: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(())
}
