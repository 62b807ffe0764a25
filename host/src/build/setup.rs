//! `weft setup`: what building guests needs, for a `weft` installed
//! anywhere (`cargo install`): the `wasm32-wasip1-threads` Rust target
//! (Rust guests, and the threaded wasi-libc C and C++ link against), zig
//! (C, C++ and Zig), which comes from PyPI's `ziglang` package into a
//! virtual environment in weft's data folder, where [`c::zig_command`]
//! looks for it, and the CMake toolchain file that builds a CMake project
//! with `weft cc` and `weft c++`.
//!
//! [`c::zig_command`]: super::c::zig_command

use super::BuildError;
use std::path::PathBuf;
use std::process::Command;

/// The Rust target weft's guests are built for.
const TARGET: &str = "wasm32-wasip1-threads";

/// weft's data folder: `$XDG_DATA_HOME/weft`, else `~/.local/share/weft`.
pub fn data_folder() -> Option<PathBuf> {
    crate::user_folders::weft_folder("XDG_DATA_HOME", ".local/share")
}

/// The Python of the virtual environment `weft setup` makes, when it has
/// made it.
pub(super) fn data_venv_python() -> Option<PathBuf> {
    let python = data_folder()?.join("venv/bin/python");
    python.is_file().then_some(python)
}

/// Installs what is missing and says, through `say`, what it found and
/// what it did.
///
/// # Errors
///
/// A [`BuildError::MissingTool`] naming what could not be installed and
/// how to install it by hand.
pub fn setup(say: &mut dyn FnMut(&str)) -> Result<(), BuildError> {
    rust_target(say)?;
    zig(say)?;
    let toolchain = cmake_toolchain()?;
    say(&format!(
        "a CMake project builds for weft with `cmake -DCMAKE_TOOLCHAIN_FILE={} ...`; a Makefile with `make CC=\"weft cc\" CXX=\"weft c++\"`",
        toolchain.display()
    ));
    Ok(())
}

/// Writes the CMake toolchain file, `toolchain.cmake` in weft's data
/// folder, naming this `weft`; returns its path.
fn cmake_toolchain() -> Result<PathBuf, BuildError> {
    let folder = data_folder().ok_or_else(|| {
        BuildError::MissingTool(
            "no home folder to write the CMake toolchain file into: set XDG_DATA_HOME".into(),
        )
    })?;
    let weft = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|e| BuildError::Io(format!("cannot find the running weft: {e}")))?;
    let file = folder.join("toolchain.cmake");
    let io = |e: std::io::Error| BuildError::Io(format!("cannot write `{}`: {e}", file.display()));
    std::fs::create_dir_all(&folder).map_err(io)?;
    std::fs::write(&file, toolchain_text(&weft)).map_err(io)?;
    Ok(file)
}

/// A CMake toolchain file whose compilers are `weft cc` and `weft c++` of
/// the `weft` at `weft`; programs are named `*.wasm`, and found packages
/// and libraries are not the host's.
fn toolchain_text(weft: &std::path::Path) -> String {
    let quoted = weft
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        r#"# Builds a CMake project for weft: its C and C++ compilers are `weft cc`
# and `weft c++`, and its programs are modules weft runs (`*.wasm`).
# Written by `weft setup`; run it again if weft moves.
#   cmake -DCMAKE_TOOLCHAIN_FILE=<this file> -B build && cmake --build build
set(CMAKE_SYSTEM_NAME WASI)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
set(CMAKE_C_COMPILER "{quoted}" cc)
set(CMAKE_CXX_COMPILER "{quoted}" c++)
set(CMAKE_EXECUTABLE_SUFFIX_C .wasm)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .wasm)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
"#
    )
}

/// Adds the Rust target with rustup when it is missing.
fn rust_target(say: &mut dyn FnMut(&str)) -> Result<(), BuildError> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map_err(|e| {
            BuildError::MissingTool(format!(
                "cannot run rustup ({e}): install Rust with rustup (https://rustup.rs), or add the `{TARGET}` target to your toolchain by hand"
            ))
        })?;
    if String::from_utf8_lossy(&installed.stdout)
        .lines()
        .any(|line| line.trim() == TARGET)
    {
        say(&format!("the Rust target `{TARGET}` is installed"));
        return Ok(());
    }
    say(&format!(
        "adding the Rust target `{TARGET}` (rustup target add {TARGET})"
    ));
    run(
        Command::new("rustup").args(["target", "add", TARGET]),
        "rustup",
    )
}

/// Finds zig, or installs PyPI's `ziglang` into weft's data folder.
fn zig(say: &mut dyn FnMut(&str)) -> Result<(), BuildError> {
    if let Ok(zig) = super::c::zig_command() {
        say(&format!("zig is `{}`", zig.join(" ")));
        return Ok(());
    }
    let folder = data_folder().ok_or_else(|| {
        BuildError::MissingTool(
            "no home folder to install zig into: set XDG_DATA_HOME, or install zig (`pip install ziglang`) and set WEFT_ZIG".into(),
        )
    })?;
    let venv = folder.join("venv");
    say(&format!(
        "installing zig from PyPI (the `ziglang` package) into {}",
        venv.display()
    ));
    std::fs::create_dir_all(&folder)
        .map_err(|e| BuildError::Io(format!("cannot create `{}`: {e}", folder.display())))?;
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    )?;
    run(
        Command::new(venv.join("bin/pip")).args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "ziglang",
        ]),
        "pip install ziglang",
    )?;
    let zig = super::c::zig_command()?;
    say(&format!("zig is `{}`", zig.join(" ")));
    Ok(())
}

/// Runs `cmd` with the terminal's output, and fails with `what` named.
fn run(cmd: &mut Command, what: &str) -> Result<(), BuildError> {
    let status = cmd
        .status()
        .map_err(|e| BuildError::MissingTool(format!("cannot run {what}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(BuildError::MissingTool(format!(
            "{what} failed ({status}); see its output above"
        )))
    }
}
