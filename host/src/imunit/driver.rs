//! Running one unit test of a module under one schedule, as `weft test`
//! does: an unscheduled probe execution that shows which events and
//! threads the test has, then an exploration with the schedule enforced
//! (or checked), then the checks that need every execution (schedule names
//! the test never fires).

use super::monitor::{END, START};
use super::schedule::Schedule;
use super::tests_in_module::TestCase;
use crate::execution::HostError;
use crate::execution::Setup;
use crate::explore::{Exploration, ExploreOptions, explore, run_once};
use crate::runtime::{Failure, FailureKind, Program};
use crate::sched::Strategy;
use std::collections::BTreeSet;

/// How to run each test.
#[derive(Clone, Debug)]
pub struct TestOptions {
    /// The run configuration shared by every test (its arguments are
    /// replaced by the test's name; its schedule, if any, overrides the
    /// tests' own).
    pub base: Setup,
    /// Scheduling strategy of the exploration.
    pub strategy: Strategy,
    /// Exploration seed.
    pub seed: u64,
    /// PCT depth.
    pub pct_depth: u32,
    /// Executions per test and schedule.
    pub iterations: u64,
    /// Wall time per test and schedule, if bounded: its exploration stops
    /// there (an execution still going is not counted).
    pub time_limit: Option<std::time::Duration>,
    /// Run every execution even after a failure, to measure how often the
    /// test fails.
    pub keep_going: bool,
}

/// The verdict on one test under one schedule.
#[derive(Debug)]
pub struct TestRun {
    /// The test's name.
    pub test: String,
    /// The schedule it ran under, if any.
    pub schedule: Option<String>,
    /// The exploration (its failure, if any, is in `failure`).
    pub exploration: Exploration,
    /// The failure: the exploration's, or a schedule naming events the test
    /// never fires.
    pub failure: Option<Failure>,
    /// The setup its executions ran under (the test's name as argument,
    /// its schedule, the racy sites made scheduling points): what replays
    /// them.
    pub setup: Setup,
}

/// What a test's run says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestVerdict {
    /// An execution failed, or the schedule named events the test never
    /// fires.
    Failed,
    /// No verdict, for the reason given: a limit cut an execution short, no
    /// execution ended in time, or the guest failed at one of weft's own
    /// limits (a stress test that starts a thousand threads).
    Inconclusive(String),
    /// No failure.
    Passed,
}

impl TestRun {
    /// The run's verdict, when it was given `time_limit`. A failure at one
    /// of weft's limits on memory or threads is no verdict: it leaves
    /// [`TestRun::failure`].
    pub fn verdict(&mut self, time_limit: std::time::Duration) -> TestVerdict {
        let limit_hit = self.failure.take_if(|f| f.kind.is_limit());
        if self.failure.is_some() {
            return TestVerdict::Failed;
        }
        if let Some(hit) = limit_hit {
            return TestVerdict::Inconclusive(limit_hit_text(&hit));
        }
        let exploration = &self.exploration;
        let why = exploration
            .inconclusive
            .describe(exploration.executions)
            .or_else(|| {
                (exploration.executions == 0)
                    .then(|| format!("no execution finished within --time-limit {time_limit:?}"))
            });
        why.map_or(TestVerdict::Passed, TestVerdict::Inconclusive)
    }

    /// Its name as reports show it: `name` or `name [schedule]`.
    pub fn label(&self) -> String {
        match &self.schedule {
            Some(s) => format!("{} [{s}]", self.test),
            None => self.test.clone(),
        }
    }
}

/// Why a test whose guest failed at one of weft's limits has no verdict,
/// and how to raise the limit.
fn limit_hit_text(hit: &Failure) -> String {
    let raise = match hit.kind {
        FailureKind::ThreadLimit => "--max-threads",
        FailureKind::MemoryLimit => "--max-memory-mib",
        _ => "the limit",
    };
    format!("{} (raise {raise})", hit.message)
}

/// The schedules `test` runs under: the given one, else its own, else none.
pub fn schedules_of(test: &TestCase, given: Option<&str>) -> Vec<Option<String>> {
    match (given, test.schedules.is_empty()) {
        (Some(given), _) => vec![Some(given.to_string())],
        (None, true) => vec![None],
        (None, false) => test.schedules.iter().cloned().map(Some).collect(),
    }
}

/// Runs `test` under `schedule` for `options.iterations` executions.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module or the schedule
/// does not parse.
pub fn run_test(
    program: &mut Program,
    options: &TestOptions,
    test: &TestCase,
    schedule: Option<&str>,
) -> Result<TestRun, HostError> {
    if let Some(Err(e)) = schedule.map(str::parse::<Schedule>) {
        // One test's bad schedule fails that test, not the whole run.
        return Ok(TestRun {
            test: test.name.clone(),
            schedule: schedule.map(String::from),
            exploration: Exploration::default(),
            failure: Some(Failure {
                kind: FailureKind::ScheduleError,
                message: e.to_string(),
                thread: 0,
            }),
            setup: options.base.clone(),
        });
    }
    let mut run = options.base.clone();
    run.run.args.truncate(1);
    run.run.args.extend(test.args.iter().cloned());
    run.schedule = schedule.map(String::from);
    let explore_options = ExploreOptions {
        strategy: options.strategy,
        seed: options.seed,
        pct_depth: options.pct_depth,
        iterations: Some(options.iterations),
        time_limit: options.time_limit,
        setup: run,
        keep_going: options.keep_going,
        ..Default::default()
    };
    let exploration = explore(program, &explore_options, |_| {})?;
    let mut setup = explore_options.setup;
    if let Some(found) = &exploration.race_points {
        setup.run.point_sites = found.sites.clone();
    }
    let mut failure = exploration.failure.as_ref().map(|f| f.failure.clone());
    let unfired = unfired_events(
        program,
        &setup,
        options.seed,
        options.pct_depth,
        &exploration,
    )?;
    if let Some(message) = unfired {
        failure = Some(match failure {
            // A deadlock on the missing event: the deadlock says who
            // waits for it, the note why it never comes.
            Some(mut f) if f.kind == FailureKind::ScheduleDeadlock => {
                f.message = format!("{}; {message}", f.message);
                f
            }
            // Otherwise the misnamed event is the cause: it comes first.
            other => {
                let also = other.map_or(String::new(), |f| {
                    format!(
                        " (the exploration also failed: {}: {})",
                        f.kind.name(),
                        f.message.lines().next().unwrap_or_default()
                    )
                });
                Failure {
                    kind: FailureKind::ScheduleError,
                    message: format!("{message}{also}"),
                    thread: 0,
                }
            }
        });
    }
    Ok(TestRun {
        test: test.name.clone(),
        schedule: schedule.map(String::from),
        exploration,
        failure,
        setup,
    })
}

/// When `setup` enforces a schedule: a message naming the events it names
/// that the program never fired, neither in `exploration` (its failing and
/// last executions) nor in one probe without the schedule (which holds no
/// thread back); `None` when every event fired or there is no schedule.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the probe.
pub fn unfired_events(
    program: &mut Program,
    setup: &Setup,
    seed: u64,
    pct_depth: u32,
    exploration: &Exploration,
) -> Result<Option<String>, HostError> {
    let Some(text) = &setup.schedule else {
        return Ok(None);
    };
    let mut free = setup.clone();
    free.schedule = None;
    let probe = run_once(program, Strategy::Random, seed, pct_depth, &free)?;
    let fired: BTreeSet<&str> = probe
        .labels
        .iter()
        .chain(exploration.failure.iter().flat_map(|f| &f.result.labels))
        .chain(exploration.last.iter().flat_map(|r| &r.labels))
        .map(String::as_str)
        .collect();
    Ok(never_fired(text, &fired, exploration.executions + 1))
}

/// A message naming the events of `schedule` that never fired, if any.
fn never_fired(schedule: &str, fired: &BTreeSet<&str>, executions: u64) -> Option<String> {
    let schedule: Schedule = schedule.parse().ok()?;
    let mut missing: Vec<String> = schedule
        .event_refs()
        .map(|r| r.name.as_str())
        .filter(|name| *name != START && *name != END && !fired.contains(name))
        .map(|name| format!("`{name}`"))
        .collect();
    if missing.is_empty() {
        return None;
    }
    missing.sort();
    missing.dedup();
    let known: Vec<&str> = fired
        .iter()
        .copied()
        .filter(|name| *name != START)
        .collect();
    Some(format!(
        "the schedule names event{} {}, which the test never fired in {executions} executions (misspelt or unreachable? the test fires: {})",
        if missing.len() > 1 { "s" } else { "" },
        missing.join(", "),
        if known.is_empty() {
            "no events".to_string()
        } else {
            known.join(", ")
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_events_that_never_fired() {
        let fired: BTreeSet<&str> = ["a", "b", "start"].into_iter().collect();
        assert_eq!(never_fired("a -> b, start@t -> a", &fired, 5), None);
        let message = never_fired("a -> c, [d] -> b", &fired, 5).unwrap();
        assert!(message.contains("events `c`, `d`"), "{message}");
        assert!(message.contains("in 5 executions"), "{message}");
        assert!(message.ends_with("the test fires: a, b)"), "{message}");
    }
}
