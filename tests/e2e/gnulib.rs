//! GNU gnulib's own tests of signals, as Debian ships them (the `gnulib`
//! package carries the library and its tests as sources), fetched from
//! Debian's archive at test time and built unchanged with `weft cc`, with
//! a `config.h` of what gnulib's configure finds for weft's target
//! (`tests/fixtures/gnulib/config.h`).
//!
//! - The signal calls' tests (`pthread_sigmask` with a thread that
//!   signals the main thread, `sigaction`, `raise`, sleeps cut short by
//!   the alarm) pass, as gnulib's `make check` runs them: once each, so
//!   with `weft test`, which takes their sleeps as timed.
//! - The async-safe linked list's tests (a thread sends the process
//!   `SIGTERM` thousands of times while another grows and shrinks the
//!   list, and the handler walks it in whichever thread does not block
//!   the signal) pass where the handler runs in the thread that changes
//!   the list (case 1) and fail in the cases gnulib's Makefile marks as
//!   expected failures (2 and 3: the handler runs in another thread and
//!   sees a list that is none of the recent ones, or a node freed under
//!   it); weft finds those failures and replays them, and finds a bug
//!   seeded in a copy of the test (the sending thread no longer blocks
//!   the signal in case 1). Their statistics counters are read
//!   without a lock (data races the race check reports), so the list is
//!   explored with `--races off`.

use crate::support::{arg, debian_package, root, weft_in};
use std::path::{Path, PathBuf};

/// Debian's package of gnulib, and its SHA-256.
const PACKAGE: &str =
    "http://deb.debian.org/debian/pool/main/g/gnulib/gnulib_20230209+stable-1_all.deb";
const PACKAGE_SHA256: &str = "5c72af7f9fe2ad2e311ca2d98722d0d4b9852d0db109dce37734f3f2f4237d24";

/// gnulib's folder (with `lib/` and `tests/`), fetched and unpacked into
/// `dir`, with weft's `config.h` beside it in `dir/config`.
fn fetch_gnulib(dir: &Path) -> PathBuf {
    let unpacked = debian_package(dir, PACKAGE, PACKAGE_SHA256);
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/gnulib/config.h"),
        config.join("config.h"),
    )
    .unwrap();
    unpacked.join("usr/share/gnulib")
}

/// Builds gnulib's `sources` (paths under its folder) with
/// `weft cc -pthread` at `level` into `dir/<name><level>.wasm`.
fn build(dir: &Path, gnulib: &Path, name: &str, sources: &[&str], level: &str) -> PathBuf {
    let module = dir.join(format!("{name}{level}.wasm"));
    let includes = [
        format!("-I{}", dir.join("config").display()),
        format!("-I{}", gnulib.join("lib").display()),
        format!("-I{}", gnulib.join("tests").display()),
    ];
    let sources: Vec<String> = sources
        .iter()
        .map(|source| gnulib.join(source).display().to_string())
        .collect();
    let mut args = vec!["cc", "-pthread", level];
    args.extend(includes.iter().map(String::as_str));
    args.extend(sources.iter().map(String::as_str));
    args.extend(["-o", arg(&module)]);
    let out = weft_in(dir, &args);
    assert_eq!(out.code, 0, "{name} {level}: {}", out.stderr);
    module
}

#[test]
fn gnulibs_signal_tests_build_unchanged_and_pass() {
    let dir = tempfile::tempdir().unwrap();
    let gnulib = fetch_gnulib(dir.path());
    for name in [
        "pthread_sigmask2",
        "sigaction",
        "raise",
        "sleep",
        "nanosleep",
        "usleep",
        "signal-h",
    ] {
        let source = format!("tests/test-{name}.c");
        for level in ["-O0", "-O2"] {
            let module = build(dir.path(), &gnulib, name, &[&source], level);
            let out = weft_in(
                dir.path(),
                &["test", arg(&module), "--iterations", "100", "--no-save"],
            );
            assert_eq!(out.code, 0, "{name} {level}: {}{}", out.stdout, out.stderr);
            assert!(out.stdout.contains("1 passed"), "{}", out.stdout);
        }
    }
}

/// The sources of gnulib's test of its async-safe linked list `kind`
/// (`weak` or `strong`) and of the modules it uses.
fn list_test(kind: &str) -> Vec<String> {
    let mut sources = vec![format!("tests/test-asyncsafe-linked_list-{kind}.c")];
    sources.extend(
        [
            "lib/gl_linked_list.c",
            "lib/gl_list.c",
            "lib/glthread/thread.c",
        ]
        .map(String::from),
    );
    sources
}

/// `weft explore` of `module` with the race check off, timed sleeps (the
/// sender sleeps a millisecond between bursts), `extra` and the test
/// case's number last (the program's argument).
fn explore_case(dir: &Path, module: &Path, extra: &[&str], case: &str) -> serde_json::Value {
    let mut args = vec![
        "explore",
        arg(module),
        "--json",
        "--races",
        "off",
        "--sleeps",
        "timed",
    ];
    args.extend(extra);
    args.extend(["--", case]);
    weft_in(dir, &args).json()
}

#[test]
fn the_async_safe_list_fails_only_where_gnulib_expects_it_to() {
    let dir = tempfile::tempdir().unwrap();
    let gnulib = fetch_gnulib(dir.path());
    let weak = list_test("weak");
    let weak: Vec<&str> = weak.iter().map(String::as_str).collect();
    for level in ["-O0", "-O2"] {
        let module = build(dir.path(), &gnulib, "weak", &weak, level);
        for case in ["2", "3"] {
            let json = explore_case(dir.path(), &module, &["--no-minimize"], case);
            assert_eq!(json["status"], "failure", "case {case} {level}: {json}");
            // The handler saw a list that is none of the recent ones
            // ("unexpected bag"), or read a node the other thread freed
            // meanwhile (its `add_to_bag` aborts on a value out of range).
            assert_eq!(json["failure"]["kind"], "assertion", "{json}");
            let replay = json["replay_file"].as_str().unwrap();
            let out = weft_in(dir.path(), &["replay", replay]);
            assert_eq!(out.code, 1, "{}", out.stdout);
            assert!(out.stdout.contains("reproduced"), "{}", out.stdout);
        }
    }
    // Case 1, the handler in the thread that changes the list, passes; it
    // is a long test (5,000 signals over a second of virtual time), so
    // optimised, a few executions, and a larger compute budget.
    let module = dir.path().join("weak-O2.wasm");
    let extra = [
        "--iterations",
        "3",
        "--no-save",
        "--max-fuel",
        "20000000000",
    ];
    let json = explore_case(dir.path(), &module, &extra, "1");
    assert_eq!(json["status"], "pass", "{json}");

    // A bug seeded in a copy made here: the sending thread no longer
    // blocks the signal in case 1, so the handler may run there, in the
    // middle of the other thread's change, which the test then sees.
    let test = std::fs::read_to_string(gnulib.join(weak[0])).unwrap();
    let blocks = "  if (test != 3)\n    block_sigint ();\n\n  int repeat;";
    assert_eq!(test.matches(blocks).count(), 1, "the test changed");
    let seeded = gnulib.join("tests/test-seeded.c");
    std::fs::write(&seeded, test.replace(blocks, "  int repeat;")).unwrap();
    let mut sources = weak.clone();
    sources[0] = "tests/test-seeded.c";
    let module = build(dir.path(), &gnulib, "seeded", &sources, "-O2");
    let extra = ["--no-minimize", "--max-fuel", "20000000000"];
    let json = explore_case(dir.path(), &module, &extra, "1");
    assert_eq!(json["status"], "failure", "{json}");
    assert_eq!(json["failure"]["kind"], "assertion", "{json}");
    let replay = json["replay_file"].as_str().unwrap();
    let out = weft_in(dir.path(), &["replay", replay]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("reproduced"), "{}", out.stdout);

    let strong = list_test("strong");
    let strong: Vec<&str> = strong.iter().map(String::as_str).collect();
    let module = build(dir.path(), &gnulib, "strong", &strong, "-O2");
    let json = explore_case(dir.path(), &module, &["--no-minimize"], "2");
    assert_eq!(json["status"], "failure", "{json}");
    let message = json["failure"]["message"].as_str().unwrap();
    assert!(message.contains("or older"), "{message}");
}
