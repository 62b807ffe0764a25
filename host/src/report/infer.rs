//! `weft infer-schedule`'s findings for people: the inferred events (where
//! each goes, with its confidence), the schedule, and how they compare with
//! a reference test's; as text or JSON.

use crate::imunit::infer::evaluate::Evaluation;
use crate::imunit::infer::{Anchor, Inference};
use serde_json::json;

/// What schedule inference found for one test.
pub struct Inferred<'a> {
    /// The test's name.
    pub test: &'a str,
    /// The inferred events and orderings.
    pub inference: &'a Inference,
    /// The reference test (its name and schedule) and how the inference
    /// compares with it.
    pub reference: Option<&'a (String, String, Evaluation)>,
}

impl Inferred<'_> {
    /// The JSON report.
    pub fn json(&self) -> serde_json::Value {
        json!({
            "test": self.test,
            "executions": self.inference.executions,
            "passing_runs": self.inference.passing,
            "events": self.inference.events.iter().map(|e| {
                let (place, s) = match &e.anchor {
                    Anchor::After(s) => ("after", s),
                    Anchor::Before(s) => ("before", s),
                };
                json!({
                    "name": e.name,
                    "thread": e.thread,
                    "place": place,
                    "statement": s.method,
                    "function": s.function,
                    "file": s.file,
                    "line": s.line,
                    "confidence": e.confidence,
                })
            }).collect::<Vec<_>>(),
            "orderings": self.inference.orderings.iter().map(|o| json!({
                "before": self.inference.events[o.before].name,
                "after": self.inference.events[o.after].name,
                "blocked": o.blocked,
                "confidence": o.confidence,
            })).collect::<Vec<_>>(),
            "schedule": self.inference.schedule(),
            "reference": self.reference.map(|(name, schedule, e)| json!({
                "test": name,
                "schedule": schedule,
                "event_precision": e.event_precision,
                "event_recall": e.event_recall,
                "ordering_precision": e.ordering_precision,
                "ordering_recall": e.ordering_recall,
                "matched_events": e.matched_events,
            })),
        })
    }

    /// The text report.
    pub fn text(&self) -> String {
        human(self.test, self.inference, self.reference)
    }
}

/// The text report of `inference` for `test`.
fn human(
    test: &str,
    inference: &Inference,
    reference: Option<&(String, String, Evaluation)>,
) -> String {
    let mut s = format!(
        "inferred from {} passing runs ({} executions) of {test}\n\nevents:\n",
        inference.passing, inference.executions
    );
    if inference.events.is_empty() {
        s.push_str("  none: no thread did exactly one blocking thing while another slept\n");
    }
    let width = inference
        .events
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(0);
    for e in &inference.events {
        let (place, at) = match &e.anchor {
            Anchor::After(at) => ("after ", at),
            Anchor::Before(at) => ("before", at),
        };
        s.push_str(&format!(
            "  {:width$}  in {}: {place} `{}` at {}:{} ({})  confidence {:.2}\n",
            e.name, e.thread, at.method, at.file, at.line, at.function, e.confidence
        ));
    }
    s.push_str("\nschedule:\n");
    let schedule = inference.schedule();
    if schedule.is_empty() {
        s.push_str("  (no ordering)\n");
    } else {
        s.push_str(&format!("  {schedule}\n"));
    }
    if let Some((name, text, e)) = reference {
        let pairs: Vec<String> = e
            .matched_events
            .iter()
            .map(|(i, r)| format!("{i} = {r}"))
            .collect();
        s.push_str(&format!(
            "\ncompared with {name} [{text}]:\n  events:    precision {:.2}, recall {:.2} ({})\n  orderings: precision {:.2}, recall {:.2}\n",
            e.event_precision,
            e.event_recall,
            pairs.join(", "),
            e.ordering_precision,
            e.ordering_recall
        ));
    }
    s
}
