//! How an execution ended.

use crate::failure::{Failure, FailureKind};
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
    /// The signal whose handler it waits in, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_handler: Option<u32>,
}

impl BlockedThread {
    /// `thread N waits on 0x…`, as deadlock reports say it, or that it
    /// waits for a signal.
    pub fn describe(&self) -> String {
        if self.addr == super::state::signal_wait_address(self.thread) {
            return format!(
                "thread {} waits for a signal (in `pause`, `sigsuspend` or `sigwait`) that no thread of the program is left to send, and none comes from outside it",
                self.thread
            );
        }
        match self.in_handler {
            Some(sig) => format!(
                "thread {} waits on {:#x} in its handler of {} (a handler that waits for a lock the code it interrupted holds waits for itself)",
                self.thread,
                self.addr,
                super::signal_imports::signal_name(sig)
            ),
            None => format!("thread {} waits on {:#x}", self.thread, self.addr),
        }
    }
}

/// A thread that kept running in a livelock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopingThread {
    /// The thread.
    pub thread: ThreadId,
    /// Where it loops: the code site it stands at, or else of the last
    /// access it made, in source terms when the module says (filled in
    /// once the execution ended); else what it does (a sleep, a time
    /// slice).
    pub place: String,
    /// The code site it stands at, or of the last access it made.
    pub site: Option<u32>,
    /// Whether it stands at the access at `site` (else it runs on in time
    /// slices after it).
    pub at_access: bool,
}

impl LoopingThread {
    /// `thread N loops at PLACE`.
    pub fn describe(&self) -> String {
        if self.at_access {
            format!("thread {} loops at {}", self.thread, self.place)
        } else {
            format!("thread {} loops in {}", self.thread, self.place)
        }
    }
}

/// The limit that cut an inconclusive execution short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The step limit (`--max-steps`) reached under the strategy, and ten
    /// times as many steps more under a fair schedule.
    Steps {
        /// The thread that was running.
        thread: ThreadId,
        /// Steps taken.
        steps: u64,
        /// The step from which the execution went on under a fair schedule.
        fair_from: u64,
    },
    /// A thread's compute budget (`--max-fuel`), used up twice: once under
    /// the strategy, once more under a fair schedule.
    Fuel {
        /// The thread.
        thread: ThreadId,
        /// The budget.
        fuel: u64,
    },
    /// The wall-time limit of an execution (`--execution-time-limit`).
    Time {
        /// The thread that was running.
        thread: ThreadId,
    },
    /// The memory limit (`--max-memory-mib`) refused to grow the memory,
    /// and the program went on without it (an allocation returned null):
    /// it took a path a run with more memory would not take.
    MemoryRefused {
        /// The limit, in bytes.
        bytes: u64,
    },
    /// The thread limit (`--max-threads`) refused to create a thread, and
    /// the program went on without it.
    ThreadRefused {
        /// The limit.
        threads: u32,
    },
    /// Under a fair schedule, memory and every thread's place came back to
    /// what they had been, but a run that compared complete states (every
    /// thread's locals, operand stack and globals too) did not show a loop
    /// (see `looping.rs`): a possible livelock, not shown.
    Looped {
        /// The thread that was running.
        thread: ThreadId,
        /// Steps taken.
        steps: u64,
        /// The step from which the execution went on under a fair schedule.
        fair_from: u64,
        /// Why the loop was not shown.
        unseen: Unseen,
    },
    /// Under a systematic search (`dfs`, `dpor`), the execution reached
    /// the step limit before it ended: a fair schedule finished it, and
    /// the search chose nothing past that step.
    SearchSteps {
        /// The step limit.
        steps: u64,
    },
}

impl Cut {
    /// What happened and how to go further, in words.
    pub fn describe(&self) -> String {
        match self {
            Cut::Steps {
                steps, fair_from, ..
            } => format!(
                "still running after {steps} steps (the last {} under a fair schedule), with no state repeated: a long execution, not shown to loop (raise --max-steps: up to ten times as many run under a fair schedule)",
                steps - fair_from
            ),
            Cut::Fuel { thread, fuel } => format!(
                "thread {thread} used up its compute budget of {fuel} fuel units twice (the second time under a fair schedule), with no state repeated: a long computation, not shown to loop (raise --max-fuel)"
            ),
            Cut::Time { .. } => {
                "still running at its wall-time limit (raise --execution-time-limit)".into()
            }
            Cut::MemoryRefused { bytes } => format!(
                "refused memory at the memory limit ({} MiB) and went on without it: the program took a path a run with more memory would not (raise --max-memory-mib)",
                bytes >> 20
            ),
            Cut::ThreadRefused { threads } => format!(
                "refused a thread at the thread limit ({threads}) and went on without it: the program took a path a run with more threads would not (raise --max-threads)"
            ),
            Cut::Looped {
                steps,
                fair_from,
                unseen,
                ..
            } => format!(
                "a possible livelock, not shown: under a fair schedule from step {fair_from}, {} step{} later memory and every thread's place were as they had been, but {}; raise --max-steps (or --max-fuel) to run it longer",
                steps - fair_from,
                if steps - fair_from == 1 { "" } else { "s" },
                unseen.describe()
            ),
            Cut::SearchSteps { steps } => format!(
                "at the step limit ({steps} steps) before it ended: a fair schedule finished it, and the search explored no order past that step (raise --max-steps)"
            ),
        }
    }

    /// The thread that was running, or whose budget ran out.
    pub fn thread(&self) -> ThreadId {
        match *self {
            Cut::Steps { thread, .. }
            | Cut::Fuel { thread, .. }
            | Cut::Time { thread }
            | Cut::Looped { thread, .. } => thread,
            // No thread in particular: the main one.
            Cut::MemoryRefused { .. } | Cut::ThreadRefused { .. } | Cut::SearchSteps { .. } => 0,
        }
    }
}

/// Why a state that came back, as memory and the threads' places show,
/// was not shown to be a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unseen {
    /// Compared with every thread's frames, no state came back.
    Changed,
    /// Some thread always stood in the middle of its code (a loop with no
    /// scheduling point), where its frames are out of sight.
    InSlices,
    /// Going on round robin, the execution ended.
    Ended,
    /// The module could not be compiled to read its threads' frames.
    NoReader,
    /// A thread had a signal it does not block pending all along, and
    /// called neither the library nor the host, the only places weft
    /// delivers one; Linux would have interrupted it to deliver it.
    SignalPending,
}

impl Unseen {
    /// Why, in words.
    fn describe(self) -> &'static str {
        match self {
            Unseen::Changed => {
                "a run that also compared every thread's wasm locals, operand stack and globals saw no state come back (a loop that counts in a local looks the same)"
            }
            Unseen::InSlices => {
                "a thread was always in the middle of a loop with no scheduling point, where its wasm locals are out of sight"
            }
            Unseen::Ended => "going on round robin, the execution ended",
            Unseen::NoReader => "the module could not be compiled to read its threads' wasm locals",
            Unseen::SignalPending => {
                "a thread has a signal pending that it does not block, and computes without calling the library or the host, the only places weft can run its handler (Linux would interrupt it to deliver the signal)"
            }
        }
    }
}

/// Something an execution depended on that no schedule decides and no
/// search enumerates: with it, an execution stands for itself only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unenumerated {
    /// The guest's memory could not grow past the memory limit
    /// (`--max-memory-mib`): an allocation failed that would have
    /// succeeded.
    MemoryLimit {
        /// The limit, in bytes.
        bytes: u64,
    },
    /// A thread creation was refused at the thread limit
    /// (`--max-threads`).
    ThreadLimit {
        /// The limit.
        threads: u32,
    },
    /// The guest read random bytes (`random_get`): one seeded draw of
    /// them, of all that a real run could see.
    RandomBytes,
    /// The guest read the clock (`clock_time_get`, or a sleep until an
    /// absolute time) or set an alarm on it: one virtual time, of all that
    /// a real run could see.
    Clock,
}

impl Unenumerated {
    /// What happened and what it means, in words.
    pub fn describe(self) -> String {
        match self {
            Unenumerated::MemoryLimit { bytes } => format!(
                "an allocation was refused at the memory limit ({} MiB; raise it with --max-memory-mib)",
                bytes >> 20
            ),
            Unenumerated::ThreadLimit { threads } => format!(
                "a thread creation was refused at the thread limit ({threads}; raise it with --max-threads)"
            ),
            Unenumerated::RandomBytes => {
                "the program read random bytes (random_get), and only one draw of them was tried".into()
            }
            Unenumerated::Clock => {
                "the program read the clock (clock_time_get, or a sleep until an absolute time) or set an alarm on it, and only one reading per schedule was tried".into()
            }
        }
    }
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
    /// Under a fair schedule (after the step limit, a thread's compute
    /// budget, or a state that came back under the strategy), the
    /// execution came back to a state it had been in long before (see
    /// `looping.rs`): the same memory, every thread at the same
    /// place. No thread makes progress: a livelock, or an endless loop.
    Livelock {
        /// Steps taken.
        steps: u64,
        /// The step from which the execution went on under a fair schedule.
        fair_from: u64,
        /// The threads that could still run, and where.
        looping: Vec<LoopingThread>,
    },
    /// Cut short by one of weft's limits while the program was still
    /// making progress (or with no evidence that it was not): neither a
    /// pass nor a failure.
    Inconclusive(Cut),
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
    /// The guest's assumption (`weft.assume`) was false: the execution is
    /// discarded, neither a pass nor a failure.
    Discarded {
        /// The thread whose assumption failed.
        thread: ThreadId,
    },
    /// A replayed schedule did not fit the execution.
    Diverged(ScheduleError),
    /// A failure with its own message and thread: an analysis found the
    /// execution wrong (a schedule violation, a serializability violation,
    /// an unhandled actor message, ...), a thread ended the process with a
    /// non-zero code, or a thread used up its compute budget.
    Reported(Failure),
    /// The run it belonged to reached its end time (see
    /// [`super::RunConfig::stop_at`]) during the execution: neither a pass
    /// nor a failure, and not counted as explored.
    Stopped,
    /// An analysis gave the execution up: neither a pass nor a failure (an
    /// actor schedule that could not be followed, say). The text says why
    /// and goes into the trace hash.
    Abandoned(String),
    /// The host could not run the module (a missing export, an instantiation
    /// error): an input error, not a guest failure.
    HostError(String),
}

impl Outcome {
    /// The guest failure this outcome is, if it is one.
    pub fn failure(&self) -> Option<Failure> {
        let (kind, thread, message) = match self {
            Outcome::Exited(0)
            | Outcome::Discarded { .. }
            | Outcome::Abandoned(_)
            | Outcome::Stopped
            | Outcome::Inconclusive(_)
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
                    .map(BlockedThread::describe)
                    .collect::<Vec<_>>()
                    .join(", ");
                (
                    FailureKind::Deadlock,
                    0,
                    format!("deadlock: every live thread is blocked ({who})"),
                )
            }
            Outcome::Reported(failure) => return Some(failure.clone()),
            Outcome::Livelock {
                steps,
                fair_from,
                looping,
            } => (
                FailureKind::Livelock,
                looping.first().map_or(0, |t| t.thread),
                format!(
                    "livelock: weft went on under a fair schedule after {fair_from} steps, and {} steps later the execution was back in a state it had been in under that schedule; run again round robin, comparing every thread's wasm locals, operand stack and globals as well as memory, it came back to a state exactly, so it loops forever with every thread that can run getting its turn ({})",
                    steps - fair_from,
                    looping
                        .iter()
                        .map(LoopingThread::describe)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
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
                format!(
                    "the guest failed after weft refused to create a thread beyond {limit} alive at once"
                ),
            ),
        };
        Some(Failure {
            kind,
            message,
            thread,
        })
    }

    /// The limit that cut the execution short, if it is inconclusive.
    pub fn cut(&self) -> Option<Cut> {
        match self {
            Outcome::Inconclusive(cut) => Some(*cut),
            _ => None,
        }
    }

    /// The failure, or for an execution cut short by a limit, the cut as a
    /// failure of kind [`FailureKind::Inconclusive`]: for judgements that
    /// need every execution to end.
    pub fn judged(&self) -> Option<Failure> {
        match self {
            Outcome::Inconclusive(cut) => Some(Failure {
                kind: FailureKind::Inconclusive,
                message: cut.describe(),
                thread: cut.thread(),
            }),
            other => other.failure(),
        }
    }

    /// A stable one-line summary that goes into the trace hash.
    pub(crate) fn summary(&self) -> String {
        match self.failure() {
            Some(f) => format!("{}:{}", f.kind.name(), f.thread),
            None => match self {
                Outcome::Abandoned(why) => format!("abandoned: {why}"),
                other => format!("{other:?}"),
            },
        }
    }
}
