//! The state of one execution that every host import shares: the thread
//! table, the virtual clock, the recorded events and decisions, and the
//! scheduling step that asks the [`Scheduler`] who runs next.

use super::analysis::{Analysis, Happening};
use super::outcome::{Outcome, Unenumerated};
use super::read_granules::ReadGranules;
use super::shared_memory::GuestMemory;
use super::step_watch::StepWatch;
use super::thread::{Thread, ThreadState};
use super::{Limits, Preemption, Sleeps};
use crate::instrument::SiteTable;
use crate::sched::{Fair, Notice, Scheduler, ThreadView};
use crate::trace::{EventKind, ThreadId, TraceRecorder};
use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::cell::{RefCell, RefMut};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

mod alarm;
mod ending;
mod events;
mod futex;
mod hooks;
mod limits;
mod signals;

pub(crate) use limits::LimitWatch;
pub(crate) use signals::{
    Action, DefaultAction, Delivery, LAST_SIGNAL, MaskChange, ThreadSignals, signal_wait_address,
};
mod step;

/// Consecutive atomic reads, read-modify-writes and time slices after which
/// a thread counts as spinning.
const SPIN_LOADS: u32 = 64;

/// Mutable state of one execution.
pub(crate) struct ExecState {
    pub sites: Arc<SiteTable>,
    pub scheduler: Fair,
    pub limits: Limits,
    pub threads: Vec<Thread>,
    /// The threads that have not exited, ascending: what a step looks at
    /// (a program that created 100,000 short-lived threads has a few).
    live: Vec<ThreadId>,
    /// The thread the executor polls next.
    pub current: ThreadId,
    /// Scheduling points so far.
    pub step: u64,
    /// Of those, the points passed inside library steps, which are no
    /// scheduling points of the point model (see [`ExecState::model_step`]).
    pub points_in_library_steps: u64,
    /// Whether the points a thread passes on its budget inside a library
    /// step are events of the trace (the exhaustive search's model, whose
    /// library model reads them, and the model of the library's internals,
    /// which has no library steps), or only counted: under
    /// [`crate::instrument::PointModel::LibraryCalls`] as sampling runs it,
    /// a library call is one event, the call.
    pub records_library_internals: bool,
    pub trace: TraceRecorder,
    /// The thread chosen at every point where more than one was enabled.
    pub decisions: Vec<ThreadId>,
    /// The preemptions (see [`crate::sched::preempts`]).
    pub preemptions: Vec<Preemption>,
    /// The guest's nondeterministic values.
    pub values: Vec<u64>,
    /// Virtual time in nanoseconds.
    pub clock_ns: u64,
    next_ticket: u64,
    /// Threads created but not yet started: (id, start argument).
    pub spawn_queue: Vec<(ThreadId, i32)>,
    /// Set when the execution must end.
    pub end: Option<Outcome>,
    /// Set by `park` so that the executor can tell a park from a time slice.
    pub parked: bool,
    /// The execution ended and the executor resumes its threads once more
    /// so that each returns from its wasm: every park fails.
    pub unwinding: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bit `fd` is set once the guest closed stdin (0), stdout (1) or
    /// stderr (2).
    pub closed_stdio: u8,
    /// Generator behind `random_get`.
    pub random: Pcg64Mcg,
    /// Labels of SDK events, indexed by [`EventKind::Label`].
    pub labels: Vec<String>,
    /// The first thing the execution depended on that no schedule decides.
    pub unenumerated: Option<Unenumerated>,
    /// Whether a thread entered an atomic section.
    pub atomic_sections: bool,
    /// Where the execution stands against its limits (see
    /// [`LimitWatch`]).
    pub limit_watch: LimitWatch,
    /// How often the guest read the clock or random bytes: state of the
    /// host that a loop may depend on.
    pub host_reads: u64,
    /// The thread whose budget stands for decisions the scheduler committed
    /// to (see [`Scheduler::keeps`]).
    committed_run: Option<ThreadId>,
    /// The analyses installed for this execution, in order (taken out
    /// while their hooks run).
    analyses: Vec<Box<dyn Analysis>>,
    /// Whether an analysis needs every scheduling point at the host (no
    /// budgets then).
    every_point: bool,
    /// The running step, for a scheduler that follows steps.
    step_watch: StepWatch,
    /// A Rust read lock's fast path that the running step began at (see
    /// [`SiteTable::read_lock_fast_paths`]).
    read_lock_step: Option<step::ReadLockStep>,
    /// How sleeps and timed waits stand to the other threads' work.
    pub sleeps: Sleeps,
    /// Under [`Sleeps::Timed`]: the earliest wake-up of a sleeper or timed
    /// waiter left out of the enabled threads (its time had not come).
    next_wake: Option<u64>,
    /// The execution's shared memory, for analyses that read values.
    pub memory: Option<Arc<GuestMemory>>,
    /// The enabled threads, cached between scheduling points.
    enabled: Vec<ThreadView>,
    /// Some thread's state changed since `enabled` was computed.
    enabled_stale: bool,
    /// When the module logs its plain accesses: the bitmap of the sites
    /// whose accesses are scheduling points in this execution (see
    /// [`crate::abi::ACCESS_LOG`]).
    pub log_bitmap: Option<Box<[u8]>>,
    /// Whether the main thread logs its plain accesses from the start
    /// ([`super::RunConfig::log_from_start`]).
    pub log_from_start: bool,
    /// The program's signals (see [`signals`]).
    signals: signals::Signals,
    /// When the program tracks its reads: the granules its executions
    /// read (see [`super::read_granules`]), which this execution's reads
    /// join, and which its state keys leave out the rest of.
    pub read_granules: Option<Arc<Mutex<ReadGranules>>>,
}

impl ExecState {
    pub fn new(sites: Arc<SiteTable>, scheduler: Fair, limits: Limits, random_seed: u64) -> Self {
        let follows_steps = scheduler.follows_steps();
        ExecState {
            sites,
            scheduler,
            limits,
            atomic_sections: false,
            threads: Vec::new(),
            live: Vec::new(),
            current: 0,
            step: 0,
            points_in_library_steps: 0,
            records_library_internals: true,
            trace: TraceRecorder::default(),
            decisions: Vec::with_capacity(256),
            preemptions: Vec::new(),
            values: Vec::new(),
            clock_ns: 0,
            next_ticket: 0,
            spawn_queue: Vec::new(),
            end: None,
            parked: false,
            unwinding: false,
            stdout: Vec::new(),
            stderr: Vec::new(),
            closed_stdio: 0,
            random: Pcg64Mcg::seed_from_u64(random_seed),
            labels: Vec::new(),
            unenumerated: None,
            limit_watch: LimitWatch::new(&limits),
            host_reads: 0,
            committed_run: None,
            analyses: Vec::new(),
            every_point: follows_steps,
            step_watch: StepWatch::new(follows_steps),
            read_lock_step: None,
            sleeps: Sleeps::Any,
            next_wake: None,
            memory: None,
            enabled: Vec::with_capacity(8),
            enabled_stale: true,
            log_bitmap: None,
            log_from_start: false,
            signals: signals::Signals::default(),
            read_granules: None,
        }
    }

    /// A stand-in for an execution that ended while the executor unwinds
    /// its `threads` threads (see [`ExecState::unwinding`]): ended, with
    /// the same thread ids, and a strategy of its own, so that nothing a
    /// thread does as it unwinds reaches the ended execution or the
    /// strategy that ran it.
    pub fn stand_in(sites: Arc<SiteTable>, threads: usize) -> Self {
        let strategy = Box::new(crate::sched::RandomScheduler::new(0));
        let mut state = ExecState::new(sites, Fair::new(strategy), Limits::default(), 0);
        for _ in 0..threads {
            state.add_thread();
        }
        state.end = Some(Outcome::Abandoned("unwound".into()));
        state.unwinding = true;
        state
    }

    /// Marks `range` of the shared memory read, when the program tracks
    /// its reads (the host read it on the guest's behalf).
    pub fn note_read(&self, range: std::ops::Range<usize>) {
        if let Some(reads) = &self.read_granules {
            reads.lock().unwrap_or_else(|e| e.into_inner()).mark(range);
        }
    }

    /// Takes in the map of read bytes of thread `tid`'s point buffer,
    /// when the program tracks its reads and the thread has one.
    pub fn take_read_map(&self, tid: ThreadId, map: Option<(u64, u64)>) {
        let (Some(reads), Some((offset, bytes))) = (&self.read_granules, map) else {
            return;
        };
        let Some(points) = self
            .threads
            .get(tid as usize)
            .and_then(|t| t.points.as_ref())
        else {
            return;
        };
        points.take_read_map(
            &mut reads.lock().unwrap_or_else(|e| e.into_inner()),
            offset as usize,
            bytes as usize,
        );
    }

    /// Adds a thread and tells the scheduler.
    pub fn add_thread(&mut self) -> ThreadId {
        let id = self.threads.len() as ThreadId;
        let mut thread = Thread::new();
        // The main thread runs the program's code from its start; another
        // thread once the library calls its routine (see
        // [`ThreadSignals::runs_own_code`]).
        thread.signals.runs_own_code = id == 0;
        self.threads.push(thread);
        self.live.push(id);
        self.enabled_changed();
        self.scheduler.observe(Notice::ThreadCreated(id));
        self.happened(id, Happening::Started);
        id
    }

    /// The name a thread has in schedules: its SDK name, `main` for the
    /// first thread, else `T<id>`.
    pub fn thread_label(&self, id: ThreadId) -> String {
        match &self.threads[id as usize].name {
            Some(name) => name.clone(),
            None if id == 0 => "main".to_string(),
            None => format!("T{id}"),
        }
    }

    /// A thread exited.
    pub fn thread_exited(&mut self, me: ThreadId) {
        self.record(me, EventKind::Exit, 0, None);
        self.set_state(me, ThreadState::Exited);
        self.happened(me, Happening::Ended);
    }

    /// Sets a thread's scheduling state.
    pub fn set_state(&mut self, id: ThreadId, state: ThreadState) {
        self.threads[id as usize].state = state;
        if state == ThreadState::Exited
            && let Ok(at) = self.live.binary_search(&id)
        {
            self.live.remove(at);
        }
        self.enabled_changed();
    }

    /// How many threads have not exited.
    pub fn live_threads(&self) -> usize {
        self.live.len()
    }

    /// Tells every thread the new size of the shared memory the guest sees
    /// (accesses past it trap).
    pub fn memory_resized(&self, visible_bytes: usize) {
        for points in self.threads.iter().filter_map(|t| t.points) {
            points.set_visible_size(visible_bytes);
        }
    }
}

/// Shared handle to the [`ExecState`] of the execution that is running,
/// held by the data of every thread's store: one per [`super::Program`], so
/// a store kept for the next execution needs no new handle.
#[derive(Clone)]
pub(crate) struct ExecHandle(Rc<RefCell<Option<ExecState>>>);

// SAFETY: wasmtime requires store data to be `Send`. Every clone of a
// program's handle lives in that `Program`: in the stores it keeps for the
// next execution, or in the thread futures of an execution, which are
// created, polled and dropped on the OS thread that runs the execution
// (wasmtime runs async calls on fibers of the polling thread). So the clones
// only ever move between OS threads together, with the `Program`, which is
// not `Sync`. The `RefCell` borrows are never held across an await or a
// call into wasm.
unsafe impl Send for ExecHandle {}

impl ExecHandle {
    /// A handle with no execution running.
    pub fn idle() -> Self {
        ExecHandle(Rc::new(RefCell::new(None)))
    }

    /// Starts an execution with `state`.
    pub fn begin(&self, state: ExecState) {
        *self.0.borrow_mut() = Some(state);
    }

    /// Borrows the running execution's state mutably.
    ///
    /// # Panics
    ///
    /// When no execution is running: guest code, hence every host import,
    /// runs only inside one.
    pub fn get(&self) -> RefMut<'_, ExecState> {
        RefMut::map(self.0.borrow_mut(), |state| {
            state.as_mut().expect("an execution is running")
        })
    }

    /// Takes the state back once the execution is over.
    pub fn end(&self) -> Option<ExecState> {
        self.0.borrow_mut().take()
    }
}

/// An execution's state with `threads` threads and no module: what the
/// scheduling, the futexes and the thread table do without wasm.
#[cfg(test)]
pub(crate) fn without_wasm(threads: usize, scheduler: Box<dyn Scheduler>) -> ExecState {
    let mut state = ExecState::new(
        Arc::new(SiteTable::default()),
        Fair::new(scheduler),
        Limits::default(),
        0,
    );
    for _ in 0..threads {
        state.add_thread();
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::RandomScheduler;

    #[test]
    fn threads_that_exit_leave_the_threads_a_step_looks_at() {
        let mut state = without_wasm(4, Box::new(RandomScheduler::new(0)));
        assert_eq!(state.live_threads(), 4);
        state.thread_exited(2);
        state.thread_exited(1);
        assert_eq!(state.live_threads(), 2);
        assert_eq!(state.live, [0, 3]);
        // Ids are not reused: a new thread gets the next one.
        assert_eq!(state.add_thread(), 4);
        assert_eq!(state.live, [0, 3, 4]);
    }
}
