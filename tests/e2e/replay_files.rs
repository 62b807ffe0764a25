//! Replay refuses what does not match: another module, an edited schedule,
//! a malformed or foreign file.

use crate::support::{arg, read_json, sample, weft_in};
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
    let mut value = read_json(path);
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
fn a_file_of_an_unknown_or_contradicted_point_model_is_refused() {
    let (dir, replay) = found_failure();
    for (model, message) in [
        ("every-instruction", "which this weft does not know"),
        ("sync-internals", "contradicts its `instrument`"),
    ] {
        let edited = dir.path().join("edited.weft.json");
        std::fs::copy(&replay, &edited).unwrap();
        edit(&edited, |v| v["point_model"] = Value::from(model));
        let out = weft_in(dir.path(), &["replay", arg(&edited)]);
        assert_eq!(out.code, 2, "{model}: {}", out.stdout);
        assert!(out.stderr.contains(message), "{model}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
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
    let recorded = read_json(&fixture);
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

/// The folder of replay files written before each call of the library
/// model became one step (`--library internals`, the only model then), one
/// per failure kind the C, C++ and Zig samples show (and one of the
/// exhaustive search, whose files already stepped over library calls).
/// Its `code-hashes.txt` pins the code of each sample they were written
/// against (`WEFT_BLESS=1` writes it; see `support::code_hash`).
fn replays_before_library_calls() -> PathBuf {
    crate::support::root().join("tests/fixtures/replays-before-library-calls")
}

/// The sample a replay file of [`replays_before_library_calls`] ran.
fn sample_of(file: &Value) -> String {
    let path = file["module"]["path"].as_str().unwrap();
    Path::new(path)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Every replay file written before the library-call model replays as it
/// did then: the same trace hash and failure, with no model named in it.
/// The samples are built in this checkout, so their DWARF (build paths)
/// may differ from the module the file names: the file is replayed
/// against the module built here when its code is the code it was written
/// against, as the trace hash pins do.
#[test]
fn replay_files_written_before_library_calls_replay_unchanged() {
    let dir = replays_before_library_calls();
    let hashes_path = dir.join("code-hashes.txt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".weft.json"))
        .collect();
    files.sort();
    let recorded: Vec<(PathBuf, Value)> = files
        .into_iter()
        .map(|path| {
            let file = read_json(&path);
            (path, file)
        })
        .collect();
    let code_hashes = |name: &str| crate::support::code_hash(&std::fs::read(sample(name)).unwrap());
    if std::env::var_os("WEFT_BLESS").is_some() {
        let lines: std::collections::BTreeSet<String> = recorded
            .iter()
            .map(|(_, file)| {
                let name = sample_of(file);
                format!("{name} {}", code_hashes(&name))
            })
            .collect();
        let text: String = lines.into_iter().map(|line| line + "\n").collect();
        std::fs::write(&hashes_path, text).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(&hashes_path).unwrap();
    let kinds: std::collections::BTreeSet<&str> = recorded
        .iter()
        .map(|(_, file)| file["failure"]["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "assertion",
        "deadlock",
        "data-race",
        "livelock",
        "thread-limit",
        "serializability",
    ] {
        assert!(kinds.contains(kind), "no stored replay file of a {kind}");
    }
    let temp = tempfile::tempdir().unwrap();
    for (path, file) in &recorded {
        let name = sample_of(file);
        let wasm = std::fs::read(sample(&name)).unwrap();
        let code = crate::support::code_hash(&wasm);
        assert!(
            pinned.lines().any(|line| line == format!("{name} {code}")),
            "{name}'s code is not the code {} was written against",
            path.display()
        );
        assert!(file.get("model").is_none(), "{}", path.display());
        let copy = temp.path().join(path.file_name().unwrap());
        std::fs::copy(path, &copy).unwrap();
        edit(&copy, |value| {
            value["module"]["blake3"] = blake3::hash(&wasm).to_hex().to_string().into();
        });
        let out = weft_in(
            temp.path(),
            &[
                "replay",
                arg(&copy),
                "--module",
                arg(&sample(&name)),
                "--json",
            ],
        );
        assert_eq!(
            out.code,
            1,
            "{}: {} {}",
            path.display(),
            out.stdout,
            out.stderr
        );
        let json = out.json();
        assert_eq!(json["trace_hash"], file["trace_hash"], "{}", path.display());
        assert_eq!(
            json["failure"]["kind"],
            file["failure"]["kind"],
            "{}",
            path.display()
        );
    }
}

/// A replay file written under `library-calls` before a library step's
/// entry asked the host quickly (`InstrumentOptions::quick_library_entry`)
/// replays as it did then: its instrumentation, which leaves the quick
/// entry out, is the one it was made with. Its schedule ends a time slice
/// of a thread that computes between library calls, and whether it fails
/// depends on where the slice ended (see `slice-parity.wat` beside it):
/// with the quick entry, the same schedule is another execution.
#[test]
fn a_replay_file_written_before_the_quick_library_entry_replays_unchanged() {
    let fixtures = crate::support::root().join("tests/fixtures/replays-before-quick-library-entry");
    let module = fixtures.join("slice-parity.wat");
    let stored = fixtures.join("assertion-slice-parity.weft.json");
    let recorded = read_json(&stored);
    assert_eq!(recorded["point_model"], "library-calls");
    assert!(recorded["instrument"].get("quick_library_entry").is_none());
    let dir = tempfile::tempdir().unwrap();
    let replay = |file: &Path| {
        weft_in(
            dir.path(),
            &[
                "replay",
                arg(file),
                "--module",
                arg(&module),
                "--full-trace",
                "--json",
            ],
        )
    };
    let out = replay(&stored);
    assert_eq!(out.code, 1, "{} {}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["trace_hash"], recorded["trace_hash"]);
    assert_eq!(json["failure"]["kind"], "assertion");
    let slices = json["interleaving"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|step| step["event"] == "computes (time slice)")
        .count();
    assert!(slices > 0, "{}", out.stdout);
    let quick = dir.path().join("quick.weft.json");
    std::fs::copy(&stored, &quick).unwrap();
    edit(&quick, |file| {
        file["instrument"]["quick_library_entry"] = true.into();
    });
    let out = replay(&quick);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("trace hash mismatch"), "{}", out.stderr);
}

/// A replay file written under `library-calls` before Rust std's runtime
/// machinery became library steps (`InstrumentOptions::rust_runtime_steps`)
/// replays as it did then. Its program (`print-flag.wat` beside it) fails
/// only if the main thread runs between the two atomic stores of a
/// function named as std's `_print`: a switch the new model has no point
/// for, so with the option the same schedule does not replay, and a new
/// sampling exploration, which runs under it, finds no failure (the model
/// of the library's internals still does).
#[test]
fn a_replay_file_written_before_rusts_runtime_steps_replays_unchanged() {
    let fixtures = crate::support::root().join("tests/fixtures/replays-before-rust-runtime-steps");
    let module = fixtures.join("print-flag.wat");
    let stored = fixtures.join("assertion-print-flag.weft.json");
    let recorded = read_json(&stored);
    assert_eq!(recorded["point_model"], "library-calls");
    assert!(recorded["instrument"].get("rust_runtime_steps").is_none());
    let dir = tempfile::tempdir().unwrap();
    let replay = |file: &Path| {
        weft_in(
            dir.path(),
            &["replay", arg(file), "--module", arg(&module), "--json"],
        )
    };
    let out = replay(&stored);
    assert_eq!(out.code, 1, "{} {}", out.stdout, out.stderr);
    assert_eq!(out.json()["trace_hash"], recorded["trace_hash"]);
    let forced = dir.path().join("forced.weft.json");
    std::fs::copy(&stored, &forced).unwrap();
    edit(&forced, |file| {
        file["instrument"]["rust_runtime_steps"] = true.into();
    });
    let out = replay(&forced);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("diverged"), "{}", out.stderr);
    let explore = |model: &str| {
        weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                "random",
                "--races",
                "off",
                "--point-model",
                model,
                "--iterations",
                "500",
                "--no-save",
            ],
        )
    };
    let out = explore("library-calls");
    assert_eq!(out.code, 0, "{} {}", out.stdout, out.stderr);
    let out = explore("sync-internals");
    assert_eq!(out.code, 1, "{} {}", out.stdout, out.stderr);
}
