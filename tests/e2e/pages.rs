//! `--html` pages, loaded in a real headless Chromium: they render without
//! console messages and show the lanes, the preemptions, the failing step,
//! an actor failure's message chart and a violation's accesses.

use crate::support::{arg, sample, weft_in};
use std::path::Path;
use std::process::Command;

/// The Chromium binary: `$WEFT_CHROMIUM`, else `chromium` (which `./x test`
/// installs).
fn chromium() -> String {
    std::env::var("WEFT_CHROMIUM").unwrap_or_else(|_| "chromium".into())
}

/// Loads `page` headless; returns the DOM after its script ran, and every
/// console message the page logged.
fn load(page: &Path) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start `{}` ({e}): `./x test` installs Debian's chromium; or set WEFT_CHROMIUM",
                chromium()
            )
        });
    assert!(out.status.success(), "chromium failed: {out:?}");
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// Loads `page` and checks what every page shows.
fn rendered(page: &Path) -> String {
    let (dom, console) = load(page);
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(
        dom.contains(r#"data-rendered="true""#),
        "the script ran to its end"
    );
    dom
}

#[test]
fn a_failure_page_shows_lanes_preemptions_and_the_failing_step() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("lu.html");
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update")),
            "--no-save",
            "--html",
            arg(&page),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let dom = rendered(&page);
    assert_eq!(
        dom.matches(r#"<th class="lane">"#).count(),
        3,
        "a lane per thread"
    );
    assert!(dom.contains("thread 0 (main)"));
    assert_eq!(dom.matches("cell failing").count(), 1, "one failing step");
    assert!(
        dom.contains(r#"class="preempts""#),
        "the preemption is marked"
    );
    assert!(dom.contains("main.rs:18"), "steps carry source lines");
    assert!(dom.contains("lost an update"));
    assert!(dom.contains("schedule minimized from"));
}

#[test]
fn an_actor_failure_page_has_a_message_sequence_chart() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("messenger.html");
    let out = weft_in(
        dir.path(),
        &[
            "actors",
            arg(&sample("messenger")),
            "--no-save",
            "--html",
            arg(&page),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let dom = rendered(&page);
    assert!(dom.contains(r#"class="msc""#), "a chart");
    assert!(dom.matches(r#"class="message"#).count() >= 2, "{dom}");
    assert!(
        dom.contains("message failing"),
        "the failing delivery is marked"
    );
}

#[test]
fn a_serializability_page_highlights_the_patterns_accesses() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("account.html");
    let out = weft_in(
        dir.path(),
        &[
            "serializability",
            arg(&sample("account")),
            "--no-save",
            "--html",
            arg(&page),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let dom = rendered(&page);
    assert_eq!(dom.matches(r#" highlight""#).count(), 4, "{dom}");
    assert!(dom.contains("pattern 9"));
    assert!(dom.contains("1. read in Account::copy_of"), "{dom}");
    assert_eq!(
        dom.matches("cell failing").count(),
        1,
        "the access completing it"
    );
}

#[test]
fn a_generated_tests_page_shows_the_test_and_its_interleaving() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("vec.html");
    let out = weft_in(
        dir.path(),
        &[
            "gen",
            arg(&sample("classes")),
            "--class",
            "vec",
            "--no-save",
            "--html",
            arg(&page),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let dom = rendered(&page);
    assert!(dom.contains("thread-safety violation"), "{dom}");
    assert!(dom.contains("vec_new()"), "the test is shown");
    assert_eq!(dom.matches("cell failing").count(), 1);
}

#[test]
fn a_replay_writes_the_same_page_and_never_over_the_module() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("lu.weft.json");
    let found = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update")),
            "--save-failure",
            arg(&replay),
        ],
    );
    assert_eq!(found.code, 1, "{}", found.stderr);
    let page = dir.path().join("replayed.html");
    let out = weft_in(dir.path(), &["replay", arg(&replay), "--html", arg(&page)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let dom = rendered(&page);
    assert_eq!(dom.matches("cell failing").count(), 1);

    let module = dir.path().join("copy.wasm");
    std::fs::copy(sample("lost-update"), &module).unwrap();
    let out = weft_in(
        dir.path(),
        &["run", arg(&module), "--no-save", "--html", arg(&module)],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("module itself"), "{}", out.stderr);
    assert_eq!(
        std::fs::read(&module).unwrap(),
        std::fs::read(sample("lost-update")).unwrap()
    );
}
