//! The state of one execution that every host import shares: the thread
//! table, the virtual clock, the recorded events and decisions, and the
//! scheduling step that asks the [`Scheduler`] who runs next.

use super::analysis::{Access, Analysis, Cx, ExecView, Happening, Interest, Logged};
use super::looping::{CompleteStates, CycleWatch, LoopWatch};
use super::outcome::{BlockedThread, Cut, LoopingThread, Outcome, Unenumerated, Unseen};
use super::point_buffer::{MAX_BUDGET, PointBuffer};
use super::shared_memory::GuestMemory;
use super::step_watch::StepWatch;
use super::thread::{Thread, ThreadState};
use super::{Limits, Preemption, STEP_NS, Sleeps};
use crate::instrument::{AccessKind, SiteId, SiteTable};
use crate::sched::{Fair, NextOp, Notice, Scheduler, ThreadView};
use crate::trace::{Event, EventKind, ThreadId, TraceRecorder};
use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::cell::{RefCell, RefMut};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

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
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bit `fd` is set once the guest closed stdin (0), stdout (1) or
    /// stderr (2).
    pub closed_stdio: u8,
    /// Generator behind `random_get`.
    pub random: Pcg64Mcg,
    /// Labels of SDK events, indexed by [`EventKind::Label`].
    pub labels: Vec<String>,
    pub memory_limit_hit: bool,
    /// The first thing the execution depended on that no schedule decides.
    pub unenumerated: Option<Unenumerated>,
    /// Whether a thread entered an atomic section.
    pub atomic_sections: bool,
    pub thread_limit_hit: bool,
    pub started: Instant,
    /// When the run this execution belongs to must end.
    pub stop_at: Option<Instant>,
    /// The step at or after which the time limit is checked next.
    next_time_check: u64,
    /// The last step the scheduler may take: the step limit, then, once the
    /// execution reached it, the step limit again under a fair schedule.
    step_bound: u64,
    /// The step at which the execution reached the step limit (or a
    /// thread its compute budget) and went on under a fair schedule.
    pub fair_from: Option<u64>,
    /// The fingerprints of its states (see [`super::looping`]).
    loop_watch: LoopWatch,
    /// Whether fingerprints hold every thread's frames (see
    /// [`CompleteStates`]).
    pub complete_states: CompleteStates,
    /// Under [`CompleteStates::On`], the complete states seen.
    cycle_watch: CycleWatch,
    /// The decisions made before the execution went on under a fair
    /// schedule.
    pub decisions_when_fair: usize,
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
            trace: TraceRecorder::default(),
            decisions: Vec::with_capacity(256),
            preemptions: Vec::new(),
            values: Vec::new(),
            clock_ns: 0,
            next_ticket: 0,
            spawn_queue: Vec::new(),
            end: None,
            parked: false,
            stdout: Vec::new(),
            stderr: Vec::new(),
            closed_stdio: 0,
            random: Pcg64Mcg::seed_from_u64(random_seed),
            labels: Vec::new(),
            memory_limit_hit: false,
            unenumerated: None,
            thread_limit_hit: false,
            started: Instant::now(),
            stop_at: None,
            next_time_check: MAX_BUDGET,
            step_bound: limits.max_steps,
            fair_from: None,
            loop_watch: LoopWatch::new(limits.max_steps),
            complete_states: CompleteStates::Off,
            cycle_watch: CycleWatch::default(),
            decisions_when_fair: 0,
            host_reads: 0,
            committed_run: None,
            analyses: Vec::new(),
            every_point: follows_steps,
            step_watch: StepWatch::new(follows_steps),
            sleeps: Sleeps::Any,
            next_wake: None,
            memory: None,
            enabled: Vec::with_capacity(8),
            enabled_stale: true,
            log_bitmap: None,
            log_from_start: false,
        }
    }

    /// Installs the analyses of this execution (before any thread exists).
    pub fn install(&mut self, analyses: Vec<Box<dyn Analysis>>) {
        self.every_point |= analyses.iter().any(|a| a.needs_every_point());
        self.analyses = analyses;
    }

    /// Runs `hook` on every analysis, in order.
    #[inline]
    fn each_analysis(&mut self, mut hook: impl FnMut(&mut dyn Analysis, &mut Cx<'_>)) {
        if self.analyses.is_empty() {
            return;
        }
        let mut analyses = std::mem::take(&mut self.analyses);
        let mut cx = Cx { state: self };
        for analysis in &mut analyses {
            hook(analysis.as_mut(), &mut cx);
        }
        self.analyses = analyses;
    }

    /// The first answer of `query` over the analyses, in order.
    fn ask_analyses<R>(
        &self,
        query: impl Fn(&dyn Analysis, &ExecView<'_>) -> Option<R>,
    ) -> Option<R> {
        let view = ExecView { state: self };
        self.analyses.iter().find_map(|a| query(a.as_ref(), &view))
    }

    /// Runs `f` on the installed analysis of type `T`, if there is one.
    pub fn with_analysis<T: Analysis, R>(
        &mut self,
        f: impl FnOnce(&mut T, &mut Cx<'_>) -> R,
    ) -> Option<R> {
        let index = self
            .analyses
            .iter_mut()
            .position(|a| (a.as_mut() as &mut dyn std::any::Any).is::<T>())?;
        let mut analyses = std::mem::take(&mut self.analyses);
        let analysis = (analyses[index].as_mut() as &mut dyn std::any::Any)
            .downcast_mut::<T>()
            .expect("the position found a `T`");
        let result = f(analysis, &mut Cx { state: self });
        self.analyses = analyses;
        Some(result)
    }

    /// Tells the analyses that `me` did `what`.
    #[inline]
    pub fn happened(&mut self, me: ThreadId, what: Happening<'_>) {
        self.drain_log(me);
        self.each_analysis(|a, cx| a.happened(cx, me, &what));
    }

    /// Tells the analyses that `me` stands at a scheduling point that is
    /// not an access of its own.
    #[inline]
    pub fn point_reached(&mut self, me: ThreadId) {
        self.drain_log(me);
        self.each_analysis(|a, cx| a.point(cx, me));
    }

    /// Tells the analyses that `me` is about to make `access`; whether it
    /// stays a scheduling point.
    #[inline]
    pub fn access(&mut self, me: ThreadId, access: &Access) -> Interest {
        self.drain_log(me);
        let mut interest = Interest::Keep;
        self.each_analysis(|a, cx| {
            if a.access(cx, me, access) == Interest::Ignore {
                interest = Interest::Ignore;
            }
        });
        interest
    }

    /// Asks the analyses whether `me` must be held before performing SDK
    /// event `event`.
    pub fn holds_before_event(&mut self, me: ThreadId, event: &str) -> bool {
        let mut hold = false;
        self.each_analysis(|a, cx| hold |= a.before_event(cx, me, event));
        hold
    }

    /// The event a thread performs when it first names itself, if an
    /// analysis wants one.
    pub fn start_event(&self) -> Option<&'static str> {
        self.analyses.iter().find_map(|a| a.start_event())
    }

    /// Starts the analyses (the main thread exists).
    pub fn begin_analyses(&mut self) {
        self.each_analysis(|a, cx| a.begin(cx));
    }

    /// The analyses' reports, once the execution is over.
    pub fn finish_analyses(&mut self) -> super::analysis::Reports {
        let analyses = std::mem::take(&mut self.analyses);
        super::analysis::Reports::new(analyses.into_iter().filter_map(|a| a.finish()).collect())
    }

    /// The index of `text` in the label table, added if new.
    pub fn label(&mut self, text: &str) -> u32 {
        match self.labels.iter().position(|l| l == text) {
            Some(i) => i as u32,
            None => {
                self.labels.push(text.to_string());
                self.labels.len() as u32 - 1
            }
        }
    }

    /// Records an event of thread `me` named `text` (with `addr`).
    pub fn record_label(&mut self, me: ThreadId, text: &str, addr: u32) {
        let label = self.label(text);
        self.record(me, EventKind::Label { label }, addr, None);
    }

    /// Adds a thread and tells the scheduler.
    pub fn add_thread(&mut self) -> ThreadId {
        let id = self.threads.len() as ThreadId;
        self.threads.push(Thread::new());
        self.live.push(id);
        self.enabled_changed();
        self.scheduler.observe(Notice::ThreadCreated(id));
        self.happened(id, Happening::Started);
        id
    }

    /// Tells every thread the new size of the shared memory the guest sees
    /// (accesses past it trap).
    pub fn memory_resized(&self, visible_bytes: usize) {
        for points in self.threads.iter().filter_map(|t| t.points) {
            points.set_visible_size(visible_bytes);
        }
    }

    /// Records the scheduling points thread `me` passed inside wasm on its
    /// budget (each a step), and takes the rest of the budget back.
    pub fn drain_points(&mut self, me: ThreadId) {
        self.drain_log(me);
        let Some(buffer) = self.threads[me as usize].points else {
            return;
        };
        let committed = self.committed_run.take_if(|&mut thread| thread == me);
        let mut passed = 0;
        buffer.drain(|site, addr| {
            self.step_passed();
            passed += 1;
            match self.sites.get(site).copied() {
                Some(info) => self.push_event(
                    me,
                    EventKind::Access(info.kind),
                    info.address(addr as i32),
                    Some(site),
                ),
                None => self.finish(Outcome::HostError(format!(
                    "instrumentation error: unknown site {site}"
                ))),
            }
        });
        if committed.is_some() {
            // Each point passed was a decision for `me`.
            self.decisions
                .extend(std::iter::repeat_n(me, passed as usize));
            self.scheduler.observe(Notice::KeepsPassed(passed));
        }
    }

    /// Tells the analyses the accesses thread `me` logged since its last
    /// hook (modules that log their accesses), in order. Stops early if an
    /// analysis ends the execution.
    #[inline]
    pub fn drain_log(&mut self, me: ThreadId) {
        if self.log_bitmap.is_none() {
            return;
        }
        let Some(buffer) = self.threads.get(me as usize).and_then(|t| t.points) else {
            return;
        };
        // Most hooks find nothing new: a point's several hooks drain once.
        if buffer.logged_since_drain() {
            self.drain_logged(me, buffer);
        }
    }

    /// [`ExecState::drain_log`] of a log that holds words.
    fn drain_logged(&mut self, me: ThreadId, buffer: PointBuffer) {
        buffer.drain_log(|older, newer| self.tell_logged(me, [older, newer]));
    }

    /// Tells the analyses the accesses logged as `parts` (see [`Logged`])
    /// by thread `me`.
    fn tell_logged(&mut self, me: ThreadId, parts: [&[u64]; 2]) {
        let sites = self.sites.clone();
        let log = Logged {
            parts,
            sites: &sites,
        };
        self.each_analysis(|a, cx| a.logged(cx, me, &log));
    }

    /// Tells the analyses what the call of a C library function at `site`
    /// by thread `me`, with arguments `args` and `result`, read and wrote
    /// of the caller's memory (see [`crate::library::caller_memory`]), as
    /// accesses of the caller logged at the call, after the accesses the
    /// thread logged before it.
    pub fn library_accessed(&mut self, me: ThreadId, site: SiteId, args: [u32; 4], result: u32) {
        if self.log_bitmap.is_none() {
            return;
        }
        self.drain_log(me);
        if self.end.is_some() {
            return;
        }
        let Some(touch) = self.sites.get(site).and_then(|s| s.touch) else {
            self.finish(Outcome::HostError(format!(
                "instrumentation error: site {site} is no library call"
            )));
            return;
        };
        let Some(memory) = self.memory.clone() else {
            return;
        };
        let words: Vec<u64> = crate::library::caller_memory::ranges(touch, args, result, &*memory)
            .iter()
            .flat_map(|range| Logged::library_words(site, range))
            .collect();
        if !words.is_empty() {
            self.tell_logged(me, [&words, &[]]);
        }
    }

    /// Records an event of thread `me` (after the points it passed on its
    /// budget).
    pub fn record(&mut self, me: ThreadId, kind: EventKind, addr: u32, site: Option<SiteId>) {
        self.drain_points(me);
        self.push_event(me, kind, addr, site);
        self.threads[me as usize].next = None;
    }

    /// Notes the operation `me` stands at (after its [`ExecState::record`]),
    /// for the scheduler's view.
    pub fn stand_at(&mut self, me: ThreadId, next: NextOp) {
        self.threads[me as usize].next = Some(next);
    }

    fn push_event(&mut self, me: ThreadId, kind: EventKind, addr: u32, site: Option<SiteId>) {
        let thread = &mut self.threads[me as usize];
        if site.is_some() {
            thread.last_site = site;
        }
        let spin = matches!(
            kind,
            EventKind::Slice
                | EventKind::Access(
                    AccessKind::AtomicLoad
                        | AccessKind::AtomicRmw
                        | AccessKind::AtomicXchg
                        | AccessKind::AtomicCmpxchg
                )
        );
        if spin {
            thread.spins = thread.spins.saturating_add(1);
            thread.spin_changes |= matches!(
                kind,
                EventKind::Slice | EventKind::Access(AccessKind::AtomicRmw)
            );
            self.enabled_stale |= thread.spins == SPIN_LOADS;
        } else {
            self.enabled_stale |= thread.spins >= SPIN_LOADS;
            thread.spins = 0;
            thread.spin_changes = false;
        }
        self.trace.push(Event {
            thread: me,
            kind,
            addr,
            site,
        });
    }

    /// A nondeterministic value for the guest, recorded for replay; `None`
    /// when the execution ended (a replayed schedule ran out of values).
    pub fn choose_value(&mut self, bound: u64) -> Option<u64> {
        match self.scheduler.choose_value(bound, self.step) {
            Ok(value) => {
                self.values.push(value);
                Some(value)
            }
            Err(e) => {
                self.finish(Outcome::Diverged(e));
                None
            }
        }
    }

    /// Notes that the execution depended on `what`, which no schedule
    /// decides (the first such thing is kept).
    pub fn depended_on(&mut self, what: Unenumerated) {
        self.unenumerated.get_or_insert(what);
    }

    /// The thread limit refused to create a thread.
    pub fn thread_refused(&mut self) {
        self.thread_limit_hit = true;
        let threads = self.limits.max_threads;
        self.depended_on(Unenumerated::ThreadLimit { threads });
    }

    /// The memory limit refused to grow the guest's memory.
    pub fn memory_refused(&mut self) {
        self.memory_limit_hit = true;
        let bytes = self.limits.max_memory_bytes;
        self.depended_on(Unenumerated::MemoryLimit { bytes });
    }

    /// The running thread touched state of the whole execution that no
    /// memory access shows (virtual time, the random generator, the size of
    /// memory): schedulers that follow steps learn it at the step's end.
    pub fn touched_global_state(&mut self) {
        self.step_watch.touched_global();
    }

    /// The running thread read or grew the size of memory. Inside a
    /// library step that is the allocator's own business (a program's
    /// blocks do not move, and no program sees the size through it), so
    /// it orders nothing; anywhere else, see
    /// [`ExecState::touched_global_state`].
    pub fn touched_memory_size(&mut self) {
        if self.threads[self.current as usize].library_depth == 0 {
            self.step_watch.touched_global();
        }
    }

    /// A limit was reached (`cut` says which). The first time, the
    /// execution goes on under a fair schedule for as long again: an unfair
    /// strategy may have starved the thread everyone waits for (a spin
    /// lock's holder, say). The second time it ends, as a livelock if it is
    /// in a state it was in during the fair part, else as inconclusive.
    fn limit_reached(&mut self, me: ThreadId, cut: Cut) {
        if self.fair_from.is_some() {
            let outcome = self.limit_outcome(me, cut);
            self.finish(outcome);
        } else {
            self.go_fair();
        }
    }

    /// Goes on under a fair schedule, for [`super::FAIR_STEPS`] times the
    /// step limit at most.
    fn go_fair(&mut self) {
        let from = self.step.saturating_sub(1);
        self.fair_from = Some(from);
        self.decisions_when_fair = self.decisions.len();
        self.loop_watch.restart(from);
        self.step_bound =
            from.saturating_add(self.limits.max_steps.saturating_mul(super::FAIR_STEPS));
        for thread in &mut self.threads {
            thread.slices = 0;
        }
        self.scheduler.go_fair();
    }

    /// How an execution that reached a limit (`cut`) under a fair schedule
    /// ends: as a livelock if it is back in a state it was in during the
    /// fair part (a whole step limit or compute budget, under a fair
    /// schedule), else as inconclusive.
    pub fn limit_outcome(&self, me: ThreadId, cut: Cut) -> Outcome {
        // Fingerprints need the shared memory: without it the watch has
        // none, and nothing counts as a loop. Complete states count as a
        // loop only where they came back (see `watch_for_loops`).
        let repeated = self.complete_states == CompleteStates::Off
            && self.loop_watch.repeated(self.fingerprint().as_ref());
        match self.fair_from {
            Some(fair_from) if repeated => self.livelock(me, fair_from),
            _ => Outcome::Inconclusive(cut),
        }
    }

    /// A step passed: under timed sleeps it took [`STEP_NS`] of virtual
    /// time, and a sleeper or timed waiter left out may now be due.
    fn step_passed(&mut self) {
        self.step += 1;
        if self.sleeps == Sleeps::Timed {
            self.clock_ns += STEP_NS;
            if self.next_wake.is_some_and(|wake| wake <= self.clock_ns) {
                self.enabled_stale = true;
            }
        }
    }

    /// The bytes of shared memory the guest can see (0 without one).
    fn visible_bytes(&self) -> u64 {
        self.memory.as_deref().map_or(0, |m| m.visible_bytes()) as u64
    }

    /// On the state reader, once the decisions of the execution it checks
    /// are made: from now on round robin runs the execution, a fair
    /// schedule, for a step limit and a compute budget more, every point
    /// calls the host, and complete states are compared at each (see
    /// [`super::looping`]).
    fn begin_complete_states(&mut self) {
        if let CompleteStates::After(decisions) = self.complete_states
            && self.decisions.len() >= decisions
        {
            self.complete_states = CompleteStates::On;
            self.every_point = true;
            // The running thread's frames were read when it last parked:
            // it ran on since.
            self.threads[self.current as usize].frames = None;
            self.fair_from.get_or_insert(self.step);
            self.step_bound = self.step.saturating_add(self.limits.max_steps);
            for thread in &mut self.threads {
                thread.slices = 0;
            }
        }
    }

    /// Why a run on the state reader that ended inconclusive showed no
    /// loop: it compared no complete state at all, or none came back.
    pub fn unseen(&self) -> Unseen {
        if self.cycle_watch.compared() == 0 {
            Unseen::InSlices
        } else {
            Unseen::Changed
        }
    }

    /// The livelock of an execution that went on under a fair schedule
    /// from `fair_from` (`me` runs).
    fn livelock(&self, me: ThreadId, fair_from: u64) -> Outcome {
        Outcome::Livelock {
            steps: self.step.saturating_sub(1),
            fair_from,
            looping: self.looping_threads(me),
        }
    }

    /// Under a fair schedule, takes a fingerprint of the state (see
    /// [`super::looping`]): back where it was a span ago, no thread makes
    /// progress, and the execution ends as a livelock (then this returns
    /// true).
    fn watch_for_loops(&mut self, me: ThreadId) -> bool {
        let Some(fair_from) = self.fair_from else {
            return false;
        };
        let looped = match self.complete_states {
            CompleteStates::Off => self.fingerprint().is_some_and(|fingerprint| {
                self.loop_watch
                    .keep(self.step, self.visible_bytes(), fingerprint)
            }),
            CompleteStates::After(_) => false,
            CompleteStates::On => {
                let (Some(threads), Some(memory)) = (self.threads_digest(), self.memory.as_deref())
                else {
                    return false;
                };
                self.cycle_watch.came_back(threads, || {
                    let mut hasher = blake3::Hasher::new();
                    memory.hash_into(&mut hasher);
                    hasher.finalize()
                })
            }
        };
        if !looped {
            return false;
        }
        let outcome = self.livelock(me, fair_from);
        self.finish(outcome);
        true
    }

    /// Thread `me` ended a time slice at an epoch check (see
    /// [`super::frames::at_epoch_check`]), as the executor ends one where
    /// fuel runs out; returns whether it must park.
    pub fn end_slice(&mut self, me: ThreadId) -> bool {
        self.point_reached(me);
        self.record(me, EventKind::Slice, 0, None);
        self.slice_used(me);
        self.schedule(me)
    }

    /// Thread `me` used up a time slice of fuel: past its compute budget
    /// ([`super::Limits::max_fuel`]), a limit is reached. Under a fair
    /// schedule every slice is fingerprinted: a loop with no scheduling
    /// point runs in slices.
    pub fn slice_used(&mut self, me: ThreadId) {
        self.begin_complete_states();
        if self.fair_from.is_some()
            && self.loop_watch.slice_due(self.visible_bytes())
            && self.watch_for_loops(me)
        {
            return;
        }
        let thread = &mut self.threads[me as usize];
        thread.slices += 1;
        if thread.slices.saturating_mul(super::SLICE_FUEL) >= self.limits.max_fuel {
            let fuel = self.limits.max_fuel;
            self.limit_reached(me, Cut::Fuel { thread: me, fuel });
        }
    }

    /// A fingerprint of the execution's state, as far as the host sees it
    /// without frames: the shared memory, where each thread stands and
    /// what it waits for, and how often the program read the host's state.
    /// `None` when the memory is not shared, so the host cannot read it
    /// between steps.
    fn fingerprint(&self) -> Option<blake3::Hash> {
        let mut hasher = blake3::Hasher::new();
        self.memory.as_ref()?.hash_into(&mut hasher);
        self.places_into(&mut hasher);
        Some(hasher.finalize())
    }

    /// The complete state but memory (see [`CompleteStates::On`]): the
    /// thread that runs, every live thread's frames, where each stands and
    /// what it waits for. `None` when a thread's frames are out of sight.
    fn threads_digest(&self) -> Option<blake3::Hash> {
        let mut hasher = blake3::Hasher::new();
        // Round robin goes on from the thread that runs.
        hasher.update(&self.current.to_le_bytes());
        for thread in &self.threads {
            if thread.state != ThreadState::Exited {
                hasher.update(thread.frames?.as_bytes());
            }
        }
        self.places_into(&mut hasher);
        Some(hasher.finalize())
    }

    /// Feeds `hasher` where each thread stands and what it waits for
    /// (deadlines relative to the virtual clock), and how often the program
    /// read the host's state.
    fn places_into(&self, hasher: &mut blake3::Hasher) {
        let now = self.clock_ns;
        for thread in &self.threads {
            let (kind, addr, remaining, site) = match thread.state {
                ThreadState::Runnable => (0, 0, 0, None),
                ThreadState::Yielded => (1, 0, 0, None),
                ThreadState::Sleeping { until } => (2, 0, until.saturating_sub(now), None),
                ThreadState::Waiting {
                    addr,
                    deadline,
                    site,
                    ..
                } => (
                    3,
                    addr,
                    deadline.map_or(u64::MAX, |d| d.saturating_sub(now)),
                    site,
                ),
                ThreadState::Held => (4, 0, 0, None),
                ThreadState::Outliving => (5, 0, 0, None),
                ThreadState::Exited => (6, 0, 0, None),
            };
            hasher.update(&[kind]);
            hasher.update(&addr.to_le_bytes());
            hasher.update(&remaining.to_le_bytes());
            hasher.update(&site.map_or(u32::MAX, |s| s).to_le_bytes());
            hasher.update(&thread.atomic_depth.to_le_bytes());
            hasher.update(&thread.library_depth.to_le_bytes());
            if let Some(next) = thread.next {
                hasher.update(&next.site.to_le_bytes());
                hasher.update(&next.addr.to_le_bytes());
                hasher.update(&next.len.to_le_bytes());
            }
        }
        hasher.update(&self.host_reads.to_le_bytes());
        hasher.update(&(self.values.len() as u64).to_le_bytes());
    }

    /// The threads that can still run, and where they stand (`me` runs).
    fn looping_threads(&self, me: ThreadId) -> Vec<LoopingThread> {
        let mut looping: Vec<LoopingThread> = self
            .threads
            .iter()
            .enumerate()
            .filter(|(_, thread)| {
                !matches!(
                    thread.state,
                    ThreadState::Exited | ThreadState::Waiting { deadline: None, .. }
                )
            })
            .map(|(id, thread)| {
                let (site, place) = match (thread.state, thread.next) {
                    (_, Some(next)) => (Some(next.site), "an access"),
                    (ThreadState::Sleeping { .. }, None) => (None, "a sleep"),
                    (ThreadState::Yielded, None) => (None, "a yield"),
                    (ThreadState::Waiting { .. }, None) => (None, "a wait with a timeout"),
                    (_, None) => (thread.last_site, "time slices, with no access in them"),
                };
                LoopingThread {
                    thread: id as ThreadId,
                    place: place.to_string(),
                    site,
                    at_access: thread.next.is_some(),
                }
            })
            .collect();
        looping.sort_by_key(|t| (t.thread != me, t.thread));
        looping
    }

    /// Ends the execution unless it already ended.
    pub fn finish(&mut self, outcome: Outcome) {
        if self.end.is_none() {
            self.end = Some(outcome);
        }
    }

    /// Each analysis in turn says what the end means
    /// ([`Analysis::reinterpret`]). Then, when the execution passed: the
    /// first failure an analysis finds in it becomes its outcome. When it
    /// failed or was cut short by a limit: a failure an analysis found
    /// before that end does.
    pub fn judge(&mut self) {
        let Some(end) = self.end.take() else {
            return;
        };
        let end = self.analyses.iter().fold(end, |end, a| a.reinterpret(end));
        self.end = Some(end.clone());
        let passed = end == Outcome::Exited(0);
        let ended_early = end.failure().is_some() || end.cut().is_some();
        if self.analyses.is_empty() || !(passed || ended_early) {
            return;
        }
        let mut analyses = std::mem::take(&mut self.analyses);
        let view = ExecView { state: self };
        let verdict = analyses.iter_mut().find_map(|a| {
            if passed {
                a.verdict(&view)
            } else {
                a.before_end(&view, &end)
            }
        });
        self.analyses = analyses;
        if let Some(outcome) = verdict {
            self.end = Some(outcome);
        }
    }

    /// A scheduling point of thread `me`: picks who runs next and returns
    /// whether `me` must park (another thread runs, or the execution ended).
    pub fn schedule(&mut self, me: ThreadId) -> bool {
        self.drain_points(me);
        if self.end.is_some() {
            return true;
        }
        if self.step_watch.on {
            let end = self.step_watch.end(self.memory.as_deref());
            self.scheduler.observe(Notice::StepEnded(end));
        }
        self.step_passed();
        self.begin_complete_states();
        if self.step > self.step_bound {
            self.limit_reached(
                me,
                Cut::Steps {
                    thread: me,
                    steps: self.step - 1,
                    fair_from: self.fair_from.unwrap_or(self.step - 1),
                },
            );
            if self.end.is_some() {
                return true;
            }
        }
        if self.fair_from.is_some() && self.loop_watch.due(self.step) && self.watch_for_loops(me) {
            return true;
        }
        if self.step >= self.next_time_check {
            self.next_time_check = self.step + MAX_BUDGET;
            if self.stop_at.is_some_and(|at| Instant::now() >= at) {
                self.finish(Outcome::Stopped);
                return true;
            }
            if let Some(limit) = self.limits.time_limit
                && self.started.elapsed() > limit
            {
                self.finish(Outcome::Inconclusive(Cut::Time { thread: me }));
                return true;
            }
        }
        if self.enabled_stale {
            self.refresh_enabled();
        }
        let me_enabled = self.enabled.iter().any(|t| t.id == me);
        if self.enabled.is_empty() {
            let blocked = self.blocked_threads();
            let outcome = self
                .ask_analyses(|a, view| a.deadlock(view, &blocked))
                .unwrap_or(Outcome::Deadlock { blocked });
            self.finish(outcome);
            return true;
        }
        if let Some(view) = self.enabled.iter_mut().find(|t| t.id == me) {
            view.next = self.threads[me as usize].next;
        }
        let current = me_enabled.then_some(me);
        let atomic = me_enabled && self.threads[me as usize].goes_on_atomically();
        let chosen = if self.enabled.len() == 1 {
            // No choice to make: the scheduler is asked only at decisions.
            Ok(self.enabled[0].id)
        } else if atomic {
            // Inside an atomic section the thread keeps running.
            Ok(me)
        } else {
            self.scheduler.choose(&self.enabled, current, self.step)
        };
        let chosen = match chosen {
            Ok(chosen) if self.enabled.iter().any(|t| t.id == chosen) => chosen,
            Ok(chosen) => {
                self.finish(Outcome::HostError(format!(
                    "the scheduler chose thread {chosen}, which cannot run"
                )));
                return true;
            }
            Err(e) => {
                self.finish(Outcome::Diverged(e));
                return true;
            }
        };
        if self.enabled.len() > 1 && !atomic {
            self.decisions.push(chosen);
            if crate::sched::preempts(&self.enabled, current, chosen) {
                self.preemptions.push(Preemption {
                    decision: self.decisions.len() - 1,
                    step: self.trace.len(),
                });
            }
        }
        self.resume(chosen);
        if self.step_watch.on {
            let thread = &mut self.threads[chosen as usize];
            let (op, woken_by) = (thread.next, thread.woken_by.take());
            let mut step = self
                .step_watch
                .start(chosen, op, woken_by, self.memory.as_deref());
            step.continues = atomic;
            self.scheduler.observe(Notice::StepStarted(step));
        }
        self.current = chosen;
        if chosen == me {
            self.grant_budget(me, atomic);
        }
        chosen != me
    }

    /// Lets `me`, which runs on, pass its next points inside wasm while
    /// nothing but the trace needs each point: all of them while no other
    /// thread can run, else as many decisions as the scheduler commits to
    /// keeping `me` (while `me` does not turn into a spinning thread, which
    /// would change what the scheduler sees). Inside an atomic section
    /// (`atomic`) the points are not decisions.
    fn grant_budget(&mut self, me: ThreadId, atomic: bool) {
        let Some(buffer) = self.threads[me as usize].points else {
            return;
        };
        if self.every_point {
            return;
        }
        // A sleeper left out until its time comes must be seen then.
        let until_wake = self.next_wake.map_or(u64::MAX, |wake| {
            wake.saturating_sub(self.clock_ns) / STEP_NS
        });
        let budget = MAX_BUDGET
            .min(self.step_bound.saturating_sub(self.step))
            .min(self.next_time_check.saturating_sub(self.step))
            .min(until_wake);
        if self.enabled.len() == 1 {
            buffer.grant(budget);
            return;
        }
        if atomic {
            return;
        }
        let loads = self.threads[me as usize].spins;
        let spin_room = SPIN_LOADS.saturating_sub(loads.saturating_add(1));
        let most = budget.min(spin_room as u64);
        if most == 0 {
            return;
        }
        let keeps = self
            .scheduler
            .keeps(&self.enabled, me, self.step, most)
            .min(most);
        if keeps > 0 {
            buffer.grant(keeps);
            self.committed_run = Some(me);
        }
    }

    /// Recomputes the enabled threads.
    fn refresh_enabled(&mut self) {
        let mut enabled = std::mem::take(&mut self.enabled);
        enabled.clear();
        // Under timed sleeps: the sleepers and timed waiters whose time
        // has not come.
        let mut later = Vec::new();
        let view = ExecView { state: self };
        for &id in &self.live {
            let thread = &self.threads[id as usize];
            let (yielding, wakes_at) = match thread.state {
                ThreadState::Held => {
                    if self.analyses.iter().all(|a| a.may_run(&view, id)) {
                        enabled.push(ThreadView {
                            id,
                            yielding: false,
                            polling: false,
                            wakes_at: None,
                            next: None,
                            locks_held: 0,
                        });
                    }
                    continue;
                }
                ThreadState::Runnable => (thread.spins >= SPIN_LOADS, None),
                ThreadState::Yielded => (true, None),
                // A sleeper whose time has come does work when it runs.
                ThreadState::Sleeping { until } => (until > self.clock_ns, Some(until)),
                ThreadState::Waiting {
                    deadline: Some(deadline),
                    ..
                } => (true, Some(deadline)),
                ThreadState::Outliving => {
                    // Once every other thread exited.
                    if self.live.len() > 1 {
                        continue;
                    }
                    (false, None)
                }
                ThreadState::Waiting { deadline: None, .. } | ThreadState::Exited => continue,
            };
            let polling = thread.state == ThreadState::Yielded
                || (thread.spins >= SPIN_LOADS && !thread.spin_changes);
            let mut thread_view = ThreadView {
                id,
                yielding,
                polling,
                wakes_at,
                next: thread.next,
                locks_held: 0,
            };
            for analysis in &self.analyses {
                analysis.annotate(&mut thread_view);
            }
            let not_yet = self.sleeps == Sleeps::Timed
                && matches!(
                    thread.state,
                    ThreadState::Sleeping { .. } | ThreadState::Waiting { .. }
                )
                && wakes_at.is_some_and(|wake| wake > self.clock_ns);
            if not_yet {
                later.push(thread_view);
            } else {
                enabled.push(thread_view);
            }
        }
        self.next_wake = self.let_time_pass(&mut enabled, later);
        self.enabled = enabled;
        self.enabled_stale = false;
    }

    /// Under timed sleeps, of the sleepers and timed waiters whose time has
    /// not come (`later`): while a thread of `enabled` can run, none is
    /// enabled (time passes a step at a time, spinning threads' steps too:
    /// one spinning on a lock just released must get it before a sleeper
    /// wakes); otherwise time jumps to the earliest wake-up, and those that
    /// wake then are. Returns the earliest wake-up of those left out.
    fn let_time_pass(&self, enabled: &mut Vec<ThreadView>, later: Vec<ThreadView>) -> Option<u64> {
        let earliest = later.iter().filter_map(|t| t.wakes_at).min();
        if !enabled.is_empty() {
            return earliest;
        }
        let (wake, left): (Vec<_>, Vec<_>) =
            later.into_iter().partition(|t| t.wakes_at == earliest);
        enabled.extend(wake);
        enabled.sort_by_key(|t| t.id);
        left.iter().filter_map(|t| t.wakes_at).min()
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

    /// Something an analysis's view of the threads reads has changed:
    /// the enabled threads are recomputed at the next point.
    pub fn views_changed(&mut self) {
        self.enabled_changed();
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

    /// The threads that can run may have changed: they are recomputed at the
    /// next point, and the running thread's budget is taken back (a budget
    /// granted at its last point assumed the threads that could run then;
    /// its next points may be decisions now, say after it woke a waiter).
    fn enabled_changed(&mut self) {
        self.enabled_stale = true;
        self.drain_points(self.current);
    }

    /// Makes `id` runnable as it is chosen, letting virtual time pass to
    /// its wake-up time and timing out its wait if it has one.
    fn resume(&mut self, id: ThreadId) {
        let thread = &mut self.threads[id as usize];
        match thread.state {
            ThreadState::Sleeping { until } => {
                self.clock_ns = self.clock_ns.max(until);
                self.step_watch.touched_global();
            }
            ThreadState::Waiting {
                deadline: Some(deadline),
                ..
            } => {
                self.clock_ns = self.clock_ns.max(deadline);
                self.step_watch.touched_global();
                thread.wake = Some(2);
                thread.woken_by = None;
            }
            ThreadState::Runnable => return,
            _ => {}
        }
        thread.state = ThreadState::Runnable;
        self.enabled_stale = true;
    }

    /// Puts `me` to sleep on `addr`.
    pub fn block(&mut self, me: ThreadId, addr: u32, deadline: Option<u64>, site: Option<SiteId>) {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.set_state(
            me,
            ThreadState::Waiting {
                addr,
                deadline,
                site,
                ticket,
            },
        );
    }

    /// Wakes up to `count` threads waiting on `addr`, oldest first; returns
    /// how many woke.
    pub fn notify(&mut self, me: ThreadId, addr: u32, count: u32) -> u32 {
        let mut waiters: Vec<(u64, usize)> = self
            .live
            .iter()
            .filter_map(|&i| match self.threads[i as usize].state {
                ThreadState::Waiting {
                    addr: a, ticket, ..
                } if a == addr => Some((ticket, i as usize)),
                _ => None,
            })
            .collect();
        waiters.sort_unstable();
        let woken = waiters.len().min(count as usize);
        for &(_, i) in &waiters[..woken] {
            self.set_state(i as ThreadId, ThreadState::Runnable);
            self.threads[i].wake = Some(0);
            self.threads[i].woken_by = Some(me);
            self.happened(
                me,
                Happening::Woke {
                    woken: i as ThreadId,
                    addr,
                },
            );
        }
        woken as u32
    }

    /// Every thread that waits on a futex, and where.
    pub fn blocked_threads(&self) -> Vec<BlockedThread> {
        self.live
            .iter()
            .map(|&i| (i, &self.threads[i as usize]))
            .filter_map(|(i, t)| match t.state {
                ThreadState::Waiting { addr, site, .. } => Some(BlockedThread {
                    thread: i as ThreadId,
                    addr,
                    site,
                }),
                _ => None,
            })
            .collect()
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
