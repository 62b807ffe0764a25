//! How analyses see and steer an execution.
//!
//! The runtime is mechanism: threads, memory, scheduling points, WASI and
//! the scheduling step. Every technique on top of it (IMUnit schedules,
//! atomic-set checking, actor mailboxes, class-test calls, the activity log)
//! is an [`Analysis`]: the runtime tells it what threads do, lets it hold
//! threads and end the execution, and asks it for a verdict at the end. A
//! command installs the analyses it needs for each execution
//! ([`Program::execute_with`](super::Program::execute_with)); the runtime
//! names none of them, and when none is installed every hook costs one
//! length check.
//!
//! An analysis that adds SDK imports (the `weft.actor_*` calls, say) links
//! them when the program is loaded, and they find the analysis of the
//! running execution by its type.

use super::outcome::{BlockedThread, Outcome};
use super::state::ExecState;
use super::thread::ThreadState;
use crate::instrument::{AccessKind, SiteId, SiteTable};
use crate::sched::{NextOp, ThreadView};
use crate::trace::ThreadId;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// An analysis of executions: it observes what threads do and may steer the
/// execution (hold a thread, end the execution with a failure).
///
/// Every method has a default that does nothing, so an analysis implements
/// only what it watches. Hooks run in the order the analyses were
/// installed. A hook that ends the execution ([`Cx::finish`]) ends it as
/// soon as the hook returns.
pub trait Analysis: Any {
    /// Whether the analysis must see every scheduling point at the host.
    /// When one does, no thread passes points inside wasm on a budget, which
    /// makes executions slower but lets [`Analysis::access`] and
    /// [`Analysis::happened`] see every point.
    fn needs_every_point(&self) -> bool {
        false
    }

    /// The execution starts; the main thread (0) exists.
    fn begin(&mut self, cx: &mut Cx<'_>) {
        let _ = cx;
    }

    /// `thread` stands at a scheduling point that accesses memory, before
    /// the access. Returns whether the access may stop being a scheduling
    /// point (see [`Interest`]).
    fn access(&mut self, cx: &mut Cx<'_>, thread: ThreadId, access: &Access) -> Interest {
        let _ = (cx, thread, access);
        Interest::Keep
    }

    /// `thread` made `accesses`, as its access log tells (a module loaded
    /// with
    /// [`log_accesses`](crate::instrument::InstrumentOptions::log_accesses)
    /// logs every plain access to the shared memory and every access at a
    /// scheduling point). The runtime reads a thread's log before any other
    /// hook of that thread, so an analysis hears of its accesses in program
    /// order with its events, after they happened (where
    /// [`Analysis::access`] tells of an access at a point before it
    /// happens).
    fn logged(&mut self, cx: &mut Cx<'_>, thread: ThreadId, accesses: &Logged<'_>) {
        let _ = (cx, thread, accesses);
    }

    /// `thread` stands at a scheduling point that is not a memory access of
    /// its own (a time slice, a wait or notify, a spawn, a yield, an SDK
    /// event): another thread may run next.
    fn point(&mut self, cx: &mut Cx<'_>, thread: ThreadId) {
        let _ = (cx, thread);
    }

    /// `thread` did `what`.
    fn happened(&mut self, cx: &mut Cx<'_>, thread: ThreadId, what: &Happening<'_>) {
        let _ = (cx, thread, what);
    }

    /// `thread` is about to perform the SDK event `event`. Returns whether
    /// the thread must be held: it then cannot run until
    /// [`Analysis::may_run`] says it may, and performs the event after.
    fn before_event(&mut self, cx: &mut Cx<'_>, thread: ThreadId, event: &str) -> bool {
        let _ = (cx, thread, event);
        false
    }

    /// An event every thread but the main one performs when it first names
    /// itself through the SDK, if the analysis wants one.
    fn start_event(&self) -> Option<&'static str> {
        None
    }

    /// Whether `thread`, held by an analysis, may run now.
    fn may_run(&self, view: &ExecView<'_>, thread: ThreadId) -> bool {
        let _ = (view, thread);
        true
    }

    /// Adds what the analysis knows to the scheduler's view of an enabled
    /// thread that is not held.
    fn annotate(&self, view: &mut ThreadView) {
        let _ = view;
    }

    /// No thread can run and no timer is pending: the outcome, if the
    /// analysis explains it better than a plain deadlock of `blocked` (say,
    /// because it holds threads).
    fn deadlock(&self, view: &ExecView<'_>, blocked: &[BlockedThread]) -> Option<Outcome> {
        let _ = (view, blocked);
        None
    }

    /// The execution ended as `end`: what that end means under the
    /// semantics the analysis stands for (a verification property makes a
    /// deadlock a path cut short). Asked of every analysis in order, before
    /// [`Analysis::verdict`] and [`Analysis::before_end`].
    fn reinterpret(&self, end: Outcome) -> Outcome {
        end
    }

    /// The execution passed (the program exited with 0): a failure the
    /// analysis finds in it, if any.
    fn verdict(&mut self, view: &ExecView<'_>) -> Option<Outcome> {
        let _ = view;
        None
    }

    /// The execution ended otherwise than by passing, as `end` says (a
    /// failure, or cut short by a limit): a failure the analysis found
    /// that came before that end, if any, to be reported in its place.
    fn before_end(&mut self, view: &ExecView<'_>, end: &Outcome) -> Option<Outcome> {
        let _ = (view, end);
        None
    }

    /// The execution is over: what the analysis recorded, for
    /// [`ExecutionResult::reports`](super::ExecutionResult::reports).
    fn finish(self: Box<Self>) -> Option<Report> {
        None
    }
}

/// A memory access at a scheduling point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The instrumented instruction.
    pub site: SiteId,
    /// What it does.
    pub kind: AccessKind,
    /// Width of a scalar access in bytes (0 for `memory.copy` and
    /// `memory.fill`).
    pub width: u8,
    /// The first byte written or read (for `memory.copy`: written).
    pub addr: u32,
    /// How many bytes from `addr`.
    pub len: u32,
    /// For `memory.copy`: the first byte read.
    pub src: u32,
}

impl Access {
    /// The access as the scheduler sees a thread's next operation.
    pub fn next_op(&self) -> NextOp {
        NextOp {
            kind: self.kind,
            addr: self.addr,
            len: self.len,
            src: self.src,
            site: self.site,
        }
    }
}

/// Accesses read from a thread's access log, oldest first (see
/// [`Analysis::logged`]), to be read with the module's site table (an
/// analysis keeps its own, or reads [`ExecView::sites`]: lending it with
/// every batch cost two atomic operations on its reference count per
/// batch, a measurable part of the race check).
pub struct Logged<'a> {
    /// The words as they lie in the thread's ring: the older part, then
    /// the newer one.
    pub(super) parts: [&'a [u64]; 2],
}

impl Logged<'_> {
    /// The two words that stand for `range` of a library call at `site`
    /// (see [`AccessKind::LibraryCall`]): `site | addr << 32`, then
    /// `len | write << 32`.
    pub(super) fn library_words(
        site: SiteId,
        range: &crate::library::caller_memory::Range,
    ) -> [u64; 2] {
        [
            u64::from(site) | u64::from(range.addr) << 32,
            u64::from(range.len) | u64::from(range.write) << 32,
        ]
    }

    /// The accesses, oldest first, as the module's `sites` describe them.
    /// (Every logged site is in the module's site table; an entry that is
    /// not would be an instrumentation error, and is left out.)
    pub fn iter<'s>(&'s self, sites: &'s SiteTable) -> impl Iterator<Item = Access> + 's {
        let mut words = self.parts[0].iter().chain(self.parts[1]);
        std::iter::from_fn(move || {
            loop {
                let &word = words.next()?;
                let (site, operand) = (word as u32, (word >> 32) as u32);
                if site == crate::abi::ALLOCATOR_LOCK_SITE {
                    return Some(Access {
                        site,
                        kind: AccessKind::AtomicRmw,
                        width: 1,
                        addr: operand,
                        len: 1,
                        src: 0,
                    });
                }
                let Some(code) = sites.code(site) else {
                    debug_assert!(false, "unknown logged site {site}");
                    continue;
                };
                return Some(match code.kind {
                    AccessKind::Copy | AccessKind::Fill => {
                        let extra = words.next().copied().unwrap_or_default();
                        Access {
                            site,
                            kind: code.kind,
                            width: 0,
                            addr: operand,
                            len: extra as u32,
                            src: (extra >> 32) as u32,
                        }
                    }
                    AccessKind::LibraryCall => {
                        // The bytes a library call touched for its caller:
                        // a plain read or write of them all.
                        let extra = words.next().copied().unwrap_or_default();
                        let write = (extra >> 32) != 0;
                        Access {
                            site,
                            kind: if write {
                                AccessKind::Store
                            } else {
                                AccessKind::Load
                            },
                            width: 0,
                            addr: operand,
                            len: extra as u32,
                            src: 0,
                        }
                    }
                    kind => Access {
                        site,
                        kind,
                        width: code.width,
                        addr: code.address(operand),
                        len: u32::from(code.width),
                        src: 0,
                    },
                });
            }
        })
    }
}

/// Whether an access matters to an analysis as a scheduling point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// It stays a scheduling point.
    Keep,
    /// It need not be one: when an analysis says so, the access is neither
    /// an event of the trace nor a place where another thread may run (an
    /// analysis that instruments every plain access but cares about a few
    /// addresses).
    Ignore,
}

/// Something a thread did, as analyses hear of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Happening<'a> {
    /// The thread was created (the main thread: the execution started).
    Started,
    /// Its entry function returned (the main thread's: the execution ends).
    Ended,
    /// It created thread `child`.
    Spawned {
        /// The new thread.
        child: ThreadId,
    },
    /// It reached the instrumented instruction at this site (an access, a
    /// wait or a notify) and the instruction is a scheduling point.
    Reached(SiteId),
    /// It is about to execute the call instruction at this site (modules
    /// loaded with `log_calls`).
    Call(SiteId),
    /// The call at this site returned.
    Returned(SiteId),
    /// It entered an atomic section (`weft.atomic_begin`, or a
    /// `__VERIFIER_atomic_` function), outside any other.
    AtomicBegin,
    /// It left its outermost atomic section.
    AtomicEnd,
    /// It began to sleep.
    SleepBegin,
    /// Its sleep ended.
    SleepEnd,
    /// It began to wait on a futex (a lock, condition variable, join, ...).
    BlockBegin,
    /// It was woken, or its wait timed out.
    BlockEnd,
    /// It (the main thread, in `pthread_exit`) saw thread `exited` end:
    /// whatever that thread did happens before what it does next.
    Outlived {
        /// The thread that ended.
        exited: ThreadId,
    },
    /// Its notify on `addr` woke `woken`.
    Woke {
        /// The woken thread.
        woken: ThreadId,
        /// The futex address.
        addr: u32,
    },
    /// It called `reach_error()` (or the older `__VERIFIER_error()`),
    /// which does nothing unless an analysis ends the execution there.
    ReachedError,
    /// It called `abort()`: unless an analysis ends the execution there,
    /// the C library aborts it as a trap.
    Aborted,
    /// It sent signal `sig` (to a thread or to the process).
    SignalSent {
        /// The signal.
        sig: u32,
    },
    /// Signal `sig` was delivered to it (what the sender did before the
    /// send happens before what the thread does after).
    SignalDelivered {
        /// The signal.
        sig: u32,
    },
    /// It performed an SDK event (`implicit`: one an analysis asked for
    /// through [`Analysis::start_event`]).
    Event {
        /// The event's name.
        name: &'a str,
        /// Whether the guest did not fire it itself.
        implicit: bool,
    },
}

/// What a thread is doing, as analyses see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Runs or can run (yielded threads too).
    Running,
    /// Waits on a futex or sleeps.
    Blocked,
    /// Held by an analysis.
    Held,
    /// Its entry function returned.
    Exited,
}

/// What an analysis recorded in one execution; read it back with
/// [`Reports::get`].
pub type Report = Arc<dyn Any + Send + Sync>;

/// The reports of an execution's analyses.
#[derive(Clone, Default)]
pub struct Reports(Vec<Report>);

impl Reports {
    pub(crate) fn new(reports: Vec<Report>) -> Self {
        Reports(reports)
    }

    /// The report of type `T`, if an analysis made one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.iter().find_map(|r| r.downcast_ref::<T>())
    }
}

impl fmt::Debug for Reports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Reports({} reports)", self.0.len())
    }
}

/// What an analysis may read of the running execution.
pub struct ExecView<'a> {
    pub(super) state: &'a ExecState,
}

impl ExecView<'_> {
    /// The module's site table: what each logged site is.
    pub fn sites(&self) -> &SiteTable {
        &self.state.sites
    }

    /// The step the running thread's current operation is recorded as (an
    /// index in the trace, counting dropped events).
    pub fn step(&self) -> u64 {
        self.state.trace.len()
    }

    /// How many threads the execution created, the main thread included.
    pub fn thread_count(&self) -> usize {
        self.state.threads.len()
    }

    /// The name a thread has in reports and schedules: its SDK name,
    /// `main` for the first thread, else `T<id>`.
    pub fn thread_label(&self, id: ThreadId) -> String {
        self.state.thread_label(id)
    }

    /// What thread `id` is doing.
    pub fn run_state(&self, id: ThreadId) -> RunState {
        match self.state.threads[id as usize].state() {
            ThreadState::Waiting { .. } | ThreadState::Sleeping { .. } | ThreadState::Outliving => {
                RunState::Blocked
            }
            ThreadState::Held => RunState::Held,
            ThreadState::Exited => RunState::Exited,
            ThreadState::Runnable | ThreadState::Yielded => RunState::Running,
        }
    }

    /// The address thread `id` waits on, if it waits (on a lock, a
    /// condition variable, a join, ...).
    pub fn waits_on(&self, id: ThreadId) -> Option<u32> {
        match self.state.threads.get(id as usize)?.state() {
            ThreadState::Waiting { addr, .. } => Some(addr),
            _ => None,
        }
    }

    /// The value of `width` bytes (at most 8, little-endian) at `addr` of
    /// the shared memory; 0 out of bounds or without one.
    pub fn read(&self, addr: u32, width: u8) -> u64 {
        self.state
            .memory
            .as_deref()
            .map_or(0, |m| super::memory_access::shared_value(m, addr, width))
    }
}

/// What an analysis may read and do during a hook.
pub struct Cx<'a> {
    pub(super) state: &'a mut ExecState,
}

impl Cx<'_> {
    /// Read access to the execution.
    pub fn view(&self) -> ExecView<'_> {
        ExecView { state: self.state }
    }

    /// Ends the execution with `outcome` (unless it already ended).
    pub fn finish(&mut self, outcome: Outcome) {
        self.state.finish(outcome);
    }

    /// A nondeterministic value in `0..bound` (any value for 0) from the
    /// scheduler, recorded for replay; `None` when a replayed schedule ran
    /// out of values (the execution then ended).
    pub fn choose_value(&mut self, bound: u64) -> Option<u64> {
        self.state.choose_value(bound)
    }

    /// Something [`Analysis::may_run`] or [`Analysis::annotate`] reads
    /// changed: the runtime asks again before the next decision.
    pub fn views_changed(&mut self) {
        self.state.views_changed();
    }
}
