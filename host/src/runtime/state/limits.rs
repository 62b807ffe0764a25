//! An execution's limits and fairness: a limit reached, going on under a
//! fair schedule, and the states compared to tell a livelock (see
//! [`crate::runtime::looping`]).

use super::ExecState;
use crate::runtime::looping::{CompleteStates, CycleWatch, LoopWatch};
use crate::runtime::outcome::{Cut, LoopingThread, Outcome, Unenumerated, Unseen};
use crate::runtime::point_buffer::MAX_BUDGET;
use crate::runtime::thread::ThreadState;
use crate::runtime::{Limits, STEP_NS, Sleeps};
use crate::trace::{EventKind, ThreadId};
use rand_core::RngCore;
use std::time::Instant;

/// Where an execution stands against its limits: when it started and must
/// stop, how far it may go, when it went on under a fair schedule, the
/// states it watches for a livelock, and the limits that refused it
/// something.
pub(crate) struct LimitWatch {
    pub started: Instant,
    /// When the run this execution belongs to must end.
    pub stop_at: Option<Instant>,
    /// The step at or after which the time limit is checked next.
    pub(super) next_time_check: u64,
    /// The last step the scheduler may take: the step limit, then, once the
    /// execution reached it, the step limit again under a fair schedule.
    pub(super) step_bound: u64,
    /// The step at which the execution reached the step limit (or a
    /// thread its compute budget) and went on under a fair schedule.
    pub fair_from: Option<u64>,
    /// The fingerprints of its states (see [`crate::runtime::looping`]).
    pub(super) loop_watch: LoopWatch,
    /// Whether fingerprints hold every thread's frames (see
    /// [`CompleteStates`]).
    pub complete_states: CompleteStates,
    /// Under [`CompleteStates::On`], the complete states seen.
    pub(super) cycle_watch: CycleWatch,
    /// The decisions made before the execution went on under a fair
    /// schedule.
    pub decisions_when_fair: usize,
    /// A memory growth or allocation was refused by the memory limit.
    pub memory_limit_hit: bool,
    /// A thread creation was refused by the thread limit.
    pub thread_limit_hit: bool,
}

impl LimitWatch {
    /// An execution that starts now under `limits`.
    pub(super) fn new(limits: &Limits) -> Self {
        LimitWatch {
            started: Instant::now(),
            stop_at: None,
            next_time_check: MAX_BUDGET,
            step_bound: limits.max_steps,
            fair_from: None,
            loop_watch: LoopWatch::new(limits.max_steps),
            complete_states: CompleteStates::Off,
            cycle_watch: CycleWatch::default(),
            decisions_when_fair: 0,
            memory_limit_hit: false,
            thread_limit_hit: false,
        }
    }
}

impl ExecState {
    /// Notes that the execution depended on `what`, which no schedule
    /// decides (the first such thing is kept).
    pub fn depended_on(&mut self, what: Unenumerated) {
        self.unenumerated.get_or_insert(what);
    }

    /// The thread limit refused to create a thread.
    pub fn thread_refused(&mut self) {
        self.limit_watch.thread_limit_hit = true;
        let threads = self.limits.max_threads;
        self.depended_on(Unenumerated::ThreadLimit { threads });
    }

    /// The memory limit refused to grow the guest's memory.
    pub fn memory_refused(&mut self) {
        self.limit_watch.memory_limit_hit = true;
        let bytes = self.limits.max_memory_bytes;
        self.depended_on(Unenumerated::MemoryLimit { bytes });
    }

    /// The running thread touched state of the whole execution that no
    /// memory access shows (virtual time, the random generator, the size of
    /// memory): schedulers that follow steps learn it at the step's end.
    pub fn touched_global_state(&mut self) {
        self.step_watch.touched_global();
    }

    /// The running thread's step moved the virtual clock or took a time
    /// from it for a sleep or a timed wait. Under timed sleeps the clock
    /// decides who can run, so the step commutes with nothing (see
    /// [`ExecState::touched_global_state`]). Under `any` it orders nothing:
    /// a sleeper or timed waiter may wake at any point whatever the clock
    /// says, so the clock's value shows only through a reading
    /// (`clock_time_get`, a sleep until an absolute time) or an alarm, each
    /// of which commutes with nothing itself and withholds an exhaustive
    /// search's claim ([`Unenumerated::Clock`]).
    pub fn touched_clock(&mut self) {
        if self.sleeps == Sleeps::Timed {
            self.step_watch.touched_global();
        }
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
    pub(super) fn limit_reached(&mut self, me: ThreadId, cut: Cut) {
        if self.limit_watch.fair_from.is_some() {
            let outcome = self.limit_outcome(me, cut);
            self.finish(outcome);
        } else {
            self.go_fair();
        }
    }

    /// Goes on under a fair schedule, for [`crate::runtime::FAIR_STEPS`] times the
    /// step limit at most.
    pub(super) fn go_fair(&mut self) {
        let from = self.step.saturating_sub(1);
        self.limit_watch.fair_from = Some(from);
        self.limit_watch.decisions_when_fair = self.decisions.len();
        self.limit_watch.loop_watch.restart(from);
        self.limit_watch.step_bound = from.saturating_add(
            self.limits
                .max_steps
                .saturating_mul(crate::runtime::FAIR_STEPS),
        );
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
        let repeated = self.limit_watch.complete_states == CompleteStates::Off
            && self
                .limit_watch
                .loop_watch
                .repeated(self.fingerprint().as_ref());
        match self.limit_watch.fair_from {
            Some(fair_from) if repeated => self.livelock(me, fair_from),
            _ => Outcome::Inconclusive(cut),
        }
    }

    /// A step passed: under timed sleeps it took [`STEP_NS`] of virtual
    /// time, and a sleeper or timed waiter left out may now be due.
    pub(super) fn step_passed(&mut self) {
        self.step += 1;
        if self.threads[self.current as usize]
            .library_step_room()
            .is_some()
        {
            self.points_in_library_steps += 1;
        }
        if self.sleeps == Sleeps::Timed {
            self.clock_ns += STEP_NS;
            if self.next_wake.is_some_and(|wake| wake <= self.clock_ns) {
                self.enabled_stale = true;
            }
            self.ring_alarm_if_due();
        }
    }

    /// The scheduling points of the point model so far, the step a
    /// scheduler is told: the points but those passed inside library
    /// steps (a strategy that spreads its decisions over an execution's
    /// steps, as PCT places its change points, spreads them over the
    /// program's own points, not over a lock's spinning inside the
    /// library). Under the model of the library's internals, every point.
    pub fn model_step(&self) -> u64 {
        self.step - self.points_in_library_steps
    }

    /// The bytes of shared memory the guest can see (0 without one).
    pub(super) fn visible_bytes(&self) -> u64 {
        self.memory.as_deref().map_or(0, |m| m.visible_bytes()) as u64
    }

    /// On the state reader, once the decisions of the execution it checks
    /// are made: from now on round robin runs the execution, a fair
    /// schedule, for a step limit and a compute budget more, every point
    /// calls the host, and complete states are compared at each (see
    /// [`crate::runtime::looping`]).
    pub(super) fn begin_complete_states(&mut self) {
        if let CompleteStates::After(decisions) = self.limit_watch.complete_states
            && self.decisions.len() >= decisions
        {
            self.limit_watch.complete_states = CompleteStates::On;
            self.every_point = true;
            // The running thread's frames were read when it last parked:
            // it ran on since.
            self.threads[self.current as usize].frames = None;
            self.limit_watch.fair_from.get_or_insert(self.step);
            self.limit_watch.step_bound = self.step.saturating_add(self.limits.max_steps);
            for thread in &mut self.threads {
                thread.slices = 0;
            }
        }
    }

    /// Why a run on the state reader that ended inconclusive showed no
    /// loop: a thread could not take its pending signal, it compared no
    /// complete state at all, or none came back.
    pub fn unseen(&self) -> Unseen {
        if self
            .live
            .iter()
            .any(|&thread| self.signal_due_in_library(thread))
        {
            Unseen::SignalPending
        } else if self.limit_watch.cycle_watch.compared() == 0 {
            Unseen::InSlices
        } else {
            Unseen::Changed
        }
    }

    /// The livelock of an execution that went on under a fair schedule
    /// from `fair_from` (`me` runs).
    pub(super) fn livelock(&self, me: ThreadId, fair_from: u64) -> Outcome {
        Outcome::Livelock {
            steps: self.step.saturating_sub(1),
            fair_from,
            looping: self.looping_threads(me),
        }
    }

    /// Under a fair schedule, takes a fingerprint of the state (see
    /// [`crate::runtime::looping`]): back where it was a span ago, no thread makes
    /// progress, and the execution ends as a livelock (then this returns
    /// true).
    pub(super) fn watch_for_loops(&mut self, me: ThreadId) -> bool {
        let Some(fair_from) = self.limit_watch.fair_from else {
            return false;
        };
        let looped = match self.limit_watch.complete_states {
            CompleteStates::Off | CompleteStates::Keyed => {
                self.fingerprint().is_some_and(|fingerprint| {
                    self.limit_watch
                        .loop_watch
                        .keep(self.step, self.visible_bytes(), fingerprint)
                })
            }
            CompleteStates::After(_) => false,
            CompleteStates::On => {
                let (Some(threads), Some(memory)) = (self.threads_digest(), self.memory.as_deref())
                else {
                    return false;
                };
                let dead = self.dead_stack_bytes();
                self.limit_watch.cycle_watch.came_back(threads, || {
                    let mut hasher = blake3::Hasher::new();
                    memory.hash_outside_into(&mut hasher, &dead);
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
    /// [`crate::runtime::frames::at_epoch_check`]), as the executor ends one where
    /// fuel runs out; returns whether it must park.
    pub fn end_slice(&mut self, me: ThreadId) -> bool {
        self.point_reached(me);
        self.record(me, EventKind::Slice, 0, None);
        self.slice_used(me);
        self.schedule(me)
    }

    /// Thread `me` used up a time slice of fuel: past its compute budget
    /// ([`crate::runtime::Limits::max_fuel`]), a limit is reached. Under a fair
    /// schedule every slice is fingerprinted: a loop with no scheduling
    /// point runs in slices.
    pub fn slice_used(&mut self, me: ThreadId) {
        self.begin_complete_states();
        if self.limit_watch.fair_from.is_some()
            && self.limit_watch.loop_watch.slice_due(self.visible_bytes())
            && self.watch_for_loops(me)
        {
            return;
        }
        let thread = &mut self.threads[me as usize];
        thread.slices += 1;
        if thread.slices.saturating_mul(crate::runtime::SLICE_FUEL) >= self.limits.max_fuel {
            let fuel = self.limits.max_fuel;
            self.limit_reached(me, Cut::Fuel { thread: me, fuel });
        }
    }

    /// A fingerprint of the execution's state, as far as the host sees it
    /// without frames: the shared memory, where each thread stands and
    /// what it waits for, and how often the program read the host's state.
    /// `None` when the memory is not shared, so the host cannot read it
    /// between steps.
    pub(super) fn fingerprint(&self) -> Option<blake3::Hash> {
        let mut hasher = blake3::Hasher::new();
        self.memory.as_ref()?.hash_into(&mut hasher);
        self.places_into(&mut hasher);
        Some(hasher.finalize())
    }

    /// The complete state but memory (see [`CompleteStates::On`]): the
    /// thread that runs, every live thread's frames, where each stands and
    /// what it waits for. `None` when a thread's frames are out of sight.
    pub(super) fn threads_digest(&self) -> Option<blake3::Hash> {
        let mut hasher = blake3::Hasher::new();
        // Round robin goes on from the thread that runs.
        hasher.update(&self.current.to_le_bytes());
        for thread in &self.threads {
            if thread.state != ThreadState::Exited {
                hasher.update(&thread.frames?.to_le_bytes());
            }
        }
        self.places_into(&mut hasher);
        Some(hasher.finalize())
    }

    /// The complete state of the execution at a decision of a stateful
    /// search ([`CompleteStates::Keyed`]), as a digest: every live
    /// thread's frames, where it stands, what it waits for and in which
    /// order it began to wait, whether a notify woke it (not whose: the
    /// waker tells only which steps the search orders before the woken
    /// thread's next one, not what that step does) and what its wait
    /// returns, where its library step stands, the shared memory
    /// (when the program tracks its reads, only the parts executions read
    /// before this one, see [`super::super::read_granules`]),
    /// the random generator and what the program wrote to its standard
    /// streams. Two decisions with equal keys go on alike whatever came
    /// before them. Which thread reached the decision is no part of it,
    /// nor is the virtual clock: sleeps and timed waits are keyed by the
    /// time they have left, and an execution that reads the clock is one
    /// the search cannot enumerate anyway (it withholds its claim, see
    /// [`Unenumerated::Clock`]). `None` when a thread's frames are out of
    /// sight (it stopped where fuel ran out).
    pub(super) fn state_key(&self) -> Option<blake3::Hash> {
        let mut hasher = blake3::Hasher::new();
        for thread in &self.threads {
            if thread.state != ThreadState::Exited {
                hasher.update(&thread.frames?.to_le_bytes());
            }
            hasher.update(&[u8::from(thread.woken_by.is_some())]);
            hasher.update(&thread.wake.map_or(i64::MIN, i64::from).to_le_bytes());
            hasher.update(&thread.exit_value.map_or(u64::MAX, u64::from).to_le_bytes());
            if thread.library_depth > 0 {
                hasher.update(&thread.library_points.to_le_bytes());
            }
            for depth in &thread.paused_library_depths {
                hasher.update(&depth.to_le_bytes());
            }
            hasher.update(b"|");
        }
        self.places_into(&mut hasher);
        let mut waiting: Vec<(u64, ThreadId)> = self
            .threads
            .iter()
            .enumerate()
            .filter_map(|(id, thread)| match thread.state {
                ThreadState::Waiting { ticket, .. } => Some((ticket, id as ThreadId)),
                _ => None,
            })
            .collect();
        waiting.sort_unstable();
        for (_, thread) in waiting {
            hasher.update(&thread.to_le_bytes());
        }
        let mut random = self.random.clone();
        hasher.update(&random.next_u64().to_le_bytes());
        hasher.update(&random.next_u64().to_le_bytes());
        hasher.update(&[self.closed_stdio]);
        for stream in [&self.stdout, &self.stderr] {
            hasher.update(&(stream.len() as u64).to_le_bytes());
            hasher.update(stream);
        }
        let reads = self
            .read_granules
            .as_ref()
            .map(|reads| reads.lock().unwrap_or_else(|e| e.into_inner()));
        let memory = self
            .memory
            .as_deref()?
            .digest_outside(&self.dead_stack_bytes(), reads.as_deref());
        hasher.update(&memory.to_le_bytes());
        if let Some(reads) = reads {
            hasher.update(&reads.generation().to_le_bytes());
        }
        Some(hasher.finalize())
    }

    /// The bytes of live threads' stacks below what their frames may still
    /// read, sorted (see [`crate::runtime::thread_stacks`]): no part of a
    /// state. A thread counts only where its frames were read where it
    /// stands and its stack is known.
    fn dead_stack_bytes(&self) -> Vec<std::ops::Range<usize>> {
        let mut dead: Vec<_> = self
            .threads
            .iter()
            .filter(|thread| thread.state != ThreadState::Exited && thread.frames.is_some())
            .filter_map(|thread| {
                let stack = thread.stack.as_ref()?;
                let floor = thread.live_floor?;
                (stack.start < floor && floor <= stack.end)
                    .then_some(stack.start as usize..floor as usize)
            })
            .collect();
        dead.sort_unstable_by_key(|range| range.start);
        dead
    }

    /// Feeds `hasher` where each thread stands and what it waits for
    /// (deadlines relative to the virtual clock), and how often the program
    /// read the host's state.
    pub(super) fn places_into(&self, hasher: &mut blake3::Hasher) {
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
    pub(super) fn looping_threads(&self, me: ThreadId) -> Vec<LoopingThread> {
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
}

#[cfg(test)]
mod tests {
    use super::super::without_wasm;
    use super::*;
    use crate::runtime::shared_memory::test_memory;
    use crate::sched::RandomScheduler;
    use std::sync::Arc;

    /// Three threads standing alike over one memory, thread 2 waiting on
    /// address 64 until `waker`, if any, notifies it.
    fn woken_by(waker: Option<ThreadId>) -> ExecState {
        let mut state = without_wasm(3, Box::new(RandomScheduler::new(0)));
        state.memory = Some(Arc::new(test_memory(Vec::new())));
        for thread in &mut state.threads {
            thread.frames = Some(7);
        }
        state.block(2, 64, None, None);
        if let Some(waker) = waker {
            assert_eq!(state.notify(waker, 64, 1), 1);
        }
        state
    }

    #[test]
    fn which_thread_woke_a_waiter_is_no_part_of_its_state() {
        let by_first = woken_by(Some(0)).state_key();
        assert!(by_first.is_some());
        assert_eq!(by_first, woken_by(Some(1)).state_key());
        assert_ne!(by_first, woken_by(None).state_key());
    }
}
