//! Failures are saved under a minimized schedule, and `weft minimize`
//! minimizes an existing replay file.

use crate::support::{arg, sample, weft_in};
use serde_json::Value;

fn preemptions(report: &Value) -> u64 {
    report["preemptions"]
        .as_u64()
        .unwrap_or_else(|| panic!("the report gives preemptions: {report}"))
}

#[test]
fn the_lost_update_is_saved_with_at_most_two_preemptions() {
    let dir = tempfile::tempdir().unwrap();
    for seed in ["0", "1", "2"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&sample("lost-update")),
                "--seed",
                seed,
                "--save-failure",
                "lu.weft.json",
                "--json",
            ],
        );
        assert_eq!(out.code, 1, "{}", out.stderr);
        let report = out.json();
        let minimized = &report["minimized"];
        assert!(
            preemptions(&report) <= 2,
            "seed {seed}: {}",
            report["minimized"]
        );
        assert_eq!(minimized["to"]["preemptions"], report["preemptions"]);
        assert!(
            minimized["from"]["preemptions"].as_u64() >= minimized["to"]["preemptions"].as_u64()
        );
        let replayed = weft_in(dir.path(), &["replay", "lu.weft.json", "--json"]);
        assert_eq!(replayed.code, 1, "{}", replayed.stderr);
        assert_eq!(replayed.json()["failure"]["kind"], "assertion");
        assert_eq!(preemptions(&replayed.json()), preemptions(&report));
    }
}

#[test]
fn minimize_shrinks_a_file_saved_as_found_and_never_overwrites_it() {
    let dir = tempfile::tempdir().unwrap();
    let found = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update")),
            "--no-minimize",
            "--save-failure",
            "lu.weft.json",
            "--json",
        ],
    );
    assert_eq!(found.code, 1, "{}", found.stderr);
    assert!(found.json()["minimized"].is_null());
    let as_found = preemptions(&found.json());
    let original = std::fs::read(dir.path().join("lu.weft.json")).unwrap();

    let out = weft_in(dir.path(), &["minimize", "lu.weft.json", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = out.json();
    assert!(
        preemptions(&report) <= 2 && preemptions(&report) < as_found,
        "{report}"
    );
    assert_eq!(report["minimized"]["from"]["preemptions"], as_found);
    assert_eq!(
        std::fs::read(dir.path().join("lu.weft.json")).unwrap(),
        original,
        "the input is left as it was"
    );
    let replayed = weft_in(dir.path(), &["replay", "lu.min.weft.json"]);
    assert_eq!(replayed.code, 1, "{}", replayed.stderr);
    assert!(
        replayed.stdout.contains("reproduced the assertion failure"),
        "{}",
        replayed.stdout
    );

    let onto_itself = weft_in(
        dir.path(),
        &["minimize", "lu.weft.json", "-o", "lu.weft.json"],
    );
    assert_eq!(onto_itself.code, 2);
    assert!(
        onto_itself.stderr.contains("replay file itself"),
        "{}",
        onto_itself.stderr
    );
}

#[test]
fn minimize_refuses_what_is_not_a_failing_replay_file() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("lost-update");
    let out = weft_in(dir.path(), &["minimize", arg(&module)]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("not a weft replay file"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}
