//! `weft serializability`'s findings for people: each violation (its
//! pattern, atomic set and accesses, with their places in the source), a
//! crash met on the way, and how to replay the first; as text or JSON.

use super::text::describe_minimization;
use crate::debuginfo::symbols::Symbols;
use crate::replay::minimize::Minimization;
use crate::runtime::{ExecutionResult, Failure, Program};
use crate::serializability::driver::{Found, SerialReport, SerialStrategy};
use crate::serializability::patterns::PATTERNS;
use serde_json::{Value, json};
use std::path::Path;

/// What a search for serializability violations found.
pub struct SerialFindings<'a> {
    /// The search's report.
    pub search: &'a SerialReport,
    /// The strategy.
    pub strategy: SerialStrategy,
    /// The profiling executions asked for (AssetFuzzer's phase I).
    pub profile_runs: u64,
    /// The first violation's failure.
    pub first_failure: Option<&'a Failure>,
    /// The program searched (for its sites).
    pub program: &'a Program,
    /// The module's names and lines.
    pub symbols: &'a Symbols,
    /// How the first violation's schedule was minimized.
    pub minimization: Option<Minimization>,
    /// Where the first violation's replay file was written.
    pub replay_file: Option<&'a Path>,
}

impl SerialFindings<'_> {
    /// The violations, each as JSON.
    fn violations(&self) -> Vec<Value> {
        self.search
            .found
            .iter()
            .map(|f| violation_json(f, self.program, self.symbols))
            .collect()
    }

    /// The execution the page shows: the first violation's, else a crash's;
    /// with its failure.
    pub fn shown(&self) -> Option<(&ExecutionResult, Failure)> {
        if let (Some(found), Some(failure)) = (self.search.found.first(), self.first_failure) {
            return Some((&found.execution, failure.clone()));
        }
        let (result, _, _) = self.search.crash.as_ref()?;
        Some((result, result.outcome.failure()?))
    }

    /// One line: the first violation, a crash, or how many executions had
    /// none.
    pub fn headline(&self) -> String {
        let crash = self
            .search
            .crash
            .as_ref()
            .and_then(|(r, _, _)| r.outcome.failure());
        match (self.search.found.first(), crash) {
            (Some(f), _) => format!(
                "serializability violation: pattern {} ({}) on atomic set `{}`",
                PATTERNS[f.pattern].number,
                PATTERNS[f.pattern].name,
                f.log.sets[f.log.accesses[f.accesses[0]].set as usize].name
            ),
            (None, Some(f)) => format!("{} failure", f.kind.name()),
            (None, None) => format!("no violation in {} executions", self.search.executions),
        }
    }

    /// The JSON report.
    pub fn json(&self) -> Value {
        let report = self.search;
        let first = report.found.first();
        json!({
            "status": if first.is_some() { "failure" } else { "pass" },
            "strategy": match self.strategy {
                SerialStrategy::Assetfuzzer => "assetfuzzer",
                SerialStrategy::RandomMonitor => "random-monitor",
            },
            "executions": report.executions,
            "detecting_executions": report.detecting,
            "detection_rate": report.detecting as f64 / report.executions.max(1) as f64,
            "potential_violations": report.potential,
            "realised_potential_violations": report.realised,
            "violations": self.violations(),
            "failure": first.map(|f| json!({
                "kind": "serializability",
                "pattern": PATTERNS[f.pattern].number,
                "message": f.violation().failure(&f.log).message,
                "thread": f.log.accesses[f.accesses[0]].thread,
            })),
            "crash": report.crash.as_ref().and_then(|(r, _, _)| r.outcome.failure()).map(|f| json!({
                "kind": f.kind.name(),
                "message": f.message,
            })),
            "replay_file": self.replay_file.map(|p| p.display().to_string()),
            "minimized": self.minimization,
            "elapsed_ms": report.elapsed.as_millis() as u64,
        })
    }

    /// The text report.
    pub fn text(&self) -> String {
        human(
            self.strategy,
            self.profile_runs,
            self.search,
            &self.violations(),
            self.replay_file,
            self.minimization.as_ref(),
        )
    }
}

/// One violation as JSON: its pattern, atomic set and accesses.
fn violation_json(f: &Found, program: &Program, symbols: &Symbols) -> Value {
    let p = &PATTERNS[f.pattern];
    let first = &f.log.accesses[f.accesses[0]];
    let set = &f.log.sets[first.set as usize];
    json!({
        "pattern": p.number,
        "name": p.name,
        "atomic_set": set.name,
        "execution": f.index,
        "accesses": f.accesses.iter().map(|&i| {
            let a = &f.log.accesses[i];
            let place = program.sites().get(a.site).map(|s| symbols.site(s)).unwrap_or_default();
            json!({
                "access": if a.write { "write" } else { "read" },
                "thread": a.thread,
                "thread_name": f.execution.thread_names.get(a.thread as usize).cloned().flatten(),
                "unit": a.unit.map(|u| f.log.units[u as usize].name.clone()),
                "address": format!("{:#x}", a.addr),
                "offset": a.addr - set.start,
                "function": place.function,
                "file": place.file,
                "line": place.line,
            })
        }).collect::<Vec<_>>(),
    })
}

/// The text report of `report`, whose violations `violations` holds as
/// JSON.
fn human(
    strategy: SerialStrategy,
    profile_runs: u64,
    report: &SerialReport,
    violations: &[Value],
    replay: Option<&Path>,
    minimization: Option<&Minimization>,
) -> String {
    let mut s = String::new();
    let how = match strategy {
        SerialStrategy::Assetfuzzer => format!(
            "assetfuzzer: {} profiling runs, {} potential violations, {} realised",
            profile_runs.min(report.executions),
            report.potential,
            report.realised
        ),
        SerialStrategy::RandomMonitor => "random-monitor".to_string(),
    };
    s.push_str(&format!(
        "{} violation{} in {} executions ({how}); {} executions detected one, in {:.2?}\n",
        violations.len(),
        if violations.len() == 1 { "" } else { "s" },
        report.executions,
        report.detecting,
        report.elapsed
    ));
    for (n, v) in violations.iter().enumerate() {
        s.push_str(&format!(
            "\nviolation {}: pattern {} ({}) on atomic set `{}`\n",
            n + 1,
            v["pattern"],
            v["name"].as_str().unwrap_or_default(),
            v["atomic_set"].as_str().unwrap_or_default()
        ));
        for (i, a) in v["accesses"].as_array().into_iter().flatten().enumerate() {
            let place = match (
                a["function"].as_str(),
                a["file"].as_str(),
                a["line"].as_u64(),
            ) {
                (Some(f), Some(file), Some(line)) => format!("{f} ({file}:{line})"),
                (Some(f), _, _) => f.to_string(),
                _ => "?".to_string(),
            };
            let thread = a["thread_name"]
                .as_str()
                .map_or(format!("thread {}", a["thread"]), |n| {
                    format!("thread {} `{n}`", a["thread"])
                });
            s.push_str(&format!(
                "  {}. {} {} (+{}) in unit `{}`, {thread}: {place}\n",
                i + 1,
                a["access"].as_str().unwrap_or_default(),
                a["address"].as_str().unwrap_or_default(),
                a["offset"],
                a["unit"].as_str().unwrap_or("?"),
            ));
        }
    }
    if let Some((result, _, index)) = &report.crash
        && let Some(f) = result.outcome.failure()
    {
        s.push_str(&format!(
            "\nexecution {index} also failed: {}: {}\n",
            f.kind.name(),
            f.message.lines().next().unwrap_or_default()
        ));
    }
    if let Some(m) = minimization {
        s.push_str(&format!("\nthe first one's {}\n", describe_minimization(m)));
    }
    if let Some(path) = replay {
        s.push_str(&format!(
            "\nreplay the first one: weft replay {}\n",
            super::text::shell_word(path)
        ));
    }
    s
}

/// Marks `found`'s accesses on `page`: its pattern and atomic set, each
/// access numbered, read or write, with its unit of work; the failing step
/// is the access that completes the pattern.
pub fn highlight_violation(page: &mut super::html::Page, found: &Found) {
    let log = &found.log;
    let set = &log.sets[log.accesses[found.accesses[0]].set as usize];
    page.failing_step = found.accesses.last().map(|&a| log.accesses[a].step);
    page.highlight(
        format!(
            "pattern {} on atomic set `{}`",
            PATTERNS[found.pattern].number, set.name
        ),
        found.accesses.iter().enumerate().map(|(i, &a)| {
            let a = &log.accesses[a];
            let unit = a.unit.map_or("?", |u| log.units[u as usize].name.as_str());
            let what = if a.write { "write" } else { "read" };
            (a.step, format!("{}. {what} in {unit}", i + 1))
        }),
    );
}
