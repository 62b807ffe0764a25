//! `weft gen`'s findings for people: the thread-safety violation and the
//! generated test that shows it, its failing interleaving, the method pairs
//! covered, and how to replay it; as text or JSON.

use super::interleaving;
use super::text::{Shape, describe_minimization};
use crate::debuginfo::symbols::Symbols;
use crate::instrument::SiteTable;
use crate::replay::minimize::Minimization;
use crate::runtime::Failure;
use crate::testgen::class::Class;
use crate::testgen::driver::{GenFailure, GenReport, GenStrategy, Violation};
use serde_json::json;
use std::path::Path;

/// What a generation of concurrent tests for a class found.
pub struct GenFindings<'a> {
    /// The generation's report.
    pub search: &'a GenReport,
    /// The class tested.
    pub class: &'a Class,
    /// The violation, and the failure it is.
    pub failure: Option<(&'a GenFailure, &'a Failure)>,
    /// The strategy that generated the tests.
    pub strategy: GenStrategy,
    /// How the failure's schedule was minimized.
    pub minimization: Option<Minimization>,
    /// Where the failure's replay file was written.
    pub replay_file: Option<&'a Path>,
    /// The module's bytes (for names and lines) and its sites.
    pub wasm: &'a [u8],
    /// The module's instrumented sites.
    pub sites: &'a SiteTable,
    /// How the interleaving is shown.
    pub shape: Shape,
}

impl GenFindings<'_> {
    /// The strategy's name.
    pub fn strategy(&self) -> &'static str {
        match self.strategy {
            GenStrategy::Covcon => "covcon",
            GenStrategy::Random => "random",
        }
    }

    /// The failing concurrent execution, step by step.
    fn interleaving(&self) -> Option<String> {
        let (found, _) = self.failure?;
        let symbols = Symbols::new(self.wasm);
        let rows = interleaving::rows(
            &found.execution,
            self.sites,
            &symbols,
            self.shape.full_trace,
        );
        Some(interleaving::render(
            &rows,
            self.shape.layout,
            self.shape.focus,
        ))
    }

    /// One line: what was found, after how many tests, by what.
    pub fn headline(&self) -> String {
        let strategy = self.strategy();
        let executions = self.search.executions;
        match self.failure {
            Some((found, failure)) if failure.kind.is_limit() => format!(
                "a test was cut short by a limit ({}) after {} tests, {executions} executions ({strategy})",
                failure.kind.name(),
                found.tests,
            ),
            Some((found, failure)) => format!(
                "thread-safety violation ({}) found after {} tests, {executions} executions ({strategy})",
                failure.kind.name(),
                found.tests,
            ),
            None => format!(
                "no violation in {} tests, {executions} executions ({strategy})",
                self.search.tests
            ),
        }
    }

    /// The text report.
    pub fn text(&self) -> String {
        let search = self.search;
        let mut s = match self.failure {
            Some((found, failure)) if failure.kind.is_limit() => format!(
                "weft: {} in {:.2?}: no verdict on it, and no pass\n\n  {}\n\ntest:\n{}\n",
                self.headline(),
                found.elapsed,
                failure.message.lines().next().unwrap_or_default(),
                indent(&found.test.describe(self.class)),
            ),
            Some((found, failure)) => format!(
                "weft: {} in {:.2?}\n\n  {}\n\ntest:\n{}\n\nnone of its {} linearizations (the suffixes' calls in every order, run sequentially) {}\n",
                self.headline(),
                found.elapsed,
                failure.message.lines().next().unwrap_or_default(),
                indent(&found.test.describe(self.class)),
                found.linearizations,
                match found.violation {
                    Violation::Crash(_) => "fails that way",
                    Violation::Results { .. } => "returns these results",
                }
            ),
            None => format!("weft: {} in {:.2?}\n", self.headline(), search.elapsed),
        };
        if let Some(text) = self.interleaving() {
            s.push_str("\nthe failing interleaving");
            if let Some(m) = &self.minimization {
                s.push_str(&format!(" ({})", describe_minimization(m)));
            }
            s.push_str(&format!(":\n{text}\n"));
        }
        s.push_str(&format!(
            "method pairs covered: {}/{}\n",
            search.covered, search.pairs
        ));
        if let Some(path) = self.replay_file {
            s.push_str(&format!(
                "replay: weft replay {}\n",
                super::text::shell_word(path)
            ));
        }
        s
    }

    /// The JSON report.
    pub fn json(&self) -> serde_json::Value {
        let search = self.search;
        let class = self.class;
        json!({
            "status": if self.failure.is_some() { "failure" } else { "pass" },
            "strategy": self.strategy(),
            "class": class.prefix,
            "methods": class.methods.iter().map(|m| m.export.clone()).collect::<Vec<_>>(),
            "state_changing": search.state_changing.iter().map(|&m| class.methods[m].export.clone()).collect::<Vec<_>>(),
            "tests": search.tests,
            "executions": search.executions,
            "pairs": {"covered": search.covered, "total": search.pairs},
            "coverage_growth": search.growth.iter().map(|(t, ms, c)| json!({"tests": t, "ms": ms, "covered": c})).collect::<Vec<_>>(),
            "failure": self.failure.map(|(found, failure)| json!({
                "kind": failure.kind.name(),
                "message": failure.message,
                "test": found.test.describe(class),
                "linearizations": found.linearizations,
                "tests_to_failure": found.tests,
                "ms_to_failure": found.elapsed.as_millis() as u64,
                "interleaving": self.interleaving(),
            })),
            "minimized": self.minimization,
            "replay_file": self.replay_file.map(|p| p.display().to_string()),
            "elapsed_ms": search.elapsed.as_millis() as u64,
        })
    }
}

/// `text` with every line indented by two spaces.
fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
