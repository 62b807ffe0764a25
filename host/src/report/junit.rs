//! Verdicts as a JUnit XML report, the format CI systems show test results
//! from.
//!
//! Guest text goes through [`quick_junit::XmlString`], which drops what XML
//! cannot carry (control characters, terminal escapes).

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// One test's verdict.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its name (`queue_order [a -> b]`).
    pub name: String,
    /// How long it ran.
    pub time: Duration,
    /// Its failure, if it failed.
    pub failure: Option<CaseFailure>,
    /// What weft reported about it.
    pub output: String,
}

/// How a test failed.
#[derive(Clone, Debug)]
pub struct CaseFailure {
    /// The failure's kind (`assertion`, `deadlock`, ...).
    pub kind: String,
    /// Its message.
    pub message: String,
}

impl CaseFailure {
    /// A test that failed with `failure`.
    pub fn of(failure: &crate::runtime::Failure) -> Self {
        CaseFailure {
            kind: failure.kind.name().to_string(),
            message: failure.message.trim_end().to_string(),
        }
    }
}

/// The JUnit XML of `cases`: one suite named `suite` (the module) that ran
/// for `time`.
pub fn render(suite: &str, cases: &[Case], time: Duration) -> String {
    let mut test_suite = TestSuite::new(suite);
    test_suite.set_time(time);
    for case in cases {
        let status = match &case.failure {
            None => TestCaseStatus::success(),
            Some(failure) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status
                    .set_type(failure.kind.as_str())
                    .set_message(failure.message.as_str())
                    .set_description(case.output.as_str());
                status
            }
        };
        let mut test_case = TestCase::new(case.name.as_str(), status);
        test_case
            .set_classname(suite)
            .set_time(case.time)
            .set_system_out(case.output.as_str());
        test_suite.add_test_case(test_case);
    }
    let mut report = Report::new("weft");
    report.set_time(time).add_test_suite(test_suite);
    report
        .to_string()
        .expect("a report built from strings always serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_failures_and_escapes_guest_text() {
        let cases = [
            Case {
                name: "passes".into(),
                time: Duration::from_millis(5),
                failure: None,
                output: "no failure in 100 executions".into(),
            },
            Case {
                name: "fails".into(),
                time: Duration::from_millis(7),
                failure: Some(CaseFailure {
                    kind: "assertion".into(),
                    message: "x < 2 && \u{1b}[31mred\u{1b}[0m\0".into(),
                }),
                output: "FAILURE: <boom>".into(),
            },
        ];
        let xml = render("queue.wasm", &cases, Duration::from_millis(12));
        assert!(
            xml.contains(r#"<testsuite name="queue.wasm" tests="2""#),
            "{xml}"
        );
        assert!(xml.contains(r#"failures="1""#), "{xml}");
        assert!(xml.contains(r#"type="assertion""#), "{xml}");
        assert!(xml.contains("x &lt; 2 &amp;&amp; red"), "{xml}");
        assert!(xml.contains("FAILURE: &lt;boom&gt;"), "{xml}");
        assert!(!xml.contains('\u{1b}') && !xml.contains('\0'), "{xml}");
    }
}
