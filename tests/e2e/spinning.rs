//! Spinning algorithms proved by the exhaustive search, and their broken
//! variants found (`tests/spinning/`): mutual exclusion by Peterson's,
//! Dekker's and Szymański's algorithms with plain shared variables
//! (`volatile`, explored with `--points memory`) and with C11 atomics, a
//! ticket lock, a test-and-set lock and readers polling a flag, built
//! unoptimised and optimised. Each waits by spinning, so every schedule is
//! finite only because `dpor` takes a loop whose turns come again alike as
//! waiting for another thread (an unoptimised loop writes its stack slots
//! in every turn, alike). The three-thread filter lock and Szymański's
//! algorithm end only under the search that remembers states
//! (`--stateful`).

use crate::support::{arg, root, weft_in};
use std::path::{Path, PathBuf};

/// How a program's shared variables are declared.
#[derive(Clone, Copy, Debug)]
enum Shared {
    /// Plain and `volatile`: every access a scheduling point.
    Plain,
    /// C11 atomics (sequentially consistent), the race check on.
    Atomics,
}

/// Builds `tests/spinning/<name>.c` for `threads` threads, and explores it
/// exhaustively at `-O0` and `-O2`, correct and broken: the correct one is
/// proved (every schedule explored, no failure), the broken one fails.
fn proved_and_broken_found(name: &str, threads: u32, shared: Shared) {
    searched(name, threads, shared, &["-O0", "-O2"], Search::Stateless);
}

/// Whether the search remembers states (`--stateful`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Search {
    Stateless,
    Stateful,
}

/// [`proved_and_broken_found`] at the optimisation levels `levels`, by
/// the search `search`.
fn searched(name: &str, threads: u32, shared: Shared, levels: &[&str], search: Search) {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("tests/spinning").join(format!("{name}.c"));
    for &level in levels {
        for broken in [false, true] {
            let mut flags = vec![format!("-DN={threads}"), level.to_owned()];
            if matches!(shared, Shared::Atomics) {
                flags.push("-DATOMICS".to_owned());
            }
            if broken {
                flags.push("-DBROKEN".to_owned());
            }
            let what = format!("{name} {flags:?}");
            let module = build(dir.path(), &source, &flags);
            let json = explore(dir.path(), &module, shared, search);
            if broken {
                // Both threads inside: the assertion, or (atomics) the race
                // on what the section guards; a ticket drawn twice also
                // leaves a later ticket never served.
                assert_eq!(json["status"], "failure", "{what}: {json}");
                let kind = json["failure"]["kind"].as_str().unwrap_or_default();
                assert!(
                    ["assertion", "data-race", "livelock"].contains(&kind),
                    "{what}: {json}"
                );
            } else {
                assert_eq!(json["status"], "pass", "{what}: {json}");
                assert_eq!(json["exhaustive"], true, "{what}: {json}");
            }
        }
    }
}

/// Builds `source` into `dir` with `weft cc` and `flags`.
fn build(dir: &Path, source: &Path, flags: &[String]) -> PathBuf {
    let stem = source
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program");
    let module = dir.join(format!("{stem}{}.wasm", flags.join("")));
    let mut args = vec!["cc", arg(source), "-o", arg(&module)];
    args.extend(flags.iter().map(String::as_str));
    let out = weft_in(dir, &args);
    assert_eq!(
        out.code,
        0,
        "{} {flags:?}: {}",
        source.display(),
        out.stderr
    );
    module
}

/// `weft explore --strategy dpor` of `module` switching at every memory
/// access, as JSON; the race check only for atomics (plain shared
/// variables race by design: the algorithms assume sequentially
/// consistent memory).
fn explore(dir: &Path, module: &Path, shared: Shared, search: Search) -> serde_json::Value {
    let mut args = vec![
        "explore",
        arg(module),
        "--strategy",
        "dpor",
        "--points",
        "memory",
        "--time-limit",
        "120s",
        "--no-save",
        "--no-minimize",
        "--json",
    ];
    if matches!(shared, Shared::Plain) {
        args.extend(["--races", "off"]);
    }
    if search == Search::Stateful {
        args.push("--stateful");
    }
    let out = weft_in(dir, &args);
    out.json()
}

#[test]
fn petersons_algorithm_is_proved_for_two_threads() {
    proved_and_broken_found("peterson", 2, Shared::Plain);
    proved_and_broken_found("peterson", 2, Shared::Atomics);
}

#[test]
fn dekkers_algorithm_is_proved() {
    proved_and_broken_found("dekker", 2, Shared::Plain);
    proved_and_broken_found("dekker", 2, Shared::Atomics);
}

#[test]
fn szymanskis_algorithm_is_proved_for_two_threads() {
    proved_and_broken_found("szymanski", 2, Shared::Plain);
    proved_and_broken_found("szymanski", 2, Shared::Atomics);
}

#[test]
fn the_stateful_search_proves_three_thread_filter_locks_and_szymanski() {
    // The stateless search does not end these (over 100,000 schedules).
    for name in ["peterson", "szymanski"] {
        searched(name, 3, Shared::Plain, &["-O2"], Search::Stateful);
    }
    searched("peterson", 3, Shared::Atomics, &["-O2"], Search::Stateful);
}

#[test]
fn the_stateful_search_proves_what_the_stateless_one_does_and_finds_the_same_bugs() {
    for name in ["peterson", "dekker", "szymanski"] {
        searched(name, 2, Shared::Plain, &["-O0", "-O2"], Search::Stateful);
    }
    for threads in [2, 3] {
        searched(
            "test-and-set",
            threads,
            Shared::Atomics,
            &["-O2"],
            Search::Stateful,
        );
        searched(
            "flag-polling",
            threads,
            Shared::Plain,
            &["-O0"],
            Search::Stateful,
        );
    }
}

#[test]
fn spin_locks_are_proved_for_two_and_three_threads() {
    for threads in [2, 3] {
        proved_and_broken_found("ticket-lock", threads, Shared::Atomics);
        proved_and_broken_found("test-and-set", threads, Shared::Atomics);
    }
}

#[test]
fn readers_polling_a_flag_are_proved_for_two_and_three_threads() {
    for threads in [2, 3] {
        proved_and_broken_found("flag-polling", threads, Shared::Plain);
        proved_and_broken_found("flag-polling", threads, Shared::Atomics);
    }
}

#[test]
fn a_loop_whose_alike_turns_store_what_another_thread_reads_is_searched_through() {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("tests/spinning/turn-stores-seen.c");
    for level in ["-O0", "-O2"] {
        let module = build(dir.path(), &source, &[level.to_owned()]);
        let json = explore(dir.path(), &module, Shared::Plain, Search::Stateless);
        assert_eq!(json["status"], "failure", "{level}: {json}");
        assert_eq!(json["failure"]["kind"], "assertion", "{level}: {json}");
    }
}
