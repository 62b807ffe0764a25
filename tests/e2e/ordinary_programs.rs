//! Ordinary programs (`tests/ordinary/`): threads that print, log to one
//! shared `FILE`, read and write streams, copy and print the program's
//! buffers with the C library's string and stdio functions, allocate in one thread and free
//! in another, call the C library's thread-safe functions, and C++ and
//! Rust threads with their standard libraries' printing, locks and
//! condition variables. The default exploration reports nothing on them,
//! built unoptimised and optimised, with and without DWARF; each has a
//! racy twin (a lock removed, a flag made plain) whose race is reported on
//! the program's own variable at the program's own line, never inside a
//! library (a buffer that `strcpy` writes or `printf` prints is reported
//! at the line that calls them). A compare-exchange that fails only reads. A twin marks its racy lines with `RACE on <variable>`.

use crate::support::{arg, root, weft_in, without_dwarf};
use std::path::{Path, PathBuf};

/// Executions of each correct program.
const EXECUTIONS: &str = "1000";

/// Where the corpus is.
fn corpus(file: &str) -> PathBuf {
    root().join("tests/ordinary").join(file)
}

/// Builds `file` of the corpus into `dir` with the C or C++ compiler flag
/// `flag` (none for Rust).
fn build(dir: &Path, file: &str, flag: Option<&str>) -> PathBuf {
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let ext = Path::new(file).extension().unwrap().to_str().unwrap();
    let module = dir.join(format!("{stem}-{ext}{}.wasm", flag.unwrap_or("")));
    let source = corpus(file);
    let mut args = vec!["build", arg(&source), "-o", arg(&module)];
    if let Some(flag) = flag {
        args.extend(["--", flag]);
    }
    let out = weft_in(dir, &args);
    assert_eq!(out.code, 0, "{file} {flag:?}: {}", out.stderr);
    module
}

/// The modules of `file` a user builds: unoptimised and optimised for C
/// and C++ (as `weft build` builds Rust for Rust), each also without DWARF.
fn builds(dir: &Path, file: &str) -> Vec<PathBuf> {
    let flags: &[Option<&str>] = if file.ends_with(".rs") {
        &[None]
    } else {
        &[Some("-O0"), Some("-O2")]
    };
    flags
        .iter()
        .flat_map(|&flag| {
            let module = build(dir, file, flag);
            let stripped = without_dwarf(&module, dir);
            [module, stripped]
        })
        .collect()
}

/// Explores every build of each of `files` with the default command and
/// asserts no failure in [`EXECUTIONS`] executions.
fn passes(files: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        for module in builds(dir.path(), file) {
            let out = weft_in(
                dir.path(),
                &[
                    "explore",
                    arg(&module),
                    "--iterations",
                    EXECUTIONS,
                    "--json",
                    "--no-save",
                ],
            );
            let json = out.json();
            assert_eq!(
                out.code,
                0,
                "{}: {}",
                module.display(),
                json["failure"]["message"]
            );
            assert_eq!(json["executions"], 1000, "{}", module.display());
        }
    }
}

/// The lines (`file:line`) and variables a twin marks as racy.
fn marked(file: &str) -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(corpus(file)).unwrap();
    let mut lines = Vec::new();
    let mut variables = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some((_, variable)) = line.split_once("RACE on ") {
            lines.push(format!("{file}:{}", n + 1));
            let variable = variable.trim_end_matches("*/").trim();
            variables.push(variable.to_string());
        }
    }
    assert!(!lines.is_empty(), "{file} marks no race");
    (lines, variables)
}

/// Explores every build of each racy twin of `files` with the default
/// command and asserts the race it reports is the program's: with DWARF,
/// on a marked variable at a marked line; without, in functions of the
/// program's C or C++ source; never in a library's code.
fn races_are_the_programs(files: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let (lines, variables) = marked(file);
        let source = std::fs::read_to_string(corpus(file)).unwrap();
        for module in builds(dir.path(), file) {
            let out = weft_in(
                dir.path(),
                &["explore", arg(&module), "--json", "--no-save"],
            );
            let json = out.json();
            let name = module.display();
            assert_eq!(
                json["failure"]["kind"], "data-race",
                "{name}: {}",
                out.stdout
            );
            let message = json["failure"]["message"].as_str().unwrap();
            for library in [
                "wasi-libc",
                "libcxx",
                "library/std",
                "__lockfile",
                "vfprintf",
            ] {
                assert!(!message.contains(library), "{name}: {message}");
            }
            let stripped = module.to_str().unwrap().ends_with("without-dwarf.wasm");
            if stripped && file.ends_with(".rs") {
                // Without DWARF a report names the function that holds the
                // code, and a thread's closure is inlined into the generic
                // function of std that the program instantiated to start it
                // (`__rust_begin_short_backtrace`): the race is still on the
                // program's variable, but nothing in the module says so.
            } else if stripped {
                for function in functions_named(message) {
                    assert!(
                        source.contains(&function),
                        "{name}: `{function}` is not the program's: {message}"
                    );
                }
            } else {
                assert!(
                    lines.iter().any(|line| message.contains(line.as_str())),
                    "{name}: none of {lines:?} in {message}"
                );
                assert!(
                    variables
                        .iter()
                        .any(|variable| message.contains(&format!("`{variable}"))
                            || message.contains(&format!("::{variable}`"))),
                    "{name}: none of {variables:?} in {message}"
                );
            }
        }
    }
}

/// The functions a race's message places its accesses in (`at NAME`), a
/// C `main` by its source name (clang calls it `__original_main` or
/// `__main_argc_argv`).
fn functions_named(message: &str) -> Vec<String> {
    message
        .split(" at ")
        .skip(1)
        .map(|rest| {
            let name = rest.split([' ', ',', '(']).next().unwrap_or_default();
            match name {
                "__original_main" | "__main_argc_argv" => "main",
                name => name,
            }
            .to_string()
        })
        .collect()
}

#[test]
fn c_programs_that_print_and_log_report_nothing() {
    passes(&["printing.c", "shared-log.c", "files.c", "buffers.c"]);
}

#[test]
fn c_programs_that_allocate_and_call_the_c_library_report_nothing() {
    passes(&[
        "handoff.c",
        "libc-calls.c",
        "old-style.c",
        "callbacks.c",
        "void-main.c",
        "old-threads.c",
        "claims.c",
    ]);
}

#[test]
fn cpp_and_rust_programs_that_print_report_nothing() {
    passes(&["streams.cpp", "printing.rs"]);
}

#[test]
fn the_races_of_c_programs_that_print_are_their_own() {
    races_are_the_programs(&[
        "printing-racy.c",
        "shared-log-racy.c",
        "files-racy.c",
        "buffers-racy.c",
    ]);
}

#[test]
fn the_races_of_c_programs_that_allocate_are_their_own() {
    races_are_the_programs(&[
        "handoff-racy.c",
        "libc-calls-racy.c",
        "old-threads-racy.c",
        "claims-racy.c",
    ]);
}

#[test]
fn the_races_of_cpp_and_rust_programs_are_their_own() {
    races_are_the_programs(&["streams-racy.cpp", "printing-racy.rs"]);
}
