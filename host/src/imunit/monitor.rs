//! The schedule monitor: which orderings an event's occurrence must wait
//! for, and whether they hold now.
//!
//! The runtime asks [`Monitor::unmet`] when a thread reaches an event; in
//! active mode a thread whose event may not happen yet is held until it
//! may. Blocked-ness comes from the runtime, which knows exactly which
//! threads wait (futex, lock, condvar, join, sleep), so nothing is polled.
//!
//! Besides the events the guest fires, every thread has two implicit ones:
//! [`START`] when it takes its name (`main` at the start of the execution)
//! and [`END`] when it exits.

use super::schedule::{Condition, EventRef, Schedule};
use std::collections::{BTreeSet, HashMap};

/// The implicit event of a thread taking its name.
pub const START: &str = "start";
/// The implicit event of a thread exiting.
pub const END: &str = "end";

/// Whether `name` is one of the implicit per-thread events.
fn implicit(name: &str) -> bool {
    name == START || name == END
}

/// Misuse of a schedule that the monitor detects.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MonitorError {
    /// Events happen at most once per execution.
    #[error(
        "event `{event}` happened twice (in thread `{thread}`); schedule events must occur at most once"
    )]
    Repeated {
        /// The event.
        event: String,
        /// The thread of the second occurrence.
        thread: String,
    },
}

/// What the monitor needs to know about a thread, by its label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadStatus {
    /// Runs, or can run.
    Running,
    /// Waits (futex, lock, condvar, join) or sleeps.
    Blocked,
    /// Exited.
    Ended,
    /// No thread has this label.
    Unknown,
}

/// Tracks which events happened, and in which threads.
#[derive(Clone, Debug)]
pub struct Monitor {
    schedule: Schedule,
    /// Threads each event happened in, by event name (user events at most
    /// once, the implicit ones once per thread).
    happened: HashMap<String, Vec<String>>,
}

impl Monitor {
    /// A monitor for `schedule` with no event yet.
    pub fn new(schedule: Schedule) -> Self {
        Monitor {
            schedule,
            happened: HashMap::new(),
        }
    }

    /// Whether the occurrence `event` of thread `thread` matches `r`.
    fn matches(r: &EventRef, event: &str, thread: &str) -> bool {
        r.name == event && r.thread.as_deref().is_none_or(|t| t == thread)
    }

    /// The threads in which `r` happened.
    fn happened_in<'a>(&'a self, r: &'a EventRef) -> impl Iterator<Item = &'a String> + 'a {
        self.happened
            .get(&r.name)
            .into_iter()
            .flatten()
            .filter(|thread| r.thread.as_deref().is_none_or(|t| t == thread.as_str()))
    }

    fn holds(&self, condition: &Condition, status: &dyn Fn(&str) -> ThreadStatus) -> bool {
        match condition {
            Condition::Happened(r) => self.happened_in(r).next().is_some(),
            Condition::Blocked(r) => self
                .happened_in(r)
                .any(|thread| status(thread) == ThreadStatus::Blocked),
            Condition::And(a, b) => self.holds(a, status) && self.holds(b, status),
            Condition::Or(a, b) => self.holds(a, status) || self.holds(b, status),
        }
    }

    /// The orderings that `event` in `thread` must wait for and that do not
    /// hold now; empty when the event may happen. `status(t)` says what
    /// thread `t` is doing at this moment.
    pub fn unmet(
        &self,
        event: &str,
        thread: &str,
        status: &dyn Fn(&str) -> ThreadStatus,
    ) -> Vec<String> {
        self.schedule
            .orderings
            .iter()
            .filter(|o| Self::matches(&o.event, event, thread))
            .filter(|o| !self.holds(&o.condition, status))
            .map(|o| format!("{} -> {}", o.condition, o.event))
            .collect()
    }

    /// Why the orderings of `event` in `thread` do not hold: one phrase per
    /// event of their conditions that is missing, or whose thread is not
    /// blocked (for a schedule deadlock's report).
    pub fn why_unmet(
        &self,
        event: &str,
        thread: &str,
        status: &dyn Fn(&str) -> ThreadStatus,
    ) -> Vec<String> {
        let mut reasons = Vec::new();
        for ordering in
            self.schedule.orderings.iter().filter(|o| {
                Self::matches(&o.event, event, thread) && !self.holds(&o.condition, status)
            })
        {
            for (r, bracketed) in ordering.condition.atoms() {
                let threads: Vec<&String> = self.happened_in(r).collect();
                let reason = match (threads.first(), r.thread.as_deref()) {
                    (None, Some(t)) if status(t) == ThreadStatus::Ended => {
                        format!("before-event `{r}` never happened (thread `{t}` ended without it)")
                    }
                    (None, Some(t)) if status(t) == ThreadStatus::Unknown => {
                        format!("before-event `{r}` never happened (no thread is named `{t}`)")
                    }
                    (None, _) => format!("before-event `{r}` has not happened"),
                    (Some(t), _) if bracketed && status(t) == ThreadStatus::Ended => format!(
                        "thread `{t}` ended without blocking after `{}`, so `[{}]` never held",
                        r.name, r.name
                    ),
                    (Some(t), _) if bracketed && status(t) != ThreadStatus::Blocked => {
                        format!("thread `{t}` is not blocked after `{}`", r.name)
                    }
                    _ => continue,
                };
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
            }
        }
        reasons
    }

    /// Records that `event` happened in `thread`.
    ///
    /// # Errors
    ///
    /// [`MonitorError::Repeated`] when a schedule event happens twice (the
    /// implicit ones: twice in the same thread).
    pub fn happened(&mut self, event: &str, thread: &str) -> Result<(), MonitorError> {
        let named = self.names().contains(event);
        let threads = self.happened.entry(event.to_string()).or_default();
        let repeated = if implicit(event) {
            threads.iter().any(|t| t == thread)
        } else {
            !threads.is_empty()
        };
        if named && repeated {
            return Err(MonitorError::Repeated {
                event: event.to_string(),
                thread: thread.to_string(),
            });
        }
        threads.push(thread.to_string());
        Ok(())
    }

    /// Every event name the schedule mentions.
    pub fn names(&self) -> BTreeSet<&str> {
        self.schedule
            .event_refs()
            .map(|r| r.name.as_str())
            .collect()
    }

    /// Every thread name the schedule mentions (after `@`).
    pub fn thread_names(&self) -> BTreeSet<&str> {
        self.schedule
            .event_refs()
            .filter_map(|r| r.thread.as_deref())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor(text: &str) -> Monitor {
        Monitor::new(text.parse().unwrap())
    }

    fn running(_: &str) -> ThreadStatus {
        ThreadStatus::Running
    }

    #[test]
    fn the_running_example_holds_take_until_add_and_add_until_take_blocks() {
        let mut m = monitor("finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2");
        assert!(!m.unmet("startingTake1", "main", &running).is_empty());
        assert!(m.unmet("finishedAdd1", "addThread", &running).is_empty());
        m.happened("finishedAdd1", "addThread").unwrap();
        assert!(m.unmet("startingTake1", "main", &running).is_empty());
        m.happened("startingTake1", "main").unwrap();
        m.happened("startingTake2", "main").unwrap();
        // main reached startingTake2 but is not blocked yet: add2 waits.
        assert_eq!(
            m.unmet("startingAdd2", "addThread", &running),
            vec!["[startingTake2] -> startingAdd2".to_string()]
        );
        assert_eq!(
            m.why_unmet("startingAdd2", "addThread", &running),
            vec!["thread `main` is not blocked after `startingTake2`".to_string()]
        );
        let main_blocked = |t: &str| match t {
            "main" => ThreadStatus::Blocked,
            _ => ThreadStatus::Running,
        };
        assert!(
            m.unmet("startingAdd2", "addThread", &main_blocked)
                .is_empty()
        );
    }

    #[test]
    fn thread_tags_and_connectives() {
        let mut m = monitor("a@t1 || b -> c, (a && d) -> e@t2");
        m.happened("a", "t9").unwrap();
        assert!(
            !m.unmet("c", "x", &running).is_empty(),
            "a happened in the wrong thread"
        );
        m.happened("b", "t3").unwrap();
        assert!(m.unmet("c", "x", &running).is_empty());
        assert!(
            m.unmet("e", "t1", &running).is_empty(),
            "the ordering names e@t2 only"
        );
        assert!(!m.unmet("e", "t2", &running).is_empty());
        m.happened("d", "t4").unwrap();
        assert!(m.unmet("e", "t2", &running).is_empty());
    }

    #[test]
    fn events_the_schedule_names_occur_once() {
        let mut m = monitor("a -> b");
        m.happened("a", "main").unwrap();
        assert!(matches!(
            m.happened("a", "t"),
            Err(MonitorError::Repeated { .. })
        ));
        // Events the schedule does not name may repeat.
        m.happened("other", "t").unwrap();
        m.happened("other", "t").unwrap();
    }

    #[test]
    fn implicit_events_happen_once_per_thread() {
        let mut m = monitor("end@worker && start@helper -> go");
        m.happened(START, "main").unwrap();
        m.happened(START, "worker").unwrap();
        m.happened(END, "main").unwrap();
        assert!(!m.unmet("go", "main", &running).is_empty());
        m.happened(END, "worker").unwrap();
        m.happened(START, "helper").unwrap();
        assert!(m.unmet("go", "main", &running).is_empty());
        assert!(m.happened(END, "worker").is_err());
        assert_eq!(
            m.thread_names().into_iter().collect::<Vec<_>>(),
            ["helper", "worker"]
        );
    }

    #[test]
    fn reasons_name_missing_events_and_threads_that_never_block() {
        let mut m = monitor("[ready]@w -> go, never@x -> go");
        m.happened("ready", "w").unwrap();
        let status = |t: &str| match t {
            "w" => ThreadStatus::Ended,
            "x" => ThreadStatus::Unknown,
            _ => ThreadStatus::Running,
        };
        assert_eq!(
            m.why_unmet("go", "main", &status),
            vec![
                "thread `w` ended without blocking after `ready`, so `[ready]` never held"
                    .to_string(),
                "before-event `never@x` never happened (no thread is named `x`)".to_string(),
            ]
        );
    }
}
