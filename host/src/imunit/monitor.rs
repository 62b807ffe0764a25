//! The schedule monitor: which orderings an event's occurrence must wait
//! for, and whether they hold now.
//!
//! The runtime asks [`Monitor::may_happen`] when a thread reaches an event;
//! in active mode a thread whose event may not happen yet is held until it
//! may. Blocked-ness comes from the runtime, which knows exactly which
//! threads wait (futex, lock, condvar, join, sleep), so nothing is polled.

use super::schedule::{Condition, EventRef, Schedule};
use std::collections::HashMap;

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

/// Tracks which events happened, and in which thread.
#[derive(Clone, Debug)]
pub struct Monitor {
    schedule: Schedule,
    /// Thread of every event that happened, by event name.
    happened: HashMap<String, String>,
}

impl Monitor {
    /// A monitor for `schedule` with no event yet.
    pub fn new(schedule: Schedule) -> Self {
        Monitor {
            schedule,
            happened: HashMap::new(),
        }
    }

    /// The schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Whether the occurrence `event` of thread `thread` matches `r`.
    fn matches(r: &EventRef, event: &str, thread: &str) -> bool {
        r.name == event && r.thread.as_deref().is_none_or(|t| t == thread)
    }

    fn holds(&self, condition: &Condition, blocked: &dyn Fn(&str) -> bool) -> bool {
        let happened_in = |r: &EventRef| {
            self.happened
                .get(&r.name)
                .filter(|thread| r.thread.as_deref().is_none_or(|t| t == thread.as_str()))
        };
        match condition {
            Condition::Happened(r) => happened_in(r).is_some(),
            Condition::Blocked(r) => happened_in(r).is_some_and(|thread| blocked(thread)),
            Condition::And(a, b) => self.holds(a, blocked) && self.holds(b, blocked),
            Condition::Or(a, b) => self.holds(a, blocked) || self.holds(b, blocked),
        }
    }

    /// The orderings that `event` in `thread` must wait for and that do not
    /// hold now; empty when the event may happen. `blocked(t)` says whether
    /// thread `t` is blocked at this moment.
    pub fn unmet(&self, event: &str, thread: &str, blocked: &dyn Fn(&str) -> bool) -> Vec<String> {
        self.schedule
            .orderings
            .iter()
            .filter(|o| Self::matches(&o.event, event, thread))
            .filter(|o| !self.holds(&o.condition, blocked))
            .map(|o| format!("{} -> {}", o.condition, o.event))
            .collect()
    }

    /// Whether `event` in `thread` may happen now.
    pub fn may_happen(&self, event: &str, thread: &str, blocked: &dyn Fn(&str) -> bool) -> bool {
        self.unmet(event, thread, blocked).is_empty()
    }

    /// Records that `event` happened in `thread`.
    ///
    /// # Errors
    ///
    /// [`MonitorError::Repeated`] when a schedule event happens twice.
    pub fn happened(&mut self, event: &str, thread: &str) -> Result<(), MonitorError> {
        let named =
            self.schedule.orderings.iter().any(|o| {
                o.event.name == event || o.condition.events().iter().any(|r| r.name == event)
            });
        if named && self.happened.contains_key(event) {
            return Err(MonitorError::Repeated {
                event: event.to_string(),
                thread: thread.to_string(),
            });
        }
        self.happened.insert(event.to_string(), thread.to_string());
        Ok(())
    }

    /// Events the schedule names that never happened (for reports of a
    /// schedule that could not be followed).
    pub fn missing(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .schedule
            .orderings
            .iter()
            .flat_map(|o| o.condition.events().into_iter().chain([&o.event]))
            .map(|r| r.name.clone())
            .filter(|name| !self.happened.contains_key(name))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor(text: &str) -> Monitor {
        Monitor::new(text.parse().unwrap())
    }

    #[test]
    fn the_running_example_holds_take_until_add_and_add_until_take_blocks() {
        let mut m = monitor("finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2");
        let none_blocked = |_: &str| false;
        assert!(!m.may_happen("startingTake1", "main", &none_blocked));
        assert!(m.may_happen("finishedAdd1", "addThread", &none_blocked));
        m.happened("finishedAdd1", "addThread").unwrap();
        assert!(m.may_happen("startingTake1", "main", &none_blocked));
        m.happened("startingTake1", "main").unwrap();
        m.happened("startingTake2", "main").unwrap();
        // main reached startingTake2 but is not blocked yet: add2 waits.
        assert_eq!(
            m.unmet("startingAdd2", "addThread", &none_blocked),
            vec!["[startingTake2] -> startingAdd2".to_string()]
        );
        let main_blocked = |t: &str| t == "main";
        assert!(m.may_happen("startingAdd2", "addThread", &main_blocked));
    }

    #[test]
    fn thread_tags_and_connectives() {
        let mut m = monitor("a@t1 || b -> c, (a && d) -> e@t2");
        let no = |_: &str| false;
        m.happened("a", "t9").unwrap();
        assert!(
            !m.may_happen("c", "x", &no),
            "a happened in the wrong thread"
        );
        m.happened("b", "t3").unwrap();
        assert!(m.may_happen("c", "x", &no));
        assert!(m.may_happen("e", "t1", &no), "the ordering names e@t2 only");
        assert!(!m.may_happen("e", "t2", &no));
        m.happened("d", "t4").unwrap();
        assert!(m.may_happen("e", "t2", &no));
    }

    #[test]
    fn events_occur_once_and_missing_ones_are_listed() {
        let mut m = monitor("a -> b");
        m.happened("a", "main").unwrap();
        assert!(matches!(
            m.happened("a", "t"),
            Err(MonitorError::Repeated { .. })
        ));
        // Events the schedule does not name may repeat.
        m.happened("other", "t").unwrap();
        m.happened("other", "t").unwrap();
        assert_eq!(m.missing(), vec!["b".to_string()]);
    }
}
