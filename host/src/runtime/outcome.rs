//! How an execution ended, and the failure kinds users see.

use crate::sched::ScheduleError;
use crate::trace::ThreadId;
use serde::{Deserialize, Serialize};

/// How Rust's hint to set `RUST_BACKTRACE` starts: a line of guest stderr
/// that reports leave out of failure messages.
pub(crate) const BACKTRACE_HINT: &str = "note: run with `RUST_BACKTRACE";

/// What a blocked thread waits for, in a deadlock report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedThread {
    /// The thread.
    pub thread: ThreadId,
    /// Address it waits on.
    pub addr: u32,
    /// Code site of the wait, if known.
    pub site: Option<u32>,
}

/// A thread held at an event of an enforced schedule, in a schedule
/// deadlock report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldThread {
    /// The thread.
    pub thread: ThreadId,
    /// Its name in schedules.
    pub label: String,
    /// The event it waits to perform.
    pub event: String,
    /// The orderings it waits for.
    pub unmet: Vec<String>,
    /// Why they do not hold (missing events, threads not blocked).
    pub why: Vec<String>,
}

/// How one execution ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The program exited with this code (0: `_start` returned).
    Exited(i32),
    /// A thread trapped (a Rust panic, a C `abort`, `unreachable`, ...).
    Trap {
        /// The thread that trapped.
        thread: ThreadId,
        /// The trap or panic message.
        message: String,
    },
    /// A guest assertion through the SDK failed.
    Assertion {
        /// The asserting thread.
        thread: ThreadId,
        /// The assertion's message.
        message: String,
    },
    /// No thread could run and no timer was pending.
    Deadlock {
        /// Every live thread and what it waits for.
        blocked: Vec<BlockedThread>,
    },
    /// Under an enforced schedule, every live thread was held at an event or
    /// blocked: the schedule cannot be followed.
    ScheduleDeadlock {
        /// Held threads.
        held: Vec<HeldThread>,
        /// Blocked threads.
        blocked: Vec<BlockedThread>,
    },
    /// In passive mode, an event happened before its orderings held.
    ScheduleViolation {
        /// The thread of the event.
        thread: ThreadId,
        /// The event.
        event: String,
        /// The orderings that did not hold.
        violated: Vec<String>,
    },
    /// A schedule was misused (an event happened twice, a thread it names
    /// never existed).
    ScheduleError {
        /// The thread.
        thread: ThreadId,
        /// What went wrong.
        message: String,
    },
    /// The execution reached the step limit (or a thread its compute budget):
    /// a livelock or an infinite loop.
    StepLimit {
        /// The thread that was running.
        thread: ThreadId,
        /// Steps taken.
        steps: u64,
    },
    /// The execution was not atomic-set serializable: an access pattern
    /// of [`crate::check::patterns`] happened.
    Serializability {
        /// The thread of the unit of work whose atomicity broke.
        thread: ThreadId,
        /// The pattern's number (1 to 11).
        pattern: u8,
        /// What happened.
        message: String,
    },
    /// The guest trapped after weft refused to grow memory past the limit.
    MemoryLimit {
        /// The thread that trapped.
        thread: ThreadId,
        /// The limit in bytes.
        limit: u64,
    },
    /// The guest trapped after weft refused to create another thread.
    ThreadLimit {
        /// The thread that trapped.
        thread: ThreadId,
        /// The limit.
        limit: u32,
    },
    /// The execution ran longer than its wall-time limit.
    TimeLimit {
        /// The thread that was running.
        thread: ThreadId,
    },
    /// The guest's assumption (`weft.assume`) was false: the execution is
    /// discarded, neither a pass nor a failure.
    Discarded {
        /// The thread whose assumption failed.
        thread: ThreadId,
    },
    /// A replayed schedule did not fit the execution.
    Diverged(ScheduleError),
    /// A schedule of actor receives could not be followed: its next receive
    /// was not among the messages held. Neither a pass nor a failure.
    ActorScheduleDiverged {
        /// Receives of the schedule that were followed.
        followed: usize,
    },
    /// An actor was delivered a message its current behaviour does not
    /// handle.
    UnhandledMessage {
        /// The thread running the actors.
        thread: ThreadId,
        /// Which actor and message.
        message: String,
    },
    /// The actors' driver waits for a reply that no message left can bring.
    ActorDeadlock {
        /// The thread running the actors.
        thread: ThreadId,
        /// Who waits for whom.
        message: String,
    },
    /// The host could not run the module (a missing export, an instantiation
    /// error): an input error, not a guest failure.
    HostError(String),
}

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

impl Outcome {
    /// The guest failure this outcome is, if it is one.
    pub fn failure(&self) -> Option<Failure> {
        let (kind, thread, message) = match self {
            Outcome::Exited(0)
            | Outcome::Discarded { .. }
            | Outcome::ActorScheduleDiverged { .. }
            | Outcome::Diverged(_)
            | Outcome::HostError(_) => return None,
            Outcome::Exited(code) => (
                FailureKind::Exit,
                0,
                format!("the program exited with code {code}"),
            ),
            Outcome::Trap { thread, message } | Outcome::Assertion { thread, message } => {
                (FailureKind::Assertion, *thread, message.clone())
            }
            Outcome::Deadlock { blocked } => {
                let who = blocked
                    .iter()
                    .map(|b| format!("thread {} waits on {:#x}", b.thread, b.addr))
                    .collect::<Vec<_>>()
                    .join(", ");
                (
                    FailureKind::Deadlock,
                    0,
                    format!("deadlock: every live thread is blocked ({who})"),
                )
            }
            Outcome::ScheduleDeadlock { held, blocked } => {
                let mut who: Vec<String> = held
                    .iter()
                    .map(|h| {
                        let why = if h.why.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", h.why.join(", "))
                        };
                        format!(
                            "thread {} (`{}`) is held at event `{}` until {}{why}",
                            h.thread,
                            h.label,
                            h.event,
                            h.unmet.join(" and ")
                        )
                    })
                    .collect();
                who.extend(
                    blocked
                        .iter()
                        .map(|b| format!("thread {} waits on {:#x}", b.thread, b.addr)),
                );
                (
                    FailureKind::ScheduleDeadlock,
                    0,
                    format!(
                        "schedule deadlock: no thread can go on ({})",
                        who.join("; ")
                    ),
                )
            }
            Outcome::ScheduleViolation {
                thread,
                event,
                violated,
            } => (
                FailureKind::ScheduleViolation,
                *thread,
                format!(
                    "event `{event}` happened before its orderings held: {}",
                    violated.join(", ")
                ),
            ),
            Outcome::ScheduleError { thread, message } => {
                (FailureKind::ScheduleError, *thread, message.clone())
            }
            Outcome::StepLimit { thread, steps } => (
                FailureKind::StepLimit,
                *thread,
                format!("step limit reached after {steps} steps: a livelock or an endless loop"),
            ),
            Outcome::Serializability {
                thread, message, ..
            } => (FailureKind::Serializability, *thread, message.clone()),
            Outcome::UnhandledMessage { thread, message } => {
                (FailureKind::UnhandledMessage, *thread, message.clone())
            }
            Outcome::ActorDeadlock { thread, message } => {
                (FailureKind::Deadlock, *thread, message.clone())
            }
            Outcome::MemoryLimit { thread, limit } => (
                FailureKind::MemoryLimit,
                *thread,
                format!(
                    "the guest failed after weft refused to grow its memory beyond {limit} bytes"
                ),
            ),
            Outcome::ThreadLimit { thread, limit } => (
                FailureKind::ThreadLimit,
                *thread,
                format!("the guest failed after weft refused to create more than {limit} threads"),
            ),
            Outcome::TimeLimit { thread } => (
                FailureKind::TimeLimit,
                *thread,
                "the execution exceeded its wall-time limit".to_string(),
            ),
        };
        Some(Failure {
            kind,
            message,
            thread,
        })
    }

    /// A stable one-line summary that goes into the trace hash.
    pub(crate) fn summary(&self) -> String {
        match self.failure() {
            Some(f) => format!("{}:{}", f.kind.name(), f.thread),
            None => format!("{self:?}"),
        }
    }
}
