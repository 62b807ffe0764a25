//! `weft cc` and `weft c++`: compiler drivers a C or C++ project's own
//! build calls in place of its compiler (`make CC="weft cc"`, CMake with the
//! toolchain file `weft setup` writes, `./configure CC="weft cc"`).
//!
//! Each call is one call of `zig cc` or `zig c++` with weft's target, its
//! defaults (debug information, no optimisation, assertions on), the SDK
//! header and its declarations first, then the project's own arguments,
//! which win where they differ (`-O2`, `-DNDEBUG`). A call that links (it
//! has inputs and none of `-c`, `-S`, `-E`, ...) also gets what `weft build`
//! links: wasi-libc's start-up and library, the SDK's C files, libc++ for
//! C++ (`-lm`, `-lpthread`, ... are left out: their functions are in
//! wasi-libc) and the memory flags weft runs modules with. The compiler's output is
//! passed on unchanged, with weft's explanation after it where weft knows
//! more (a missing header, a call whose signature does not match).

use super::c::{AS_LINKED, Linked, OLD_C_FLAGS, Toolchain, VoidMain};
use super::cpp::{THREADED_LIBCXX, libraries};
use super::{
    BuildError, SdkDir, defines_main, mismatched_calls, missing_functions, missing_headers,
};
use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The language a driver compiles by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    /// `weft cc`.
    C,
    /// `weft c++`.
    Cpp,
}

impl Driver {
    /// How the driver is called, in messages.
    pub fn name(self) -> &'static str {
        match self {
            Driver::C => "weft cc",
            Driver::Cpp => "weft c++",
        }
    }
}

/// Options whose value is the next argument (`-o out`, `-I dir`): that
/// argument is not an input.
const TAKES_VALUE: [&str; 27] = [
    "-o",
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-isysroot",
    "-iprefix",
    "-iwithprefix",
    "-x",
    "-MF",
    "-MT",
    "-MQ",
    "-L",
    "-l",
    "-Xlinker",
    "-Xclang",
    "-Xpreprocessor",
    "-Xassembler",
    "-target",
    "-u",
    "-T",
    "-z",
    "-mllvm",
];

/// Options that stop before linking.
const NO_LINK: [&str; 7] = ["-c", "-S", "-E", "-M", "-MM", "-fsyntax-only", "-###"];

/// Options that ask the compiler about itself; nothing is built.
const QUERIES: [&str; 4] = ["--version", "-dumpversion", "-dumpmachine", "--help"];

/// What a compiler call does, read from its arguments.
#[derive(Debug, PartialEq, Eq)]
struct Call {
    /// Whether it links a program.
    links: bool,
    /// The program it writes when it links (`-o`, else `a.out`).
    output: PathBuf,
    /// The positions of its inputs among the arguments.
    inputs: Vec<usize>,
    /// The positions of `-o` and its value, if separate.
    output_at: Vec<usize>,
}

impl Call {
    fn read(args: &[OsString]) -> Call {
        let mut inputs = Vec::new();
        let mut output = None;
        let mut output_at = Vec::new();
        let mut stops = false;
        let mut at = 0;
        while at < args.len() {
            let text = args[at].to_string_lossy();
            if text == "-o" {
                output = args.get(at + 1).map(PathBuf::from);
                output_at.extend([at, at + 1]);
                at += 1;
            } else if TAKES_VALUE.contains(&text.as_ref()) {
                at += 1;
            } else if NO_LINK.contains(&text.as_ref())
                || QUERIES.contains(&text.as_ref())
                || text.starts_with("-print-")
            {
                stops = true;
            } else if let Some(joined) = text.strip_prefix("-o")
                && !joined.is_empty()
            {
                output = Some(PathBuf::from(joined));
                output_at.push(at);
            } else if text == "-" || !text.starts_with('-') {
                // An input file, stdin, or a response file (`@args`).
                inputs.push(at);
            }
            at += 1;
        }
        Call {
            links: !stops && !inputs.is_empty(),
            output: output.unwrap_or_else(|| PathBuf::from("a.out")),
            inputs,
            output_at,
        }
    }

    /// The first input file that does not exist (standard input, `-`, and
    /// response files, `@args`, are not files).
    fn missing_input<'a>(&self, args: &'a [OsString]) -> Option<&'a Path> {
        self.inputs
            .iter()
            .map(|&at| Path::new(&args[at]))
            .filter(|input| input.as_os_str() != "-" && !input.to_string_lossy().starts_with('@'))
            .find(|input| !input.exists())
    }

    /// The input that `-o` names as the output too, if one is.
    fn input_written_over<'a>(&self, args: &'a [OsString]) -> Option<&'a Path> {
        if self.output_at.is_empty() {
            return None;
        }
        let output = std::fs::canonicalize(&self.output).ok();
        self.inputs
            .iter()
            .map(|&at| Path::new(&args[at]))
            .find(|input| {
                *input == self.output
                    || output.is_some() && std::fs::canonicalize(input).ok() == output
            })
    }

    /// The first input, for messages.
    fn first_input<'a>(&self, args: &'a [OsString]) -> &'a Path {
        self.inputs
            .first()
            .map_or(Path::new("the program"), |&at| Path::new(&args[at]))
    }
}

/// Libraries whose functions are in wasi-libc (`-lm`, `-lpthread`, ...):
/// a project's link line names them, and zig, seeing them, would link its
/// own C library besides weft's. They are left out of the link.
const PARTS_OF_LIBC: [&str; 9] = [
    "c", "m", "pthread", "rt", "dl", "util", "atomic", "crypt", "resolv",
];

/// `args` without the libraries [`PARTS_OF_LIBC`] names.
pub(super) fn without_libc_parts(args: &[OsString]) -> Vec<OsString> {
    let part = |name: &OsString| PARTS_OF_LIBC.iter().any(|p| name.as_os_str() == *p);
    let mut kept = Vec::with_capacity(args.len());
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        if arg.as_os_str() == "-l" && iter.peek().is_some_and(|name| part(name)) {
            iter.next();
            continue;
        }
        let joined = arg.to_str().and_then(|a| a.strip_prefix("-l"));
        if joined.is_some_and(|name| PARTS_OF_LIBC.contains(&name)) {
            continue;
        }
        kept.push(arg.clone());
    }
    kept
}

/// Whether an argument is for the linker only, and left out when a C++
/// link's sources are compiled first.
pub(super) fn links_only(arg: &OsStr) -> bool {
    let text = arg.to_string_lossy();
    ["-l", "-L", "-Wl,"].iter().any(|p| text.starts_with(p))
        || ["-static", "-shared", "-rdynamic", "-s"].contains(&text.as_ref())
}

/// Compiles each source of the linking call `args` (read as `call`) apart,
/// with the call's options, into the folder `scratch`: the link is given
/// objects only, so the SDK's objects are never compiled with the
/// project's options (see `sdk_objects.rs`), and zig's `c++` gives
/// libc++'s headers to a call that does not link. Returns the call's
/// arguments with each C++ source replaced by its object and each C source
/// taken out, and the objects of the C sources (and of the caller of a
/// `void main`), which the link gets after the C library, as zig links the
/// objects of the sources it compiles itself (see `Linked`); or the exit
/// code of a compile that failed.
fn compile_sources(
    driver: Driver,
    tools: &Toolchain,
    args: &[OsString],
    call: &Call,
    void_main: Option<VoidMain>,
    scratch: &SdkDir,
) -> Result<Result<CompiledCall, u8>, BuildError> {
    let mut compile_args: Vec<OsString> = args
        .iter()
        .enumerate()
        .filter(|&(i, arg)| {
            !call.inputs.contains(&i) && !call.output_at.contains(&i) && !links_only(arg)
        })
        .map(|(_, arg)| arg.clone())
        .collect();
    compile_args.extend(void_main.map(|v| v.define().into()));
    let mut args = args.to_vec();
    let mut compiled = Vec::new();
    let mut moved = Vec::new();
    for (n, at) in sources_among(&args, call).into_iter().enumerate() {
        let object = scratch.path().join(format!("input{n}.o"));
        let mut compile = compiler(driver, tools);
        compile.args(&compile_args);
        if driver == Driver::C {
            compile.args(AS_LINKED);
        }
        compile.arg("-c").arg(&args[at]).arg("-o").arg(&object);
        let (code, _) = run(driver, compile)?;
        if code != 0 {
            return Ok(Err(code));
        }
        args[at] = object.into_os_string();
        if driver == Driver::C {
            compiled.push(args[at].clone());
            moved.push(at);
        }
    }
    if let Some(void_main) = void_main {
        compiled.push(void_main_caller(tools, void_main, &compile_args, scratch)?);
    }
    let args = args
        .into_iter()
        .enumerate()
        .filter(|(at, _)| !moved.contains(at))
        .map(|(_, arg)| arg)
        .collect();
    Ok(Ok(CompiledCall { args, compiled }))
}

/// A linking call once its sources are compiled apart (see
/// [`compile_sources`]).
struct CompiledCall {
    /// The call's arguments, each C++ source replaced by its object and
    /// each C source taken out.
    args: Vec<OsString>,
    /// The objects the link gets after the C library.
    compiled: Vec<OsString>,
}

/// The object of the caller of a `void main`, compiled in `scratch` with
/// the program's options `compile_args` and the rename, which it undoes,
/// and named as in a module `weft build` makes, not by this call's folder.
fn void_main_caller(
    tools: &Toolchain,
    void_main: VoidMain,
    compile_args: &[OsString],
    scratch: &SdkDir,
) -> Result<OsString, BuildError> {
    let caller = void_main.write_caller(scratch.path())?;
    let object = scratch.path().join("void_main.o");
    let mut args = compile_args.to_vec();
    args.push(
        format!(
            "-ffile-prefix-map={}={}",
            scratch.path().display(),
            super::c::SDK_SOURCE_DIR
        )
        .into(),
    );
    tools.compile(&caller, &args, &object)?;
    Ok(object.into_os_string())
}

/// The positions of the inputs of `call` that are sources: named so
/// (`.c`, `.cpp`, ...), or after an `-x` that gives their language.
fn sources_among(args: &[OsString], call: &Call) -> Vec<usize> {
    let mut language_given = false;
    let mut sources = Vec::new();
    let mut at = 0;
    while at < args.len() {
        let text = args[at].to_string_lossy();
        if let Some(language) = language_option(args, at) {
            language_given = language != "none";
            if text == "-x" {
                at += 1;
            }
        } else if call.inputs.contains(&at) && (language_given || is_source(Path::new(&args[at]))) {
            sources.push(at);
        }
        at += 1;
    }
    sources
}

/// The language the `-x` option at `at` gives (`-x c`, `-xc`), if it is
/// one.
fn language_option(args: &[OsString], at: usize) -> Option<String> {
    let text = args[at].to_string_lossy();
    if text == "-x" {
        return Some(args.get(at + 1)?.to_string_lossy().into_owned());
    }
    text.strip_prefix("-x")
        .map(str::to_string)
        .filter(|l| !l.is_empty())
}

/// `args` without their `-x` options: a link is given objects only.
fn without_languages(args: &[OsString]) -> Vec<OsString> {
    let mut kept = Vec::with_capacity(args.len());
    let mut at = 0;
    while at < args.len() {
        if language_option(args, at).is_some() {
            at += if args[at] == "-x" { 2 } else { 1 };
            continue;
        }
        kept.push(args[at].clone());
        at += 1;
    }
    kept
}

/// Whether `path` names a C or C++ source (not an object or archive).
fn is_source(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["c", "cpp", "cc", "cxx", "c++", "C", "i", "ii"].contains(&e))
}

/// Runs the compiler `driver` stands for with the project's `args`; returns
/// its exit code (0 when it succeeded).
///
/// # Errors
///
/// [`BuildError::MissingTool`] when zig, the wasi-libc or libc++ cannot be
/// found. A compile that fails is not an error here: it prints what the
/// compiler said and returns its code.
pub fn drive(driver: Driver, args: &[OsString]) -> Result<u8, BuildError> {
    let call = Call::read(args);
    if let Some(missing) = call.missing_input(args) {
        // As gcc says it, before zig's cache tells of a file it cannot open.
        let _ = writeln!(
            std::io::stderr(),
            "{}: error: {}: No such file or directory",
            driver.name(),
            missing.display()
        );
        return Ok(1);
    }
    if let Some(input) = call.input_written_over(args) {
        // As gcc refuses it: the source would be lost.
        let _ = writeln!(
            std::io::stderr(),
            "{}: fatal error: input file '{}' is the same as output file",
            driver.name(),
            input.display()
        );
        return Ok(1);
    }
    let tools = Toolchain::shared()?;
    let input_paths = || call.inputs.iter().map(|&at| Path::new(&args[at]));
    let void_main = (driver == Driver::C)
        .then(|| VoidMain::in_files(input_paths()))
        .flatten();
    if !call.links {
        let mut compile = compiler(driver, &tools);
        compile.args(void_main.map(VoidMain::define)).args(args);
        return run(driver, compile).map(|(code, _)| code);
    }
    // The folder of this call's own files: the objects of its sources, the
    // probe that finds libc++, the caller of a `void main`.
    let scratch = SdkDir::new("cxx", &[])?;
    let compiled = compile_sources(driver, &tools, args, &call, void_main, &scratch)?;
    let CompiledCall { args, compiled } = match compiled {
        Ok(compiled) => compiled,
        Err(code) => return Ok(code),
    };
    let mut given = without_libc_parts(&without_languages(&args));
    if driver == Driver::Cpp {
        given.extend(libraries(&tools, scratch.path())?.map(PathBuf::into_os_string));
    }
    let given: Vec<&OsStr> = given.iter().map(OsString::as_os_str).collect();
    let compiled: Vec<&OsStr> = compiled.iter().map(OsString::as_os_str).collect();
    let objects = Linked {
        given: &given,
        compiled: &compiled,
    };
    let mut link = compiler(driver, &tools);
    tools.link_with(&mut link, objects, args.as_slice())?;
    let (code, stderr) = run(driver, link)?;
    if code != 0 {
        return Ok(code);
    }
    let refused = mismatched_calls(&stderr).or_else(|| {
        let linked = std::fs::read(&call.output).ok()?;
        (defines_main(&linked) == Some(false))
            .then(|| BuildError::NoMain(call.first_input(&args).display().to_string()).to_string())
    });
    match refused {
        Some(why) => {
            // No module with stubs that trap is left for the build to use.
            let _ = std::fs::remove_file(&call.output);
            let _ = writeln!(std::io::stderr(), "{}: error: {why}", driver.name());
            Ok(1)
        }
        None => Ok(0),
    }
}

/// `zig cc` or `zig c++` with weft's target, defaults and SDK.
fn compiler(driver: Driver, tools: &Toolchain) -> Command {
    let mut cmd = tools.zig(match driver {
        Driver::C => "cc",
        Driver::Cpp => "c++",
    });
    match driver {
        Driver::C => cmd.args(OLD_C_FLAGS),
        Driver::Cpp => cmd.arg("-fno-exceptions").args(THREADED_LIBCXX),
    };
    tools.include_sdk(&mut cmd);
    tools.include_libc(&mut cmd);
    cmd
}

/// Runs `cmd` with the terminal's input and output; what it writes to
/// stderr is passed on, then returned with its exit code, and a header it
/// did not find is explained.
fn run(driver: Driver, mut cmd: Command) -> Result<(u8, String), BuildError> {
    let out = cmd
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| BuildError::MissingTool(format!("cannot run zig: {e}")))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(stderr.as_bytes());
    if out.status.success() {
        return Ok((0, stderr));
    }
    for why in [missing_headers(&stderr), missing_functions(&stderr)]
        .into_iter()
        .flatten()
    {
        let _ = write!(err, "{}: {why}", driver.name());
    }
    let code = out.status.code().map_or(1, |c| c.clamp(1, 255) as u8);
    Ok((code, stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `args` as a build tool passes them.
    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn an_output_that_is_an_input_is_told() {
        let args = os(&["-c", "x.c", "-o", "x.c"]);
        let call = Call::read(&args);
        assert_eq!(call.input_written_over(&args), Some(Path::new("x.c")));
        let args = os(&["main.c", "-o", "main"]);
        assert_eq!(Call::read(&args).input_written_over(&args), None);
    }

    #[test]
    fn a_call_links_when_it_has_inputs_and_nothing_stops_it() {
        let link = Call::read(&os(&["-O2", "a.o", "b.c", "-o", "prog", "-lm"]));
        assert!(link.links);
        assert_eq!(link.output, Path::new("prog"));
        assert_eq!(link.inputs, [1, 2]);
        assert_eq!(link.output_at, [3, 4]);
        let compile = Call::read(&os(&["-I", "include", "-c", "a.c", "-oa.o"]));
        assert!(!compile.links);
        assert_eq!(compile.output, Path::new("a.o"));
        assert!(!Call::read(&os(&["--version"])).links);
        assert!(!Call::read(&os(&["-v"])).links);
        assert!(!Call::read(&os(&["-print-file-name=libc.a"])).links);
        assert!(!Call::read(&os(&["-E", "-"])).links);
        // Values of options are not inputs.
        assert!(!Call::read(&os(&["-I", "dir", "-D", "X", "-x", "c"])).links);
        assert_eq!(Call::read(&os(&["main.c"])).output, Path::new("a.out"));
        assert!(Call::read(&os(&["@link.rsp"])).links);
    }

    #[test]
    fn the_parts_of_libc_are_left_out_of_a_link() {
        let kept = without_libc_parts(&os(&["a.o", "-lm", "-l", "pthread", "-lfoo", "-l", "bar"]));
        assert_eq!(kept, os(&["a.o", "-lfoo", "-l", "bar"]));
    }
}
