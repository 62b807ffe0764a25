//! `weft svcomp`'s verdicts for people: a table as verification tools
//! print one (each task's property, expected and found verdict,
//! executions, time), the counts, and why each verdict that is not `true`
//! is what it is; or the same as JSON.

use crate::svcomp::Verdict;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// The verdict on one property of one task.
pub struct Row {
    /// The task's name.
    pub task: String,
    /// The property's name (`unreach-call`; `-` when the task definition
    /// could not be read).
    pub property: String,
    /// The verdict the task expects, if it says.
    pub expected: Option<bool>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in words.
    pub reason: String,
    /// Executions run.
    pub executions: u64,
    /// Wall time taken.
    pub elapsed: Duration,
    /// The witness of a `false` verdict.
    pub witness: Option<PathBuf>,
    /// Whether the task could not be read or its program not built: a
    /// tool error (its verdict is `unknown`), which makes the command
    /// exit with an error.
    pub error: bool,
}

impl Row {
    /// Whether the verdict contradicts the expected one (`unknown` never
    /// does).
    pub fn wrong(&self) -> bool {
        matches!(
            (self.verdict, self.expected),
            (Verdict::True, Some(false)) | (Verdict::False, Some(true))
        )
    }

    /// Whether the verdict is the expected one (a task that expects
    /// nothing has no correct verdict).
    pub fn correct(&self) -> bool {
        matches!(
            (self.verdict, self.expected),
            (Verdict::True, Some(true)) | (Verdict::False, Some(false))
        )
    }

    /// The expected verdict as the table shows it.
    fn expected(&self) -> &'static str {
        match self.expected {
            Some(true) => "true",
            Some(false) => "false",
            None => "-",
        }
    }
}

/// The table of `rows`, then a line of counts, then why each verdict that
/// is not `true` is what it is.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let width = rows.iter().map(|r| r.task.len()).max().unwrap_or(4).max(4);
    let property_width = rows
        .iter()
        .map(|r| r.property.len())
        .max()
        .unwrap_or(12)
        .max(12);
    let _ = writeln!(
        out,
        "{:<width$}  {:<property_width$}  {:>8}  {:>7}  {:>10}  {:>9}",
        "task", "property", "expected", "verdict", "executions", "time"
    );
    for row in rows {
        let mark = if row.wrong() {
            "  WRONG"
        } else if row.error {
            "  ERROR"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:<width$}  {:<property_width$}  {:>8}  {:>7}  {:>10}  {:>8.1}s{mark}",
            row.task,
            row.property,
            row.expected(),
            row.verdict.name(),
            row.executions,
            row.elapsed.as_secs_f64(),
        );
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let correct = rows.iter().filter(|r| r.correct()).count();
    let errors = rows.iter().filter(|r| r.error).count();
    let unexpected = rows
        .iter()
        .filter(|r| r.expected.is_none() && r.verdict != Verdict::Unknown)
        .count();
    let mut extra = String::new();
    if errors > 0 {
        let _ = write!(
            extra,
            ", {errors} {} (no verdict: the task could not be read or built)",
            if errors == 1 { "error" } else { "errors" }
        );
    }
    if unexpected > 0 {
        let _ = write!(extra, ", {unexpected} with no expected verdict to compare");
    }
    let _ = writeln!(
        out,
        "{} {}: {correct} correct, {} wrong, {} unknown{extra} ({} true, {} false)",
        rows.len(),
        if rows.len() == 1 {
            "verdict"
        } else {
            "verdicts"
        },
        rows.iter().filter(|r| r.wrong()).count(),
        count(Verdict::Unknown),
        count(Verdict::True),
        count(Verdict::False),
    );
    for row in rows.iter().filter(|r| r.verdict != Verdict::True) {
        match &row.witness {
            Some(witness) => drop(writeln!(
                out,
                "{} ({}): {}; witness {}",
                row.task,
                row.property,
                row.reason,
                witness.display()
            )),
            None => drop(writeln!(
                out,
                "{} ({}): {}",
                row.task, row.property, row.reason
            )),
        }
    }
    out
}

/// The rows as one JSON object: each task's verdict, and how many are wrong.
pub fn json(rows: &[Row]) -> serde_json::Value {
    let tasks: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({
                "task": r.task,
                "property": r.property,
                "expected": r.expected,
                "verdict": r.verdict,
                "reason": r.reason,
                "executions": r.executions,
                "elapsed_ms": r.elapsed.as_secs_f64() * 1000.0,
                "witness": r.witness,
                "wrong": r.wrong(),
                "correct": r.correct(),
                "error": r.error,
            })
        })
        .collect();
    let wrong = rows.iter().filter(|r| r.wrong()).count();
    let errors = rows.iter().filter(|r| r.error).count();
    json!({ "tasks": tasks, "wrong": wrong, "errors": errors })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(verdict: Verdict, expected: Option<bool>, error: bool) -> Row {
        Row {
            task: "t".into(),
            property: "unreach-call".into(),
            expected,
            verdict,
            reason: "why".into(),
            executions: 1,
            elapsed: Duration::ZERO,
            witness: None,
            error,
        }
    }

    #[test]
    fn a_verdict_is_correct_only_against_an_expected_one() {
        assert!(row(Verdict::True, Some(true), false).correct());
        assert!(!row(Verdict::True, None, false).correct());
        assert!(!row(Verdict::Unknown, Some(true), false).correct());
        let table = table(&[
            row(Verdict::True, None, false),
            row(Verdict::Unknown, Some(true), true),
        ]);
        assert!(
            table.contains("0 correct, 0 wrong, 1 unknown, 1 error (no verdict: the task could not be read or built), 1 with no expected verdict to compare"),
            "{table}"
        );
        assert!(table.contains("ERROR"), "{table}");
    }
}
