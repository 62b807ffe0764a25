//! Replay files travel: every kind of failure, found from one directory,
//! replays from another with its module copied beside it under another
//! name; outputs never overwrite what they must not; each shard saves its
//! own replay file.

use crate::support::{arg, build_c, sample, weft_in};
use std::path::Path;

/// A command that finds a failure of `kind` in `sample`, saving its replay
/// file as `FILE` (the placeholder), with the module given by its absolute
/// path.
struct Finding {
    kind: &'static str,
    sample: &'static str,
    command: &'static [&'static str],
}

const FINDINGS: [Finding; 8] = [
    Finding {
        kind: "assertion",
        sample: "lost-update",
        command: &["explore", "MODULE", "--save-failure", "FILE"],
    },
    Finding {
        kind: "deadlock",
        sample: "abba-deadlock",
        command: &["explore", "MODULE", "--save-failure", "FILE"],
    },
    Finding {
        kind: "data-race",
        sample: "racy-counter-c",
        command: &["explore", "MODULE", "--save-failure", "FILE"],
    },
    Finding {
        kind: "linearizability",
        sample: "stringbuffer",
        command: &[
            "gen",
            "MODULE",
            "--class",
            "sb",
            "--time-limit",
            "60s",
            "--save-failure",
            "FILE",
        ],
    },
    Finding {
        kind: "serializability",
        sample: "account",
        command: &["serializability", "MODULE", "--save-failure", "FILE"],
    },
    Finding {
        kind: "schedule-violation",
        sample: "imunit-queue",
        command: &[
            "explore",
            "MODULE",
            "--schedule",
            "finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2",
            "--mode",
            "passive",
            "--save-failure",
            "FILE",
            "--",
            "take_with_add_blocking",
        ],
    },
    Finding {
        kind: "unhandled-message",
        sample: "registry",
        command: &["actors", "MODULE", "--save-failure", "FILE"],
    },
    Finding {
        kind: "livelock",
        sample: "spin-forever",
        command: &["explore", "MODULE", "--save-failure", "FILE"],
    },
];

/// Runs `finding` from `dir`, saving its replay file at `file`.
fn find(dir: &Path, finding: &Finding, module: &Path, file: &Path) -> crate::support::Output {
    let args: Vec<&str> = finding
        .command
        .iter()
        .map(|&a| match a {
            "MODULE" => arg(module),
            "FILE" => arg(file),
            other => other,
        })
        .collect();
    weft_in(dir, &args)
}

#[test]
fn every_kind_of_failure_replays_from_elsewhere_with_its_module_beside_it() {
    let here = tempfile::tempdir().unwrap();
    let there = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    for finding in &FINDINGS {
        // Found from `here`, the module given by an absolute path.
        let file = here.path().join(format!("{}.weft.json", finding.sample));
        let found = find(here.path(), finding, &sample(finding.sample), &file);
        assert_eq!(
            found.code, 1,
            "{}: {}{}",
            finding.sample, found.stdout, found.stderr
        );
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains(&format!("\"kind\": \"{}\"", finding.kind)),
            "{}: {text}",
            finding.sample
        );
        // Sent: the replay file and the module, into another folder, the
        // module under another name.
        let folder = there.path().join(finding.sample);
        std::fs::create_dir_all(&folder).unwrap();
        let sent = folder.join("bug.weft.json");
        std::fs::copy(&file, &sent).unwrap();
        std::fs::copy(sample(finding.sample), folder.join("program.wasm")).unwrap();
        // Replayed from a third directory, naming the module.
        let replayed = weft_in(
            elsewhere.path(),
            &[
                "replay",
                arg(&sent),
                "--module",
                arg(&folder.join("program.wasm")),
            ],
        );
        assert_eq!(
            replayed.code, 1,
            "{}: {}{}",
            finding.sample, replayed.stdout, replayed.stderr
        );
        assert!(
            replayed
                .stdout
                .contains(&format!("reproduced the {} failure", finding.kind)),
            "{}: {}",
            finding.sample,
            replayed.stdout
        );
    }
}

/// A replay file records its module's path from itself: moved together,
/// from anywhere, the pair replays with nothing named.
#[test]
fn a_replay_file_finds_its_module_from_any_directory() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("build")).unwrap();
    let module = build_c(
        &project.join("build"),
        "counter",
        r#"#include <pthread.h>
#include <assert.h>
static int count;
static void *bump(void *arg) { int seen = count; count = seen + 1; return 0; }
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, bump, 0);
    bump(0);
    pthread_join(t, 0);
    assert(count == 2);
    return 0;
}
"#,
    );
    std::fs::create_dir_all(project.join("bugs")).unwrap();
    let found = weft_in(
        &project,
        &[
            "explore",
            "build/counter.wasm",
            "--races",
            "off",
            "--points",
            "memory",
            "--save-failure",
            "bugs/counter.weft.json",
        ],
    );
    assert_eq!(found.code, 1, "{}{}", found.stdout, found.stderr);
    let text = std::fs::read_to_string(project.join("bugs/counter.weft.json")).unwrap();
    assert!(
        text.contains("\"path\": \"../build/counter.wasm\""),
        "{text}"
    );
    // The whole project moves; the replay runs from inside `bugs` and from
    // somewhere else entirely.
    let moved = dir.path().join("moved");
    std::fs::rename(&project, &moved).unwrap();
    for (cwd, file) in [
        (moved.join("bugs"), "counter.weft.json".to_string()),
        (
            dir.path().to_path_buf(),
            arg(&moved.join("bugs/counter.weft.json")).to_string(),
        ),
    ] {
        let replayed = weft_in(&cwd, &["replay", &file]);
        assert_eq!(replayed.code, 1, "{}{}", replayed.stdout, replayed.stderr);
        assert!(
            replayed.stdout.contains("reproduced"),
            "{}",
            replayed.stdout
        );
    }
    assert!(!module.exists());
}

/// No output overwrites a replay file, a module or a source, and a path
/// that cannot be written is refused before anything runs.
#[test]
fn outputs_are_checked_before_the_work_starts() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("lost-update");
    let found = weft_in(
        dir.path(),
        &["explore", arg(&module), "--save-failure", "lu.weft.json"],
    );
    assert_eq!(found.code, 1, "{}", found.stderr);
    let original = std::fs::read(dir.path().join("lu.weft.json")).unwrap();
    for (args, says) in [
        (
            vec!["replay", "lu.weft.json", "--html", "lu.weft.json"],
            "the replay file itself",
        ),
        (
            vec!["minimize", "lu.weft.json", "--html", "lu.weft.json"],
            "the replay file itself",
        ),
        (
            vec![
                "explore",
                arg(&module),
                "--save-failure",
                "x.weft.json",
                "--html",
                "x.weft.json",
            ],
            "both name",
        ),
        (
            vec![
                "explore",
                arg(&module),
                "--no-save",
                "--junit",
                "lu.weft.json",
            ],
            "is a replay file",
        ),
        (
            vec![
                "explore",
                arg(&module),
                "--no-save",
                "--html",
                "lu.weft.json",
            ],
            "is a replay file",
        ),
    ] {
        let out = weft_in(dir.path(), &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert_eq!(
            std::fs::read(dir.path().join("lu.weft.json")).unwrap(),
            original
        );
    }
    // An unwritable path is refused at once, not after the exploration.
    let started = std::time::Instant::now();
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&module),
            "--time-limit",
            "60s",
            "--iterations",
            "100000000",
            "--save-failure",
            "no/such/folder/lu.weft.json",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("cannot write --save-failure"),
        "{}",
        out.stderr
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // A source is never overwritten by a module.
    std::fs::write(dir.path().join("main.c"), "int main(void) { return 0; }").unwrap();
    std::fs::write(dir.path().join("other.c"), "int x;").unwrap();
    let out = weft_in(dir.path(), &["build", "main.c", "-o", "other.c"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("a source file"), "{}", out.stderr);
}

/// Shards run in one folder each save their own replay file, and `weft
/// merge` names the one of the failure it reports.
#[test]
fn each_shard_saves_its_own_replay_file() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("lost-update");
    for k in 0..2 {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                "random",
                "--shard",
                &format!("{k}/2"),
                "--json",
            ],
        );
        assert_eq!(out.code, 1, "{}", out.stderr);
        let json = out.json();
        let file = json["replay_file"].as_str().unwrap().to_string();
        assert_eq!(file, format!("lost-update.shard-{k}-of-2.weft.json"));
        std::fs::write(dir.path().join(format!("{k}.json")), &out.stdout).unwrap();
        let replayed = weft_in(dir.path(), &["replay", &file]);
        assert_eq!(replayed.code, 1, "{}", replayed.stderr);
    }
    let merged = weft_in(dir.path(), &["merge", "0.json", "1.json", "--json"]);
    let json = merged.json();
    let index = json["failing_execution_index"].as_u64().unwrap();
    assert_eq!(
        json["replay_file"].as_str().unwrap(),
        format!("lost-update.shard-{}-of-2.weft.json", index % 2)
    );
}

/// A bundle is one file: the replay and its module. It replays, draws
/// its page and minimizes with nothing beside it, and unpacks with tar.
#[test]
fn a_bundle_replays_alone() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("lu.wasm");
    std::fs::copy(sample("lost-update"), &module).unwrap();
    let found = weft_in(
        dir.path(),
        &["explore", "lu.wasm", "--save-failure", "lu.weft.json"],
    );
    assert_eq!(found.code, 1, "{}", found.stderr);
    assert!(
        found.stdout.contains("weft bundle lu.weft.json"),
        "{}",
        found.stdout
    );
    let bundled = weft_in(dir.path(), &["bundle", "lu.weft.json"]);
    assert_eq!(bundled.code, 0, "{}", bundled.stderr);
    assert!(
        bundled.stderr.contains("weft replay lu.weft"),
        "{}",
        bundled.stderr
    );
    // Alone in another folder.
    let other = tempfile::tempdir().unwrap();
    let bundle = other.path().join("bug.weft");
    std::fs::rename(dir.path().join("lu.weft"), &bundle).unwrap();
    let replayed = weft_in(other.path(), &["replay", "bug.weft", "--html", "bug.html"]);
    assert_eq!(replayed.code, 1, "{}", replayed.stderr);
    assert!(
        replayed.stdout.contains("reproduced the assertion failure"),
        "{}",
        replayed.stdout
    );
    assert!(other.path().join("bug.html").exists());
    let minimized = weft_in(other.path(), &["minimize", "bug.weft"]);
    assert_eq!(minimized.code, 1, "{}", minimized.stderr);
    let again = weft_in(other.path(), &["replay", "bug.min.weft"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    // A bundle carries its module; naming one is a mistake.
    let named = weft_in(
        other.path(),
        &["replay", "bug.weft", "--module", arg(&module)],
    );
    assert_eq!(named.code, 2, "{}", named.stdout);
    // Unpacked, the two files replay as they are.
    let unpacked = tempfile::tempdir().unwrap();
    let tar = std::process::Command::new("tar")
        .arg("xzf")
        .arg(&bundle)
        .current_dir(unpacked.path())
        .status()
        .unwrap();
    assert!(tar.success());
    let replayed = weft_in(unpacked.path(), &["replay", "lu.weft.json"]);
    assert_eq!(replayed.code, 1, "{}", replayed.stderr);
    // What is not a bundle or a replay file is refused.
    std::fs::write(other.path().join("junk.weft"), [0x1f, 0x8b, 8, 0, 0]).unwrap();
    let junk = weft_in(other.path(), &["replay", "junk.weft"]);
    assert_eq!(junk.code, 2, "{}", junk.stdout);
}
