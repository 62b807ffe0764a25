//! `weft actors`: Bita's schedules and random deliveries on the actor
//! samples, their correct variants, and replay.

use crate::support::{arg, sample, weft_in};

/// The actor samples and the failure kind of each.
const BUGGY: [(&str, &str); 9] = [
    ("gatling", "assertion"),
    ("load-report", "assertion"),
    ("graph-components", "assertion"),
    ("pipelined-client", "assertion"),
    ("gatling-c", "assertion"),
    ("sleeping-barber", "assertion"),
    ("messenger", "unhandled-message"),
    ("registry", "unhandled-message"),
    ("bank-actors", "assertion"),
];

fn actors(dir: &std::path::Path, module: &str, extra: &[&str]) -> crate::support::Output {
    let module = sample(module);
    let mut args = vec!["actors", arg(&module), "--json"];
    args.extend_from_slice(extra);
    weft_in(dir, &args)
}

#[test]
fn bita_pr_finds_the_gatling_crash_with_the_papers_schedule_and_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("gatling.weft.json");
    let out = actors(
        dir.path(),
        "gatling",
        &["--criterion", "pr", "--save-failure", arg(&replay)],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "assertion");
    assert!(
        json["executions"].as_u64().unwrap() <= 3,
        "{}",
        json["executions"]
    );
    assert!(json["coverage"]["pr"]["pairs"].as_u64().unwrap() > 0);
    let chart = json["schedule"].as_str().unwrap();
    // The Flush reaches the Writer before a Write.
    let flush = chart.find("Flush").unwrap();
    let late_write = chart[flush..].find("Write").is_some();
    assert!(late_write, "{chart}");
    let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert_eq!(again.json()["failure"]["kind"], "assertion");
}

#[test]
fn every_actor_bug_is_found_and_no_correct_variant_fails() {
    let dir = tempfile::tempdir().unwrap();
    for (name, kind) in BUGGY {
        for strategy in ["bita", "random"] {
            let out = actors(
                dir.path(),
                name,
                &["--no-save", "--strategy", strategy, "--criterion", "all"],
            );
            assert_eq!(out.code, 1, "{name} {strategy}: {}", out.stdout);
            assert_eq!(out.json()["failure"]["kind"], kind, "{name} {strategy}");
            let out = actors(
                dir.path(),
                name,
                &[
                    "--no-save",
                    "--strategy",
                    strategy,
                    "--criterion",
                    "all",
                    "--iterations",
                    "200",
                    "--",
                    "correct",
                ],
            );
            assert_eq!(out.code, 0, "{name} correct, {strategy}: {}", out.stdout);
        }
    }
}

#[test]
fn a_module_without_actors_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = actors(dir.path(), "checksum", &["--no-save"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("uses no actors"), "{}", out.stderr);
}

#[test]
fn a_driver_waiting_for_a_reply_that_cannot_come_is_a_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    // The driver asks an actor (sends, then waits for its reply), but the
    // actor's handler never replies.
    let module = crate::support::wat_file(
        dir.path(),
        "silent",
        r#"(module
          (import "weft" "actor_spawn" (func $spawn (param i32 i32) (result i32)))
          (import "weft" "actor_send" (func $send (param i32 i32 i32 i32 i32)))
          (import "weft" "actor_receive" (func $receive (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (data (i32.const 0) "SilentPing")
          (func (export "_start") (local $actor i32)
            (local.set $actor (call $spawn (i32.const 0) (i32.const 6)))
            (call $send (local.get $actor) (i32.const 6) (i32.const 4) (i32.const 0) (i32.const 0))
            ;; the actor gets Ping and does nothing; then nothing is left
            (loop $pump
              (br_if $pump (call $receive (i32.const 64) (i32.const 256) (i32.const 32) (local.get $actor))))))"#,
    );
    let out = weft_in(dir.path(), &["actors", arg(&module), "--json", "--no-save"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "deadlock");
    let message = json["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("waits for a reply from Silent #0"),
        "{message}"
    );
}

#[test]
fn random_delays_keep_the_natural_order_mostly() {
    let dir = tempfile::tempdir().unwrap();
    let out = actors(
        dir.path(),
        "gatling",
        &[
            "--no-save",
            "--strategy",
            "random-delays",
            "--delay-percent",
            "10",
        ],
    );
    let json = out.json();
    assert_eq!(json["strategy"], "random-delays");
    // The crash needs several overtakes: found, but later than Bita does.
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        json["executions"].as_u64().unwrap() > 3,
        "{}",
        json["executions"]
    );
    let out = actors(
        dir.path(),
        "gatling",
        &[
            "--no-save",
            "--strategy",
            "random-delays",
            "--delay-percent",
            "101",
        ],
    );
    assert_eq!(out.code, 2);
}
