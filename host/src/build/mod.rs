//! `weft build`: turns a source file into a module weft runs, with the right
//! toolchain flags, so users never copy flags.
//!
//! One file per source language: [`c`] (C with pthreads, through `zig cc`
//! and the threaded wasi-libc of Rust's `wasm32-wasip1-threads` target),
//! [`cpp`] (C++ with std threads, through `zig c++` and zig's libc++),
//! [`zig`] (Zig with `std.Thread`), [`wat`] (WebAssembly text) and [`rust`]
//! (a Cargo package, or one `.rs` file using only `std`). A folder is built
//! from what it holds: a Cargo package, every C file of a C program (or
//! every C++ file of a C++ one) together, or a `main.zig` or `main.wat`;
//! several C or C++ files given at once are one program.

pub mod c;
pub mod cpp;
pub mod driver;
pub mod rust;
mod sdk_objects;
pub mod setup;
pub mod wat;
pub mod zig;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Errors of a build.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The file's language is not one weft builds.
    #[error(
        "cannot build `{0}`: weft builds `.c` (and preprocessed `.i`), `.cpp`, `.rs`, `.zig` and `.wat` files, several `.c` or `.cpp` files of one program, and folders holding a Cargo package, C or C++ files, a `main.zig` or a `main.wat`"
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
    /// A C or C++ program without `main`.
    #[error(
        "`{0}` has no `main` function: a C or C++ program starts in `int main(void)` or `int main(int argc, char **argv)`"
    )]
    NoMain(String),
    /// Several sources were given that are not the C or C++ files of one
    /// program.
    #[error(
        "several sources build together only when they are the C files (`.c`) and C++ files (`.cpp`, `.cc`, `.cxx`) of one program; `{0}` is not"
    )]
    NotOneProgram(String),
}

/// The languages whose files build together into one program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compiled {
    C,
    Cpp,
}

impl Compiled {
    /// The language of a source file named `path`, if it is C or C++.
    fn of(path: &Path) -> Option<Compiled> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("c") => Some(Compiled::C),
            Some("cpp" | "cc" | "cxx") => Some(Compiled::Cpp),
            _ => None,
        }
    }
}

/// Builds the C and C++ files `sources` into one module `output`
/// (default: the first source with `.wasm`): C files alone as a C program,
/// with C++ files as a C++ program whose C files are compiled as C.
///
/// # Errors
///
/// [`BuildError::NotOneProgram`] when one is neither a C nor a C++ file;
/// otherwise as [`build`].
pub fn build_program(
    sources: &[PathBuf],
    output: Option<&Path>,
    flags: &[String],
) -> Result<PathBuf, BuildError> {
    let [first, ..] = sources else {
        return Err(BuildError::NotOneProgram(String::new()));
    };
    if sources.len() == 1 {
        return build(first, output, flags);
    }
    // C files alone are a C program; with C++ files, a C++ program.
    let language = if sources
        .iter()
        .any(|s| Compiled::of(s) == Some(Compiled::Cpp))
    {
        Some(Compiled::Cpp)
    } else {
        Compiled::of(first)
    };
    for source in sources {
        if language.is_none() || Compiled::of(source).is_none() || source.is_dir() {
            return Err(BuildError::NotOneProgram(source.display().to_string()));
        }
        if !source.is_file() {
            return Err(BuildError::Io(format!(
                "cannot read `{}`: {}",
                source.display(),
                crate::input::InputError::NotAFile
            )));
        }
    }
    let output = operand(&output.map_or_else(|| first.with_extension("wasm"), Path::to_path_buf));
    let sources: Vec<PathBuf> = sources.iter().map(|s| operand(s)).collect();
    let sources: Vec<&Path> = sources.iter().map(PathBuf::as_path).collect();
    match language {
        Some(Compiled::C) => c::build_all(&sources, &output, flags)?,
        _ => cpp::build_all(&sources, &output, flags)?,
    }
    Ok(output)
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
    let output = operand(&output.map_or_else(|| source.with_extension("wasm"), Path::to_path_buf));
    let source = &operand(source);
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

/// `path` as the tools take it: a relative path that starts with `-`
/// (`-x.c`) gets `./` before it, so that no tool reads it as an option.
pub(crate) fn operand(path: &Path) -> PathBuf {
    if path.as_os_str().as_encoded_bytes().starts_with(b"-") {
        Path::new(".").join(path)
    } else {
        path.to_path_buf()
    }
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
    // C and C++ files together are one C++ program (its C files compiled
    // as C), as a Makefile that compiles each with its compiler and links
    // with g++ builds them.
    let mut sources = files_of(dir, Compiled::C)?;
    sources.extend(files_of(dir, Compiled::Cpp)?);
    if !sources.is_empty() {
        return build_program(&sources, Some(&output), flags);
    }
    for main in ["main.zig", "main.wat"] {
        let source = dir.join(main);
        if source.exists() {
            return build(&source, Some(&output), flags);
        }
    }
    Err(BuildError::UnknownLanguage(dir.display().to_string()))
}

/// The files of `language` directly in `dir`, sorted by name.
fn files_of(dir: &Path, language: Compiled) -> Result<Vec<PathBuf>, BuildError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| BuildError::Io(format!("cannot read `{}`: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_file() && Compiled::of(path) == Some(language))
        .collect();
    files.sort();
    Ok(files)
}

/// SDK files written to a temporary folder for one build; removed on drop.
pub(crate) struct SdkDir {
    path: PathBuf,
    /// Whether the folder is this build's own, removed after it.
    own: bool,
}

impl SdkDir {
    /// Writes `files` (name, contents) to a fresh folder named after `tag`,
    /// the build's own: it may write its intermediate files there too.
    pub(crate) fn new(tag: &str, files: &[(&str, &str)]) -> Result<Self, BuildError> {
        let path = std::env::temp_dir().join(format!("weft-{tag}-sdk-{}", std::process::id()));
        write_files(&path, files)?;
        Ok(SdkDir { path, own: true })
    }

    /// Writes `files` to a folder named after `tag` and their contents, so
    /// that every build names the same folder: a build whose debug
    /// information keeps the folder's name (zig's) gives the same module
    /// each time. The folder is kept and shared; its files are written
    /// whole (a temporary file, then a rename), so builds at the same time
    /// do not disturb each other. Nothing else may be written there.
    pub(crate) fn shared(tag: &str, files: &[(&str, &str)]) -> Result<Self, BuildError> {
        let mut hasher = blake3::Hasher::new();
        for (name, contents) in files {
            hasher.update(name.as_bytes());
            hasher.update(&[0]);
            hasher.update(contents.as_bytes());
            hasher.update(&[0]);
        }
        let id = &hasher.finalize().to_hex()[..16];
        let path = std::env::temp_dir().join(format!("weft-{tag}-sdk-{id}"));
        write_files(&path, files)?;
        Ok(SdkDir { path, own: false })
    }

    /// The folder.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SdkDir {
    fn drop(&mut self) {
        if self.own {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Writes `files` (name, contents) into the folder `path`, each whole; a
/// file already there with those contents is left as it is. A name may
/// hold folders (`shims/sys/cdefs.h`).
fn write_files(path: &Path, files: &[(&str, &str)]) -> Result<(), BuildError> {
    let io = |e: std::io::Error| {
        BuildError::Io(format!("cannot write the SDK to `{}`: {e}", path.display()))
    };
    std::fs::create_dir_all(path).map_err(io)?;
    for (name, contents) in files {
        let file = path.join(name);
        if std::fs::read(&file).is_ok_and(|there| there == contents.as_bytes()) {
            continue;
        }
        let folder = file.parent().unwrap_or(path);
        std::fs::create_dir_all(folder).map_err(io)?;
        let base = file.file_name().unwrap_or_default().to_string_lossy();
        let partial = folder.join(format!(".{base}.{}", std::process::id()));
        std::fs::write(&partial, contents).map_err(io)?;
        std::fs::rename(&partial, &file).map_err(io)?;
    }
    Ok(())
}

/// Runs a build tool on `source`; a failure carries what the tool printed.
pub(crate) fn run_tool(mut command: Command, tool: &str, source: &Path) -> Result<(), BuildError> {
    let out = command
        .output()
        .map_err(|e| BuildError::MissingTool(format!("cannot run {tool}: {e}")))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        return match mismatched_calls(&stderr) {
            None => Ok(()),
            Some(output) => Err(BuildError::Compile {
                tool: tool.into(),
                file: source.display().to_string(),
                output,
            }),
        };
    }
    let output = format!(
        "{stderr}{}{}",
        missing_headers(&stderr).unwrap_or_default(),
        missing_functions(&stderr).unwrap_or_default()
    );
    Err(BuildError::Compile {
        tool: tool.into(),
        file: source.display().to_string(),
        output,
    })
}

/// Why headers a compiler did not find are missing, when it did not find
/// some: guests build against wasi-libc, which lacks the headers of
/// glibc's internals and of what WASI does not offer.
fn missing_headers(stderr: &str) -> Option<String> {
    let headers: Vec<&str> = stderr
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once("fatal error: '")?;
            let (header, rest) = rest.split_once('\'')?;
            rest.contains("file not found").then_some(header)
        })
        .collect();
    if headers.is_empty() {
        return None;
    }
    Some(format!(
        "weft builds C and C++ against wasi-libc (the C library of wasm32-wasip1-threads), which has no {}: it lacks glibc's internal headers (`bits/...`, `gnu/...`), Linux's (`linux/...`, `asm/...`) and those of what WebAssembly does not offer (`execinfo.h` backtraces); weft adds `sys/cdefs.h` and `sys/queue.h`; remove the include, or give the program a replacement (`weft build prog.c -- -I DIR` with your own header)\n",
        quoted(&headers)
    ))
}

/// What WebAssembly and WASI do not offer, by the functions a program
/// calls for it: each group with why it is missing.
const UNAVAILABLE: [(&[&str], &str); 6] = [
    (
        &[
            "fork",
            "vfork",
            "execv",
            "execve",
            "execvp",
            "execl",
            "execlp",
            "execle",
            "wait",
            "waitpid",
            "posix_spawn",
            "posix_spawnp",
            "system",
            "popen",
            "pclose",
            "kill",
            "killpg",
        ],
        "WebAssembly has no processes: a module is one process, whose work runs in threads",
    ),
    (
        &[
            "socket",
            "socketpair",
            "connect",
            "bind",
            "listen",
            "getaddrinfo",
            "freeaddrinfo",
            "gethostbyname",
            "getsockopt",
            "setsockopt",
            "sendto",
            "recvfrom",
        ],
        "WASI (preview 1) lets a module use only sockets it was given, and opens none",
    ),
    (
        &["sigqueue", "sigtimedwait", "timer_create", "timer_settime"],
        "weft delivers the signals the program's threads send each other (`kill`, `pthread_kill`, `raise`, with `sigaction`, masks, `sigwait`, `sigsuspend` and `pause`) and its alarm (`alarm`, `setitimer(ITIMER_REAL)`) on weft's virtual clock; none comes from outside the program, queued signals with values and POSIX timers are not provided",
    ),
    (
        &["clock", "times", "getrusage"],
        "WASI has no clock of a process's own time; `clock_gettime` reads the wall and monotonic clocks",
    ),
    (
        &["dlopen", "dlsym", "dlclose", "dlerror"],
        "WebAssembly links a module whole: there is no dynamic loading",
    ),
    (
        &[
            "setjmp",
            "longjmp",
            "sigsetjmp",
            "siglongjmp",
            "_setjmp",
            "_longjmp",
        ],
        "`setjmp` and `longjmp` need WebAssembly's exception handling, which wasi-libc is not built with",
    ),
];

/// Why the functions a link did not find are missing, when some of them
/// are what WebAssembly or WASI do not offer.
fn missing_functions(stderr: &str) -> Option<String> {
    let mut undefined: Vec<&str> = stderr
        .lines()
        .filter_map(|line| {
            line.split_once("undefined symbol: ")
                .map(|(_, name)| name.trim())
        })
        .collect();
    undefined.sort_unstable();
    undefined.dedup();
    let reasons: Vec<String> = UNAVAILABLE
        .iter()
        .filter_map(|(functions, why)| {
            let named: Vec<&str> = undefined
                .iter()
                .copied()
                .filter(|name| functions.contains(name))
                .collect();
            (!named.is_empty()).then(|| format!("no {}: {why}", quoted(&named)))
        })
        .collect();
    if reasons.is_empty() {
        return None;
    }
    Some(format!(
        "weft builds C and C++ against wasi-libc, which has {}\n",
        reasons.join("; ")
    ))
}

/// `names` as a message lists them: each in backticks, comma-separated.
pub(crate) fn quoted(names: &[impl AsRef<str>]) -> String {
    names
        .iter()
        .map(|n| format!("`{}`", n.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs a build tool that links `output`: as [`run_tool`], and a module
/// linked with calls of mismatched signatures is removed, so that no stale
/// module with stubs that trap is left behind.
pub(crate) fn run_linker(
    command: Command,
    tool: &str,
    source: &Path,
    output: &Path,
) -> Result<(), BuildError> {
    let result = run_tool(command, tool, source).and_then(|()| {
        let linked = std::fs::read(output)
            .map_err(|e| BuildError::Io(format!("cannot read `{}`: {e}", output.display())))?;
        match defines_main(&linked) {
            Some(false) => Err(BuildError::NoMain(source.display().to_string())),
            _ => Ok(()),
        }
    });
    let stale = match &result {
        Err(BuildError::Compile { output: said, .. }) => said.starts_with(MISMATCHED_CALLS),
        Err(BuildError::NoMain(_)) => true,
        _ => false,
    };
    if stale {
        let _ = std::fs::remove_file(output);
    }
    result
}

/// Whether a C or C++ program's module defines `main`, by the names of its
/// functions (`None` when it has no names to tell): without it, wasi-libc's
/// start-up links to a stub that traps (`undefined_weak:main`); a module
/// whose start-up calls no such stub has one, inlined by link-time
/// optimisation where no function keeps its name.
fn defines_main(wasm: &[u8]) -> Option<bool> {
    const MAINS: [&str; 3] = ["main", "__main_argc_argv", "__original_main"];
    // What wasm-ld names the stub of a weak symbol no object defines.
    const MISSING: &str = "undefined_weak:";
    let mut named = false;
    let mut starts = false;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let Ok(wasmparser::Payload::CustomSection(section)) = payload else {
            continue;
        };
        let wasmparser::KnownCustom::Name(names) = section.as_known() else {
            continue;
        };
        for subsection in names {
            let Ok(wasmparser::Name::Function(functions)) = subsection else {
                continue;
            };
            for naming in functions.into_iter().flatten() {
                named = true;
                if MAINS.contains(&naming.name) {
                    return Some(true);
                }
                if naming
                    .name
                    .strip_prefix(MISSING)
                    .is_some_and(|missing| MAINS.contains(&missing))
                {
                    return Some(false);
                }
                starts |= naming.name == "__main_void";
            }
        }
    }
    // With link-time optimisation `main` is inlined into the C library's
    // start-up (`__main_void`), which calls no stub of a missing one.
    named.then_some(starts)
}

/// How [`mismatched_calls`]' error starts.
const MISMATCHED_CALLS: &str = "calls of ";

/// The linker's warnings of calls whose signature does not match the
/// definition, as an error naming the functions: wasm-ld links such a call
/// to a stub that traps, which would fail at run time as an `unreachable`
/// instruction far from its cause.
fn mismatched_calls(stderr: &str) -> Option<String> {
    const MISMATCH: &str = "function signature mismatch: ";
    let names: Vec<&str> = stderr
        .lines()
        .filter_map(|line| line.split_once(MISMATCH).map(|(_, name)| name.trim()))
        .collect();
    if names.is_empty() {
        return None;
    }
    let details: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains(MISMATCH) || line.trim_start().starts_with(">>>"))
        .collect();
    Some(format!(
        "{MISMATCHED_CALLS}{} do not match the signature of the definition (a call before any declaration, in old C, or a declaration that differs): the linker made them a stub that traps; declare each function, before its calls, as it is defined\n{}",
        quoted(&names),
        details.join("\n")
    ))
}
