//! Schedule inference: from passing runs of a sleep-based test, the events
//! that would replace its sleeps and the schedule over them (IMUnit's
//! migration algorithms).
//!
//! Each run is logged under [`SleepsLastScheduler`] (a sleeping thread
//! wakes only when nothing else can run, as the test's author expected),
//! turned into per-thread [`timeline`]s, and then:
//!
//! - **Events.** For every sleep of a thread `t`, every other thread that
//!   was alive during it and did exactly one relevant thing in it (began to
//!   wait, began to sleep, or ended) gets a `finished<Method>` event after
//!   its last statement that completed before that, and `t` gets a
//!   `starting<Method>` event before its first statement after the sleep.
//! - **Orderings.** After each sleep, for every other thread alive during
//!   it: its last event before `t`'s starting event comes first, as
//!   `[before] -> after` when that thread is blocked at that moment.
//! - **Minimizing.** Events and orderings seen in fewer than `threshold`
//!   of the runs are dropped; then, with each thread's events in program
//!   order, orderings on cycles are removed and the rest transitively
//!   reduced.

pub mod evaluate;
pub mod timeline;

use crate::execution::HostError;
use crate::execution::Setup;
use crate::runtime::{Outcome, Program};
use crate::sched::SleepsLastScheduler;
use std::collections::{BTreeMap, HashMap, HashSet};
use timeline::{CodeIndex, Statement, Timeline, timelines};

/// How to infer.
#[derive(Clone, Debug)]
pub struct InferOptions {
    /// Run configuration (its arguments are replaced by the test's name).
    pub base: Setup,
    /// Passing runs to learn from.
    pub runs: usize,
    /// Seed of the first run's schedule.
    pub seed: u64,
}

/// Where an inferred event goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Anchor {
    /// Right after this statement.
    After(Statement),
    /// Right before this statement.
    Before(Statement),
}

impl Anchor {
    /// `finished<Method>` or `starting<Method>`.
    fn base_name(&self) -> String {
        match self {
            Anchor::After(s) => format!("finished{}", camel(&s.method)),
            Anchor::Before(s) => format!("starting{}", camel(&s.method)),
        }
    }
}

/// An inferred event.
#[derive(Clone, Debug, PartialEq)]
pub struct InferredEvent {
    /// Its name.
    pub name: String,
    /// The thread that fires it.
    pub thread: String,
    /// Where it goes.
    pub anchor: Anchor,
    /// Share of the runs it was inferred in.
    pub confidence: f64,
}

/// An inferred ordering `before -> after` (`[before] -> after` when
/// `blocked`), by index in [`Inference::events`].
#[derive(Clone, Debug, PartialEq)]
pub struct InferredOrdering {
    /// The event that comes first.
    pub before: usize,
    /// The event that waits.
    pub after: usize,
    /// `before`'s thread is blocked when `after` happens.
    pub blocked: bool,
    /// Share of the runs it was inferred in.
    pub confidence: f64,
}

/// The result of inference.
#[derive(Clone, Debug, Default)]
pub struct Inference {
    /// Executions run.
    pub executions: usize,
    /// Passing executions the inference learnt from.
    pub passing: usize,
    /// Events kept.
    pub events: Vec<InferredEvent>,
    /// Orderings kept, after minimizing.
    pub orderings: Vec<InferredOrdering>,
}

impl Inference {
    /// The schedule in IMUnit's language (bracketed events carry their
    /// thread).
    pub fn schedule(&self) -> String {
        self.orderings
            .iter()
            .map(|o| {
                let before = &self.events[o.before];
                let after = &self.events[o.after];
                if o.blocked {
                    format!("[{}]@{} -> {}", before.name, before.thread, after.name)
                } else {
                    format!("{} -> {}", before.name, after.name)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `count_down` -> `CountDown`.
fn camel(method: &str) -> String {
    method
        .split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut chars = p.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// An event's identity across runs.
type EventKey = (String, Anchor);

/// The events of one run, with the log index each stands at.
type RunEvents = BTreeMap<EventKey, usize>;

/// Runs `test` until `options.runs` runs passed, each with its activity
/// logged, and returns their timelines. `program` must be loaded with
/// `log_calls`.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module.
pub fn logged_runs(
    program: &mut Program,
    options: &InferOptions,
    test: &str,
    code: &mut CodeIndex<'_>,
) -> Result<(usize, Vec<Vec<Timeline>>), HostError> {
    let mut run = options.base.clone();
    run.run.args.truncate(1);
    run.run.args.push(test.to_string());
    run.schedule = None;
    let mut passing = Vec::new();
    let mut executions = 0;
    // A test that rarely passes even with long sleeps gets a bounded effort.
    let attempts = options.runs.saturating_mul(20).max(1);
    while passing.len() < options.runs && executions < attempts {
        let seed = crate::sched::execution_seed(options.seed, executions as u64);
        let result =
            crate::execution::execute(program, Box::new(SleepsLastScheduler::new(seed)), &run);
        executions += 1;
        match &result.outcome {
            Outcome::Exited(0) => passing.push(timelines(&result, code)),
            Outcome::HostError(message) => return Err(HostError(message.clone())),
            _ => {}
        }
    }
    Ok((executions, passing))
}

/// Infers events and a schedule from the timelines of passing runs.
pub fn infer(runs: &[Vec<Timeline>], threshold: f64) -> Inference {
    let per_run: Vec<RunEvents> = runs.iter().map(|r| run_events(r)).collect();
    let total = runs.len().max(1) as f64;
    // Events seen often enough.
    let mut seen: BTreeMap<EventKey, usize> = BTreeMap::new();
    for events in &per_run {
        for key in events.keys() {
            *seen.entry(key.clone()).or_default() += 1;
        }
    }
    let kept: Vec<(EventKey, f64)> = seen
        .into_iter()
        .map(|(k, n)| (k, n as f64 / total))
        .filter(|(_, c)| *c >= threshold)
        .collect();
    let index: HashMap<&EventKey, usize> =
        kept.iter().enumerate().map(|(i, (k, _))| (k, i)).collect();
    // Orderings per run, between kept events.
    let mut ordering_runs: BTreeMap<(usize, usize, bool), usize> = BTreeMap::new();
    for (run, events) in runs.iter().zip(&per_run) {
        let kept_here: Vec<(usize, &str, usize)> = events
            .iter()
            .filter_map(|(k, &at)| index.get(k).map(|&i| (i, k.0.as_str(), at)))
            .collect();
        let mut found = HashSet::new();
        for (before, after, blocked) in run_orderings(run, &kept_here) {
            found.insert((before, after, blocked));
        }
        for o in found {
            *ordering_runs.entry(o).or_default() += 1;
        }
    }
    let orderings: Vec<InferredOrdering> = ordering_runs
        .into_iter()
        .map(|((before, after, blocked), n)| InferredOrdering {
            before,
            after,
            blocked,
            confidence: n as f64 / total,
        })
        .filter(|o| o.confidence >= threshold && o.before != o.after)
        .collect();
    let program_order = program_order(&per_run, &index);
    let orderings = minimize(orderings, &program_order, kept.len());
    let events = name_events(&kept);
    Inference {
        executions: 0,
        passing: runs.len(),
        events,
        orderings,
    }
}

/// The inferred events of one run, each at its log index.
fn run_events(threads: &[Timeline]) -> RunEvents {
    let mut events = RunEvents::new();
    for (ti, t) in threads.iter().enumerate() {
        for (si, s) in t.statements.iter().enumerate() {
            let Some((begin, end)) = s.sleep else {
                continue;
            };
            let mut any = false;
            for (ui, u) in threads.iter().enumerate() {
                if ui == ti || u.start >= end || u.end <= begin {
                    continue;
                }
                let inside: Vec<usize> = u
                    .relevant
                    .iter()
                    .copied()
                    .filter(|&r| begin < r && r < end)
                    .collect();
                let [moment] = inside[..] else { continue };
                let done = u.statements.iter().rev().find(|p| p.last < moment);
                let (anchor, at) = match done {
                    Some(p) => (Anchor::After(p.at.clone()), p.last),
                    None => match u.statements.iter().find(|p| p.last >= moment) {
                        Some(p) => (Anchor::Before(p.at.clone()), p.first),
                        None => continue,
                    },
                };
                events.entry((u.label.clone(), anchor)).or_insert(at);
                any = true;
            }
            if any && let Some(next) = t.statements[si + 1..].iter().find(|n| n.first > end) {
                events
                    .entry((t.label.clone(), Anchor::Before(next.at.clone())))
                    .or_insert(next.first);
            }
        }
    }
    events
}

/// The orderings of one run: after each sleep, from every other live
/// thread's last event to the sleeper's next event. `events` are the kept
/// events of the run: (index, thread, log index).
fn run_orderings(
    threads: &[Timeline],
    events: &[(usize, &str, usize)],
) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    for t in threads {
        for s in &t.statements {
            let Some((begin, end)) = s.sleep else {
                continue;
            };
            // The sleeper's first event after the sleep.
            let Some(&(after, _, after_at)) = events
                .iter()
                .filter(|(_, thread, at)| *thread == t.label && *at > end)
                .min_by_key(|(_, _, at)| *at)
            else {
                continue;
            };
            for u in threads {
                if u.label == t.label || u.start >= end || u.end <= begin {
                    continue;
                }
                let before = events
                    .iter()
                    .filter(|(_, thread, at)| *thread == u.label && *at < after_at)
                    .max_by_key(|(_, _, at)| *at);
                if let Some(&(before, _, _)) = before {
                    out.push((before, after, u.blocked_at(after_at)));
                }
            }
        }
    }
    out
}

/// Pairs (a, b) of events of the same thread with a before b, from the
/// order they happened in the runs.
fn program_order(per_run: &[RunEvents], index: &HashMap<&EventKey, usize>) -> Vec<(usize, usize)> {
    let mut pairs = HashSet::new();
    for events in per_run {
        let mut by_thread: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
        for (k, &at) in events {
            if let Some(&i) = index.get(k) {
                by_thread.entry(k.0.as_str()).or_default().push((at, i));
            }
        }
        for list in by_thread.values_mut() {
            list.sort_unstable();
            for w in list.windows(2) {
                pairs.insert((w[0].1, w[1].1));
            }
        }
    }
    let mut pairs: Vec<(usize, usize)> = pairs.into_iter().collect();
    pairs.sort_unstable();
    pairs
}

/// Whether `to` is reachable from `from` over `edges` (skipping the edge
/// at index `skip`).
fn reaches(
    edges: &[(usize, usize)],
    nodes: usize,
    from: usize,
    to: usize,
    skip: Option<usize>,
) -> bool {
    let mut seen = vec![false; nodes];
    let mut todo = vec![from];
    while let Some(n) = todo.pop() {
        for (i, &(a, b)) in edges.iter().enumerate() {
            if a != n || Some(i) == skip || seen[b] {
                continue;
            }
            if b == to {
                return true;
            }
            seen[b] = true;
            todo.push(b);
        }
    }
    false
}

/// Removes orderings on cycles (with program order), then orderings
/// implied by others and program order.
fn minimize(
    orderings: Vec<InferredOrdering>,
    program_order: &[(usize, usize)],
    nodes: usize,
) -> Vec<InferredOrdering> {
    let with = |orderings: &[InferredOrdering]| {
        let mut edges = program_order.to_vec();
        edges.extend(orderings.iter().map(|o| (o.before, o.after)));
        edges
    };
    // Cycles: an ordering whose target reaches its source.
    let edges = with(&orderings);
    let mut kept: Vec<InferredOrdering> = orderings
        .iter()
        .filter(|o| !reaches(&edges, nodes, o.after, o.before, None))
        .cloned()
        .collect();
    // Transitive reduction, one ordering at a time.
    let mut i = 0;
    while i < kept.len() {
        let edges = with(&kept);
        let own = program_order.len() + i;
        let (a, b) = edges[own];
        if reaches(&edges, nodes, a, b, Some(own)) {
            kept.remove(i);
        } else {
            i += 1;
        }
    }
    kept
}

/// Names the kept events, numbering names that repeat.
fn name_events(kept: &[(EventKey, f64)]) -> Vec<InferredEvent> {
    let mut count: HashMap<String, usize> = HashMap::new();
    for ((_, anchor), _) in kept {
        *count.entry(anchor.base_name()).or_default() += 1;
    }
    let mut used: HashMap<String, usize> = HashMap::new();
    kept.iter()
        .map(|((thread, anchor), confidence)| {
            let base = anchor.base_name();
            let name = if count[&base] > 1 {
                let n = used.entry(base.clone()).or_default();
                *n += 1;
                format!("{base}{n}")
            } else {
                base
            };
            InferredEvent {
                name,
                thread: thread.clone(),
                anchor: anchor.clone(),
                confidence: *confidence,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(line: u32, method: &str) -> Statement {
        Statement {
            file: "t.rs".into(),
            line,
            function: "test".into(),
            method: method.into(),
        }
    }

    fn executed(line: u32, method: &str, first: usize, last: usize) -> timeline::Executed {
        timeline::Executed {
            at: statement(line, method),
            first,
            last,
            sleep: None,
            blocks: Vec::new(),
            events: Vec::new(),
        }
    }

    /// The running example: main sleeps while addThread adds 1 and sleeps;
    /// addThread sleeps while main takes 1 and blocks on the second take.
    fn running_example() -> Vec<Timeline> {
        let mut main_sleep = executed(10, "sleep", 1, 10);
        main_sleep.sleep = Some((2, 9));
        let mut take2 = executed(13, "take", 13, 30);
        take2.blocks.push(14);
        let main = Timeline {
            label: "main".into(),
            start: 0,
            end: 40,
            statements: vec![
                main_sleep,
                executed(11, "take", 11, 11),
                executed(12, "len", 12, 12),
                take2,
            ],
            waits: vec![(14, 25)],
            relevant: vec![2, 14, 40],
        };
        let mut add_sleep = executed(21, "sleep", 5, 20);
        add_sleep.sleep = Some((6, 19));
        let add = Timeline {
            label: "addThread".into(),
            start: 1,
            end: 27,
            statements: vec![
                executed(20, "add", 3, 4),
                add_sleep,
                executed(22, "add", 21, 26),
            ],
            waits: Vec::new(),
            relevant: vec![6, 27],
        };
        vec![main, add]
    }

    #[test]
    fn infers_the_running_examples_events_and_schedule() {
        let inference = infer(&[running_example(), running_example()], 0.5);
        let names: Vec<&str> = inference.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert_eq!(
            inference.schedule(),
            "finishedAdd -> startingTake, [finishedLen]@main -> startingAdd"
        );
        assert!(inference.events.iter().all(|e| e.confidence == 1.0));
    }

    #[test]
    fn rare_events_fall_below_the_threshold() {
        let mut other = running_example();
        // In this run addThread made no sleep: no event during it.
        other[1].statements[1].sleep = None;
        let runs = [running_example(), other.clone(), other];
        let inference = infer(&runs, 0.5);
        assert_eq!(inference.schedule(), "finishedAdd -> startingTake");
    }

    #[test]
    fn minimizing_drops_cycles_and_implied_orderings() {
        let o = |before, after| InferredOrdering {
            before,
            after,
            blocked: false,
            confidence: 1.0,
        };
        // Program order 0 -> 1 (one thread) and 2 -> 3 (another).
        let order = [(0, 1), (2, 3)];
        // 1 -> 2 and 2 -> 0 close a cycle with 0 -> 1: both go.
        let kept = minimize(vec![o(1, 2), o(2, 0), o(0, 3)], &order, 4);
        let pairs: Vec<(usize, usize)> = kept.iter().map(|o| (o.before, o.after)).collect();
        assert_eq!(pairs, vec![(0, 3)]);
        // 0 -> 3 is implied by 0 -> 1 -> 2 -> 3.
        let kept = minimize(vec![o(1, 2), o(0, 3)], &order, 4);
        let pairs: Vec<(usize, usize)> = kept.iter().map(|o| (o.before, o.after)).collect();
        assert_eq!(pairs, vec![(1, 2)]);
    }

    #[test]
    fn camel_cases_methods() {
        assert_eq!(camel("count_down"), "CountDown");
        assert_eq!(camel("take"), "Take");
    }
}
