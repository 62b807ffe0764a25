//! `weft serializability`: AssetFuzzer and the random-monitor baseline on
//! the atomic-set samples, their correct variants, and replay.

use crate::support::{arg, sample, weft_in};

/// The samples with an atomicity bug, and the pattern each shows.
const BUGGY: [(&str, u64); 7] = [
    ("account", 9),
    ("account-c", 9),
    ("account-wat", 9),
    ("append-atomicity", 2),
    ("jigsaw-rlen", 8),
    ("bank-transfer", 8),
    ("list-size", 1),
];

fn serializability(dir: &std::path::Path, module: &str, extra: &[&str]) -> crate::support::Output {
    let module = sample(module);
    let mut args = vec!["serializability", arg(&module), "--json"];
    args.extend_from_slice(extra);
    weft_in(dir, &args)
}

#[test]
fn the_account_copy_is_reported_as_pattern_9_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("account.weft.json");
    let out = serializability(dir.path(), "account", &["--save-failure", arg(&replay)]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "serializability");
    assert_eq!(json["failure"]["pattern"], 9);
    let accesses = json["violations"][0]["accesses"].as_array().unwrap();
    let shape: Vec<(&str, &str)> = accesses
        .iter()
        .map(|a| (a["access"].as_str().unwrap(), a["unit"].as_str().unwrap()))
        .collect();
    assert_eq!(
        shape,
        [
            ("read", "Account::copy_of"),
            ("write", "Account::credit_interest"),
            ("write", "Account::credit_interest"),
            ("read", "Account::copy_of"),
        ]
    );
    assert_eq!(accesses[0]["thread_name"], "copier");
    assert!(
        accesses[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("account/src/main.rs"),
        "{}",
        accesses[0]
    );
    for _ in 0..2 {
        let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
        assert_eq!(again.code, 1, "{}", again.stderr);
        let again = again.json();
        assert_eq!(again["failure"]["kind"], "serializability");
        assert_eq!(again["trace_hash"], json_trace(&replay));
    }
}

/// The trace hash a replay file expects.
fn json_trace(path: &std::path::Path) -> serde_json::Value {
    let file = crate::support::read_json(path);
    file["trace_hash"].clone()
}

#[test]
fn assetfuzzer_finds_every_buggy_sample_and_never_flags_a_correct_one() {
    let dir = tempfile::tempdir().unwrap();
    for (name, pattern) in BUGGY {
        let out = serializability(dir.path(), name, &["--no-save"]);
        assert_eq!(out.code, 1, "{name}: {}", out.stdout);
        let json = out.json();
        let patterns: Vec<u64> = json["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["pattern"].as_u64().unwrap())
            .collect();
        assert!(patterns.contains(&pattern), "{name}: {patterns:?}");
        for strategy in ["assetfuzzer", "random-monitor"] {
            let out = serializability(
                dir.path(),
                name,
                &[
                    "--no-save",
                    "--strategy",
                    strategy,
                    "--iterations",
                    "100",
                    "--",
                    "correct",
                ],
            );
            assert_eq!(out.code, 0, "{name} correct, {strategy}: {}", out.stdout);
            assert_eq!(out.json()["violations"].as_array().unwrap().len(), 0);
        }
    }
}

#[test]
fn random_monitor_checks_every_execution() {
    let dir = tempfile::tempdir().unwrap();
    let out = serializability(
        dir.path(),
        "list-size",
        &[
            "--no-save",
            "--strategy",
            "random-monitor",
            "--iterations",
            "300",
        ],
    );
    let json = out.json();
    assert_eq!(json["executions"], 300);
    assert_eq!(json["strategy"], "random-monitor");
    // Two adders racing on one slot show up under random schedules too.
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(json["detecting_executions"].as_u64().unwrap() > 0);
}

#[test]
fn a_module_without_atomic_sets_is_told_how_to_declare_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = serializability(dir.path(), "mutex-counter", &["--no-save"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("registered no atomic set"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unannotated_c_program_is_checked_with_command_line_sets_and_units() {
    let dir = tempfile::tempdir().unwrap();
    // The C account without any weft call.
    let annotated =
        std::fs::read_to_string(crate::support::root().join("samples/account-c/main.c")).unwrap();
    let plain: String = annotated
        .lines()
        .filter(|l| !l.contains("weft_") && !l.contains("weft.h"))
        .map(|l| format!("{l}\n"))
        .collect();
    let source = dir.path().join("account.c");
    std::fs::write(&source, plain).unwrap();
    let module = dir.path().join("account.wasm");
    let out = weft_in(dir.path(), &["build", arg(&source), "-o", arg(&module)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let replay = dir.path().join("a.weft.json");
    let annotations = [
        "--atomic-set",
        "x.b",
        "--unit-of-work",
        "copy_account",
        "--unit-of-work",
        "credit_*",
    ];
    let mut args = vec![
        "serializability",
        arg(&module),
        "--json",
        "--save-failure",
        arg(&replay),
    ];
    args.extend(annotations);
    let out = weft_in(dir.path(), &args);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["failure"]["pattern"], 9);
    assert_eq!(json["violations"][0]["atomic_set"], "x.b");
    let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert_eq!(again.json()["failure"]["kind"], "serializability");
    // Names that are not there are refused.
    let out = weft_in(
        dir.path(),
        &[
            "serializability",
            arg(&module),
            "--atomic-set",
            "nope",
            "--unit-of-work",
            "copy_account",
        ],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no global variable `nope`"),
        "{}",
        out.stderr
    );
}
