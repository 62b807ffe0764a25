//! C with real pthreads: `zig cc` compiles against the threaded wasi-libc
//! that ships with Rust's `wasm32-wasip1-threads` target (zig's own wasi libc
//! has only stub pthreads) and zig's wasi-libc headers.
//!
//! Every program is linked with `guest-sdk/c/weft_verifier.c` (weak
//! definitions of `__VERIFIER_*` and `reach_error`), so programs written for
//! C verification tools build unchanged, and with `guest-sdk/c/weft_pthread.c`
//! (`pthread_exit` and cleanup handlers, which wasi-libc lacks).
//!
//! Tools are found as follows: zig is `$WEFT_ZIG` (a command line, e.g.
//! `python3 -m ziglang`), else `zig` on the `PATH`, else `python3 -m ziglang`
//! when the PyPI package is installed, else the zig of the virtual
//! environment `./x` makes in weft's repository (for a `weft` built there),
//! else the one `weft setup` installs (see [`super::setup`]). The wasi-libc is
//! `$WEFT_WASI_SYSROOT`, else the Rust target's `self-contained` folder.

use super::{BuildError, SdkDir, run_linker};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The SDK header, written next to the build so `#include "weft.h"` and
/// `#include <weft.h>` both work.
const WEFT_H: &str = include_str!("../../../guest-sdk/c/weft.h");

/// Weak definitions of the verification conventions (`__VERIFIER_*`,
/// `reach_error`), linked into every C program.
const WEFT_VERIFIER_C: &str = include_str!("../../../guest-sdk/c/weft_verifier.c");

/// Declarations of [`WEFT_VERIFIER_C`]'s functions, included first in every
/// C file (not C++, which has no implicit declarations).
const WEFT_VERIFIER_H: &str = include_str!("../../../guest-sdk/c/weft_verifier.h");

/// `pthread_exit` and cleanup handlers, linked into every C program.
const WEFT_PTHREAD_C: &str = include_str!("../../../guest-sdk/c/weft_pthread.c");

/// Signals within the program (`sigaction`, masks, `pthread_kill`, ...,
/// and `strsignal`), linked into every C program.
const WEFT_SIGNAL_C: &str = include_str!("../../../guest-sdk/c/weft_signal.c");

/// `pause` and the real-time timer, linked into every C and C++ program.
const WEFT_TIME_C: &str = include_str!("../../../guest-sdk/c/weft_time.c");

/// Sleeps a signal cuts short, linked into every C and C++ program ahead
/// of wasi-libc, whose `clock_nanosleep` and `sleep` they replace.
const WEFT_SLEEP_C: &str = include_str!("../../../guest-sdk/c/weft_sleep.c");

/// The SDK file whose object is linked ahead of wasi-libc.
const REPLACES_LIBC: &str = "weft_sleep";

/// The stack protector's canary, a constant, and its failure; linked into
/// every C and C++ program ahead of wasi-libc's, whose canary is drawn from
/// random bytes as the program starts.
const WEFT_SSP_C: &str = include_str!("../../../guest-sdk/c/weft_ssp.c");

/// The declarations of [`WEFT_PTHREAD_C`] that wasi-libc's `<pthread.h>`
/// lacks, included first in every C file.
const WEFT_PTHREAD_H: &str = include_str!("../../../guest-sdk/c/weft_pthread.h");

/// The driver of `weft gen` class modules (`#include "weft_class.h"`).
const WEFT_CLASS_H: &str = include_str!("../../../guest-sdk/c/weft_class.h");

/// Most memory a C guest may grow to (1 GiB, as Rust's toolchain gives its
/// threaded wasm programs: what limits a run is `--max-memory-mib`, which
/// weft reports as a limit; a smaller declared maximum would refuse growth
/// unreported, `malloc` returning null and `pthread_create` failing where
/// a native run goes on), and its main stack.
const LINK_FLAGS: &str =
    "--shared-memory,--import-memory,--export-memory,--max-memory=1073741824,-z,stack-size=131072";

/// What C compilers accepted until recently and clang now rejects by
/// default: kept as warnings, since programs of the public concurrency
/// suites are full of it (a call before any declaration, implicit `int`, a
/// thread function returning `int`).
pub(super) const OLD_C_FLAGS: [&str; 4] = [
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=implicit-int",
    "-Wno-error=int-conversion",
    "-Wno-error=incompatible-function-pointer-types",
];

/// Compiles the C file `source` into `output`, with the compiler flags
/// `flags` after weft's own (`-DN=5`, `-I include`).
///
/// # Errors
///
/// [`BuildError::MissingTool`] when zig or the wasi-libc cannot be found,
/// [`BuildError::Compile`] with the compiler's output.
pub fn build(source: &Path, output: &Path, flags: &[String]) -> Result<(), BuildError> {
    if source.extension().is_some_and(|e| e == "c") {
        return build_all(&[source], output, flags);
    }
    let tools = Toolchain::find()?;
    let preprocessed = source.extension().is_some_and(|e| e == "i");
    let mut compile_flags = compile_only(flags);
    if preprocessed {
        // Preprocessed again, so that the macros apply.
        compile_flags.extend(X86_ATTRIBUTES.map(OsStr::new));
        compile_flags.extend([OsStr::new("-x"), OsStr::new("c")]);
    }
    let object = tools.sdk.path().join("program0.o");
    let linked = tools
        .compile(source, &compile_flags, &object)
        .and_then(|()| {
            // The program's libraries and linker options.
            let mut cmd = tools.zig("cc");
            cmd.args(link_only(flags));
            let compiled = [object.as_os_str()];
            let objects = Linked {
                given: &[],
                compiled: &compiled,
            };
            tools.link(&mut cmd, objects, flags, output)?;
            run_linker(cmd, "zig cc", source, output)
        });
    linked.map_err(|e| match e {
        BuildError::Compile { tool, file, output } if preprocessed => BuildError::Compile {
            tool,
            file,
            output: format!(
                "{output}\n(a `.i` file was preprocessed for its own target and C library: weft compiles it for wasm32 against wasi-libc, which works when the types it declares have the same sizes, as glibc's i386 ones do)"
            ),
        },
        e => e,
    })
}

/// Compiles the C files `sources` of one program into `output`, with the
/// compiler flags `flags` after weft's own.
///
/// # Errors
///
/// As [`build`]; a compile error names the first source.
pub fn build_all(sources: &[&Path], output: &Path, flags: &[String]) -> Result<(), BuildError> {
    let tools = Toolchain::find()?;
    let void_main = VoidMain::in_files(sources.iter().copied());
    let mut compile_flags = compile_only(flags);
    let define = void_main.map(VoidMain::define);
    let mut inputs: Vec<PathBuf> = sources.iter().map(|s| s.to_path_buf()).collect();
    if let Some(void_main) = void_main {
        compile_flags.extend(define.as_deref().map(OsStr::new));
        inputs.push(void_main.write_caller(tools.sdk.path())?);
    }
    let mut objects = Vec::new();
    for (n, source) in inputs.iter().enumerate() {
        let object = tools.sdk.path().join(format!("program{n}.o"));
        tools.compile(source, &compile_flags, &object)?;
        objects.push(object);
    }
    let compiled: Vec<&OsStr> = objects.iter().map(|o| o.as_os_str()).collect();
    // The program's libraries and linker options.
    let mut cmd = tools.zig("cc");
    cmd.args(link_only(flags));
    let objects = Linked {
        given: &[],
        compiled: &compiled,
    };
    tools.link(&mut cmd, objects, flags, output)?;
    run_linker(cmd, "zig cc", sources[0], output)
}

/// The flags among `flags` that a compile takes: all but the linker's
/// (`-lm`, `-Wl,...`), which a compile would warn of (an error under
/// `-Werror`).
fn compile_only(flags: &[String]) -> Vec<&OsStr> {
    flags
        .iter()
        .map(OsStr::new)
        .filter(|flag| !super::driver::links_only(flag))
        .collect()
}

/// The flags among `flags` that a link takes: all but the libraries that
/// are parts of wasi-libc (`-lm`, `-lpthread`), with which zig would link
/// its own C library besides weft's.
fn link_only(flags: &[String]) -> Vec<std::ffi::OsString> {
    let flags: Vec<std::ffi::OsString> = flags.iter().map(Into::into).collect();
    super::driver::without_libc_parts(&flags)
}

/// A program whose `main` returns `void` (old C, which gcc builds with a
/// warning). wasi-libc's start-up calls only an `int main`, and clang keeps
/// a `void main` under its own name, which nothing calls: the program would
/// have no `main` at all. So the program is compiled with `main` renamed
/// ([`VoidMain::define`]) and linked with a file whose `int main` calls it
/// and returns 0 ([`VoidMain::write_caller`]). (gcc's program returns
/// whatever the last call left in a register; 0 is what most runs exit
/// with.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum VoidMain {
    /// `void main()` or `void main(void)`.
    NoArguments,
    /// `void main(int argc, char **argv)`.
    Arguments,
}

impl VoidMain {
    /// The name `main` is renamed to: one per kind, so that a link of
    /// objects compiled earlier tells which it is by the symbol.
    fn renamed(self) -> &'static str {
        match self {
            VoidMain::NoArguments => "weft_void_main",
            VoidMain::Arguments => "weft_void_main_args",
        }
    }

    /// The compiler flag that renames the program's `main`.
    pub(super) fn define(self) -> String {
        format!("-Dmain={}", self.renamed())
    }

    /// The `void main` that the C source `text` defines, if it defines one.
    pub(super) fn in_source(text: &str) -> Option<VoidMain> {
        let mut rest = text;
        while let Some(at) = rest.find("void") {
            let before = rest[..at].chars().next_back();
            let after = rest[at + 4..].trim_start();
            rest = &rest[at + 4..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let Some(parameters) = after.strip_prefix("main") else {
                continue;
            };
            let Some(parameters) = parameters.trim_start().strip_prefix('(') else {
                continue;
            };
            let inside = parameters.split(')').next().unwrap_or("").trim();
            return Some(if inside.is_empty() || inside == "void" {
                VoidMain::NoArguments
            } else {
                VoidMain::Arguments
            });
        }
        None
    }

    /// The `void main` that the files `inputs` define: a C source's, or an
    /// object's compiled with [`VoidMain::define`] (by its symbol).
    pub(super) fn in_files<'a>(inputs: impl Iterator<Item = &'a Path>) -> Option<VoidMain> {
        for input in inputs {
            let Ok(bytes) = std::fs::read(input) else {
                continue;
            };
            let found = if input.extension().is_some_and(|e| e == "c") {
                VoidMain::in_source(&String::from_utf8_lossy(&bytes))
            } else {
                [VoidMain::Arguments, VoidMain::NoArguments]
                    .into_iter()
                    .find(|kind| {
                        let name = kind.renamed().as_bytes();
                        bytes.windows(name.len()).any(|window| window == name)
                    })
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// Writes to `dir` the C file whose `int main` calls the renamed one
    /// (compiled with the rename too, so it undoes it first).
    pub(super) fn write_caller(self, dir: &Path) -> Result<PathBuf, BuildError> {
        let name = self.renamed();
        let call = match self {
            VoidMain::NoArguments => format!("{name}()"),
            VoidMain::Arguments => format!("{name}(argc, argv)"),
        };
        let caller = format!(
            "#undef main\nvoid {name}();\nint main(int argc, char **argv)\n{{\n    (void)argc;\n    (void)argv;\n    {call};\n    return 0;\n}}\n"
        );
        let path = dir.join("weft_void_main.c");
        std::fs::write(&path, caller)
            .map_err(|e| BuildError::Io(format!("cannot write `{}`: {e}", path.display())))?;
        Ok(path)
    }
}

/// Macros that drop the x86-only attributes of glibc's headers from a file
/// preprocessed for i386 (`.i`): `regparm` is an error on other targets.
const X86_ATTRIBUTES: [&str; 2] = ["-D__regparm__(n)=", "-Dregparm(n)="];

/// The SDK files every C and C++ build is given: the header, the class
/// driver, the C files linked into every program, the declarations
/// included first, weft's `<signal.h>` and signal set (found before
/// wasi-libc's; the header includes and completes wasi-libc's), and headers wasi-libc lacks (found after its
/// own).
pub(super) const SDK_FILES: [(&str, &str); 16] = [
    ("weft.h", WEFT_H),
    ("weft_class.h", WEFT_CLASS_H),
    ("weft_verifier.c", WEFT_VERIFIER_C),
    ("weft_pthread.c", WEFT_PTHREAD_C),
    ("weft_signal.c", WEFT_SIGNAL_C),
    ("weft_time.c", WEFT_TIME_C),
    ("weft_sleep.c", WEFT_SLEEP_C),
    ("weft_ssp.c", WEFT_SSP_C),
    ("weft_pthread.h", WEFT_PTHREAD_H),
    ("weft_verifier.h", WEFT_VERIFIER_H),
    ("signal.h", include_str!("../../../guest-sdk/c/signal.h")),
    ("unistd.h", include_str!("../../../guest-sdk/c/unistd.h")),
    (
        "sys/time.h",
        include_str!("../../../guest-sdk/c/sys/time.h"),
    ),
    (
        "__typedef_sigset_t.h",
        include_str!("../../../guest-sdk/c/__typedef_sigset_t.h"),
    ),
    (
        "shims/sys/cdefs.h",
        include_str!("../../../guest-sdk/c/shims/sys/cdefs.h"),
    ),
    (
        "shims/sys/queue.h",
        include_str!("../../../guest-sdk/c/shims/sys/queue.h"),
    ),
];

/// wasi-libc's emulations of what WebAssembly lacks, switched on in every
/// build: the declarations of `signal` and `raise` (weft's `<signal.h>`
/// completes them, and `weft_signal.c` defines them), `mmap` of anonymous or file-backed private memory, and
/// `getpid`. Each define makes wasi-libc's headers declare them; their
/// sources (in zig's copy of wasi-libc) are linked into every program. (Its
/// emulation of process clocks is left out: it reads the clock when every
/// program starts, which would make every program's schedules depend on
/// time.)
const EMULATIONS: [(&str, &[&str]); 3] = [
    // Defined empty, as the sources define them.
    // weft's own signals replace the emulation's (`guest-sdk/c/weft_signal.c`).
    ("-D_WASI_EMULATED_SIGNAL=", &[]),
    ("-D_WASI_EMULATED_MMAN=", &["mman/mman.c"]),
    ("-D_WASI_EMULATED_GETPID=", &["getpid/getpid.c"]),
];

/// Where zig keeps the sources of [`EMULATIONS`], under its library folder.
const EMULATION_SOURCES: &str = "libc/wasi/libc-bottom-half";

/// zig, the threaded wasi-libc and the C SDK files: what every C and C++
/// build uses.
pub(super) struct Toolchain {
    /// The command that runs zig.
    pub zig: Vec<String>,
    /// The threaded wasi-libc (`libc.a`, `crt1-command.o`).
    pub sysroot: PathBuf,
    /// zig's library folder.
    pub zig_lib: PathBuf,
    /// The sources of wasi-libc's emulations, when this zig has them all.
    emulations: Vec<PathBuf>,
    /// What `zig env` says (its version, its folders).
    pub(super) zig_env: String,
    /// The SDK files, written for the build.
    pub sdk: SdkDir,
}

impl Toolchain {
    /// Finds the tools and writes the SDK files to a folder of this build's
    /// own, where it may write its intermediate files too.
    pub fn find() -> Result<Self, BuildError> {
        Self::with_sdk(SdkDir::new("c", &SDK_FILES)?)
    }

    /// Finds the tools, with the SDK files written to the shared folder of
    /// their contents (see [`SdkDir::shared`]): for the many short calls of
    /// a project's build.
    pub fn shared() -> Result<Self, BuildError> {
        Self::with_sdk(SdkDir::shared("c", &SDK_FILES)?)
    }

    fn with_sdk(sdk: SdkDir) -> Result<Self, BuildError> {
        let zig = zig_command()?;
        let sysroot = wasi_sysroot()?;
        let (zig_lib, zig_env) = zig_lib_dir(&zig)?;
        let emulations: Vec<PathBuf> = EMULATIONS
            .iter()
            .flat_map(|(_, sources)| sources.iter())
            .map(|source| zig_lib.join(EMULATION_SOURCES).join(source))
            .collect();
        let emulations = if emulations.iter().all(|source| source.is_file()) {
            emulations
        } else {
            Vec::new()
        };
        Ok(Toolchain {
            emulations,
            zig_env,
            zig,
            sysroot,
            zig_lib,
            sdk,
        })
    }

    /// `zig DRIVER` (`cc`, `c++`) for wasm32 with threads, debug
    /// information and no optimisation.
    pub fn zig(&self, driver: &str) -> Command {
        let mut cmd = zig_tool(&self.zig);
        cmd.arg(driver).args(WASM_TARGET).args([
            "-pthread",
            "-g",
            // No optimisation: a `__VERIFIER_atomic_*` function is found
            // by its name, and at -O1 LLVM inlines it away even with
            // -fno-inline; reports also name the source's own functions.
            "-O0",
            "-UNDEBUG",
            // zig cc turns on UBSan by default; a plain C compiler does
            // not.
            "-fno-sanitize=all",
        ]);
        // The SDK's folder is new for every build: its name must not reach
        // the module (its DWARF, its `__FILE__`s), or building the same
        // source twice gives two modules and breaks every replay file.
        // Nor must the folder the build runs in: sources named by relative
        // paths give the same module from any folder.
        cmd.arg(format!(
            "-ffile-prefix-map={}={SDK_SOURCE_DIR}",
            self.sdk.path().display()
        ))
        // Nor must where zig is installed (its headers, the emulations'
        // sources).
        .arg(format!("-ffile-prefix-map={}=zig", self.zig_lib.display()))
        .arg("-fdebug-compilation-dir=.");
        if !self.emulations.is_empty() {
            cmd.args(EMULATIONS.map(|(define, _)| define));
        }
        cmd
    }

    /// Lets the sources include the SDK (`weft.h`) and see its
    /// declarations first (`weft_pthread.h`, and for C `weft_verifier.h`).
    pub fn include_sdk(&self, cmd: &mut Command) {
        cmd.arg("-I")
            .arg(self.sdk.path())
            .arg("-include")
            .arg(self.sdk.path().join("weft_pthread.h"))
            .arg("-include")
            .arg(self.sdk.path().join("weft_verifier.h"))
            .arg("-idirafter")
            .arg(self.sdk.path().join("shims"));
    }

    /// Lets the sources include wasi-libc's headers, as zig has them.
    pub fn include_libc(&self, cmd: &mut Command) {
        cmd.arg("-isystem")
            .arg(self.zig_lib.join("libc/include/wasm-wasi-musl"))
            .arg("-isystem")
            .arg(self.zig_lib.join("libc/include/generic-musl"));
    }

    /// The C files every program is linked with: the SDK's, and the
    /// sources of wasi-libc's emulations.
    pub fn sdk_sources(&self) -> Vec<PathBuf> {
        [
            "weft_verifier.c",
            "weft_pthread.c",
            "weft_signal.c",
            "weft_time.c",
            "weft_sleep.c",
        ]
        .map(|name| self.sdk.path().join(name))
        .into_iter()
        .chain(self.emulations.iter().cloned())
        .collect()
    }

    /// Compiles the SDK's stack protector (see `guest-sdk/c/weft_ssp.c`)
    /// into the folder `dir`; returns the object. A C++ program links it
    /// ahead of libc++, whose code uses the canary: as a source given to
    /// the link it would come after the libraries, too late to keep
    /// wasi-libc's own canary, drawn from random bytes, out.
    ///
    /// # Errors
    ///
    /// [`BuildError::Compile`] when it does not compile.
    pub fn stack_protector(&self, dir: &Path) -> Result<PathBuf, BuildError> {
        let source = self.sdk.path().join("weft_ssp.c");
        let object = dir.join("weft_ssp.o");
        let mut cmd = self.zig("cc");
        self.include_sdk(&mut cmd);
        self.include_libc(&mut cmd);
        cmd.arg("-c").arg(&source).arg("-o").arg(&object);
        super::run_tool(cmd, "zig cc", &source)?;
        Ok(object)
    }

    /// Compiles the C file `source` of a program into the object
    /// `object`, with the program's compiler flags `flags` after weft's, as
    /// zig compiles a source it links with [`Toolchain::link_with`].
    ///
    /// # Errors
    ///
    /// [`BuildError::Compile`] with the compiler's output.
    pub fn compile(
        &self,
        source: &Path,
        flags: &[impl AsRef<OsStr>],
        object: &Path,
    ) -> Result<(), BuildError> {
        let mut cmd = self.compile_command(source, flags);
        cmd.arg("-o").arg(object);
        super::run_tool(cmd, "zig cc", source)
    }

    /// `zig cc -c` of the C file `source` with the compiler flags `flags`
    /// after weft's, as zig compiles a source it links with
    /// [`Toolchain::link_with`]; the object's path is left to add.
    pub(super) fn compile_command(&self, source: &Path, flags: &[impl AsRef<OsStr>]) -> Command {
        let mut cmd = self.zig("cc");
        cmd.args(OLD_C_FLAGS).args(flags);
        self.include_sdk(&mut cmd);
        self.include_libc(&mut cmd);
        cmd.args(AS_LINKED).arg("-c").arg(source);
        cmd
    }

    /// Makes `cmd` link into `output` what [`Toolchain::link_with`] says,
    /// the SDK's objects optimised as the program's flags `flags` say.
    ///
    /// # Errors
    ///
    /// As [`Toolchain::sdk_objects`].
    pub fn link(
        &self,
        cmd: &mut Command,
        objects: Linked<'_>,
        flags: &[impl AsRef<OsStr>],
        output: &Path,
    ) -> Result<(), BuildError> {
        self.link_with(cmd, objects, flags)?;
        cmd.arg("-o").arg(output);
        Ok(())
    }

    /// Adds to `cmd`, a command that links `objects`, what every program is
    /// linked with: wasi-libc's start-up and library, the SDK's objects
    /// (see [`Toolchain::sdk_objects`], optimised as `flags` say) and the
    /// memory flags.
    ///
    /// # Errors
    ///
    /// As [`Toolchain::sdk_objects`].
    pub fn link_with(
        &self,
        cmd: &mut Command,
        objects: Linked<'_>,
        flags: &[impl AsRef<OsStr>],
    ) -> Result<(), BuildError> {
        // The SDK's replacements of wasi-libc's functions go ahead of it,
        // the rest where zig puts compiled sources.
        let (replacing, sdk): (Vec<PathBuf>, Vec<PathBuf>) = self
            .sdk_objects(flags)?
            .into_iter()
            .partition(|object| object.file_stem() == Some(OsStr::new(REPLACES_LIBC)));
        // What follows is objects and archives, whatever `-x` came before.
        cmd.args(["-nostdlib", "-rtlib=compiler-rt", "-x", "none"])
            .arg(self.sysroot.join("crt1-command.o"))
            .args(objects.given)
            .args(replacing)
            .arg(self.sysroot.join("libc.a"))
            .args(objects.compiled)
            .args(sdk)
            .arg(format!("-Wl,{LINK_FLAGS}"));
        Ok(())
    }
}

/// What makes zig compile a C source with `-c` as it compiles one it links
/// with [`Toolchain::link_with`]: without its C library, so without the
/// stack protector, whose canary is the C library's.
pub(super) const AS_LINKED: [&str; 1] = ["-nostdlib"];

/// What a program links besides what every program does, in the order
/// the linker is given it: what the program names (objects, archives,
/// options) ahead of wasi-libc, and the objects of its sources after it,
/// where zig puts the objects of the sources it compiles itself. That is
/// the order every program was linked in when zig compiled the sources
/// itself, so a source builds into the same module as it did then.
#[derive(Clone, Copy, Debug, Default)]
pub struct Linked<'a> {
    /// What the program names, in its order.
    pub given: &'a [&'a OsStr],
    /// The objects of its sources, in their order.
    pub compiled: &'a [&'a OsStr],
}

/// The folder the SDK's files are named in by a module's debug information.
pub(super) const SDK_SOURCE_DIR: &str = "weft-c-sdk";

/// The target of C and C++ modules: wasm32 with threads and bulk memory,
/// against the musl-based wasi-libc.
pub(super) const WASM_TARGET: [&str; 3] = [
    "-target",
    "wasm32-wasi-musl",
    "-mcpu=generic+atomics+bulk_memory",
];

/// A command that runs zig (`zig` is [`zig_command`]'s words).
pub(super) fn zig_tool(zig: &[String]) -> Command {
    let mut cmd = Command::new(&zig[0]);
    cmd.args(&zig[1..]);
    cmd
}

/// The command that runs zig.
pub(super) fn zig_command() -> Result<Vec<String>, BuildError> {
    if let Ok(cmd) = std::env::var("WEFT_ZIG") {
        let words: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        if !words.is_empty() {
            return Ok(words);
        }
    }
    let works = |cmd: &[&str]| {
        Command::new(cmd[0])
            .args(&cmd[1..])
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    for candidate in [&["zig"][..], &["python3", "-m", "ziglang"][..]] {
        if works(candidate) {
            return Ok(candidate.iter().map(|s| s.to_string()).collect());
        }
    }
    for python in [repository_venv_python(), super::setup::data_venv_python()]
        .into_iter()
        .flatten()
    {
        let python = python.display().to_string();
        if works(&[python.as_str(), "-m", "ziglang"]) {
            return Ok(vec![python, "-m".into(), "ziglang".into()]);
        }
    }
    Err(BuildError::MissingTool(
        "building C, C++ and Zig needs zig: run `weft setup` (it installs zig from PyPI), or install zig yourself and set WEFT_ZIG to the command that runs it"
            .into(),
    ))
}

/// The Python of the virtual environment `./x` sets up in weft's
/// repository (`.tools/venv`), when the running `weft` was built there
/// (`target/debug/weft`): such a `weft` builds C from any folder.
fn repository_venv_python() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .map(|dir| dir.join(".tools/venv/bin/python"))
        .find(|python| python.is_file())
}

/// zig's library folder (it holds the wasi-libc headers): `lib/` beside
/// the zig executable that `zig env` names (as JSON in older zig, ZON in
/// newer; both spell `zig_exe` followed by a quoted path).
fn zig_lib_dir(zig: &[String]) -> Result<(PathBuf, String), BuildError> {
    let out = zig_tool(zig)
        .arg("env")
        .output()
        .map_err(|e| BuildError::MissingTool(format!("cannot run `zig env`: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let exe = text
        .find("zig_exe")
        .and_then(|at| {
            text[at..]
                .split('"')
                .skip(1)
                .find(|part| part.contains('/'))
        })
        .ok_or_else(|| {
            BuildError::MissingTool("`zig env` does not name the zig executable".into())
        })?;
    let lib = Path::new(exe).with_file_name("lib");
    if lib.join("libc/include/wasm-wasi-musl").is_dir() {
        Ok((lib, text))
    } else {
        Err(BuildError::MissingTool(format!(
            "zig's wasi-libc headers are not under `{}`",
            lib.display()
        )))
    }
}

/// The threaded wasi-libc (`libc.a`, `crt1-command.o`).
fn wasi_sysroot() -> Result<PathBuf, BuildError> {
    if let Ok(dir) = std::env::var("WEFT_WASI_SYSROOT") {
        return Ok(PathBuf::from(dir));
    }
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| BuildError::MissingTool(format!("cannot run rustc to find wasi-libc: {e}")))?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dir = Path::new(&sysroot).join("lib/rustlib/wasm32-wasip1-threads/lib/self-contained");
    if dir.join("libc.a").exists() {
        Ok(dir)
    } else {
        Err(BuildError::MissingTool(format!(
            "no threaded wasi-libc at `{}`: run `rustup target add wasm32-wasip1-threads` or set WEFT_WASI_SYSROOT",
            dir.display()
        )))
    }
}

#[cfg(test)]
mod void_main_tests {
    use super::VoidMain;

    #[test]
    fn a_void_main_is_told_with_its_arguments() {
        let no_arguments = Some(VoidMain::NoArguments);
        assert_eq!(VoidMain::in_source("void main()\n{"), no_arguments);
        assert_eq!(VoidMain::in_source("void main(void) {"), no_arguments);
        assert_eq!(
            VoidMain::in_source("void\nmain (int argc, char **argv)"),
            Some(VoidMain::Arguments)
        );
        assert_eq!(VoidMain::in_source("int main(void)"), None);
        assert_eq!(VoidMain::in_source("void mainloop(void)"), None);
        assert_eq!(VoidMain::in_source("avoid main()"), None);
    }
}
