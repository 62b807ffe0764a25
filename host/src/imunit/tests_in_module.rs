//! Unit tests inside a module, as `weft test` finds and runs them. Two
//! harnesses are understood:
//!
//! - The guest SDKs' `run_tests`: run with the argument `--weft-list`, the
//!   module prints one line per test: the marker `weft-test`, the test's
//!   name and its schedules, tab-separated (other output is ignored); run
//!   with a test's name, it runs that test.
//! - Rust's libtest (a `cargo test` binary): `--list` prints `NAME: test`
//!   per test (and `NAME: benchmark`), then a count (`4 tests, 0
//!   benchmarks`); `--ignored` lists the `#[ignore]`d ones only; `--exact NAME --test-threads 1 --nocapture`
//!   runs one test on the main thread (on wasm libtest runs tests on the
//!   thread that calls them), its panic message on stderr. With `panic = "abort"`, as on wasm, libtest reports a
//!   `#[should_panic]` test as ignored without running it.

use crate::execution::Setup;
use crate::explore::{ExploreError, run_once};
use crate::runtime::{Outcome, Program};
use crate::sched::Strategy;

/// The argument that asks a test module for its tests.
pub const LIST_ARG: &str = "--weft-list";

/// How every line of the listing starts.
pub const LIST_MARKER: &str = "weft-test\t";

/// A test a module declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestCase {
    /// Its name.
    pub name: String,
    /// The schedules it runs under (once each; none: once without).
    pub schedules: Vec<String>,
    /// The arguments that run it alone (after the program's name).
    pub args: Vec<String>,
    /// The harness skips it unless asked (`#[ignore]`).
    pub ignored: bool,
}

/// How a libtest listing marks a test.
const LIBTEST_MARKER: &str = ": test";

/// Errors listing a module's tests.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The host could not run the module.
    #[error(transparent)]
    Host(#[from] ExploreError),
    /// The listing run failed.
    #[error(
        "the module failed when asked for its tests ({0}); is it a test module (the SDK's `run_tests`, or a `cargo test` binary)?"
    )]
    Failed(String),
    /// The listing was empty.
    #[error(
        "the module lists no tests; is it a test module (the SDK's `run_tests`, or a `cargo test` binary)?"
    )]
    Empty,
}

/// Asks the module for its tests: as an SDK test module first, then as a
/// libtest binary (one execution each, no schedule).
///
/// # Errors
///
/// A [`ListError`] when the module cannot be run or lists nothing.
pub fn list(program: &mut Program, base: &Setup) -> Result<Vec<TestCase>, ListError> {
    let sdk = run_with(program, base, &[LIST_ARG])?;
    let tests: Vec<TestCase> = sdk
        .as_deref()
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.strip_prefix(LIST_MARKER))
        .map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next().unwrap_or_default().to_string();
            TestCase {
                args: vec![name.clone()],
                name,
                schedules: fields.map(String::from).collect(),
                ignored: false,
            }
        })
        .collect();
    if !tests.is_empty() {
        return Ok(tests);
    }
    let listed = run_with(program, base, &["--list"])?;
    let all = match (&sdk, &listed) {
        (_, Ok(listing)) if libtest_listing(listing) => names(listing),
        (Err(reason), _) => return Err(ListError::Failed(reason.clone())),
        (Ok(_), _) => return Err(ListError::Empty),
    };
    let ignored = run_with(program, base, &["--list", "--ignored"])?
        .map(|listing| names(&listing))
        .unwrap_or_default();
    Ok(all
        .into_iter()
        .map(|name| TestCase {
            args: vec![
                "--exact".into(),
                name.clone(),
                "--test-threads".into(),
                "1".into(),
                // A panic aborts: uncaptured, its message reaches stderr.
                "--nocapture".into(),
            ],
            ignored: ignored.contains(&name),
            name,
            schedules: Vec::new(),
        })
        .collect())
}

/// Whether `listing` is what libtest prints for `--list`: its last line
/// counts the tests and benchmarks (`4 tests, 0 benchmarks`; a binary with
/// no test says `0 tests`).
fn libtest_listing(listing: &str) -> bool {
    listing.lines().last().is_some_and(|line| {
        let counts: Vec<&str> = line.split(", ").collect();
        counts.len() == 2
            && counts
                .iter()
                .zip(["test", "benchmark"])
                .all(|(count, noun)| {
                    count.split_once(' ').is_some_and(|(n, word)| {
                        n.parse::<u64>().is_ok() && word.trim_end_matches('s') == noun
                    })
                })
    })
}

/// The tests of a libtest listing, in order.
fn names(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|line| line.strip_suffix(LIBTEST_MARKER))
        .map(String::from)
        .collect()
}

/// The module's standard output when run once with `args` (and no
/// schedule), or why the run failed.
fn run_with(
    program: &mut Program,
    base: &Setup,
    args: &[&str],
) -> Result<Result<String, String>, ListError> {
    let mut config = base.clone();
    config.run.args.truncate(1);
    config.run.args.extend(args.iter().map(|a| a.to_string()));
    config.schedule = None;
    let result = run_once(program, Strategy::Random, 0, 1, &config)?;
    if !matches!(result.outcome, Outcome::Exited(0)) {
        return Ok(Err(result
            .outcome
            .failure()
            .map_or_else(|| format!("{:?}", result.outcome), |f| f.message)));
    }
    Ok(Ok(String::from_utf8_lossy(&result.stdout).into_owned()))
}

/// The variable that stops libtest capturing a test's output.
pub const NOCAPTURE: &str = "RUST_TEST_NOCAPTURE=";

/// A module that lists no tests as one test: the whole program, named after
/// its file `module`, run with the arguments `args`.
pub fn whole_program(module: &std::path::Path, args: &[String]) -> TestCase {
    let name = module.file_stem().map_or_else(
        || "program".to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    TestCase {
        name,
        schedules: Vec::new(),
        args: args.to_vec(),
        ignored: false,
    }
}

/// Whether a libtest binary's output says it skipped test `name` itself
/// (`test NAME - should panic ... ignored`: with `panic = "abort"` it
/// cannot catch the panic).
pub fn harness_skipped(stdout: &[u8], name: &str) -> bool {
    let stdout = String::from_utf8_lossy(stdout);
    stdout.lines().any(|line| {
        line.strip_prefix("test ")
            .and_then(|rest| rest.strip_prefix(name))
            .is_some_and(|rest| rest.ends_with("... ignored"))
    })
}

#[cfg(test)]
mod tests {
    use super::{libtest_listing, names};

    #[test]
    fn libtest_listings_are_told_by_their_count() {
        let listing = "a::b: test\nc: test\nd: benchmark\n\n2 tests, 1 benchmark\n";
        assert!(libtest_listing(listing));
        assert_eq!(names(listing), ["a::b", "c"]);
        assert!(libtest_listing("0 tests, 0 benchmarks\n"));
        assert!(!libtest_listing("hello\n"));
        assert!(!libtest_listing(""));
        assert!(!libtest_listing("two tests, 0 benchmarks"));
    }
}
