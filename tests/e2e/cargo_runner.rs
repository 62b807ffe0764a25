//! `weft test` as cargo's test runner: a crate's own `#[test]`s, built by
//! `cargo test --release` for wasm (no debuginfo, as cargo builds it),
//! each explored under many schedules and reported in cargo's format.

use crate::support::{arg, weft_in};
use std::path::Path;
use std::process::Command;

const LIB: &str = r#"use std::sync::atomic::{AtomicUsize, Ordering};

/// A counter whose increment is a load and a store.
///
/// ```
/// use std::sync::Arc;
/// let counter = Arc::new(counter::Counter::new());
/// let other = counter.clone();
/// let worker = std::thread::spawn(move || other.incr());
/// counter.incr();
/// worker.join().unwrap();
/// assert_eq!(counter.get(), 2);
/// ```
pub struct Counter(AtomicUsize);

impl Counter {
    pub fn new() -> Self {
        Counter(AtomicUsize::new(0))
    }
    pub fn incr(&self) {
        let seen = self.0.load(Ordering::SeqCst);
        self.0.store(seen + 1, Ordering::SeqCst);
    }
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::Counter;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_mutex_counts_every_increment() {
        let total = Arc::new(Mutex::new(0));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let total = total.clone();
                std::thread::spawn(move || {
                    for _ in 0..3 {
                        *total.lock().unwrap() += 1;
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        assert_eq!(*total.lock().unwrap(), 6);
    }

    #[test]
    fn the_counter_counts_every_increment() {
        let counter = Arc::new(Counter::new());
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let counter = counter.clone();
                std::thread::spawn(move || {
                    counter.incr();
                    counter.incr();
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        assert_eq!(counter.get(), 4);
    }

    #[test]
    fn catches_its_own_panic() {
        let caught = std::panic::catch_unwind(|| panic!("caught where panics unwind"));
        assert!(caught.is_err());
    }

    #[test]
    #[ignore]
    fn slow() {
        panic!("ignored tests do not run");
    }

    #[test]
    #[should_panic]
    fn panics() {
        panic!("on wasm libtest skips it");
    }
}
"#;

/// Writes the crate into `dir`, with weft as its runner.
fn write_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join(".cargo")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"counter\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), LIB).unwrap();
    std::fs::write(
        dir.join(".cargo/config.toml"),
        format!(
            "[target.wasm32-wasip1-threads]\nrunner = [{:?}, \"test\", \"--iterations\", \"200\"]\n",
            env!("CARGO_BIN_EXE_weft")
        ),
    )
    .unwrap();
}

#[test]
fn cargo_test_runs_every_test_under_weft_and_a_failure_replays() {
    let dir = tempfile::tempdir().unwrap();
    write_crate(dir.path());
    let target_dir = dir.path().join("target");
    let out = cargo_test_release(dir.path(), &target_dir, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    for line in [
        "test tests::a_mutex_counts_every_increment ... ok",
        "test tests::the_counter_counts_every_increment ... FAILED",
        "test tests::slow ... ignored",
        "test tests::panics ... ignored",
        "test tests::catches_its_own_panic ... FAILED",
        "panicked at src/lib.rs",
        // Only one thread runs in it: weft says the failure is not the
        // schedule's, and why a caught panic fails on wasm.
        "no scheduling decision: only one thread could ever run",
        "a test that catches its own panic, with `catch_unwind`",
        "test result: FAILED. 1 passed; 2 failed; 2 ignored; 0 measured; 0 filtered out;",
    ] {
        assert!(stdout.contains(line), "{line:?} in:\n{stdout}\n{stderr}");
    }
    let replay = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with("tests__the_counter_counts_every_increment.weft.json")
        })
        .expect("the failing test's replay file, named after the test");
    let again = weft_in(dir.path(), &["replay", arg(&replay)]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(
        again.stdout.contains("panicked at src/lib.rs"),
        "{}",
        again.stdout
    );

    // Doc tests (merged into one program in edition 2024) run as one test,
    // and the panic of the failing one is reported.
    let out = cargo_test_release(dir.path(), &target_dir, &["--doc"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    for line in ["test rust_out ... FAILED", "panicked at", "right: 2"] {
        assert!(stdout.contains(line), "{line:?} in:\n{stdout}");
    }

    // `--ignored` runs the ignored test, which fails (libtest runs it only
    // when asked; weft passed it on to the harness).
    let out = cargo_test_release(dir.path(), &target_dir, &["--", "--ignored"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    for line in [
        "test tests::slow ... FAILED",
        "ignored tests do not run",
        "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 4 filtered out;",
    ] {
        assert!(stdout.contains(line), "{line:?} in:\n{stdout}");
    }

    // cargo's filters and libtest's options reach weft.
    let out = cargo_test_release(
        dir.path(),
        &target_dir,
        &["--", "mutex", "--test-threads", "2", "--nocapture"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out;"
        ),
        "{stdout}"
    );
}

#[test]
fn weft_test_refuses_an_option_no_harness_has() {
    let dir = tempfile::tempdir().unwrap();
    let module = crate::support::sample("imunit-queue");
    let out = weft_in(dir.path(), &["test", arg(&module), "--frobnicate"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("`--frobnicate` is not an option"),
        "{}",
        out.stderr
    );
}

/// `cargo test --release --target wasm32-wasip1-threads` in `dir`, into
/// `target_dir`, with `extra` arguments after.
fn cargo_test_release(dir: &Path, target_dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "test",
        "--release",
        "--target",
        "wasm32-wasip1-threads",
        "--target-dir",
        arg(target_dir),
    ];
    args.extend_from_slice(extra);
    cargo_in(dir, &args)
}

/// `cargo` in `dir` with `args`, as a user runs it (no flags of this
/// build).
fn cargo_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap()
}

/// crossbeam-channel 0.5.7 (published, since yanked) reads the head block
/// of an unbounded channel as null when its receiver is dropped while the
/// first block is being installed (crossbeam-rs/crossbeam#971); 0.5.8
/// fixed it. The test crate of bench/historical runs against each, as
/// cargo fetches them: a failure for the first, none for the second. When
/// the registry cannot be reached, the test says so and passes.
#[test]
fn a_published_crates_historical_race_is_found_and_its_fix_passes() {
    let historical = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/historical/crossbeam-channel-first-block");
    let dir = tempfile::tempdir().unwrap();
    for (version, fails) in [("0.5.7", true), ("0.5.8", false)] {
        let crate_dir = dir.path().join(version);
        std::fs::create_dir_all(crate_dir.join("tests")).unwrap();
        std::fs::create_dir_all(crate_dir.join("src")).unwrap();
        std::fs::create_dir_all(crate_dir.join(".cargo")).unwrap();
        for file in ["Cargo.toml", "src/lib.rs", "tests/first_block.rs"] {
            std::fs::copy(historical.join(file), crate_dir.join(file)).unwrap();
        }
        let locked = cargo_in(&crate_dir, &["generate-lockfile", "--quiet"]);
        if !locked.status.success() {
            eprintln!(
                "skipped: the crate registry cannot be reached ({})",
                String::from_utf8_lossy(&locked.stderr).trim()
            );
            return;
        }
        let pinned = cargo_in(
            &crate_dir,
            &[
                "update",
                "--quiet",
                "-p",
                "crossbeam-channel",
                "--precise",
                version,
            ],
        );
        assert!(
            pinned.status.success(),
            "{}",
            String::from_utf8_lossy(&pinned.stderr)
        );
        std::fs::write(
            crate_dir.join(".cargo/config.toml"),
            format!(
                "[target.wasm32-wasip1-threads]\nrunner = [{:?}, \"test\"]\n",
                env!("CARGO_BIN_EXE_weft")
            ),
        )
        .unwrap();
        let out = cargo_in(
            &crate_dir,
            &["test", "--release", "--target", "wasm32-wasip1-threads"],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let verdict = if fails { "FAILED" } else { "ok" };
        let line =
            format!("test receiver_dropped_while_the_first_block_is_installed ... {verdict}");
        assert!(
            stdout.contains(&line),
            "{version}: {line:?} in:\n{stdout}\n{stderr}"
        );
        assert_eq!(
            out.status.success(),
            !fails,
            "{version}:\n{stdout}\n{stderr}"
        );
        if fails {
            assert!(stdout.contains("FAILURE: livelock"), "{stdout}");
        }
    }
}
