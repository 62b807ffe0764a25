//! The scheduling step: which threads can run, who the scheduler picks,
//! and the budget of points the chosen thread may pass inside wasm.

use super::{ExecState, SPIN_LOADS};
use crate::instrument::{AccessKind, SiteId};
use crate::runtime::analysis::ExecView;
use crate::runtime::outcome::{Cut, Outcome};
use crate::runtime::point_buffer::MAX_BUDGET;
use crate::runtime::thread::ThreadState;
use crate::runtime::{Preemption, STEP_NS, Sleeps};
use crate::sched::{Notice, Scheduler, ThreadView};
use crate::trace::ThreadId;
use std::time::Instant;

/// A step that began at the load of a Rust read lock's fast path (see
/// [`crate::instrument::SiteTable::read_lock_fast_paths`]): the
/// compare-exchange that follows it at once goes on in the same step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadLockStep {
    /// The thread that took the step.
    thread: ThreadId,
    /// The compare-exchange's site.
    cas: SiteId,
    /// The lock's word.
    word: u32,
    /// The step's number ([`ExecState::step`] when it began).
    step: u64,
}

/// Why an execution of a stateful search ended at a decision whose state
/// the search had explored before.
pub const STATE_EXPLORED: &str = "its state was explored before";

impl ExecState {
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
        if self.step > self.limit_watch.step_bound {
            self.limit_reached(
                me,
                Cut::Steps {
                    thread: me,
                    steps: self.step - 1,
                    fair_from: self.limit_watch.fair_from.unwrap_or(self.step - 1),
                },
            );
            if self.end.is_some() {
                return true;
            }
        }
        if self.limit_watch.fair_from.is_some()
            && self.limit_watch.loop_watch.due(self.step)
            && self.watch_for_loops(me)
        {
            return true;
        }
        if self.step >= self.limit_watch.next_time_check {
            self.limit_watch.next_time_check = self.step + MAX_BUDGET;
            if self
                .limit_watch
                .stop_at
                .is_some_and(|at| Instant::now() >= at)
            {
                self.finish(Outcome::Stopped);
                return true;
            }
            if let Some(limit) = self.limits.time_limit
                && self.limit_watch.started.elapsed() > limit
            {
                self.finish(Outcome::Inconclusive(Cut::Time { thread: me }));
                return true;
            }
        }
        if self.enabled_stale {
            self.refresh_enabled();
        }
        if self.enabled.is_empty() && self.jump_to_alarm() {
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
        let thread = &mut self.threads[me as usize];
        let first_point = !std::mem::replace(&mut thread.passed_a_point, true);
        // Under library calls as sampling runs them, a thread's first point
        // is the library's thread start, at its entry: no step of its own.
        let starting = first_point
            && !self.records_library_internals
            && thread.next.is_some_and(|op| op.kind == AccessKind::Call);
        if let Some(view) = self.enabled.iter_mut().find(|t| t.id == me) {
            view.next = thread.next;
            view.starting = starting;
        }
        let current = me_enabled.then_some(me);
        let read_lock = self.continues_read_lock(me);
        let atomic = me_enabled && (read_lock || self.threads[me as usize].goes_on_atomically());
        let chosen = if self.enabled.len() == 1 {
            // No choice to make: the scheduler is asked only at decisions.
            Ok(self.enabled[0].id)
        } else if atomic {
            // Inside an atomic section the thread keeps running.
            Ok(me)
        } else {
            if self.scheduler.wants_state() {
                let key = self.state_key();
                if self.scheduler.state_reached(key) {
                    self.finish(Outcome::Abandoned(STATE_EXPLORED.into()));
                    return true;
                }
            }
            self.scheduler
                .choose(&self.enabled, current, self.model_step())
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
        self.note_read_lock_step(chosen);
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

    /// Whether `me` stands at the compare-exchange of the read lock's fast
    /// path its step began at, with no point between: it goes on in the
    /// same step.
    fn continues_read_lock(&mut self, me: ThreadId) -> bool {
        let Some(begun) = self.read_lock_step.take() else {
            return false;
        };
        begun.thread == me
            && begun.step + 1 == self.step
            && self.threads[me as usize]
                .next
                .is_some_and(|op| op.site == begun.cas && op.addr == begun.word)
    }

    /// Notes the read lock's fast path that `chosen`'s step begins at, if
    /// it begins at one.
    fn note_read_lock_step(&mut self, chosen: ThreadId) {
        if self.sites.read_lock_fast_paths().is_empty() {
            return;
        }
        let Some(op) = self.threads[chosen as usize].next else {
            return;
        };
        self.read_lock_step = self.sites.read_lock_after(op.site).map(|cas| ReadLockStep {
            thread: chosen,
            cas,
            word: op.addr,
            step: self.step,
        });
    }

    /// Lets `me`, which runs on, pass its next points inside wasm while
    /// nothing but the trace needs each point: all of them while no other
    /// thread can run, else as many decisions as the scheduler commits to
    /// keeping `me` (while `me` does not turn into a spinning thread, which
    /// would change what the scheduler sees). Inside an atomic section
    /// (`atomic`) the points are not decisions.
    pub(super) fn grant_budget(&mut self, me: ThreadId, atomic: bool) {
        let Some(buffer) = self.threads[me as usize].points else {
            return;
        };
        if self.every_point || self.signal_due(me) {
            // A thread with a signal due stops at each point: the
            // schedule may deliver it at any.
            return;
        }
        let budget = self.most_budget();
        if self.enabled.len() == 1 {
            buffer.grant(budget);
            return;
        }
        if atomic {
            // Inside a library step the points up to its end are no
            // decisions either: they pass inside wasm, counted towards the
            // step's most points (atomic sections of the program's keep
            // calling the host).
            if let Some(room) = self.threads[me as usize].library_step_room() {
                buffer.grant(budget.min(room));
            }
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
            .keeps(&self.enabled, me, self.model_step(), most)
            .min(most);
        if keeps > 0 {
            buffer.grant(keeps);
            self.committed_run = Some(me);
        }
    }

    /// The most points a budget may cover now: up to the step bound, the
    /// next time check and the earliest wake-up of a sleeper left out (it
    /// must be seen when its time comes).
    fn most_budget(&self) -> u64 {
        let until_wake = self.next_wake.map_or(u64::MAX, |wake| {
            wake.saturating_sub(self.clock_ns) / STEP_NS
        });
        MAX_BUDGET
            .min(self.limit_watch.step_bound.saturating_sub(self.step))
            .min(self.limit_watch.next_time_check.saturating_sub(self.step))
            .min(until_wake)
    }

    /// The library step of thread `me`, the running thread, pauses (around
    /// a call through a function pointer, or a signal's handlers): the
    /// points it passed are recorded, what is left of its budget is taken
    /// back, and the thread is outside any step until
    /// [`ExecState::library_step_starts`] at the depth returned.
    pub fn library_step_pauses(&mut self, me: ThreadId) -> u32 {
        self.drain_points(me);
        std::mem::take(&mut self.threads[me as usize].library_depth)
    }

    /// A library step of thread `me`, the running thread, starts at library
    /// depth `depth`: the points it passed before are recorded and what is
    /// left of a budget it ran on is taken back, and the step's own points,
    /// none of them a decision, pass inside wasm from here (counted towards
    /// the step's most points).
    pub fn library_step_starts(&mut self, me: ThreadId, depth: u32) {
        self.drain_points(me);
        let thread = &mut self.threads[me as usize];
        thread.library_points = 0;
        thread.library_depth = depth;
        if self.every_point || self.end.is_some() {
            return;
        }
        if let (Some(buffer), Some(room)) = (thread.points, thread.library_step_room()) {
            buffer.grant(self.most_budget().min(room));
        }
    }

    /// Recomputes the enabled threads.
    pub(super) fn refresh_enabled(&mut self) {
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
                            starting: false,
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
                starting: false,
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
    pub(super) fn let_time_pass(
        &self,
        enabled: &mut Vec<ThreadView>,
        later: Vec<ThreadView>,
    ) -> Option<u64> {
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

    /// Something an analysis's view of the threads reads has changed:
    /// the enabled threads are recomputed at the next point.
    pub fn views_changed(&mut self) {
        self.enabled_changed();
    }

    /// The threads that can run may have changed: they are recomputed at the
    /// next point, and the running thread's budget is taken back (a budget
    /// granted at its last point assumed the threads that could run then;
    /// its next points may be decisions now, say after it woke a waiter).
    pub(super) fn enabled_changed(&mut self) {
        self.enabled_stale = true;
        self.drain_points(self.current);
    }

    /// Makes `id` runnable as it is chosen, letting virtual time pass to
    /// its wake-up time and timing out its wait if it has one.
    pub(super) fn resume(&mut self, id: ThreadId) {
        if let ThreadState::Sleeping { until } = self.threads[id as usize].state
            && self.ring_alarm_before(id, until)
        {
            // The alarm cut the sleep short: the thread is runnable.
            return;
        }
        let thread = &mut self.threads[id as usize];
        let wakes_at = match thread.state {
            ThreadState::Sleeping { until } => Some(until),
            ThreadState::Waiting {
                deadline: Some(deadline),
                ..
            } => {
                thread.wake = Some(2);
                thread.woken_by = None;
                Some(deadline)
            }
            ThreadState::Runnable => return,
            _ => None,
        };
        thread.state = ThreadState::Runnable;
        if let Some(at) = wakes_at {
            self.clock_ns = self.clock_ns.max(at);
            self.touched_clock();
        }
        self.enabled_stale = true;
        self.ring_alarm_if_due();
    }
}

#[cfg(test)]
mod tests {
    use super::super::without_wasm;
    use super::*;
    use crate::sched::ReplayScheduler;

    #[test]
    fn a_step_picks_among_the_threads_that_can_run_and_records_the_decision() {
        let mut state = without_wasm(3, Box::new(ReplayScheduler::new(vec![2], Vec::new())));
        state.block(1, 64, None, None);
        assert!(state.schedule(0), "thread 0 parks: another runs");
        assert!(state.end.is_none(), "{:?}", state.end);
        assert_eq!((state.current, state.decisions.as_slice()), (2, &[2][..]));
        assert_eq!(state.step, 1);
    }

    #[test]
    fn a_step_where_every_thread_waits_ends_in_a_deadlock_naming_them() {
        let mut state = without_wasm(2, Box::new(ReplayScheduler::new(Vec::new(), Vec::new())));
        state.block(1, 64, None, None);
        state.block(0, 128, None, None);
        assert!(state.schedule(0), "the execution ends");
        match &state.end {
            Some(Outcome::Deadlock { blocked }) => {
                let waiting: Vec<(ThreadId, u32)> =
                    blocked.iter().map(|b| (b.thread, b.addr)).collect();
                assert_eq!(waiting, [(0, 128), (1, 64)]);
            }
            other => panic!("not a deadlock: {other:?}"),
        }
    }
}
