//! Whether a submission does the exercise's work concurrently: in some
//! execution, as many threads as the exercise says are amid the work at
//! once.
//!
//! A thread is amid the work from its first step in one of the work's
//! functions to its last: a call of one of them, its return, or a
//! scheduling point in their code (inlined copies included, by the debug
//! information) or in what they call. A submission whose threads take
//! turns at the work (each joined before the next is created, or `main`
//! doing it all while the threads do nothing) has no execution where two
//! are amid it at once, however many threads it creates; one whose threads
//! share the work shows it in the first executions of a random schedule.

use crate::activity::{Activity, Entry};
use crate::execution::Setup;
use crate::instrument::AccessKind;
use crate::runtime::{Outcome, Program};
use crate::sched::RandomScheduler;
use std::time::Instant;

/// Which sites of a program are the work's.
#[derive(Debug)]
pub struct WorkSites {
    /// By site: a call of one of the work's functions.
    calls: Vec<bool>,
    /// By site: code of one of the work's functions.
    inside: Vec<bool>,
}

impl WorkSites {
    /// The sites of `program` (loaded with `log_calls`) in or calling the
    /// functions named `work` (a Rust function by the last segment of its
    /// path); `None` when no site is, as in a module without names.
    pub fn of(program: &Program, work: &[String]) -> Option<WorkSites> {
        let named = |name: &str| {
            let last = crate::debuginfo::symbols::last_segment(name);
            work.iter().any(|w| w == last)
        };
        let sites = program.sites();
        let (calls, inside): (Vec<bool>, Vec<bool>) = program.symbols().with(|symbols| {
            (0..sites.len() as u32)
                .map(|id| {
                    let Some(site) = sites.get(id) else {
                        return (false, false);
                    };
                    let call = site.kind == AccessKind::Call
                        && site
                            .callee
                            .and_then(|f| symbols.function_name(f))
                            .is_some_and(named);
                    let inside = symbols.function_name(site.func).is_some_and(named)
                        || symbols
                            .frames(site.code_offset)
                            .iter()
                            .filter_map(|frame| frame.function.as_deref())
                            .any(named);
                    (call, inside)
                })
                .unzip()
        });
        (calls.iter().chain(&inside).any(|&is| is)).then_some(WorkSites { calls, inside })
    }

    fn call(&self, site: u32) -> bool {
        self.calls.get(site as usize).copied().unwrap_or(false)
    }

    fn inside(&self, site: u32) -> bool {
        self.inside.get(site as usize).copied().unwrap_or(false)
    }
}

/// The most threads of one execution amid the work at once, from what
/// each thread did ([`crate::activity::entries`]).
pub fn most_at_once(entries: &[Entry], work: &WorkSites) -> usize {
    // Each thread's first and last step in the work, and how deep it is
    // in calls of the work's functions.
    let mut amid: Vec<Option<(usize, usize)>> = Vec::new();
    let mut depth: Vec<u32> = Vec::new();
    for (at, entry) in entries.iter().enumerate() {
        let thread = entry.thread as usize;
        if amid.len() <= thread {
            amid.resize(thread + 1, None);
            depth.resize(thread + 1, 0);
        }
        let in_work = match entry.activity {
            Activity::Call(site) if work.call(site) => {
                depth[thread] += 1;
                true
            }
            Activity::Returned(site) if work.call(site) => {
                depth[thread] = depth[thread].saturating_sub(1);
                true
            }
            Activity::Point(site) => work.inside(site) || depth[thread] > 0,
            _ => depth[thread] > 0,
        };
        if in_work {
            let span = amid[thread].get_or_insert((at, at));
            span.1 = at;
        }
    }
    // Sweep the spans: a start counts before an end at the same step.
    let mut ends: Vec<(usize, bool)> = amid
        .iter()
        .flatten()
        .flat_map(|&(first, last)| [(first, false), (last, true)])
        .collect();
    ends.sort_unstable();
    let (mut now, mut most) = (0usize, 0usize);
    for (_, end) in ends {
        if end {
            now -= 1;
        } else {
            now += 1;
            most = most.max(now);
        }
    }
    most
}

/// What [`seek`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The most threads amid the work at once in one execution.
    pub most: usize,
    /// Executions run.
    pub executions: u64,
}

/// Runs `program` under random schedules from `seed`, as `setup` says,
/// until an execution has `wanted` threads amid the work at once, or
/// after `executions` executions, or at `deadline`.
///
/// # Errors
///
/// The message of a host error an execution ended in.
pub fn seek(
    program: &mut Program,
    setup: &Setup,
    work: &WorkSites,
    wanted: usize,
    (executions, deadline): (u64, Instant),
    seed: u64,
) -> Result<Seen, String> {
    let mut seen = Seen {
        most: 0,
        executions: 0,
    };
    while seen.most < wanted && seen.executions < executions && Instant::now() < deadline {
        let scheduler = RandomScheduler::new(crate::sched::execution_seed(seed, seen.executions));
        let result = crate::execution::execute(program, Box::new(scheduler), setup);
        seen.executions += 1;
        if let Outcome::HostError(message) = &result.outcome {
            return Err(message.clone());
        }
        seen.most = seen
            .most
            .max(most_at_once(crate::activity::entries(&result), work));
    }
    Ok(seen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::ThreadId;

    fn entry(thread: ThreadId, activity: Activity) -> Entry {
        Entry { thread, activity }
    }

    /// Site 0 calls the work, site 1 is in it, site 2 is elsewhere.
    fn work() -> WorkSites {
        WorkSites {
            calls: vec![true, false, false],
            inside: vec![false, true, false],
        }
    }

    #[test]
    fn threads_that_take_turns_are_never_amid_the_work_at_once() {
        use Activity::{Call, End, Point, Returned, Start};
        let turns = [
            entry(1, Start),
            entry(1, Call(0)),
            entry(1, Point(2)),
            entry(1, Returned(0)),
            entry(1, End),
            entry(2, Start),
            entry(2, Point(1)),
            entry(2, Point(1)),
            entry(2, End),
        ];
        assert_eq!(most_at_once(&turns, &work()), 1);
    }

    #[test]
    fn a_thread_that_starts_while_another_is_in_a_call_of_the_work_is_counted() {
        use Activity::{Call, Point, Returned};
        let shared = [
            entry(1, Call(0)),
            // A point in what the work calls (a lock, say).
            entry(1, Point(2)),
            entry(2, Point(1)),
            entry(1, Returned(0)),
            entry(3, Point(1)),
        ];
        assert_eq!(most_at_once(&shared, &work()), 2);
        assert_eq!(most_at_once(&[], &work()), 0);
    }
}
