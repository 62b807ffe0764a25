//! How well an inference matches a hand-written event-based version of the
//! same test: precision and recall of events and of orderings.
//!
//! A reference event is where the event-based version fires it: between
//! two statements of its thread's test function. An inferred event matches
//! it when it is in the same thread and anchored to the same statement
//! line: after the statement the reference event follows, or before the one
//! it precedes. An inferred ordering matches a reference ordering (one
//! `condition atom -> event` pair of the reference schedule) when both
//! events match and both are bracketed or both are not.

use super::timeline::{CodeIndex, Statement, Timeline, timelines};
use super::{Anchor, Inference};
use crate::execution::Setup;
use crate::imunit::schedule::Schedule;
use crate::runtime::{Outcome, Program};
use crate::sched::RandomScheduler;
use std::collections::{BTreeSet, HashMap};

/// An event of the reference version and the statements around it.
#[derive(Clone, Debug)]
pub struct ReferenceEvent {
    /// The event's name.
    pub name: String,
    /// Its thread.
    pub thread: String,
    /// The statement before it, if any.
    pub after: Option<Statement>,
    /// The statement after it, if any.
    pub before: Option<Statement>,
}

/// Precision and recall, with what matched.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// Matched inferred events / inferred events.
    pub event_precision: f64,
    /// Matched reference events / reference events.
    pub event_recall: f64,
    /// Matched inferred orderings / inferred orderings.
    pub ordering_precision: f64,
    /// Matched reference orderings / reference orderings.
    pub ordering_recall: f64,
    /// (inferred name, reference name) of every matched event.
    pub matched_events: Vec<(String, String)>,
}

/// The events of the reference version, from one run's timelines.
pub fn reference_events(threads: &[Timeline]) -> Vec<ReferenceEvent> {
    let mut out = Vec::new();
    for t in threads {
        for (i, s) in t.statements.iter().enumerate() {
            for name in &s.events {
                let plain = |x: &&super::timeline::Executed| x.events.is_empty();
                out.push(ReferenceEvent {
                    name: name.clone(),
                    thread: t.label.clone(),
                    after: t.statements[..i]
                        .iter()
                        .rev()
                        .find(plain)
                        .map(|x| x.at.clone()),
                    before: t.statements[i + 1..]
                        .iter()
                        .find(plain)
                        .map(|x| x.at.clone()),
                });
            }
        }
    }
    out
}

fn same_line(a: &Statement, b: &Statement) -> bool {
    a.file == b.file && a.line == b.line
}

/// Compares `inference` with the reference events and schedule (only the
/// events the schedule names count).
pub fn evaluate(
    inference: &Inference,
    reference: &[ReferenceEvent],
    schedule: &Schedule,
) -> Evaluation {
    let named: BTreeSet<&str> = schedule.event_refs().map(|r| r.name.as_str()).collect();
    let reference: Vec<&ReferenceEvent> = reference
        .iter()
        .filter(|r| named.contains(r.name.as_str()))
        .collect();
    let mut matches: HashMap<usize, String> = HashMap::new();
    let mut matched_events = Vec::new();
    for (i, e) in inference.events.iter().enumerate() {
        // Several reference events may share a gap between two statements:
        // an event after the first statement is the first of them, one
        // before the second statement the last.
        let mut in_gap = reference.iter().filter(|r| {
            r.thread == e.thread
                && match &e.anchor {
                    Anchor::After(s) => r.after.as_ref().is_some_and(|a| same_line(a, s)),
                    Anchor::Before(s) => r.before.as_ref().is_some_and(|b| same_line(b, s)),
                }
        });
        let hit = match e.anchor {
            Anchor::After(_) => in_gap.next(),
            Anchor::Before(_) => in_gap.next_back(),
        };
        if let Some(r) = hit {
            matches.insert(i, r.name.clone());
            matched_events.push((e.name.clone(), r.name.clone()));
        }
    }
    let recalled: BTreeSet<&String> = matches.values().collect();
    let reference_orderings: BTreeSet<(String, String, bool)> = schedule
        .orderings
        .iter()
        .flat_map(|o| {
            o.condition
                .atoms()
                .into_iter()
                .map(|(r, bracketed)| (r.name.clone(), o.event.name.clone(), bracketed))
        })
        .collect();
    let mapped: Vec<Option<(String, String, bool)>> = inference
        .orderings
        .iter()
        .map(|o| {
            Some((
                matches.get(&o.before)?.clone(),
                matches.get(&o.after)?.clone(),
                o.blocked,
            ))
        })
        .collect();
    // Inferred orderings that are reference ones (several may map to the
    // same), and the distinct reference orderings they hit.
    let good: Vec<&(String, String, bool)> = mapped
        .iter()
        .flatten()
        .filter(|m| reference_orderings.contains(*m))
        .collect();
    let found: BTreeSet<&(String, String, bool)> = good.iter().copied().collect();
    let share = |n: usize, of: usize| if of == 0 { 1.0 } else { n as f64 / of as f64 };
    Evaluation {
        event_precision: share(matches.len(), inference.events.len()),
        event_recall: share(recalled.len(), reference.len()),
        ordering_precision: share(good.len(), inference.orderings.len()),
        ordering_recall: share(found.len(), reference_orderings.len()),
        matched_events,
    }
}

/// Runs the reference test `name` once under its `schedule` and returns
/// its events.
///
/// # Errors
///
/// When the test does not pass under its schedule.
pub fn run_reference(
    program: &mut Program,
    base: &Setup,
    name: &str,
    schedule: &str,
    code: &mut CodeIndex<'_>,
) -> anyhow::Result<Vec<ReferenceEvent>> {
    let mut run = base.clone();
    run.run.args.truncate(1);
    run.run.args.push(name.to_string());
    run.schedule = Some(schedule.to_string());
    let result = crate::execution::execute(program, Box::new(RandomScheduler::new(0)), &run);
    if !matches!(result.outcome, Outcome::Exited(0)) {
        let why = result
            .outcome
            .failure()
            .map_or_else(|| format!("{:?}", result.outcome), |f| f.message);
        anyhow::bail!("the reference test `{name}` failed under its schedule: {why}");
    }
    Ok(reference_events(&timelines(&result, code)))
}
