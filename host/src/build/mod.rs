//! `weft build`: turns a source file into a module weft runs, with the right
//! toolchain flags, so users never copy flags.
//!
//! One file per source language: [`c`] (C with pthreads, through `zig cc`
//! and the threaded wasi-libc of Rust's `wasm32-wasip1-threads` target),
//! [`zig`] (Zig with `std.Thread`), [`wat`] (WebAssembly text) and [`rust`]
//! (a Cargo package). A folder is built from the one source it holds
//! (`Cargo.toml`, `main.c`, `main.zig` or `main.wat`).

pub mod c;
pub mod rust;
pub mod wat;
pub mod zig;

use std::path::{Path, PathBuf};

/// Errors of a build.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The file's language is not one weft builds.
    #[error(
        "cannot build `{0}`: weft builds `.c`, `.zig` and `.wat` files, and folders holding a Cargo package or a `main.c`, `main.zig` or `main.wat`"
    )]
    UnknownLanguage(String),
    /// A tool the build needs is missing.
    #[error("{0}")]
    MissingTool(String),
    /// The compiler rejected the source.
    #[error("{tool} failed on `{file}`:\n{output}")]
    Compile {
        /// The tool.
        tool: String,
        /// The source file.
        file: String,
        /// What the tool printed.
        output: String,
    },
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
}

/// Builds `source` into `output` (default: the source path with `.wasm`).
/// Returns the path written.
///
/// # Errors
///
/// A [`BuildError`] naming what is missing or what the compiler said.
pub fn build(source: &Path, output: Option<&Path>) -> Result<PathBuf, BuildError> {
    if source.is_dir() {
        return build_dir(source, output);
    }
    let output = output.map_or_else(|| source.with_extension("wasm"), Path::to_path_buf);
    match source.extension().and_then(|e| e.to_str()) {
        Some("c") => c::build(source, &output)?,
        Some("wat") => wat::build(source, &output)?,
        Some("zig") => zig::build(source, &output)?,
        _ => return Err(BuildError::UnknownLanguage(source.display().to_string())),
    }
    Ok(output)
}

/// Builds the one source a folder holds; the module is named after the
/// folder unless `output` says otherwise.
fn build_dir(dir: &Path, output: Option<&Path>) -> Result<PathBuf, BuildError> {
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "module".into());
    let output = output.map_or_else(|| dir.join(format!("{name}.wasm")), Path::to_path_buf);
    if dir.join("Cargo.toml").exists() {
        rust::build(dir, &output)?;
        return Ok(output);
    }
    for main in ["main.c", "main.zig", "main.wat"] {
        let source = dir.join(main);
        if source.exists() {
            return build(&source, Some(&output));
        }
    }
    Err(BuildError::UnknownLanguage(dir.display().to_string()))
}
