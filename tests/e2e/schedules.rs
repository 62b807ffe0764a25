//! IMUnit schedules: enforced (`--schedule`), checked (`--mode passive`),
//! and declared by the tests of a test module (`weft test`).

use crate::support::{arg, sample, weft_in};

const BLOCKING: &str = "finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2";

/// The test of the sample that states the blocking intent.
const TEST: &str = "take_with_add_blocking";

#[test]
fn the_blocking_intent_makes_the_flaky_test_pass_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("imunit-queue");
    for strategy in ["random", "pct"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                strategy,
                "--schedule",
                BLOCKING,
                "--json",
                "--no-save",
                "--",
                TEST,
            ],
        );
        assert_eq!(out.code, 0, "{strategy}: {}", out.stdout);
        assert_eq!(out.json()["executions"], 1000);
    }
}

#[test]
fn an_infeasible_schedule_is_a_schedule_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&sample("imunit-queue")),
            "--schedule",
            "[startingAdd2] -> startingTake2",
            "--json",
            "--no-save",
            "--",
            TEST,
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "schedule-deadlock");
    let message = json["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("held at event `startingTake2`"),
        "{message}"
    );
}

#[test]
fn a_schedule_with_a_syntax_error_is_refused_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&sample("imunit-queue")),
            "--schedule",
            "[beforeget] - beforeput@putThread",
        ],
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("column 13"), "{}", out.stderr);
    assert!(out.stderr.contains("expected `->`"), "{}", out.stderr);
}

#[test]
fn enforced_runs_replay() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("q.weft.json");
    // The non-blocking intent contradicts the test's assertion: a failure.
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("imunit-queue")),
            "--schedule",
            "finishedAdd1 -> startingTake1, finishedAdd2 -> startingTake2",
            "--save-failure",
            arg(&replay),
            "--json",
            "--",
            TEST,
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert_eq!(again.json()["trace_hash"], out.json()["trace_hash"]);
}

#[test]
fn passive_mode_reports_a_violated_ordering() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("imunit-queue")),
            "--schedule",
            BLOCKING,
            "--mode",
            "passive",
            "--json",
            "--no-save",
            "--",
            TEST,
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "schedule-violation");
    let message = json["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("happened before its orderings held"),
        "{message}"
    );
}

#[test]
fn weft_test_runs_each_test_under_its_schedules() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("imunit-queue");
    for strategy in ["random", "pct"] {
        let out = weft_in(
            dir.path(),
            &[
                "test",
                arg(&module),
                "--filter",
                "blocking",
                "--strategy",
                strategy,
                "--iterations",
                "300",
            ],
        );
        assert_eq!(out.code, 0, "{strategy}: {}", out.stdout);
        assert!(
            out.stdout.contains("test take_with_add_blocking ["),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains("\ntest result: ok. 2 passed; 0 failed;"),
            "{}",
            out.stdout
        );
    }
    let out = weft_in(
        dir.path(),
        &["test", arg(&module), "--filter", "non_blocking", "--json"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["passed"], 1);
    assert_eq!(json["tests"][0]["test"], "take_with_add_non_blocking");
    // A schedule given on the command line replaces the declared ones.
    let out = weft_in(
        dir.path(),
        &[
            "test",
            arg(&module),
            "--filter",
            "blocking",
            "--schedule",
            "finishedAdd1 -> startingTake1",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("FAILED"), "{}", out.stdout);
}

#[test]
fn weft_test_reports_like_cargo_test_with_junit_and_a_replay_file_per_failure() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("results.xml");
    let out = weft_in(
        dir.path(),
        &[
            "test",
            arg(&sample("imunit-queue")),
            "--filter",
            "blocking",
            "--schedule",
            "finishedAdd1 -> startingTake1",
            "--junit",
            arg(&junit),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    for line in [
        "\nrunning 2 tests (1000 executions each, portfolio, seed 0)\n",
        "\ntest take_with_add_blocking [finishedAdd1 -> startingTake1] ... FAILED\n",
        "\nfailures:\n\n---- take_with_add_blocking [finishedAdd1 -> startingTake1] ----\n",
        "\nfailures:\n    take_with_add_blocking [finishedAdd1 -> startingTake1]\n",
        "\ntest result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 1 filtered out; finished in ",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in\n{}", out.stdout);
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<testsuite name="imunit-queue.wasm" tests="2""#),
        "{xml}"
    );
    assert_eq!(xml.matches("<failure ").count(), 2, "{xml}");
    assert!(xml.contains(r#"type="assertion""#), "{xml}");
    // Each failure has its own replay file, which reproduces it.
    for test in ["take_with_add_blocking", "take_with_add_non_blocking"] {
        let file = format!("imunit-queue.{test}.weft.json");
        assert!(
            out.stdout.contains(&format!("weft replay {file}")),
            "{}",
            out.stdout
        );
        let replayed = weft_in(dir.path(), &["replay", &file]);
        assert_eq!(replayed.code, 1, "{}", replayed.stdout);
        assert!(
            replayed.stdout.contains("reproduced"),
            "{}",
            replayed.stdout
        );
    }
}

#[test]
fn explore_and_gen_write_junit_reports() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("explore.xml");
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update")),
            "--no-save",
            "--junit",
            arg(&junit),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"failures="1""#), "{xml}");
    assert!(xml.contains("lost an update"), "{xml}");
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("checksum")),
            "--iterations",
            "20",
            "--junit",
            arg(&junit),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"failures="0""#), "{xml}");
    assert!(xml.contains("no failure in 20 executions"), "{xml}");

    let junit = dir.path().join("gen.xml");
    let out = weft_in(
        dir.path(),
        &[
            "gen",
            arg(&sample("classes")),
            "--class",
            "vec",
            "--no-save",
            "--junit",
            arg(&junit),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<testcase name="gen vec (covcon)""#),
        "{xml}"
    );
    assert!(xml.contains(r#"type="linearizability""#), "{xml}");
    // Never over the module.
    let module = dir.path().join("copy.wasm");
    std::fs::copy(sample("checksum"), &module).unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&module),
            "--iterations",
            "2",
            "--junit",
            arg(&module),
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("module itself"), "{}", out.stderr);
}

#[test]
fn weft_test_runs_a_program_that_is_not_a_test_module_as_one_test() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(dir.path(), &["test", arg(&sample("checksum"))]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("is not a test module"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("test checksum ... ok"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("test result: ok. 1 passed"),
        "{}",
        out.stdout
    );
    // A buggy one fails, and its replay file replays the failure.
    let out = weft_in(dir.path(), &["test", arg(&sample("lost-update")), "--json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["tests"][0]["test"], "lost-update");
    assert_eq!(json["tests"][0]["failure"]["kind"], "assertion");
    let replay = json["tests"][0]["replay_file"].as_str().unwrap();
    let again = weft_in(dir.path(), &["replay", replay]);
    assert_eq!(again.code, 1, "{}", again.stdout);
}

#[test]
fn weft_test_runs_c_test_modules_too() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("flag_test.c");
    std::fs::write(
        &source,
        r#"#include <pthread.h>
#include <stdatomic.h>
#include "weft.h"

static atomic_int flag;

static void *setter(void *arg) {
    (void)arg;
    weft_thread_name("setter");
    atomic_store(&flag, 1);
    weft_event("flagSet");
    return 0;
}

/* Without its schedule the check may run before the flag is set. */
static void flag_is_seen(void) {
    pthread_t t;
    pthread_create(&t, 0, setter, 0);
    weft_event("checking");
    weft_assert(atomic_load(&flag) == 1, "the flag was not set yet");
    pthread_join(t, 0);
}

static const char *const flag_schedules[] = {"flagSet -> checking", 0};

int main(int argc, char **argv) {
    const struct weft_test tests[] = {{"flag_is_seen", flag_is_seen, flag_schedules}};
    return weft_run_tests(argc, argv, tests, 1);
}
"#,
    )
    .unwrap();
    let module = dir.path().join("flag_test.wasm");
    let out = weft_in(dir.path(), &["build", arg(&source), "-o", arg(&module)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = weft_in(dir.path(), &["test", arg(&module), "--iterations", "300"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("test flag_is_seen [flagSet -> checking] ... ok"),
        "{}",
        out.stdout
    );
    // Without the schedule the same test is flaky.
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&module),
            "--json",
            "--no-save",
            "--",
            "flag_is_seen",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
}

#[test]
fn tck_style_tests_are_flaky_with_sleeps_and_pass_with_their_schedules() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("imunit-tck");
    for strategy in ["random", "pct"] {
        let out = weft_in(
            dir.path(),
            &[
                "test",
                arg(&module),
                "--filter",
                "_events",
                "--strategy",
                strategy,
                "--iterations",
                "300",
                "--json",
            ],
        );
        assert_eq!(out.code, 0, "{strategy}: {}", out.stdout);
        assert_eq!(out.json()["passed"], 5, "{}", out.stdout);
    }
    let out = weft_in(
        dir.path(),
        &[
            "test",
            arg(&module),
            "--filter",
            "_sleep",
            "--sleeps",
            "any",
            "--iterations",
            "100",
            "--keep-going",
            "--json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failed"], 5, "{}", out.stdout);
    for test in json["tests"].as_array().unwrap() {
        let failing = test["failing_executions"].as_u64().unwrap();
        assert!(
            failing > 0 && failing < 100,
            "{}: a flaky test fails sometimes, not always: {failing}/100",
            test["test"]
        );
        assert_eq!(test["executions"], 100);
    }
}

#[test]
fn erroneous_schedules_fail_their_tests_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &["test", arg(&sample("imunit-errors")), "--json"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failed"], 6, "{}", out.stdout);
    let expected = [
        (
            "after_event_never_occurs",
            "schedule-error",
            "names event `workerDone`, which the test never fired",
        ),
        (
            "thread_never_blocks",
            "schedule-deadlock",
            "thread `worker` ended without blocking after `workerReady`",
        ),
        (
            "before_event_never_occurs",
            "schedule-deadlock",
            "before-event `workerStarted` has not happened",
        ),
        (
            "unknown_thread",
            "schedule-deadlock",
            "no thread is named `wroker`",
        ),
        (
            "event_fired_twice",
            "schedule-error",
            "event `tick` happened twice",
        ),
        (
            "parse_error",
            "schedule-error",
            "parse error at column 15: expected `->`",
        ),
    ];
    let tests = json["tests"].as_array().unwrap();
    for (name, kind, fragment) in expected {
        let test = tests
            .iter()
            .find(|t| t["test"] == name)
            .unwrap_or_else(|| panic!("no result for {name}"));
        assert_eq!(test["failure"]["kind"], kind, "{name}: {test}");
        let message = test["failure"]["message"].as_str().unwrap();
        assert!(message.contains(fragment), "{name}: {message}");
    }
}

#[test]
fn a_schedule_naming_a_thread_that_never_exists_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing waits on the unknown thread's event, so the run completes;
    // the check at its end reports the name.
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&sample("imunit-errors")),
            "--schedule",
            "mainGo -> workerReady@wroker",
            "--json",
            "--no-save",
            "--",
            "after_event_never_occurs",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "schedule-error");
    let message = json["failure"]["message"].as_str().unwrap();
    assert!(message.contains("thread `wroker`"), "{message}");
    assert!(message.contains("threads: main, worker"), "{message}");
}

#[test]
fn implicit_start_and_end_events_order_threads() {
    let dir = tempfile::tempdir().unwrap();
    // main may fire mainGo only after the worker ended.
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("imunit-errors")),
            "--schedule",
            "end@worker -> mainGo",
            "--mode",
            "passive",
            "--iterations",
            "200",
            "--json",
            "--no-save",
            "--",
            "after_event_never_occurs",
        ],
    );
    // Passive: some schedule fires mainGo first.
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "schedule-violation");
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("imunit-errors")),
            "--schedule",
            "end@worker -> mainGo",
            "--iterations",
            "200",
            "--json",
            "--no-save",
            "--",
            "after_event_never_occurs",
        ],
    );
    // Active: main is held until the worker ends; it never deadlocks
    // although main joins the worker right after mainGo.
    assert_eq!(out.code, 0, "{}", out.stdout);
}

#[test]
fn explore_refuses_a_schedule_naming_events_that_never_fire() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("imunit-queue");
    let schedule = "finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2";
    let run = |schedule: &str| {
        weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--schedule",
                schedule,
                "--iterations",
                "20",
                "--no-save",
                "--",
                "take_with_add_blocking",
            ],
        )
    };
    let out = run(schedule);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let out = run(&format!("{schedule}, zzz -> yyy"));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("FAILURE: schedule-error in thread 0 (main)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("events `yyy`, `zzz`"), "{}", out.stdout);
}

/// A test is run by its index, never by its name: a test named like the
/// listing option runs (and fails) as itself; two tests of one name are
/// refused, as is a name holding a tab.
#[test]
fn weft_test_runs_tests_by_index_and_refuses_ambiguous_names() {
    let dir = tempfile::tempdir().unwrap();
    let module_of = |name: &str, tests: &str| {
        let source = dir.path().join(format!("{name}.c"));
        std::fs::write(
            &source,
            format!(
                r#"#include "weft.h"
static void passes(void) {{}}
static void fails(void) {{ weft_assert(0, "this test always fails"); }}
int main(int argc, char **argv) {{
    const struct weft_test tests[] = {{{tests}}};
    return weft_run_tests(argc, argv, tests, sizeof tests / sizeof tests[0]);
}}
"#
            ),
        )
        .unwrap();
        let module = dir.path().join(format!("{name}.wasm"));
        let out = weft_in(dir.path(), &["build", arg(&source), "-o", arg(&module)]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        module
    };
    let optionlike = module_of(
        "optionlike",
        r#"{"ok", passes, 0}, {"--weft-list", fails, 0}"#,
    );
    let out = weft_in(dir.path(), &["test", arg(&optionlike), "--no-save"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("test --weft-list ... FAILED"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("test ok ... ok"), "{}", out.stdout);
    let twice = module_of("twice", r#"{"same", passes, 0}, {"same", fails, 0}"#);
    let out = weft_in(dir.path(), &["test", arg(&twice), "--no-save"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("two tests are named `same`"),
        "{}",
        out.stderr
    );
    let tab = module_of("tab", "{\"a\\tb\", passes, 0}");
    let out = weft_in(dir.path(), &["test", arg(&tab), "--no-save"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("holds a tab"), "{}", out.stderr);
}
