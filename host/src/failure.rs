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
    /// Step or compute budget exceeded.
    StepLimit,
    /// Memory limit exceeded.
    MemoryLimit,
    /// Thread limit exceeded.
    ThreadLimit,
    /// Wall-time limit exceeded.
    TimeLimit,
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
    /// A generated concurrent test returned results no sequential order of
    /// its calls gives (`weft gen`; found by comparing executions, never
    /// the outcome of one).
    Linearizability,
}

impl FailureKind {
    /// The kind as reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Assertion => "assertion",
            FailureKind::Exit => "exit",
            FailureKind::Deadlock => "deadlock",
            FailureKind::StepLimit => "step-limit",
            FailureKind::MemoryLimit => "memory-limit",
            FailureKind::ThreadLimit => "thread-limit",
            FailureKind::TimeLimit => "time-limit",
            FailureKind::ScheduleDeadlock => "schedule-deadlock",
            FailureKind::ScheduleViolation => "schedule-violation",
            FailureKind::ScheduleError => "schedule-error",
            FailureKind::Serializability => "serializability",
            FailureKind::UnhandledMessage => "unhandled-message",
            FailureKind::Linearizability => "linearizability",
            FailureKind::DataRace => "data-race",
        }
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
