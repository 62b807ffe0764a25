//! What the stateful search (`--strategy dpor --stateful`) takes a
//! program's state to be (`tests/states/`): bytes no thread can read
//! again, and bytes no execution has read, are no part of it.

use crate::support::{arg, read_json, root, sample, weft_in};
use std::path::Path;

/// The JSON report of `weft explore --strategy dpor --stateful` on
/// `module`, run in `dir`, after checking it passes and is exhaustive
/// (`what` names the build in messages).
fn proved_statefully(dir: &Path, module: &Path, what: &str) -> serde_json::Value {
    let json = weft_in(
        dir,
        &[
            "explore",
            arg(module),
            "--strategy",
            "dpor",
            "--stateful",
            "--no-save",
            "--json",
        ],
    )
    .json();
    assert_eq!(json["status"], "pass", "{what}: {json}");
    assert_eq!(json["exhaustive"], true, "{what}: {json}");
    json
}

/// The scratch arrays that returned calls left below the threads' stack
/// pointers tell apart no states: the two orders of the first lock meet
/// again once both threads passed the barrier, at `-O0` (locals in stack
/// slots) and at `-O2`.
#[test]
fn dead_bytes_below_a_threads_stack_pointer_are_no_part_of_a_state() {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("tests/states/dead-frames.c");
    for level in ["-O0", "-O2"] {
        let module = dir.path().join(format!("dead-frames{level}.wasm"));
        let built = weft_in(dir.path(), &["cc", level, arg(&source), "-o", arg(&module)]);
        assert_eq!(built.code, 0, "{level}: {}", built.stderr);
        let json = proved_statefully(dir.path(), &module, level);
        let matched = json["state_space"]["matched"].as_u64().unwrap_or_default();
        assert!(matched > 0, "{level}: no state met twice: {json}");
    }
}

/// A log that nothing reads tells apart no states: with its entries in
/// every order (`tests/states/write-only-log.c`), the search explores as
/// much as with equal entries. (At `-O0` the log is written; at `-O2`
/// the compiler drops the dead stores, and both builds agree anyway.)
#[test]
fn bytes_no_execution_reads_are_no_part_of_a_state() {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("tests/states/write-only-log.c");
    for level in ["-O0", "-O2"] {
        let explored: Vec<serde_json::Value> = ["", "-DEQUAL_ENTRIES"]
            .iter()
            .map(|define| {
                let module = dir.path().join(format!("log{level}{define}.wasm"));
                let mut line = vec!["cc", level];
                if !define.is_empty() {
                    line.push(define);
                }
                line.extend(["-o", arg(&module), arg(&source)]);
                let built = weft_in(dir.path(), &line);
                assert_eq!(built.code, 0, "{level}{define}: {}", built.stderr);
                proved_statefully(dir.path(), &module, &format!("{level}{define}"))
            })
            .collect();
        let [ordered, equal] = &explored[..] else {
            unreachable!("two builds");
        };
        assert_eq!(
            ordered["state_space"], equal["state_space"],
            "{level}: {ordered}\n{equal}"
        );
        assert_eq!(ordered["executions"], equal["executions"], "{level}");
    }
}

/// A failure a stateful search finds replays: its replay file records that
/// the module was built with the marks of what it reads, which cost fuel,
/// and `weft replay` builds it so again.
#[test]
fn a_failure_found_by_the_stateful_search_replays() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("lost.weft.json");
    let found = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update-c")),
            "--strategy",
            "dpor",
            "--stateful",
            "--save-failure",
            arg(&replay),
        ],
    );
    assert_eq!(found.code, 1, "{}{}", found.stdout, found.stderr);
    let saved = read_json(&replay);
    assert_eq!(saved["instrument"]["track_reads"], true, "{saved}");
    let replayed = weft_in(dir.path(), &["replay", arg(&replay)]);
    assert_eq!(replayed.code, 1, "{}", replayed.stderr);
    assert!(
        replayed
            .stdout
            .contains("reproduced the assertion failure of"),
        "{}",
        replayed.stdout
    );
}
