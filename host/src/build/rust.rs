//! A Cargo package (one binary) built for `wasm32-wasip1-threads` in
//! release mode with line tables, so reports show source lines.

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
