//! Replay refuses what does not match: another module, an edited schedule,
//! a malformed or foreign file.

use crate::support::{arg, sample, weft_in};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Finds the lost update and returns (dir guard, replay file path).
fn found_failure() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("lu.weft.json");
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update")),
            "--save-failure",
            arg(&replay),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    (dir, replay)
}

fn edit(path: &Path, change: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    change(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

#[test]
fn replay_reproduces_and_prints_the_interleaving() {
    let (dir, replay) = found_failure();
    let out = weft_in(dir.path(), &["replay", arg(&replay)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.contains("reproduced the assertion failure"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("lost an update"), "{}", out.stdout);
    assert!(
        out.stdout.contains("src/main.rs:"),
        "source lines from DWARF: {}",
        out.stdout
    );
    assert!(out.stdout.contains("atomic load"), "{}", out.stdout);
}

#[test]
fn another_module_is_refused() {
    let (dir, replay) = found_failure();
    let out = weft_in(
        dir.path(),
        &[
            "replay",
            arg(&replay),
            "--module",
            arg(&sample("abba-deadlock")),
        ],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("module hash mismatch"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_edited_schedule_is_refused() {
    let (dir, replay) = found_failure();
    edit(&replay, |v| {
        let decisions = v["decisions"].as_array_mut().unwrap();
        for d in decisions.iter_mut().take(40) {
            let t = d.as_u64().unwrap();
            *d = Value::from(if t == 1 { 2 } else { 1 });
        }
    });
    let out = weft_in(dir.path(), &["replay", arg(&replay)]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("diverged") || out.stderr.contains("trace hash mismatch"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_edited_trace_hash_is_refused() {
    let (dir, replay) = found_failure();
    edit(&replay, |v| v["trace_hash"] = Value::from("0".repeat(32)));
    let out = weft_in(dir.path(), &["replay", arg(&replay)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("trace hash mismatch"), "{}", out.stderr);
}

#[test]
fn an_edited_verdict_is_refused() {
    let (dir, replay) = found_failure();
    for change in [
        (|v: &mut Value| v["failure"]["kind"] = Value::from("deadlock")) as fn(&mut Value),
        |v| v["failure"]["message"] = Value::from("something else"),
        |v| v["failure"] = Value::Null,
    ] {
        let edited = dir.path().join("edited.weft.json");
        std::fs::copy(&replay, &edited).unwrap();
        edit(&edited, change);
        let out = weft_in(dir.path(), &["replay", arg(&edited)]);
        assert_eq!(out.code, 2, "{}", out.stdout);
        assert!(out.stderr.contains("judged again"), "{}", out.stderr);
    }
}

#[test]
fn truncated_schedule_is_refused() {
    let (dir, replay) = found_failure();
    edit(&replay, |v| {
        v["decisions"].as_array_mut().unwrap().truncate(10);
    });
    let out = weft_in(dir.path(), &["replay", arg(&replay)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("diverged"), "{}", out.stderr);
}

#[test]
fn malformed_and_foreign_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "garbage.weft.json",
            "not json at all",
            "is not a weft replay file",
        ),
        (
            "other.weft.json",
            "{\"format\": \"something-else\"}",
            "is not a weft replay file",
        ),
        (
            "future.weft.json",
            "{\"format\": \"weft-replay\", \"version\": 7}",
            "replay format version 7",
        ),
    ];
    for (name, text, message) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = weft_in(dir.path(), &["replay", arg(&path)]);
        assert_eq!(out.code, 2, "{name}");
        assert!(out.stderr.contains(message), "{name}: {}", out.stderr);
    }
    let out = weft_in(dir.path(), &["replay", "missing.weft.json"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot read"), "{}", out.stderr);
}

/// A replay file committed with the suite replays with the trace hash it
/// recorded: a change to the format or to what executions do, without a
/// version bump, fails here. After a deliberate bump, save it again:
/// `cd tests/fixtures && weft explore ../../target/samples/lost-update-wat.wasm
/// --save-failure lost-update-wat.weft.json`.
#[test]
fn a_committed_replay_file_still_replays_with_its_trace_hash() {
    let fixture = crate::support::root().join("tests/fixtures/lost-update-wat.weft.json");
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "replay",
            arg(&fixture),
            "--module",
            arg(&sample("lost-update-wat")),
            "--json",
        ],
    );
    assert_eq!(out.code, 1, "{} {}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["trace_hash"], recorded["trace_hash"], "{}", out.stdout);
    assert_eq!(json["failure"]["kind"], recorded["failure"]["kind"]);
}

#[test]
fn the_environment_given_reaches_the_guest_and_travels_in_the_replay_file() {
    let dir = tempfile::tempdir().unwrap();
    let module = crate::support::build_c(
        dir.path(),
        "moody",
        r#"#include <stdlib.h>
#include <string.h>
int main(void) {
    const char *mood = getenv("MOOD");
    if (mood && strcmp(mood, "grumpy") == 0) abort();
    return 0;
}
"#,
    );
    let calm = weft_in(dir.path(), &["run", arg(&module)]);
    assert_eq!(calm.code, 0, "{}", calm.stdout);
    let replay = dir.path().join("moody.weft.json");
    let grumpy = weft_in(
        dir.path(),
        &[
            "run",
            "--env",
            "MOOD=grumpy",
            arg(&module),
            "--save-failure",
            arg(&replay),
        ],
    );
    assert_eq!(grumpy.code, 1, "{}", grumpy.stdout);
    let again = weft_in(dir.path(), &["replay", arg(&replay)]);
    assert_eq!(again.code, 1, "{}\n{}", again.stdout, again.stderr);
    let bad = weft_in(dir.path(), &["run", "--env", "MOOD", arg(&module)]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("is not KEY=VALUE"), "{}", bad.stderr);
}

/// A replay file written in one directory replays from another: its
/// module is found beside it, and a failure whose message names a source
/// file (here a data race, whose path each directory tells differently)
/// is the same failure.
#[test]
fn a_replay_file_replays_from_another_directory() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let module = crate::support::build_c(
        &sub,
        "racy",
        r#"#include <pthread.h>
static int hits;
static void *work(void *arg) { hits++; return 0; }
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    hits++;
    pthread_join(t, 0);
    return 0;
}
"#,
    );
    let found = weft_in(
        dir.path(),
        &[
            "explore",
            "sub/racy.wasm",
            "--races",
            "fail",
            "--save-failure",
            "sub/racy.weft.json",
        ],
    );
    assert_eq!(found.code, 1, "{}", found.stdout);
    assert!(found.stdout.contains("sub/racy.c"), "{}", found.stdout);
    let inside = weft_in(&sub, &["replay", "racy.weft.json"]);
    assert_eq!(inside.code, 1, "{}{}", inside.stdout, inside.stderr);
    assert!(inside.stdout.contains("reproduced"), "{}", inside.stdout);
    let elsewhere = tempfile::tempdir().unwrap();
    let replay = sub.join("racy.weft.json");
    let far = weft_in(elsewhere.path(), &["replay", arg(&replay)]);
    assert_eq!(far.code, 1, "{}{}", far.stdout, far.stderr);
    // A module that is not where the file says: the error says how to
    // name it.
    std::fs::rename(&module, sub.join("moved.wasm")).unwrap();
    let lost = weft_in(&sub, &["replay", "racy.weft.json"]);
    assert_eq!(lost.code, 2, "{}", lost.stderr);
    assert!(lost.stderr.contains("--module"), "{}", lost.stderr);
    let named = weft_in(
        &sub,
        &["replay", "racy.weft.json", "--module", "moved.wasm"],
    );
    assert_eq!(named.code, 1, "{}{}", named.stdout, named.stderr);
}
