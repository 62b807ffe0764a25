//! Running a module: every guest thread is a wasmtime `Store` + `Instance`
//! over one shared memory, driven by `call_async` on a fiber; one OS thread
//! polls those futures, so exactly one guest thread runs at a time, and only
//! where the scheduler lets it.
//!
//! Start with [`Program`] (`program.rs`): a module compiled once and run by
//! [`Program::execute`] under a [`Scheduler`](crate::sched::Scheduler) and a [`RunConfig`]
//! (`config.rs`), which returns an [`ExecutionResult`] (below) whose
//! [`Outcome`] says how the execution ended. Then:
//! - `executor`: the poll loop that runs one execution;
//! - `state`: the execution's state (the thread table of `thread`, the
//!   clock, the trace, the decisions) and `schedule()`, where the scheduler
//!   is asked; `step_watch`, what a scheduler that follows steps learns;
//! - the host imports: `rt_imports` (what instrumentation calls),
//!   `sdk_imports` (the guest SDK), `wasi` (WASI, some of it shadowed),
//!   `analysis_imports` (what analyses' SDK imports may use), with
//!   `memory_access` for reading guest memory and `store_data` for what
//!   each call reaches;
//! - `shared_memory`, `point_buffer`, `resident_pages`: the memory kept
//!   between executions and the buffer of points passed inside wasm;
//!   `read_granules`, the bytes a stateful search's executions read;
//! - `looping`: telling a livelock from a long run, with `frames`, a
//!   thread's wasm locals and operand stack where the host can read them;
//! - [`compile_cache`]: instrumented and compiled modules kept on disk between commands;
//! - [`analysis`]: the trait through which analyses observe and steer an
//!   execution.

pub mod analysis;
pub(crate) mod analysis_imports;
pub(crate) mod compile_cache;
mod config;
mod executor;
mod frames;
mod live_locals;
mod looping;
mod memory_access;
pub mod outcome;
mod point_buffer;
mod program;
mod read_granules;
mod resident_pages;
mod rt_imports;
mod sdk_imports;
mod shared_memory;
mod signal_imports;
mod state;
mod step_watch;
mod store_data;
mod thread;
mod thread_stacks;
mod wasi;

pub use crate::failure::{Failure, FailureKind};
pub use analysis::{Analysis, Reports};
pub use config::{FAIR_STEPS, Limits, RunConfig, STEP_NS, Sleeps};
pub use outcome::{BlockedThread, Cut, LoopingThread, Outcome, Unenumerated};
use program::SLICE_FUEL;
/// weft's engine and the future of a thread that parks, for the benchmark
/// of a context switch on wasmtime alone (`bench::switch_floor`).
pub(crate) use program::engine;
pub use program::{LoadError, LoadTimes, MOST_THREADS, Program};
pub(crate) use rt_imports::Park;
pub use signal_imports::signal_name;
pub(crate) use store_data::ThreadData;

use crate::trace::{Event, ThreadId, TraceHash};

/// A switch away from a thread that could have gone on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preemption {
    /// Its index in the decisions.
    pub decision: usize,
    /// The step the thread switched to takes first (an index in the
    /// trace's events, counting dropped ones).
    pub step: u64,
}

/// Everything one execution produced.
#[derive(Clone, Debug)]
pub struct ExecutionResult {
    /// How it ended.
    pub outcome: Outcome,
    /// The most recent scheduling points, in order (all of them unless the
    /// execution was very long).
    pub events: Vec<Event>,
    /// Scheduling points before `events[0]` that were hashed but not kept.
    pub events_dropped: u64,
    /// The thread chosen wherever more than one could run.
    pub decisions: Vec<ThreadId>,
    /// The preemptions: switches away from a thread that could go on (see
    /// [`crate::sched::preempts`]), in order.
    pub preemptions: Vec<Preemption>,
    /// The guest's nondeterministic values, in order.
    pub values: Vec<u64>,
    /// Hash of the events and the outcome.
    pub trace_hash: TraceHash,
    /// Captured standard output.
    pub stdout: Vec<u8>,
    /// Captured standard error.
    pub stderr: Vec<u8>,
    /// Names of SDK events, indexed by [`crate::trace::EventKind::Label`].
    pub labels: Vec<String>,
    /// Name each thread gave itself through the SDK.
    pub thread_names: Vec<Option<String>>,
    /// Steps taken: the scheduling points of the point model (under
    /// library calls, a call is one step, whatever it passes inside).
    pub steps: u64,
    /// The step at which the execution reached the step limit and went on
    /// under a fair schedule, if it did.
    pub fair_from: Option<u64>,
    /// Whether a thread entered an atomic section (`weft.atomic_begin`, a
    /// `__VERIFIER_atomic_*` function). Only a section's start is a
    /// decision: `dpor` takes the whole section for one step, and `dfs`
    /// claims nothing for such executions.
    pub atomic_sections: bool,
    /// Whether a thread sent a signal (see `signal_imports`): `dpor` does
    /// not order a signal's sending against the steps where it may be
    /// delivered, and claims nothing for such executions.
    pub signals_sent: bool,
    /// The first thing the execution depended on that no schedule decides
    /// (a limit's refusal, random bytes, the clock), if any.
    pub unenumerated: Option<Unenumerated>,
    /// A limit that refused the program memory or a thread, when the
    /// program went on without it.
    pub refused: Option<Cut>,
    /// What the installed analyses recorded.
    pub reports: Reports,
    /// Whether the execution read a part of the shared memory that no
    /// execution before it had read, when the program tracks its reads
    /// (see [`crate::instrument::InstrumentOptions::track_reads`]): the
    /// states of the executions before it were named without that part.
    pub read_more: bool,
}

impl ExecutionResult {
    /// The limit that leaves the execution without a verdict, if one does:
    /// it was cut short, or it ended without a failure after a limit
    /// refused it memory or a thread (its path is one a run without the
    /// limit would not take, so its pass claims nothing). A failure stays
    /// a failure.
    pub fn cut(&self) -> Option<Cut> {
        if let Some(cut) = self.outcome.cut() {
            return Some(cut);
        }
        let ended = self.outcome.failure().is_none()
            && !matches!(
                self.outcome,
                Outcome::Discarded { .. } | Outcome::Stopped | Outcome::HostError(_)
            );
        self.refused.filter(|_| ended)
    }
}
