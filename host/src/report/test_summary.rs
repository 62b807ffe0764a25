//! `weft test`'s closing lines, the way `cargo test` ends: each failure's
//! report, the failing tests' names, the tests with no verdict, the counts;
//! and its `--json` object.

use crate::replay::minimize::Minimization;
use serde::Serialize;

/// A failing test, or one with no verdict, as the summary at the end
/// shows it.
pub struct Listed {
    /// Its label (see [`crate::imunit::driver::TestRun::label`]).
    pub label: String,
    /// Its report, or why it has no verdict.
    pub text: String,
}

/// The counts of a run's last line besides its failures.
pub struct Counts {
    /// Tests that passed.
    pub passed: usize,
    /// Tests ignored, by their attribute or by the harness.
    pub ignored: usize,
    /// Tests the filters left out.
    pub filtered_out: usize,
}

/// `cargo test`'s closing lines: each failure's report, their names, the
/// tests with no verdict and why, and the counts (inconclusive ones only
/// when there are some).
pub fn summary(
    failed: &[Listed],
    inconclusive: &[Listed],
    counts: Counts,
    time: std::time::Duration,
) -> String {
    let Counts {
        passed,
        ignored,
        filtered_out,
    } = counts;
    let mut s = String::new();
    if !failed.is_empty() {
        s.push_str("\nfailures:\n");
        for f in failed {
            s.push_str(&format!("\n---- {} ----\n{}", f.label, f.text));
        }
        s.push_str("\nfailures:\n");
        for f in failed {
            s.push_str(&format!("    {}\n", f.label));
        }
    }
    if !inconclusive.is_empty() {
        s.push_str("\ninconclusive (a limit cut an execution short):\n");
        for f in inconclusive {
            s.push_str(&format!("    {}: {}\n", f.label, f.text));
        }
    }
    let result = if !failed.is_empty() {
        "FAILED"
    } else if !inconclusive.is_empty() {
        "INCONCLUSIVE"
    } else {
        "ok"
    };
    let inconclusive = match inconclusive.len() {
        0 => String::new(),
        n => format!(" {n} inconclusive;"),
    };
    s.push_str(&format!(
        "\ntest result: {result}. {passed} passed; {} failed;{inconclusive} {ignored} ignored; 0 measured; {filtered_out} filtered out; finished in {:.2}s\n\n",
        failed.len(),
        time.as_secs_f64()
    ));
    s
}
/// One test in `weft test --json`'s list.
#[derive(Serialize)]
#[serde(untagged)]
pub enum TestEntry {
    /// A test that did not run: `#[ignore]`d, or skipped by its harness.
    Ignored {
        /// Always `ignored`.
        status: &'static str,
        /// Its label.
        test: String,
    },
    /// A test that ran under one schedule.
    Ran(Box<RanTest>),
}

/// A test that ran under one schedule, in `weft test --json`'s list.
#[derive(Serialize)]
pub struct RanTest {
    /// Executions run.
    pub executions: u64,
    /// Executions that failed.
    pub failing_executions: u64,
    /// Its failure.
    pub failure: Option<FailureEntry>,
    /// Why it has no verdict, when it has none.
    pub inconclusive_because: Option<String>,
    /// How the failure's schedule was minimized.
    pub minimized: Option<Minimization>,
    /// Where the failure's replay file went.
    pub replay_file: Option<String>,
    /// The schedule it ran under, if any.
    pub schedule: Option<String>,
    /// Wall time, in seconds.
    pub seconds: f64,
    /// `pass`, `failure` or `inconclusive`.
    pub status: &'static str,
    /// Its name.
    pub test: String,
}

/// A test's failure, in `weft test --json`'s list.
#[derive(Serialize)]
pub struct FailureEntry {
    /// The failure kind's name.
    pub kind: &'static str,
    /// Its message.
    pub message: String,
    /// The thread it happened in.
    pub thread: crate::trace::ThreadId,
}

/// `weft test --json`'s object.
#[derive(Serialize)]
pub struct TestsJson {
    /// Tests that failed.
    pub failed: usize,
    /// Tests the filters left out.
    pub filtered_out: usize,
    /// Tests ignored.
    pub ignored: usize,
    /// Tests with no verdict.
    pub inconclusive: usize,
    /// Tests that passed.
    pub passed: usize,
    /// `pass`, `failure` or `inconclusive`.
    pub status: &'static str,
    /// Every test, in the order it ran.
    pub tests: Vec<TestEntry>,
}
