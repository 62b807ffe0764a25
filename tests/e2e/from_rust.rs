//! `weft::Check`: `weft explore` from a Rust test, failing it with weft's
//! report.

use crate::support::sample;
use std::panic::{AssertUnwindSafe, catch_unwind};
use weft::Check;
use weft::failure::FailureKind;
use weft::sched::Strategy;

#[test]
fn assert_passed_fails_the_test_with_the_report() {
    let checked = Check::module(sample("lost-update"))
        .executions(300)
        .run()
        .unwrap();
    assert!(!checked.passed());
    let panic = catch_unwind(AssertUnwindSafe(|| checked.assert_passed())).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    for part in [
        "weft found a failure in",
        "FAILURE: assertion",
        ">>",
        "main.rs:",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    assert_eq!(checked.replay_file(), None, "nothing saved unless asked");
}

#[test]
fn a_correct_module_passes_and_dpor_says_when_it_is_exhaustive() {
    let checked = Check::module(sample("checksum"))
        .strategy(Strategy::Random)
        .executions(50)
        .run()
        .unwrap();
    checked.assert_passed();
    assert_eq!(checked.executions(), 50);
    assert!(!checked.exhaustive());
    assert!(checked.to_string().contains("no failure in 50 executions"));
    let failure = catch_unwind(AssertUnwindSafe(|| {
        checked.assert_fails_with(FailureKind::Deadlock);
    }))
    .unwrap_err();
    let message = failure.downcast_ref::<String>().unwrap();
    assert!(message.contains("expected a deadlock failure"), "{message}");
    let checked = Check::module(sample("checksum"))
        .strategy(Strategy::Dpor)
        .run()
        .unwrap();
    checked.assert_passed();
    assert!(checked.exhaustive(), "{checked}");
}

#[test]
fn a_failure_is_saved_where_asked_and_bad_options_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("abba.weft.json");
    let checked = Check::module(sample("abba-deadlock"))
        .save_failure(&replay)
        .run()
        .unwrap();
    checked.assert_fails_with(FailureKind::Deadlock);
    assert_eq!(checked.replay_file(), Some(replay.as_path()));
    assert!(replay.exists());

    let error = Check::module(sample("checksum"))
        .executions(0)
        .run()
        .unwrap_err();
    assert!(error.to_string().contains("--iterations"), "{error}");
    let error = Check::module(dir.path().join("missing.wasm"))
        .run()
        .unwrap_err();
    assert!(format!("{error:#}").contains("missing.wasm"), "{error:#}");
    // Where the replay file cannot go is said before any execution, as
    // `weft explore --save-failure` says it; a module or a source is never
    // overwritten.
    let error = Check::module(sample("abba-deadlock"))
        .save_failure(dir.path().join("no/such/folder/abba.weft.json"))
        .run()
        .unwrap_err();
    assert!(format!("{error:#}").contains("save_failure"), "{error:#}");
    let source = dir.path().join("main.c");
    std::fs::write(&source, "int main(void) { return 0; }\n").unwrap();
    let error = Check::module(sample("abba-deadlock"))
        .save_failure(&source)
        .run()
        .unwrap_err();
    assert!(
        format!("{error:#}").contains("would overwrite"),
        "{error:#}"
    );
    assert!(
        std::fs::read_to_string(&source)
            .unwrap()
            .starts_with("int main")
    );
}
