//! The thread table's rows: one guest thread's scheduling state and the
//! counters the scheduling step reads (spinning, atomic sections, library
//! steps, time slices). [`super::state::ExecState`] owns the table and is
//! the only one to change a thread's state.

use super::point_buffer::PointBuffer;
use crate::instrument::SiteId;
use crate::sched::NextOp;
use crate::trace::ThreadId;

/// What a thread is doing, as far as scheduling is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ThreadState {
    /// Can run.
    Runnable,
    /// Can run, but just yielded.
    Yielded,
    /// Sleeps until a virtual time; enabled (running it lets time pass).
    Sleeping { until: u64 },
    /// Waits on an address until notified, or until `deadline` if there is one
    /// (then it is enabled: running it times the wait out).
    Waiting {
        addr: u32,
        deadline: Option<u64>,
        site: Option<SiteId>,
        /// Order of arrival among all waits: notify wakes the oldest first.
        ticket: u64,
    },
    /// Held at an SDK event until the analysis that holds it lets it go on.
    Held,
    /// The main thread called `pthread_exit`: it waits until every other
    /// thread has exited (then the process exits).
    Outliving,
    /// Its entry function returned.
    Exited,
}

/// One guest thread.
#[derive(Debug)]
pub(crate) struct Thread {
    /// Changed only through
    /// [`ExecState::set_state`](super::state::ExecState::set_state) and the
    /// methods of `ExecState`, which keep the cached enabled list in step.
    pub(super) state: ThreadState,
    /// Name given through the SDK.
    pub name: Option<String>,
    /// Result a wait returns when the thread resumes (0 woken, 2 timed out).
    pub wake: Option<i32>,
    /// The thread whose notify woke it, until it resumes.
    pub(super) woken_by: Option<ThreadId>,
    /// Atomic reads, read-modify-writes and time slices in a row since the
    /// thread's last other event: a thread that does nothing else (polls a
    /// flag, retries a compare-exchange on a lock word, loops on a plain
    /// read without any scheduling point) is spinning and is treated as
    /// yielding.
    pub spins: u32,
    /// Whether those points include read-modify-writes or time slices,
    /// which may change what other threads see.
    pub spin_changes: bool,
    /// Depth of `weft.atomic_begin` sections: while above 0 the thread is
    /// not preempted (unless it blocks).
    pub atomic_depth: u32,
    /// Depth of calls to the C library that are one step (see
    /// [`crate::abi::RT_LIBRARY_BEGIN`]): while above 0 the thread is not
    /// preempted (unless it blocks), for [`MOST_LIBRARY_STEP_POINTS`] at
    /// most.
    pub library_depth: u32,
    /// Scheduling points the thread passed inside its library step since
    /// the step began or the thread last blocked in it.
    pub library_points: u32,
    /// The depths of library steps paused around calls through a function
    /// pointer, innermost last (see [`crate::abi::RT_LIBRARY_PAUSE`]).
    pub paused_library_depths: Vec<u32>,
    /// Its instance's point buffer, once it started (modules with shared
    /// memory only).
    pub points: Option<PointBuffer>,
    /// The operation it stands at, for the scheduler's view.
    pub(super) next: Option<NextOp>,
    /// The value it passed to `pthread_exit`, until its thread start
    /// function takes it as the start routine's result.
    pub exit_value: Option<u32>,
    /// The code site of its last event that had one.
    pub(super) last_site: Option<SiteId>,
    /// Time slices it used up (each [`super::SLICE_FUEL`] fuel units) since
    /// the execution began, or went on under a fair schedule.
    pub(super) slices: u64,
    /// In a program that reads frames: the digest of its wasm state where
    /// it last stopped in a call to the host (see [`super::frames`]);
    /// `None` while it runs on or stands in a time slice.
    pub(super) frames: Option<u128>,
    /// With `frames`: the lowest byte of its stack that its frames may
    /// still read (see [`super::thread_stacks`]), when known.
    pub(super) live_floor: Option<u32>,
    /// Its stack, when weft could place it (see
    /// [`super::thread_stacks::spawned_stack`]).
    pub(super) stack: Option<std::ops::Range<u32>>,
    /// Its signals: its mask, what is pending for it, whether it waits
    /// for one.
    pub signals: super::state::ThreadSignals,
    /// Whether it reached a scheduling point yet.
    pub(super) passed_a_point: bool,
}

impl Thread {
    /// Keeps what the host read of its frames where it stopped (`None`:
    /// they could not be read).
    pub(super) fn keep_frames(&mut self, read: Option<super::frames::FramesRead>) {
        self.frames = read.map(|read| read.digest);
        self.live_floor = read.and_then(|read| read.live_floor);
    }

    /// A new thread that can run.
    pub(super) fn new() -> Self {
        Thread {
            state: ThreadState::Runnable,
            name: None,
            wake: None,
            woken_by: None,
            spins: 0,
            spin_changes: false,
            atomic_depth: 0,
            library_depth: 0,
            library_points: 0,
            paused_library_depths: Vec::new(),
            points: None,
            next: None,
            exit_value: None,
            last_site: None,
            slices: 0,
            frames: None,
            live_floor: None,
            stack: None,
            signals: Default::default(),
            passed_a_point: false,
        }
    }

    /// Its scheduling state.
    pub fn state(&self) -> ThreadState {
        self.state
    }

    /// Whether the thread, at a scheduling point where it can go on, goes
    /// on without another thread running first: inside an atomic section,
    /// or inside a library step that has not passed
    /// [`MOST_LIBRARY_STEP_POINTS`] (counted here).
    pub(super) fn goes_on_atomically(&mut self) -> bool {
        if self.atomic_depth > 0 {
            return true;
        }
        if self.library_depth == 0 || self.library_points >= MOST_LIBRARY_STEP_POINTS {
            return false;
        }
        self.library_points += 1;
        true
    }

    /// Inside a library step (not an atomic section of the program's): how
    /// many more points the step may pass before
    /// [`MOST_LIBRARY_STEP_POINTS`].
    pub(super) fn library_step_room(&self) -> Option<u64> {
        (self.atomic_depth == 0 && self.library_depth > 0)
            .then(|| MOST_LIBRARY_STEP_POINTS.saturating_sub(self.library_points) as u64)
    }

    /// `passed` points went by inside wasm: inside a library step, they
    /// count towards its most points.
    pub(super) fn passed_points(&mut self, passed: u64) {
        if self.library_step_room().is_some() {
            self.library_points = self
                .library_points
                .saturating_add(u32::try_from(passed).unwrap_or(u32::MAX));
        }
    }
}

/// Scheduling points a thread passes inside one library step at most
/// without blocking: a library function that spins that long waits for
/// another thread without blocking, and the others must be able to run.
const MOST_LIBRARY_STEP_POINTS: u32 = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_passed_inside_a_library_step_count_towards_its_most() {
        let mut thread = Thread::new();
        // Outside a library step there is no room, and passed points are
        // the program's decisions, not the step's.
        assert_eq!(thread.library_step_room(), None);
        thread.passed_points(5);
        assert_eq!(thread.library_points, 0);

        thread.library_depth = 1;
        assert!(thread.goes_on_atomically());
        assert_eq!(
            thread.library_step_room(),
            Some(u64::from(MOST_LIBRARY_STEP_POINTS) - 1)
        );
        thread.passed_points(u64::from(MOST_LIBRARY_STEP_POINTS) - 1);
        assert_eq!(thread.library_step_room(), Some(0));
        // The step has passed its most points: the next one is a decision.
        assert!(!thread.goes_on_atomically());

        // A program's atomic section is not a library step.
        let mut section = Thread::new();
        section.atomic_depth = 1;
        section.library_depth = 1;
        assert_eq!(section.library_step_room(), None);
        assert!(section.goes_on_atomically());
    }
}
