//! Unit tests inside a module, as `weft test` finds and runs them. Two
//! harnesses are understood:
//!
//! - The guest SDKs' `run_tests`: run with the argument `--weft-list`, the
//!   module prints one line per test: the marker `weft-test#`, the test's
//!   name and its schedules, tab-separated (other output is ignored); run
//!   with `--weft-test N`, it runs the test of index N, so that no name
//!   (one that looks like an option, one given twice) picks another test.
//!   Modules of an older SDK mark lines `weft-test` and run a test by its
//!   name.
//! - Rust's libtest (a `cargo test` binary): `--list` prints `NAME: test`
//!   per test (and `NAME: benchmark`), then a count (`4 tests, 0
//!   benchmarks`); `--ignored` lists the `#[ignore]`d ones only; `--exact NAME --test-threads 1 --nocapture`
//!   runs one test on the main thread (on wasm libtest runs tests on the
//!   thread that calls them), its panic message on stderr. With `panic = "abort"`, as on wasm, libtest reports a
//!   `#[should_panic]` test as ignored without running it.

use crate::execution::HostError;
use crate::execution::Setup;
use crate::explore::run_once;
use crate::runtime::{Outcome, Program};
use crate::sched::Strategy;

/// The argument that asks a test module for its tests.
pub const LIST_ARG: &str = "--weft-list";

/// How every line of the listing starts: tests run by their index.
pub const LIST_MARKER: &str = "weft-test#\t";

/// How every line of an older SDK's listing starts: tests run by name.
const NAMED_LIST_MARKER: &str = "weft-test\t";

/// How the SDK's harness says why it refuses to list its tests.
const REFUSED_MARKER: &str = "weft-test-refused\t";

/// The argument before a test's index that runs the test.
const RUN_ARG: &str = "--weft-test";

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
    Host(#[from] HostError),
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
    /// The harness refused to list its tests.
    #[error("the module's tests cannot be listed: {0}")]
    Refused(String),
    /// Two tests have one name.
    #[error("two tests are named `{0}`: a name must say which test failed; rename one of them")]
    DuplicateName(String),
}

/// Asks the module for its tests: as an SDK test module first, then as a
/// libtest binary (one execution each, no schedule).
///
/// # Errors
///
/// A [`ListError`] when the module cannot be run or lists nothing.
pub fn list(program: &mut Program, base: &Setup) -> Result<Vec<TestCase>, ListError> {
    let tests = listed(program, base)?;
    let mut names = std::collections::HashSet::new();
    if let Some(twice) = tests.iter().find(|t| !names.insert(&t.name)) {
        return Err(ListError::DuplicateName(twice.name.clone()));
    }
    Ok(tests)
}

/// The tests the module lists, as an SDK test module or a libtest binary.
fn listed(program: &mut Program, base: &Setup) -> Result<Vec<TestCase>, ListError> {
    let sdk = run_with(program, base, &[LIST_ARG])?;
    let stdout = match &sdk {
        Ok(stdout) | Err((_, stdout)) => stdout,
    };
    if let Some(why) = stdout.lines().find_map(|l| l.strip_prefix(REFUSED_MARKER)) {
        return Err(ListError::Refused(why.to_string()));
    }
    let sdk = sdk.map_err(|(reason, _)| reason);
    let tests = sdk_listing(sdk.as_deref().unwrap_or_default());
    if !tests.is_empty() {
        return Ok(tests);
    }
    let listed = run_with(program, base, &["--list"])?.map_err(|(reason, _)| reason);
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
        .map(|name| {
            let is_ignored = ignored.contains(&name);
            let mut args = vec![
                "--exact".into(),
                name.clone(),
                "--test-threads".into(),
                "1".into(),
                // A panic aborts: uncaptured, its message reaches stderr.
                "--nocapture".into(),
            ];
            if is_ignored {
                // The harness runs an `#[ignore]`d test only when asked to;
                // weft runs it only when `--ignored` or `--include-ignored`
                // selected it.
                args.push("--ignored".into());
            }
            TestCase {
                args,
                ignored: is_ignored,
                name,
                schedules: Vec::new(),
            }
        })
        .collect())
}

/// The tests of an SDK listing, in order: by index, or by name for an
/// older SDK's.
fn sdk_listing(listing: &str) -> Vec<TestCase> {
    let mut tests = Vec::new();
    for line in listing.lines() {
        let (line, by_index) = match line.strip_prefix(LIST_MARKER) {
            Some(line) => (line, true),
            None => match line.strip_prefix(NAMED_LIST_MARKER) {
                Some(line) => (line, false),
                None => continue,
            },
        };
        let mut fields = line.split('\t');
        let name = fields.next().unwrap_or_default().to_string();
        let args = if by_index {
            vec![RUN_ARG.to_string(), tests.len().to_string()]
        } else {
            vec![name.clone()]
        };
        tests.push(TestCase {
            args,
            name,
            schedules: fields.map(String::from).collect(),
            ignored: false,
        });
    }
    tests
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
/// schedule), or why the run failed and its stdout.
fn run_with(
    program: &mut Program,
    base: &Setup,
    args: &[&str],
) -> Result<Result<String, (String, String)>, ListError> {
    let mut config = base.clone();
    config.run.args.truncate(1);
    config.run.args.extend(args.iter().map(|a| a.to_string()));
    config.schedule = None;
    let result = run_once(program, Strategy::Random, 0, 1, &config)?;
    let stdout = String::from_utf8_lossy(&result.stdout).into_owned();
    if !matches!(result.outcome, Outcome::Exited(0)) {
        let reason = result
            .outcome
            .failure()
            .map_or_else(|| format!("{:?}", result.outcome), |f| f.message);
        return Ok(Err((reason, stdout)));
    }
    Ok(Ok(stdout))
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
    use super::{libtest_listing, names, sdk_listing};

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

    #[test]
    fn sdk_listings_run_tests_by_index_or_by_an_older_sdks_name() {
        let tests = sdk_listing("hello\nweft-test#\t--weft-list\nweft-test#\tb\tA->B\tB->A\n");
        assert_eq!(tests[0].name, "--weft-list");
        assert_eq!(tests[0].args, ["--weft-test", "0"]);
        assert_eq!(tests[1].args, ["--weft-test", "1"]);
        assert_eq!(tests[1].schedules, ["A->B", "B->A"]);
        let older = sdk_listing("weft-test\tc\n");
        assert_eq!(older[0].args, ["c"]);
    }
}
