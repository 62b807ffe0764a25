//! What an execution records: its events, labels and nondeterministic
//! values, the scheduling points its threads passed inside wasm, and the
//! accesses they logged, which the analyses read.

use super::{ExecState, SPIN_LOADS};
use crate::instrument::{AccessKind, SiteId};
use crate::runtime::analysis::Logged;
use crate::runtime::outcome::Outcome;
use crate::runtime::point_buffer::PointBuffer;
use crate::sched::{NextOp, Notice, Scheduler};
use crate::trace::{Event, EventKind, ThreadId};

impl ExecState {
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

    /// Records the scheduling points thread `me` passed inside wasm on its
    /// budget (each a step), and takes the rest of the budget back.
    pub fn drain_points(&mut self, me: ThreadId) {
        self.drain_log(me);
        let Some(buffer) = self.threads[me as usize].points else {
            return;
        };
        if self.committed_run != Some(me) && !self.records_points_of(me) {
            // Inside a library step: its points are counted, not recorded.
            let passed = buffer.drain_count();
            for _ in 0..passed {
                self.step_passed();
            }
            self.threads[me as usize].passed_points(passed);
            return;
        }
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
        self.threads[me as usize].passed_points(passed);
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
    pub(super) fn drain_logged(&mut self, me: ThreadId, buffer: PointBuffer) {
        buffer.drain_log(|older, newer| self.tell_logged(me, [older, newer]));
    }

    /// Tells the analyses the accesses logged as `parts` (see [`Logged`])
    /// by thread `me`.
    pub(super) fn tell_logged(&mut self, me: ThreadId, parts: [&[u64]; 2]) {
        let log = Logged { parts };
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

    /// Whether the scheduling points thread `me` passes now are events of
    /// the trace: always, but inside a library step (with room for more
    /// points) of an execution that does not record library internals
    /// (see [`ExecState::records_library_internals`]), where they are
    /// only counted.
    pub fn records_points_of(&self, me: ThreadId) -> bool {
        self.records_library_internals
            || self.threads[me as usize]
                .library_step_room()
                .is_none_or(|room| room == 0)
    }

    /// Records the access of thread `me` at the scheduling point of `site`
    /// to `addr`, when its points are events (see
    /// [`ExecState::records_points_of`]); otherwise only what the thread
    /// passed before is drained.
    pub fn record_access(&mut self, me: ThreadId, kind: AccessKind, addr: u32, site: SiteId) {
        if self.records_points_of(me) {
            self.record(me, EventKind::Access(kind), addr, Some(site));
        } else {
            self.drain_points(me);
            self.threads[me as usize].next = None;
        }
    }

    /// Notes the operation `me` stands at (after its [`ExecState::record`]),
    /// for the scheduler's view.
    pub fn stand_at(&mut self, me: ThreadId, next: NextOp) {
        self.threads[me as usize].next = Some(next);
    }

    pub(super) fn push_event(
        &mut self,
        me: ThreadId,
        kind: EventKind,
        addr: u32,
        site: Option<SiteId>,
    ) {
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
}

#[cfg(test)]
mod tests {
    use super::super::without_wasm;
    use super::*;
    use crate::abi::POINT_BUFFER;
    use crate::instrument::{Site, SiteTable};
    use crate::sched::RandomScheduler;
    use std::sync::Arc;

    /// Thread 0 of a one-thread execution, inside a library step, passes
    /// three atomic loads on its budget; returns the execution's state
    /// after the step drained them, and the point buffer's memory (which
    /// the state's thread points to).
    fn three_points_inside_a_library_step(records_internals: bool) -> (ExecState, Box<[u64]>) {
        let mut sites = SiteTable::default();
        let site = sites.push(Site {
            kind: AccessKind::AtomicLoad,
            func: 0,
            code_offset: 0,
            mem_offset: 0,
            width: 4,
            callee: None,
            touch: None,
        });
        let mut state = without_wasm(1, Box::new(RandomScheduler::new(0)));
        state.sites = Arc::new(sites);
        state.records_library_internals = records_internals;
        let mut memory = vec![0u64; POINT_BUFFER.bytes as usize / 8].into_boxed_slice();
        let buffer = unsafe { PointBuffer::new(memory.as_mut_ptr().cast(), memory.len() * 8) };
        state.threads[0].points = Some(buffer);
        state.library_step_starts(0, 1);
        // The guest writes an entry per point, from the top of the budget
        // down, as the instrumentation does.
        let base = memory.as_mut_ptr().cast::<u8>();
        let granted = unsafe { base.add(POINT_BUFFER.granted as usize).cast::<u32>().read() };
        assert!(granted >= 3, "the step's budget is granted where it starts");
        for passed in 1..=3 {
            let entry = granted - passed;
            let at = (POINT_BUFFER.entries + 8 * u64::from(entry)) as usize;
            unsafe {
                base.add(at).cast::<u32>().write(site);
                base.add(at + 4).cast::<u32>().write(64);
                base.add(POINT_BUFFER.budget as usize)
                    .cast::<u32>()
                    .write(entry);
            }
        }
        state.drain_points(0);
        (state, memory)
    }

    #[test]
    fn an_access_the_host_schedules_inside_a_library_step_is_no_event_unless_asked() {
        let recorded = |records_internals: bool, points_before: u32| {
            let mut state = without_wasm(1, Box::new(RandomScheduler::new(0)));
            state.records_library_internals = records_internals;
            state.library_step_starts(0, 1);
            state.threads[0].library_points = points_before;
            state.record_access(0, AccessKind::AtomicLoad, 64, 0);
            state.trace.len()
        };
        assert_eq!(recorded(false, 0), 0, "a library call is one event");
        assert_eq!(recorded(true, 0), 1, "the exhaustive search's model");
        // A step that passed its most points goes on as the program's
        // points do, each an event (a thread spinning there is seen to).
        assert_eq!(recorded(false, u32::MAX), 1);
    }

    #[test]
    fn points_inside_a_library_step_are_counted_not_recorded_unless_asked() {
        let (quiet, _memory) = three_points_inside_a_library_step(false);
        assert!(quiet.end.is_none(), "{:?}", quiet.end);
        assert_eq!((quiet.step, quiet.points_in_library_steps), (3, 3));
        assert_eq!(
            quiet.model_step(),
            0,
            "the step's points are no model steps"
        );
        assert_eq!(quiet.trace.len(), 0, "a library call is one event, its own");
        assert_eq!(
            quiet.threads[0].library_points, 3,
            "they count towards its most"
        );

        let (recorded, _memory) = three_points_inside_a_library_step(true);
        assert!(recorded.end.is_none(), "{:?}", recorded.end);
        assert_eq!((recorded.step, recorded.points_in_library_steps), (3, 3));
        assert_eq!(
            recorded.trace.len(),
            3,
            "the exhaustive search's model lists them"
        );
    }
}
