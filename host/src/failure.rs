//! The verdicts users see: the kinds of failure weft reports, in text,
//! JSON and replay files.

use crate::trace::ThreadId;
use serde::{Deserialize, Serialize};

/// The kinds of failure a user sees in reports and JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// A guest trap, panic or SDK assertion.
    Assertion,
    /// A non-zero exit code.
    Exit,
    /// Every live thread blocked.
    Deadlock,
    /// Under a fair schedule, past the step limit or a thread's compute
    /// budget, the execution came back to a state it had been in: a
    /// livelock or an endless loop. (Replay files of earlier versions call
    /// it `step-limit`.)
    #[serde(alias = "step-limit")]
    Livelock,
    /// Memory limit exceeded.
    MemoryLimit,
    /// Thread limit exceeded.
    ThreadLimit,
    /// An enforced schedule cannot be followed (every thread held or
    /// blocked).
    ScheduleDeadlock,
    /// A schedule names what the test does not have, or an event repeats.
    ScheduleError,
    /// In passive mode, an execution violated the schedule.
    ScheduleViolation,
    /// The execution was not atomic-set serializable.
    Serializability,
    /// An actor got a message its behaviour does not handle.
    UnhandledMessage,
    /// Two threads accessed the same bytes, at least one with a plain
    /// write (or a plain access against an atomic write), with nothing
    /// ordering the two.
    DataRace,
    /// Not a failure: an execution cut short by the step limit, a compute
    /// budget or the wall-time limit of an execution while it was still
    /// making progress (see [`crate::runtime::Outcome::judged`]). Only
    /// judgements that need every execution to end (`weft gen`) see it.
    Inconclusive,
    /// A generated concurrent test returned results no sequential order of
    /// its calls gives (`weft gen`; found by comparing executions, never
    /// the outcome of one).
    Linearizability,
}

impl FailureKind {
    /// Whether the execution was cut short by one of weft's limits (memory,
    /// threads) rather than failing by itself.
    pub fn is_limit(self) -> bool {
        matches!(
            self,
            FailureKind::MemoryLimit | FailureKind::ThreadLimit | FailureKind::Inconclusive
        )
    }

    /// The kind as reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Assertion => "assertion",
            FailureKind::Exit => "exit",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Livelock => "livelock",
            FailureKind::Inconclusive => "inconclusive",
            FailureKind::MemoryLimit => "memory-limit",
            FailureKind::ThreadLimit => "thread-limit",
            FailureKind::ScheduleDeadlock => "schedule-deadlock",
            FailureKind::ScheduleViolation => "schedule-violation",
            FailureKind::ScheduleError => "schedule-error",
            FailureKind::Serializability => "serializability",
            FailureKind::UnhandledMessage => "unhandled-message",
            FailureKind::Linearizability => "linearizability",
            FailureKind::DataRace => "data-race",
        }
    }

    /// "a deadlock failure", "an assertion failure": the kind in a
    /// sentence, with its article.
    pub fn a_failure(self) -> String {
        let name = self.name();
        let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {name} failure")
    }
}

/// A guest failure: what kind, in which thread, and what it said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The kind.
    pub kind: FailureKind,
    /// A one-paragraph description.
    pub message: String,
    /// The thread the failure happened in (for a deadlock: the main thread).
    pub thread: ThreadId,
}

impl Failure {
    /// Whether `other` is this failure up to the values it mentions: the
    /// same kind and the same message once every number that is not a
    /// `:line` or `:column` of a source location is set aside. A shorter
    /// schedule that loses one update instead of seven fails "the same".
    pub fn same_up_to_values(&self, other: &Failure) -> bool {
        self.kind == other.kind && message_shape(&self.message) == message_shape(&other.message)
    }
}

/// `message` with each number (decimal, or hexadecimal after `0x`) that
/// does not follow a `:` replaced by `#`.
fn message_shape(message: &str) -> String {
    let mut shape = String::with_capacity(message.len());
    let mut chars = message.chars().peekable();
    let mut previous = None;
    while let Some(c) = chars.next() {
        if !c.is_ascii_digit() {
            shape.push(c);
            previous = Some(c);
            continue;
        }
        let hex = c == '0' && chars.peek() == Some(&'x');
        let mut number = String::from(c);
        if hex {
            number.extend(chars.next());
        }
        while let Some(&d) = chars
            .peek()
            .filter(|d| d.is_ascii_digit() || (hex && d.is_ascii_hexdigit()))
        {
            number.push(d);
            chars.next();
        }
        if previous == Some(':') {
            shape.push_str(&number);
        } else {
            shape.push('#');
        }
        previous = Some('#');
    }
    shape
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_in_a_sentence_has_its_article() {
        assert_eq!(FailureKind::Assertion.a_failure(), "an assertion failure");
        assert_eq!(FailureKind::Exit.a_failure(), "an exit failure");
        assert_eq!(FailureKind::Deadlock.a_failure(), "a deadlock failure");
        assert_eq!(FailureKind::DataRace.a_failure(), "a data-race failure");
    }

    fn assertion(message: &str) -> Failure {
        Failure {
            kind: FailureKind::Assertion,
            message: message.to_owned(),
            thread: 0,
        }
    }

    #[test]
    fn values_are_set_aside_but_source_locations_are_not() {
        assert_eq!(
            message_shape("at src/main.rs:29:5: left: 13 at 0x1f3a"),
            "at src/main.rs:29:5: left: # at #"
        );
        let seven_lost = assertion("panicked at main.rs:29:5: left: 13 right: 20");
        let one_lost = assertion("panicked at main.rs:29:5: left: 19 right: 20");
        let elsewhere = assertion("panicked at main.rs:31:5: left: 19 right: 20");
        assert!(seven_lost.same_up_to_values(&one_lost));
        assert!(!seven_lost.same_up_to_values(&elsewhere));
        let exit = Failure {
            kind: FailureKind::Exit,
            ..one_lost.clone()
        };
        assert!(!one_lost.same_up_to_values(&exit));
    }
}
