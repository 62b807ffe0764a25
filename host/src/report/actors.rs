//! `weft actors`' findings for people: the failure, the coverage of each
//! criterion and how it grew, the failing execution's deliveries, and how
//! to replay it; as text or JSON.

use super::text::describe_minimization;
use crate::actors::chart;
use crate::actors::driver::{ActorReport, ActorStrategy, Coverage};
use crate::actors::mailboxes::log_of;
use crate::replay::minimize::Minimization;
use serde_json::json;
use std::path::Path;

/// What a search of an actor program's delivery orders found.
pub struct ActorsFindings<'a> {
    /// The search's report.
    pub search: &'a ActorReport,
    /// The strategy that generated the delivery orders.
    pub strategy: ActorStrategy,
    /// How the failure's schedule was minimized.
    pub minimization: Option<Minimization>,
    /// Where the failure's replay file was written.
    pub replay_file: Option<&'a Path>,
}

impl ActorsFindings<'_> {
    /// The strategy's name.
    fn strategy(&self) -> &'static str {
        match self.strategy {
            ActorStrategy::Bita => "bita",
            ActorStrategy::Random => "random",
            ActorStrategy::RandomDelays => "random-delays",
        }
    }

    /// The failing execution's deliveries as a chart, 80 columns wide.
    fn chart(&self) -> Option<String> {
        let failure = self.search.failure.as_ref()?;
        log_of(&failure.result).map(|log| chart::render(log, 80))
    }

    /// One line: what was found, after how many executions, by what.
    pub fn headline(&self) -> String {
        let strategy = self.strategy();
        let executions = self.search.executions;
        match &self.search.failure {
            Some(f) => format!(
                "{} failure found after {executions} executions ({strategy})",
                f.failure.kind.name(),
            ),
            None => format!("no failure in {executions} executions ({strategy})"),
        }
    }

    /// The text report.
    pub fn text(&self) -> String {
        let search = self.search;
        let mut s = match &search.failure {
            Some(f) => format!(
                "weft: {} in {:.2?}\n\nFAILURE: {}\n",
                self.headline(),
                search.elapsed,
                f.failure.message.trim_end()
            ),
            None => format!("weft: {} in {:.2?}\n", self.headline(), search.elapsed),
        };
        s.push_str(&format!(
            "coverage: {} ({} schedules generated, {} diverged)\n",
            coverage_line(&search.coverage),
            search.generated,
            search.diverged
        ));
        for (executions, coverage) in &search.growth {
            s.push_str(&format!(
                "  after {executions:>5} executions: {}\n",
                coverage_line(coverage)
            ));
        }
        if let Some(chart) = self.chart() {
            s.push_str(&format!("\ndeliveries of the failing execution:\n{chart}"));
        }
        if let Some(m) = &self.minimization {
            s.push_str(&format!("{}\n", describe_minimization(m)));
        }
        if let Some(path) = self.replay_file {
            s.push_str(&format!(
                "\nreplay: weft replay {}\n",
                super::text::shell_word(path)
            ));
        }
        s
    }

    /// The JSON report.
    pub fn json(&self) -> serde_json::Value {
        let search = self.search;
        let coverage: serde_json::Map<String, serde_json::Value> = search
            .coverage
            .iter()
            .map(|c| {
                (
                    c.criterion.name().to_string(),
                    json!({"covered": c.covered, "pairs": c.pairs}),
                )
            })
            .collect();
        let growth: Vec<serde_json::Value> = search
            .growth
            .iter()
            .map(|(executions, coverage)| {
                let mut point = serde_json::Map::new();
                point.insert("executions".into(), json!(executions));
                for c in coverage {
                    point.insert(c.criterion.name().into(), json!([c.covered, c.pairs]));
                }
                serde_json::Value::Object(point)
            })
            .collect();
        json!({
            "status": if search.failure.is_some() { "failure" } else { "pass" },
            "coverage_growth": growth,
            "strategy": self.strategy(),
            "executions": search.executions,
            "generated_schedules": search.generated,
            "diverged": search.diverged,
            "coverage": coverage,
            "failure": search.failure.as_ref().map(|f| json!({
                "kind": f.failure.kind.name(),
                "message": f.failure.message,
                "thread": f.failure.thread,
                "execution": f.index,
            })),
            "schedule": self.chart(),
            "replay_file": self.replay_file.map(|p| p.display().to_string()),
            "minimized": self.minimization,
            "elapsed_ms": search.elapsed.as_millis() as u64,
        })
    }
}

/// `pr 3/4, pcr 2/3, pbr 0/1`.
pub fn coverage_line(coverage: &[Coverage]) -> String {
    coverage
        .iter()
        .map(|c| format!("{} {}/{}", c.criterion.name(), c.covered, c.pairs))
        .collect::<Vec<_>>()
        .join(", ")
}
