//! Rust for `wasm32-wasip1-threads`: a Cargo package (one binary) built in
//! release mode with line tables, so reports show source lines, or a single
//! `.rs` file using only `std`, compiled by `rustc` with full debug
//! information, so reports also name its statics.

use super::BuildError;
use std::path::Path;
use std::process::Command;

/// Builds the Cargo package in `dir` and copies its module to `output`.
///
/// # Errors
///
/// [`BuildError::Compile`] with cargo's output, [`BuildError::MissingTool`]
/// when cargo cannot run, [`BuildError::Io`] when the module is not where
/// cargo puts it.
pub fn build(dir: &Path, output: &Path) -> Result<(), BuildError> {
    let target_dir = dir.join("target");
    let out = Command::new("cargo")
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip1-threads",
            "--message-format=json",
        ])
        .env("CARGO_PROFILE_RELEASE_DEBUG", "line-tables-only")
        .arg("--target-dir")
        .arg(&target_dir)
        .current_dir(dir)
        .output()
        .map_err(|e| BuildError::MissingTool(format!("cannot run cargo: {e}")))?;
    if !out.status.success() {
        return Err(BuildError::Compile {
            tool: "cargo build".into(),
            file: dir.display().to_string(),
            output: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    // The last artifact with an executable is the binary.
    let module = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|msg| {
            msg.get("executable")
                .and_then(|e| e.as_str())
                .map(String::from)
        })
        .next_back()
        .ok_or_else(|| {
            BuildError::Io(format!(
                "the package in `{}` builds no binary",
                dir.display()
            ))
        })?;
    std::fs::copy(&module, output).map(|_| ()).map_err(|e| {
        BuildError::Io(format!(
            "cannot copy `{module}` to `{}`: {e}",
            output.display()
        ))
    })
}

/// Compiles the single-file program `source` (only `std`) into `output`
/// with `rustc`, optimised and with full debug information.
///
/// # Errors
///
/// [`BuildError::Compile`] with the compiler's output,
/// [`BuildError::MissingTool`] when rustc cannot run.
pub fn build_file(source: &Path, output: &Path) -> Result<(), BuildError> {
    let mut command = Command::new("rustc");
    command
        .args(["--edition", "2021", "--crate-type", "bin"])
        .args(["--target", "wasm32-wasip1-threads"])
        .args(["-C", "opt-level=2", "-C", "debuginfo=2"])
        .arg("-o")
        .arg(output)
        .arg(source);
    super::run_tool(command, "rustc", source)
}
