//! `weft build`: turns a source file into a module weft runs, with the right
//! toolchain flags, so users never copy flags.
//!
//! One file per source language: [`c`] (C with pthreads, through `zig cc`
//! and the threaded wasi-libc of Rust's `wasm32-wasip1-threads` target),
//! [`cpp`] (C++ with std threads, through `zig c++` and zig's libc++),
//! [`zig`] (Zig with `std.Thread`), [`wat`] (WebAssembly text) and [`rust`]
//! (a Cargo package, or one `.rs` file using only `std`). A folder is built from the one source it holds
//! (`Cargo.toml`, `main.c`, `main.zig` or `main.wat`).

pub mod c;
pub mod cpp;
pub mod rust;
pub mod wat;
pub mod zig;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Errors of a build.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The file's language is not one weft builds.
    #[error(
        "cannot build `{0}`: weft builds `.c` (and preprocessed `.i`), `.cpp`, `.rs`, `.zig` and `.wat` files, and folders holding a Cargo package or a `main.c`, `main.cpp`, `main.zig` or `main.wat`"
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
    /// Compiler flags were given for a source that is not C or C++.
    #[error("compiler flags after `--` are for C and C++ sources; `{0}` is not one")]
    FlagsNotC(String),
}

/// Builds `source` into `output` (default: the source path with `.wasm`),
/// passing `flags` to the C compiler. Returns the path written.
///
/// # Errors
///
/// A [`BuildError`] naming what is missing or what the compiler said;
/// [`BuildError::FlagsNotC`] for flags with a source that is not C.
pub fn build(
    source: &Path,
    output: Option<&Path>,
    flags: &[String],
) -> Result<PathBuf, BuildError> {
    if source.is_dir() {
        return build_dir(source, output, flags);
    }
    // A FIFO or device would hang the compiler or feed it without end.
    match std::fs::metadata(source) {
        Ok(m) if m.is_file() => {}
        Ok(_) => {
            return Err(BuildError::Io(format!(
                "cannot build `{}`: {}",
                source.display(),
                crate::input::InputError::NotAFile
            )));
        }
        Err(e) => {
            return Err(BuildError::Io(format!(
                "cannot read `{}`: {e}",
                source.display()
            )));
        }
    }
    let output = output.map_or_else(|| source.with_extension("wasm"), Path::to_path_buf);
    let extension = source.extension().and_then(|e| e.to_str());
    if !flags.is_empty() && !matches!(extension, Some("c" | "i" | "cpp" | "cc" | "cxx")) {
        return Err(BuildError::FlagsNotC(source.display().to_string()));
    }
    match extension {
        Some("c" | "i") => c::build(source, &output, flags)?,
        Some("cpp" | "cc" | "cxx") => cpp::build(source, &output, flags)?,
        Some("wat") => wat::build(source, &output)?,
        Some("rs") => rust::build_file(source, &output)?,
        Some("zig") => zig::build(source, &output)?,
        _ => return Err(BuildError::UnknownLanguage(source.display().to_string())),
    }
    Ok(output)
}

/// Builds the one source a folder holds; the module is named after the
/// folder unless `output` says otherwise.
fn build_dir(dir: &Path, output: Option<&Path>, flags: &[String]) -> Result<PathBuf, BuildError> {
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "module".into());
    let output = output.map_or_else(|| dir.join(format!("{name}.wasm")), Path::to_path_buf);
    if dir.join("Cargo.toml").exists() {
        if !flags.is_empty() {
            return Err(BuildError::FlagsNotC(dir.display().to_string()));
        }
        rust::build(dir, &output)?;
        return Ok(output);
    }
    for main in ["main.c", "main.cpp", "main.zig", "main.wat"] {
        let source = dir.join(main);
        if source.exists() {
            return build(&source, Some(&output), flags);
        }
    }
    Err(BuildError::UnknownLanguage(dir.display().to_string()))
}

/// SDK files written to a temporary folder for one build; removed on drop.
pub(crate) struct SdkDir {
    path: PathBuf,
}

impl SdkDir {
    /// Writes `files` (name, contents) to a fresh folder named after `tag`.
    pub(crate) fn new(tag: &str, files: &[(&str, &str)]) -> Result<Self, BuildError> {
        let path = std::env::temp_dir().join(format!("weft-{tag}-sdk-{}", std::process::id()));
        let io = |e: std::io::Error| {
            BuildError::Io(format!("cannot write the SDK to `{}`: {e}", path.display()))
        };
        std::fs::create_dir_all(&path).map_err(io)?;
        for (name, contents) in files {
            std::fs::write(path.join(name), contents).map_err(io)?;
        }
        Ok(SdkDir { path })
    }

    /// The folder.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SdkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Runs a build tool on `source`; a failure carries what the tool printed.
pub(crate) fn run_tool(mut command: Command, tool: &str, source: &Path) -> Result<(), BuildError> {
    let out = command
        .output()
        .map_err(|e| BuildError::MissingTool(format!("cannot run {tool}: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(BuildError::Compile {
        tool: tool.into(),
        file: source.display().to_string(),
        output: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}
