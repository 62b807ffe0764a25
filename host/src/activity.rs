//! The activity log: an analysis that records what each thread did, step by
//! step (calls and returns, scheduling points, sleeps, blocking waits,
//! thread start and end, SDK events, class-test method calls), for the
//! techniques that read whole executions: schedule inference and CovCon's
//! pair coverage. Installed for programs loaded with `log_calls`; the trace
//! and the schedule are unaffected.

use crate::instrument::SiteId;
use crate::runtime::ExecutionResult;
use crate::runtime::analysis::{Analysis, Cx, Happening, Report};
use crate::trace::ThreadId;
use std::sync::Arc;

/// One thing a thread did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Activity {
    /// The thread was created.
    Start,
    /// It exited (for the main thread: the execution ended).
    End,
    /// It reached the instrumented instruction at this site (an atomic
    /// access, a wait or a notify).
    Point(SiteId),
    /// It is about to execute the call instruction at this site.
    Call(SiteId),
    /// The call at this site returned.
    Returned(SiteId),
    /// It began to sleep.
    SleepBegin,
    /// Its sleep ended.
    SleepEnd,
    /// It began to wait on a futex (a lock, condition variable, join, ...).
    BlockBegin,
    /// It was woken (or its wait timed out).
    BlockEnd,
    /// It fired this SDK event.
    Event(String),
    /// `weft.gen_call` began calling the class's method with this number.
    GenEnter(u32),
    /// That call returned.
    GenExit(u32),
}

/// An [`Activity`] and the thread that did it; an execution's activities
/// are in the order they happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The thread.
    pub thread: ThreadId,
    /// What it did.
    pub activity: Activity,
}

/// Records every thread's [`Activity`]; its report is the `Vec<Entry>` of
/// the execution ([`entries`]).
#[derive(Debug, Default)]
pub struct ActivityLog {
    entries: Vec<Entry>,
}

impl ActivityLog {
    /// Notes that `thread` did `activity`.
    pub fn push(&mut self, thread: ThreadId, activity: Activity) {
        self.entries.push(Entry { thread, activity });
    }
}

impl Analysis for ActivityLog {
    fn needs_every_point(&self) -> bool {
        true
    }

    fn happened(&mut self, _cx: &mut Cx<'_>, thread: ThreadId, what: &Happening<'_>) {
        let activity = match *what {
            Happening::Started => Activity::Start,
            Happening::Ended => Activity::End,
            Happening::Reached(site) => Activity::Point(site),
            Happening::Call(site) => Activity::Call(site),
            Happening::Returned(site) => Activity::Returned(site),
            Happening::SleepBegin => Activity::SleepBegin,
            Happening::SleepEnd => Activity::SleepEnd,
            Happening::BlockBegin => Activity::BlockBegin,
            Happening::BlockEnd => Activity::BlockEnd,
            Happening::Event {
                name,
                implicit: false,
            } => Activity::Event(name.to_string()),
            Happening::Event { implicit: true, .. }
            | Happening::Spawned { .. }
            | Happening::Woke { .. }
            | Happening::Outlived { .. }
            | Happening::AtomicBegin
            | Happening::AtomicEnd
            | Happening::ReachedError
            | Happening::Aborted
            | Happening::SignalSent { .. }
            | Happening::SignalDelivered { .. } => return,
        };
        self.push(thread, activity);
    }

    fn finish(self: Box<Self>) -> Option<Report> {
        Some(Arc::new(self.entries))
    }
}

/// What each thread of `result` did, in order (empty unless an
/// [`ActivityLog`] was installed).
pub fn entries(result: &ExecutionResult) -> &[Entry] {
    result
        .reports
        .get::<Vec<Entry>>()
        .map_or(&[], Vec::as_slice)
}
