//! Signals within the program (`tests/signals/`): the POSIX calls a C
//! program makes build with `weft cc` and behave as POSIX says, built
//! unoptimised and optimised; where a signal is delivered is part of the
//! schedule, so a handler that races with the code it interrupted is
//! found and replayed, a mask defers delivery, a thread that waits is
//! woken, and a handler that takes a held lock deadlocks with the
//! delivery in the story.

use crate::support::{arg, root, weft_in};
use std::path::{Path, PathBuf};

/// Builds `tests/signals/<name>.c` into `dir` at `-O0` and `-O2`.
fn builds(dir: &Path, name: &str) -> Vec<PathBuf> {
    let source = root().join("tests/signals").join(format!("{name}.c"));
    ["-O0", "-O2"]
        .iter()
        .map(|level| {
            let module = dir.join(format!("{name}{level}.wasm"));
            let out = weft_in(dir, &["cc", arg(&source), "-o", arg(&module), level]);
            assert_eq!(out.code, 0, "{name} {level}: {}", out.stderr);
            module
        })
        .collect()
}

/// `weft explore` of `module` with `extra` arguments, as JSON.
fn explore(dir: &Path, module: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["explore", arg(module), "--json"];
    args.extend(extra);
    let out = weft_in(dir, &args);
    (out.code, out.json())
}

/// Explores each build of `name` for `executions` and asserts no failure.
fn passes(name: &str, executions: &str) {
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), name) {
        let (code, json) = explore(
            dir.path(),
            &module,
            &["--iterations", executions, "--no-save"],
        );
        assert_eq!(code, 0, "{}: {json}", module.display());
        assert_eq!(json["status"], "pass", "{}: {json}", module.display());
    }
}

#[test]
fn a_threads_own_signals_follow_posix() {
    passes("raise-and-masks", "50");
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), "raise-and-masks") {
        let out = weft_in(dir.path(), &["run", arg(&module), "--json"]);
        assert_eq!(out.code, 0, "{}", out.stdout);
        assert_eq!(out.json()["stdout"], "4 signals handled\n");
    }
}

#[test]
fn a_handler_racing_with_the_code_it_interrupted_is_found_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), "handler-race") {
        let (code, json) = explore(dir.path(), &module, &[]);
        assert_eq!(code, 1, "{}: {json}", module.display());
        assert_eq!(json["failure"]["kind"], "assertion", "{json}");
        let replay = json["replay_file"].as_str().unwrap();
        let out = weft_in(dir.path(), &["replay", replay]);
        assert_eq!(out.code, 1, "{}", out.stdout);
        assert!(out.stdout.contains("reproduced"), "{}", out.stdout);
        // The story shows the delivery, then the handler's steps.
        let delivery = out.stdout.find("takes SIGUSR1").expect(&out.stdout);
        let handler = out.stdout.find("on_usr1").expect(&out.stdout);
        assert!(delivery < handler, "{}", out.stdout);
    }
}

#[test]
fn a_mask_defers_delivery_until_it_is_lifted() {
    passes("mask-defers", "300");
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), "mask-defers") {
        let (code, json) = explore(dir.path(), &module, &["--strategy", "dfs", "--no-save"]);
        assert_eq!(code, 0, "{json}");
        assert_eq!(json["bound_exhausted"], true, "{json}");
    }
}

#[test]
fn a_signal_thread_takes_the_processs_signals_with_sigwait() {
    passes("sigwait-thread", "300");
}

#[test]
fn a_signal_wakes_a_thread_that_waits() {
    passes("wakes-waits", "300");
}

#[test]
fn a_signal_without_a_handler_ends_the_process_by_its_default_action() {
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), "default-action") {
        let (code, json) = explore(dir.path(), &module, &["--no-save"]);
        assert_eq!(code, 1, "{json}");
        let message = json["failure"]["message"].as_str().unwrap();
        assert!(
            message.contains("SIGUSR2") && message.contains("default action ends the process"),
            "{message}"
        );
    }
}

#[test]
fn a_handler_that_takes_a_held_lock_deadlocks_with_the_delivery_in_the_story() {
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), "handler-deadlock") {
        let (code, json) = explore(dir.path(), &module, &[]);
        assert_eq!(code, 1, "{json}");
        assert_eq!(json["failure"]["kind"], "deadlock", "{json}");
        let message = json["failure"]["message"].as_str().unwrap();
        assert!(message.contains("in its handler of SIGUSR1"), "{message}");
        let replay = json["replay_file"].as_str().unwrap();
        let out = weft_in(dir.path(), &["replay", replay]);
        assert!(out.stdout.contains("takes SIGUSR1"), "{}", out.stdout);
    }
}

#[test]
fn the_exhaustive_search_claims_nothing_for_a_program_that_sends_signals() {
    let dir = tempfile::tempdir().unwrap();
    let module = &builds(dir.path(), "mask-defers")[1];
    let out = weft_in(
        dir.path(),
        &["explore", arg(module), "--strategy", "dpor", "--no-save"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains("no claim") && out.stdout.contains("sent signals"),
        "{}",
        out.stdout
    );
}

#[test]
fn what_the_sender_wrote_before_the_send_is_no_race_with_the_handler() {
    passes("handoff", "300");
}

#[test]
fn a_thread_blocked_in_a_condition_wait_takes_its_signal_without_the_mutex() {
    passes("hold-in-wait", "200");
}

#[test]
fn the_alarm_rings_on_the_virtual_clock_and_cuts_sleeps_short() {
    passes("alarm-and-sleeps", "100");
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), "alarm-and-sleeps") {
        let (code, json) = explore(
            dir.path(),
            &module,
            &["--iterations", "100", "--no-save", "--sleeps", "timed"],
        );
        assert_eq!(code, 0, "{}: {json}", module.display());
    }
}

#[test]
fn a_program_that_waits_for_a_signal_from_outside_is_told_so() {
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), "waits-for-outside") {
        let out = weft_in(dir.path(), &["run", arg(&module), "--json"]);
        assert_eq!(out.code, 1, "{}", out.stdout);
        let json = out.json();
        assert_eq!(json["failure"]["kind"], "deadlock", "{json}");
        let message = json["failure"]["message"].as_str().unwrap();
        assert!(
            message.contains("waits for a signal") && message.contains("none comes from outside"),
            "{message}"
        );
    }
}

#[test]
fn a_thread_that_only_allocates_takes_the_processs_signal() {
    passes("taken-while-allocating", "300");
}

#[test]
fn a_sleep_returns_eintr_only_when_a_handler_ran_on_the_sleeper() {
    passes("sleep-restarts", "1000");
}

#[test]
fn a_thread_that_spins_without_calls_keeps_its_signal_and_is_no_livelock() {
    let dir = tempfile::tempdir().unwrap();
    for module in builds(dir.path(), "spins-without-calls") {
        let (code, json) = explore(dir.path(), &module, &["--iterations", "1", "--no-save"]);
        assert_eq!(code, 3, "{}: {json}", module.display());
        let said = json.to_string();
        assert!(said.contains("signal pending"), "{said}");
    }
}
