//! What each thread did, step by step, for schedule inference: calls and
//! returns, scheduling points, sleeps, blocking waits, thread start and end,
//! and SDK events. Recorded only for programs loaded with
//! `log_calls`; the trace and the schedule are unaffected.

use crate::instrument::SiteId;
use crate::trace::ThreadId;

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
