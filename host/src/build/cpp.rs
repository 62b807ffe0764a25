//! C++ with `std::thread`, `std::mutex`, `std::atomic` and
//! `std::condition_variable`: compiled by `zig c++` against zig's libc++ in
//! its threaded configuration, and linked like C (see [`super::c`]) with the
//! threaded wasi-libc of Rust's `wasm32-wasip1-threads` target.
//!
//! zig builds libc++ for a target on first use and caches it; it does not
//! say where, except in the link line of a program it links itself. So the
//! first C++ build links a one-line program with zig (about a minute, once
//! per machine) and reads the archives' paths from that line.
//!
//! wasm has no exception handling here: programs are compiled with
//! `-fno-exceptions`, so what would throw (a failed `std::thread` creation,
//! `std::vector::at` out of range) aborts, which weft reports as a failure.

use super::c::{Linked, Toolchain, WASM_TARGET, zig_tool};
use super::{BuildError, run_linker, run_tool};
use std::path::{Path, PathBuf};

/// Flags that make libc++'s headers declare threads; zig's `c++` driver
/// leaves them out for wasm unless it links the program itself.
pub(super) const THREADED_LIBCXX: [&str; 2] = ["-U_LIBCPP_HAS_THREADS", "-D_LIBCPP_HAS_THREADS=1"];

/// Compiles the C++ file `source` into `output`, with the compiler flags
/// `flags` after weft's own.
///
/// # Errors
///
/// [`BuildError::MissingTool`] when zig, the wasi-libc or zig's libc++
/// cannot be found, [`BuildError::Compile`] with the compiler's output.
pub fn build(source: &Path, output: &Path, flags: &[String]) -> Result<(), BuildError> {
    build_all(&[source], output, flags)
}

/// Compiles the C++ files `sources` of one program (and its C files, as
/// C), each to an object, and links them into `output`.
///
/// # Errors
///
/// As [`build`]; a compile error names its source, a link error the first.
pub fn build_all(sources: &[&Path], output: &Path, flags: &[String]) -> Result<(), BuildError> {
    let tools = Toolchain::find()?;
    let mut objects = Vec::new();
    for (n, source) in sources.iter().enumerate() {
        let object = tools.sdk.path().join(format!("program{n}.o"));
        // A C file of the program is compiled as C, as its Makefile would.
        let is_c = source.extension().is_some_and(|e| e == "c");
        let (driver, tool) = if is_c {
            ("cc", "zig cc")
        } else {
            ("c++", "zig c++")
        };
        let mut compile = tools.zig(driver);
        compile.arg("-c");
        if is_c {
            compile.args(super::c::OLD_C_FLAGS);
        } else {
            compile.arg("-fno-exceptions").args(THREADED_LIBCXX);
        }
        compile.args(flags);
        tools.include_sdk(&mut compile);
        compile.arg(source).arg("-o").arg(&object);
        run_tool(compile, tool, source)?;
        objects.push(object);
    }
    objects.extend(libraries(&tools, tools.sdk.path())?);
    let mut link = tools.zig("cc");
    let given: Vec<&std::ffi::OsStr> = objects.iter().map(|o| o.as_os_str()).collect();
    let objects = Linked {
        given: &given,
        compiled: &[],
    };
    tools.link(&mut link, objects, flags, output)?;
    run_linker(link, "zig cc (linking C++)", sources[0], output)
}

/// What a C++ program links after its own objects: the SDK's stack
/// protector, ahead of libc++ (see [`Toolchain::stack_protector`]), then
/// libc++ and libc++abi; what is made for it is written in the folder `dir`.
///
/// # Errors
///
/// As [`Toolchain::stack_protector`] and [`libcxx_archives`].
pub(super) fn libraries(tools: &Toolchain, dir: &Path) -> Result<[PathBuf; 3], BuildError> {
    let protector = tools.stack_protector(dir)?;
    let (libcxx, libcxxabi) = libcxx_archives(tools, dir)?;
    Ok([protector, libcxx, libcxxabi])
}

/// zig's threaded `libc++.a` and `libc++abi.a` for wasm32, built and
/// cached by zig; its probe program is written in the folder `dir`.
fn libcxx_archives(tools: &Toolchain, dir: &Path) -> Result<(PathBuf, PathBuf), BuildError> {
    let probe = dir.join("probe.cpp");
    std::fs::write(&probe, "#include <thread>\nint main() { return 0; }\n")
        .map_err(|e| BuildError::Io(format!("cannot write `{}`: {e}", probe.display())))?;
    let mut cmd = zig_tool(&tools.zig);
    cmd.arg("build-exe")
        .args(WASM_TARGET)
        .args([
            "-fno-single-threaded",
            "-lc++",
            "-lc",
            "--shared-memory",
            "--import-memory",
            "--export-memory",
            "--max-memory=1073741824",
            "--verbose-link",
        ])
        .arg(&probe)
        .arg(format!("-femit-bin={}", dir.join("probe.wasm").display()))
        .current_dir(dir);
    let out = cmd
        .output()
        .map_err(|e| BuildError::MissingTool(format!("cannot run zig build-exe: {e}")))?;
    let text = String::from_utf8_lossy(&out.stderr);
    let find = |name: &str| {
        text.split_whitespace()
            .rfind(|word| word.ends_with(name))
            .map(PathBuf::from)
    };
    match (find("/libc++.a"), find("/libc++abi.a")) {
        (Some(libcxx), Some(libcxxabi)) => Ok((libcxx, libcxxabi)),
        _ => Err(BuildError::MissingTool(format!(
            "zig did not build its libc++ for wasm32 with threads:\n{}",
            text.lines()
                .filter(|l| !l.starts_with("ar "))
                .collect::<Vec<_>>()
                .join("\n")
        ))),
    }
}
