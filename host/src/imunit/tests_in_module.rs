//! Unit tests inside a module, as `weft test` finds and runs them.
//!
//! Protocol (what the guest SDKs' `run_tests` implements): run with the
//! argument `--weft-list`, the module prints one line per test: the marker
//! `weft-test`, the test's name and its schedules, tab-separated (other
//! output is ignored); run with a test's name, it runs that test.

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
}

/// Errors listing a module's tests.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The host could not run the module.
    #[error(transparent)]
    Host(#[from] ExploreError),
    /// The listing run failed.
    #[error("the module failed when asked for its tests ({0}); is it a test module (`run_tests`)?")]
    Failed(String),
    /// The listing was empty.
    #[error("the module lists no tests; is it a test module (`run_tests`)?")]
    Empty,
}

/// Asks the module for its tests (one execution, no schedule).
///
/// # Errors
///
/// A [`ListError`] when the module cannot be run or lists nothing.
pub fn list(program: &mut Program, base: &Setup) -> Result<Vec<TestCase>, ListError> {
    let mut config = base.clone();
    config.run.args.truncate(1);
    config.run.args.push(LIST_ARG.to_string());
    config.schedule = None;
    let result = run_once(program, Strategy::Random, 0, 1, &config)?;
    if !matches!(result.outcome, Outcome::Exited(0)) {
        let reason = result
            .outcome
            .failure()
            .map_or_else(|| format!("{:?}", result.outcome), |f| f.message);
        return Err(ListError::Failed(reason));
    }
    let tests: Vec<TestCase> = String::from_utf8_lossy(&result.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix(LIST_MARKER))
        .map(|line| {
            let mut fields = line.split('\t');
            TestCase {
                name: fields.next().unwrap_or_default().to_string(),
                schedules: fields.map(String::from).collect(),
            }
        })
        .collect();
    if tests.is_empty() {
        return Err(ListError::Empty);
    }
    Ok(tests)
}
