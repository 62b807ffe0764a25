//! The analysis that applies an IMUnit schedule to an execution: in active
//! mode it holds a thread at a `weft.event` until the event's orderings
//! hold; in passive mode it fails the execution at the first event that
//! happens too early. Either way it fails an execution that misuses the
//! schedule (an event that repeats, a thread name no thread has) and
//! explains a schedule that cannot be followed.

use super::monitor::{END, Monitor, START, ThreadStatus};
use super::schedule::Schedule;
use crate::failure::{Failure, FailureKind};
use crate::runtime::analysis::{Analysis, Cx, ExecView, Happening, RunState};
use crate::runtime::{BlockedThread, Outcome};
use crate::trace::ThreadId;
use serde::{Deserialize, Serialize};

/// How an IMUnit schedule is applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ScheduleMode {
    /// weft makes every execution follow the schedule.
    #[default]
    Active,
    /// Executions follow the strategy; an event that happens before its
    /// orderings hold is a `schedule-violation` failure.
    Passive,
}

/// Applies a schedule to one execution.
#[derive(Debug)]
pub struct ScheduleGuard {
    /// The schedule's state, or why its text does not parse.
    monitor: Result<Monitor, String>,
    mode: ScheduleMode,
    /// The event each thread is held at, by thread id.
    held_at: Vec<Option<String>>,
}

impl ScheduleGuard {
    /// A guard for the schedule `text`; a text that does not parse ends the
    /// execution at its start with the parse error.
    pub fn new(text: &str, mode: ScheduleMode) -> Self {
        ScheduleGuard {
            monitor: text
                .parse::<Schedule>()
                .map(Monitor::new)
                .map_err(|e| e.to_string()),
            mode,
            held_at: Vec::new(),
        }
    }

    fn held_at(&self, thread: ThreadId) -> Option<&str> {
        self.held_at.get(thread as usize)?.as_deref()
    }

    fn set_held_at(&mut self, thread: ThreadId, event: Option<String>) {
        let id = thread as usize;
        if self.held_at.len() <= id {
            self.held_at.resize(id + 1, None);
        }
        self.held_at[id] = event;
    }

    /// The orderings `event` of `thread` waits for that do not hold now.
    fn unmet(&self, view: &ExecView<'_>, thread: ThreadId, event: &str) -> Vec<String> {
        let Ok(monitor) = &self.monitor else {
            return Vec::new();
        };
        monitor.unmet(event, &view.thread_label(thread), &|t| status(view, t))
    }

    /// Why the orderings of a held thread do not hold.
    fn why_unmet(&self, view: &ExecView<'_>, thread: ThreadId, event: &str) -> Vec<String> {
        let Ok(monitor) = &self.monitor else {
            return Vec::new();
        };
        monitor.why_unmet(event, &view.thread_label(thread), &|t| status(view, t))
    }

    /// Records that `thread` performed `event`; a misuse of the schedule
    /// ends the execution.
    fn performed(&mut self, cx: &mut Cx<'_>, thread: ThreadId, event: &str) {
        let Ok(monitor) = &mut self.monitor else {
            return;
        };
        let label = cx.view().thread_label(thread);
        if let Err(e) = monitor.happened(event, &label) {
            cx.finish(schedule_error(thread, e.to_string()));
            return;
        }
        cx.views_changed();
    }
}

/// What the thread named `label` is doing, as schedules see it: blocked
/// means waiting on a futex or sleeping (what `[event]` conditions mean).
fn status(view: &ExecView<'_>, label: &str) -> ThreadStatus {
    let mut status = ThreadStatus::Unknown;
    for id in 0..view.thread_count() as ThreadId {
        if view.thread_label(id) != label {
            continue;
        }
        let this = match view.run_state(id) {
            RunState::Blocked => ThreadStatus::Blocked,
            RunState::Exited => ThreadStatus::Ended,
            RunState::Running | RunState::Held => ThreadStatus::Running,
        };
        // A live thread of that name counts over an ended one.
        if status == ThreadStatus::Unknown || status == ThreadStatus::Ended {
            status = this;
        }
    }
    status
}

fn schedule_error(thread: ThreadId, message: String) -> Outcome {
    Outcome::Reported(Failure {
        kind: FailureKind::ScheduleError,
        message,
        thread,
    })
}

impl Analysis for ScheduleGuard {
    fn begin(&mut self, cx: &mut Cx<'_>) {
        match &self.monitor {
            Ok(_) => self.performed(cx, 0, START),
            Err(e) => cx.finish(Outcome::HostError(e.clone())),
        }
    }

    fn before_event(&mut self, cx: &mut Cx<'_>, thread: ThreadId, event: &str) -> bool {
        if self.monitor.is_err() {
            return false;
        }
        let view = cx.view();
        let unmet = self.unmet(&view, thread, event);
        if unmet.is_empty() {
            return false;
        }
        match self.mode {
            ScheduleMode::Passive => {
                cx.finish(Outcome::Reported(Failure {
                    kind: FailureKind::ScheduleViolation,
                    message: format!(
                        "event `{event}` happened before its orderings held: {}",
                        unmet.join(", ")
                    ),
                    thread,
                }));
                false
            }
            ScheduleMode::Active => {
                self.set_held_at(thread, Some(event.to_string()));
                true
            }
        }
    }

    fn start_event(&self) -> Option<&'static str> {
        self.monitor.is_ok().then_some(START)
    }

    fn happened(&mut self, cx: &mut Cx<'_>, thread: ThreadId, what: &Happening<'_>) {
        match *what {
            Happening::Event { name, .. } => {
                self.set_held_at(thread, None);
                self.performed(cx, thread, name);
            }
            // The main thread's end is the end of the execution.
            Happening::Ended if thread != 0 => self.performed(cx, thread, END),
            _ => {}
        }
    }

    fn may_run(&self, view: &ExecView<'_>, thread: ThreadId) -> bool {
        self.held_at(thread)
            .is_none_or(|event| self.unmet(view, thread, event).is_empty())
    }

    fn deadlock(&self, view: &ExecView<'_>, blocked: &[BlockedThread]) -> Option<Outcome> {
        let mut who: Vec<String> = (0..view.thread_count() as ThreadId)
            .filter(|&id| view.run_state(id) == RunState::Held)
            .map(|id| {
                let event = self.held_at(id).unwrap_or_default();
                let why = self.why_unmet(view, id, event);
                let why = if why.is_empty() {
                    String::new()
                } else {
                    format!(": {}", why.join(", "))
                };
                format!(
                    "thread {id} (`{}`) is held at event `{event}` until {}{why}",
                    view.thread_label(id),
                    self.unmet(view, id, event).join(" and ")
                )
            })
            .collect();
        if who.is_empty() {
            return None;
        }
        who.extend(blocked.iter().map(BlockedThread::describe));
        Some(Outcome::Reported(Failure {
            kind: FailureKind::ScheduleDeadlock,
            message: format!(
                "schedule deadlock: no thread can go on ({})",
                who.join("; ")
            ),
            thread: 0,
        }))
    }

    fn verdict(&mut self, view: &ExecView<'_>) -> Option<Outcome> {
        let monitor = self.monitor.as_ref().ok()?;
        let unknown: Vec<&str> = monitor
            .thread_names()
            .into_iter()
            .filter(|t| status(view, t) == ThreadStatus::Unknown)
            .collect();
        if unknown.is_empty() {
            return None;
        }
        let threads: Vec<String> = (0..view.thread_count() as ThreadId)
            .map(|id| view.thread_label(id))
            .collect();
        Some(schedule_error(
            0,
            format!(
                "the schedule names thread{} {}, but no thread of the execution had that name (threads: {})",
                if unknown.len() > 1 { "s" } else { "" },
                unknown
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                threads.join(", ")
            ),
        ))
    }
}
