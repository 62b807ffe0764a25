//! `weft infer-schedule`: events and schedules inferred from sleep-based
//! tests, compared with their hand-written event-based versions.

use crate::support::{arg, sample, wat_file, weft_in};

fn infer(module: &str, test: &str, reference: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "infer-schedule",
            arg(&sample(module)),
            "--test",
            test,
            "--reference",
            reference,
            "--runs",
            "10",
            "--json",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    out.json()
}

#[test]
fn the_latch_test_gets_the_hand_written_schedule_back() {
    let json = infer("imunit-tck", "latch_await_sleep", "latch_await_events");
    assert_eq!(json["passing_runs"], 10);
    assert_eq!(
        json["schedule"],
        "[finishedCount]@waiter -> startingCountDown"
    );
    let events = json["events"].as_array().unwrap();
    let waiter = events.iter().find(|e| e["thread"] == "waiter").unwrap();
    assert_eq!(waiter["place"], "after");
    assert_eq!(waiter["statement"], "count");
    assert!(
        waiter["file"]
            .as_str()
            .unwrap()
            .ends_with("imunit-tck/src/main.rs")
    );
    let reference = &json["reference"];
    for measure in [
        "event_precision",
        "event_recall",
        "ordering_precision",
        "ordering_recall",
    ] {
        assert_eq!(reference[measure], 1.0, "{measure}: {reference}");
    }
}

#[test]
fn two_sleeps_give_two_orderings() {
    let json = infer(
        "imunit-tck",
        "producer_consumer_sleep",
        "producer_consumer_events",
    );
    assert_eq!(
        json["schedule"],
        "[finishedTryRecv]@main -> startingSend, finishedStore -> startingRecv"
    );
    assert_eq!(json["reference"]["ordering_recall"], 1.0);
}

#[test]
fn the_running_example_places_one_event_a_statement_later_than_the_paper() {
    // The inferred event follows main's last completed call before it
    // blocks (`len`); the hand-written one precedes that call.
    let json = infer(
        "imunit-queue",
        "take_with_add_sleep",
        "take_with_add_blocking",
    );
    assert_eq!(
        json["schedule"],
        "finishedAdd -> startingTake, [finishedLen]@main -> startingAdd"
    );
    assert_eq!(json["reference"]["event_precision"], 0.75);
    assert_eq!(json["reference"]["ordering_recall"], 0.5);
}

#[test]
fn unknown_tests_and_modules_without_line_information_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "infer-schedule",
            arg(&sample("imunit-tck")),
            "--test",
            "no_such_test",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("no test named `no_such_test`"),
        "{}",
        out.stderr
    );
    let module = wat_file(
        dir.path(),
        "bare",
        r#"(module (memory 1 1 shared) (func (export "_start")))"#,
    );
    let out = weft_in(dir.path(), &["infer-schedule", arg(&module), "--test", "t"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("no DWARF line information"),
        "{}",
        out.stderr
    );
}
