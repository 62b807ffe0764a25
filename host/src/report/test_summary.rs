//! `weft test`'s closing lines, the way `cargo test` ends: each failure's
//! report, the failing tests' names, the tests with no verdict, the counts.

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
