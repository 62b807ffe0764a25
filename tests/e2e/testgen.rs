//! `weft gen`: generated concurrent tests for the thread-safe classes of
//! the samples, the correct classes, and bad input.

use crate::support::{arg, sample, weft_in};

fn generate(
    dir: &std::path::Path,
    module: &str,
    class: &str,
    extra: &[&str],
) -> crate::support::Output {
    let module = sample(module);
    let mut args = vec!["gen", arg(&module), "--class", class, "--json"];
    args.extend_from_slice(extra);
    weft_in(dir, &args)
}

#[test]
fn the_stringbuffer_append_is_found_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("sb.weft.json");
    let out = generate(
        dir.path(),
        "stringbuffer",
        "sb",
        &["--time-limit", "60s", "--save-failure", arg(&replay)],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    let failure = &json["failure"];
    assert!(
        ["linearizability", "assertion"].contains(&failure["kind"].as_str().unwrap()),
        "{failure}"
    );
    assert!(
        failure["test"].as_str().unwrap().contains("sb_append"),
        "{failure}"
    );
    assert!(failure["linearizations"].as_u64().unwrap() >= 2);
    assert_eq!(json["pairs"]["total"], 15);
    let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
    assert_eq!(again.code, 1, "the verdict replays: {}", again.stderr);
    let saved = crate::support::read_json(&replay);
    assert_eq!(again.json()["trace_hash"], saved["trace_hash"]);
    assert_eq!(again.json()["failure"]["kind"], failure["kind"]);
    assert_eq!(
        again.json()["failure"]["message"],
        saved["failure"]["message"]
    );

    // A file claiming another verdict for the same execution is refused.
    let mut edited = saved.clone();
    edited["failure"]["kind"] = if failure["kind"] == "assertion" {
        "linearizability".into()
    } else {
        "assertion".into()
    };
    let edited_path = dir.path().join("edited.weft.json");
    std::fs::write(&edited_path, edited.to_string()).unwrap();
    let refused = weft_in(dir.path(), &["replay", arg(&edited_path)]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("judged again"),
        "{}",
        refused.stderr
    );
}

#[test]
fn sticky_schedules_find_a_bug_that_replays_and_bad_chances_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("range.weft.json");
    let out = generate(
        dir.path(),
        "classes",
        "range",
        &[
            "--switch-chance",
            "0.1",
            "--time-limit",
            "60s",
            "--save-failure",
            arg(&replay),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
    assert_eq!(again.code, 1, "the verdict replays: {}", again.stderr);
    assert_eq!(
        again.json()["failure"]["kind"],
        out.json()["failure"]["kind"]
    );
    let out = generate(
        dir.path(),
        "classes",
        "crange",
        &["--switch-chance", "0.1", "--max-tests", "30", "--no-save"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    for chance in ["0", "1.5", "often"] {
        let out = generate(dir.path(), "classes", "range", &["--switch-chance", chance]);
        assert_eq!(out.code, 2, "{chance}: {}", out.stdout);
        assert!(
            out.stderr.contains("is not a chance above 0 and at most 1"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn every_buggy_class_fails_and_no_correct_class_does() {
    let dir = tempfile::tempdir().unwrap();
    for (class, kinds) in [
        ("vec", &["linearizability", "assertion"][..]),
        ("map", &["deadlock"][..]),
        ("log", &["assertion", "linearizability"][..]),
        ("range", &["linearizability", "assertion"][..]),
    ] {
        for strategy in ["covcon", "random"] {
            let out = generate(
                dir.path(),
                "classes",
                class,
                &["--no-save", "--strategy", strategy, "--time-limit", "60s"],
            );
            assert_eq!(out.code, 1, "{class} {strategy}: {}", out.stdout);
            let kind = out.json()["failure"]["kind"].as_str().unwrap().to_string();
            assert!(kinds.contains(&kind.as_str()), "{class} {strategy}: {kind}");
        }
    }
    // The C class, with the C driver (weft_class.h).
    let out = generate(
        dir.path(),
        "range-c",
        "range",
        &["--no-save", "--time-limit", "60s"],
    );
    assert_eq!(out.code, 1, "range-c: {}", out.stdout);
    let out = generate(
        dir.path(),
        "range-c",
        "crange",
        &["--no-save", "--max-tests", "60"],
    );
    assert_eq!(out.code, 0, "range-c crange: {}", out.stdout);
    // The buffered stream, time series, map with views, logger and
    // seventeen-method vector, in C. With nine to seventeen methods their
    // bugs take hundreds of tests on many seeds (see `./x compare-classes`);
    // these seeds find them in a few dozen at most (about 130 for the
    // vector), which a debug build runs in time.
    for (module, class, covcon_seed, random_seed) in [
        ("stream-classes-c", "bstream", "9", "5"),
        ("stream-classes-c", "series", "2", "19"),
        ("map-views-c", "vmap", "2", "12"),
        ("logger-handlers-c", "hlogger", "2", "14"),
        ("sync-vector-c", "svec", "6", "6"),
    ] {
        for (strategy, seed) in [("covcon", covcon_seed), ("random", random_seed)] {
            let out = generate(
                dir.path(),
                module,
                class,
                &[
                    "--no-save",
                    "--strategy",
                    strategy,
                    "--seed",
                    seed,
                    "--time-limit",
                    "60s",
                ],
            );
            assert_eq!(out.code, 1, "{class} {strategy}: {}", out.stdout);
        }
    }
    for (module, class) in [
        ("stream-classes-c", "cbstream"),
        ("stream-classes-c", "cseries"),
        ("map-views-c", "cvmap"),
        ("logger-handlers-c", "chlogger"),
        ("sync-vector-c", "csvec"),
    ] {
        let out = generate(
            dir.path(),
            module,
            class,
            &["--no-save", "--max-tests", "60"],
        );
        assert_eq!(out.code, 0, "{class}: {}", out.stdout);
    }
    for class in ["cvec", "cmap", "clog", "crange"] {
        let out = generate(
            dir.path(),
            "classes",
            class,
            &["--no-save", "--max-tests", "60", "--time-limit", "60s"],
        );
        assert_eq!(out.code, 0, "{class}: {}", out.stdout);
        assert_eq!(out.json()["tests"], 60);
    }
}

#[test]
fn prefixes_call_the_methods_that_change_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let out = generate(
        dir.path(),
        "classes",
        "clog",
        &["--max-tests", "1", "--no-save"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Adding a handler changes what publish returns; publish changes
    // nothing. (A removal shows only when the probe removes what it added.)
    let changing = out.json()["state_changing"].clone();
    let changing: Vec<&str> = changing
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(changing.contains(&"clog_add_handler"), "{changing:?}");
    assert!(!changing.contains(&"clog_publish"), "{changing:?}");
}

#[test]
fn a_prefix_without_a_class_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &["gen", arg(&sample("stringbuffer")), "--class", "nope"],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no constructor `nope_new`"),
        "{}",
        out.stderr
    );
}

#[test]
fn limits_are_never_a_pass_and_counts_hold() {
    let dir = tempfile::tempdir().unwrap();
    let classes = sample("classes");
    // Every execution is cut by the step limit: no verdict, no pass.
    let out = weft_in(
        dir.path(),
        &[
            "gen",
            arg(&classes),
            "--class",
            "vec",
            "--max-steps",
            "5",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("cut short by a limit (inconclusive)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("no violation"), "{}", out.stdout);
    // --max-tests is the number of tests run.
    let out = weft_in(
        dir.path(),
        &[
            "gen",
            arg(&classes),
            "--class",
            "cvec",
            "--max-tests",
            "3",
            "--json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.json()["tests"], 3, "{}", out.stdout);
    // The time limit holds within a test's many schedules.
    let started = std::time::Instant::now();
    let out = weft_in(
        dir.path(),
        &[
            "gen",
            arg(&classes),
            "--class",
            "cvec",
            "--time-limit",
            "1s",
            "--schedules-per-test",
            "1000000",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        started.elapsed().as_secs_f64() < 3.0,
        "{:?}",
        started.elapsed()
    );
    for bad in [
        ["--schedules-per-test", "0"],
        ["--max-tests", "0"],
        ["--time-limit", "0s"],
    ] {
        let out = weft_in(
            dir.path(),
            &["gen", arg(&classes), "--class", "cvec", bad[0], bad[1]],
        );
        assert_eq!(out.code, 2, "{bad:?}: {}", out.stdout);
    }
}
