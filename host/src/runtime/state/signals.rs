//! Signals within the program, as POSIX has them for the threads of one
//! process: what each signal does (its action), each thread's mask, and
//! the signals pending for a thread or for the process. The guest's C
//! library keeps the handlers and runs them (`guest-sdk/c/weft_signal.c`);
//! when a pending signal is delivered is the schedule's decision (see
//! `runtime::signal_imports`).

use super::ExecState;
use crate::runtime::analysis::Happening;
use crate::runtime::thread::ThreadState;
use crate::trace::ThreadId;

/// Signal numbers run from 1 to this.
pub(crate) const LAST_SIGNAL: u32 = 64;

/// `SIGKILL` and `SIGSTOP`, which no mask blocks and no action changes.
const UNBLOCKABLE: u64 = bit(9) | bit(19);

/// `SA_NODEFER`: the signal is not blocked while its handler runs.
const SA_NODEFER: u32 = 0x4000_0000;

/// `SA_RESETHAND`: the action is the default again once delivered.
const SA_RESETHAND: u32 = 0x8000_0000;

/// The bit of signal `sig` in a set.
pub(crate) const fn bit(sig: u32) -> u64 {
    1 << (sig - 1)
}

/// What a signal does when it is delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Action {
    /// Its default action (see [`DefaultAction`]).
    #[default]
    Default,
    /// Nothing: it is discarded.
    Ignore,
    /// The program's handler runs, with `mask` added to the thread's
    /// mask; `flags` are the `SA_*` flags the program gave.
    Handle {
        /// Signals blocked while the handler runs.
        mask: u64,
        /// The `sa_flags`.
        flags: u32,
    },
}

/// What a signal's default action does, as Linux has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DefaultAction {
    /// Ends the process (with or without a core file).
    Terminate,
    /// Nothing (`SIGCHLD`, `SIGCONT`, `SIGURG`, `SIGWINCH`).
    Ignore,
    /// Stops the process until a `SIGCONT` that only another process
    /// could send (`SIGSTOP`, `SIGTSTP`, `SIGTTIN`, `SIGTTOU`).
    Stop,
}

impl DefaultAction {
    /// The default action of signal `sig`.
    pub(crate) fn of(sig: u32) -> DefaultAction {
        match sig {
            17 | 18 | 23 | 28 => DefaultAction::Ignore,
            19..=22 => DefaultAction::Stop,
            _ => DefaultAction::Terminate,
        }
    }
}

/// The program's signals: the action of each, and those sent to the
/// process that no thread took yet.
#[derive(Clone, Debug)]
pub(crate) struct Signals {
    actions: [Action; LAST_SIGNAL as usize + 1],
    process_pending: u64,
    /// Whether one was sent (by a thread or the alarm).
    sent: bool,
    /// The process's alarm (`alarm`, `setitimer(ITIMER_REAL)`), when set.
    pub(super) alarm: Option<Alarm>,
}

/// The process's real-time timer, on the virtual clock: it sends
/// `SIGALRM` to the process when the clock reaches `at`, and again every
/// `interval` after that when `interval` is not 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Alarm {
    /// When it rings next, in virtual nanoseconds.
    pub at: u64,
    /// Its period, or 0 for once.
    pub interval: u64,
}

impl Default for Signals {
    fn default() -> Self {
        Signals {
            actions: [Action::Default; LAST_SIGNAL as usize + 1],
            process_pending: 0,
            sent: false,
            alarm: None,
        }
    }
}

impl Signals {
    /// The action of signal `sig`.
    pub(crate) fn action(&self, sig: u32) -> Action {
        self.actions[sig as usize]
    }

    /// Whether a signal sent now would be discarded.
    fn ignored(&self, sig: u32) -> bool {
        match self.action(sig) {
            Action::Ignore => true,
            Action::Default => DefaultAction::of(sig) == DefaultAction::Ignore,
            Action::Handle { .. } => false,
        }
    }
}

/// One thread's signals.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ThreadSignals {
    /// The signals it blocks.
    pub mask: u64,
    /// The signals sent to it and not delivered yet.
    pub pending: u64,
    /// Whether it waits in `sigwait` or `sigsuspend`: for a signal of
    /// this set to be pending (`sigwait`), or to be delivered.
    pub waits_for: Option<u64>,
    /// The access at a scheduling point where a signal is to be delivered
    /// before it (see `runtime::rt_imports::reached_access`).
    pub interrupted_at: Option<crate::runtime::analysis::Access>,
    /// How much of its last sleep was left when a signal cut it short, in
    /// nanoseconds.
    pub sleep_left: u64,
    /// The signal whose handler it runs (the innermost, when a handler
    /// was interrupted by another), if any.
    pub handling: Option<u32>,
    /// Whether it has begun to run code of the program's own: a thread the
    /// program created only once the C library called its routine (before,
    /// it has no stack of its own yet), when a signal may be delivered.
    pub runs_own_code: bool,
}

/// Where a thread that waits for a signal is said to wait: an address no
/// guest word has (above the atomic sections' one, not aligned).
pub(crate) fn signal_wait_address(thread: ThreadId) -> u32 {
    u32::MAX - 8 - 4 * thread
}

/// The delivery of one signal to a thread, taken off what was pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Delivery {
    /// The signal.
    pub sig: u32,
    /// Its action then.
    pub action: Action,
    /// Whether it was sent to the thread (else to the process).
    pub to_thread: bool,
}

/// How a thread changes its signal mask (`SIG_BLOCK`, `SIG_UNBLOCK`,
/// `SIG_SETMASK`), or only reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MaskChange {
    /// Adds the set.
    Block,
    /// Removes the set.
    Unblock,
    /// Makes the set the mask.
    Set,
    /// Leaves the mask.
    Read,
}

impl MaskChange {
    /// The change C's `how` argument names (Linux's values: 0 blocks, 1
    /// unblocks, 2 sets); any other value only reads.
    pub(crate) fn from_how(how: i32) -> Self {
        match how {
            0 => MaskChange::Block,
            1 => MaskChange::Unblock,
            2 => MaskChange::Set,
            _ => MaskChange::Read,
        }
    }
}

impl ExecState {
    /// The program sets the action of signal `sig` (1 to
    /// [`LAST_SIGNAL`], neither `SIGKILL` nor `SIGSTOP`). An action that
    /// ignores the signal discards it where it is pending.
    pub fn set_signal_action(&mut self, sig: u32, action: Action) {
        self.signals.actions[sig as usize] = action;
        if self.signals.ignored(sig) {
            self.signals.process_pending &= !bit(sig);
            for thread in &mut self.threads {
                thread.signals.pending &= !bit(sig);
            }
        }
    }

    /// Changes the mask of thread `me` by `set` (`SIGKILL` and `SIGSTOP`
    /// stay unblocked); returns the mask before.
    pub fn change_signal_mask(&mut self, me: ThreadId, how: MaskChange, set: u64) -> u64 {
        let signals = &mut self.threads[me as usize].signals;
        let before = signals.mask;
        signals.mask = match how {
            MaskChange::Block => before | set,
            MaskChange::Unblock => before & !set,
            MaskChange::Set => set,
            MaskChange::Read => before,
        } & !UNBLOCKABLE;
        if signals.mask != before {
            self.enabled_stale = true;
        }
        before
    }

    /// Thread `me` sends signal `sig` to thread `to`, or to the process
    /// (`None`). Returns false when `to` is no live thread. A signal the
    /// program ignores is discarded; one sent to a thread that waits (on a
    /// futex, or for signals) and does not block it wakes that thread.
    pub fn send_signal(&mut self, me: ThreadId, to: Option<ThreadId>, sig: u32) -> bool {
        if let Some(to) = to
            && self
                .threads
                .get(to as usize)
                .is_none_or(|t| t.state() == ThreadState::Exited)
        {
            return false;
        }
        if sig == 0 {
            return true;
        }
        self.signals.sent = true;
        if self.signals.ignored(sig) {
            return true;
        }
        self.happened(me, Happening::SignalSent { sig });
        self.post_signal(to, sig);
        true
    }

    /// Signal `sig` is sent to the process by no thread of it (the alarm),
    /// unless the program ignores it.
    pub(super) fn raise_from_outside(&mut self, sig: u32) {
        self.signals.sent = true;
        if !self.signals.ignored(sig) {
            self.post_signal(None, sig);
        }
    }

    /// Signal `sig` becomes pending for thread `to` or the process
    /// (`None`), and wakes a thread that can take it: for the process, the
    /// first that waits for it in `sigwait`, or else the first that is
    /// blocked (waiting or asleep) and does not block it.
    fn post_signal(&mut self, to: Option<ThreadId>, sig: u32) {
        self.signals.sent = true;
        match to {
            Some(to) => {
                self.threads[to as usize].signals.pending |= bit(sig);
                self.wake_for_signal(to, sig);
            }
            None => {
                self.signals.process_pending |= bit(sig);
                let waiter = self.live.iter().copied().find(|&t| {
                    self.threads[t as usize]
                        .signals
                        .waits_for
                        .is_some_and(|set| set & bit(sig) != 0)
                });
                let blocked = || {
                    self.live.iter().copied().find(|&t| {
                        let thread = &self.threads[t as usize];
                        is_blocked(thread.state()) && thread.signals.mask & bit(sig) == 0
                    })
                };
                if let Some(to) = waiter.or_else(blocked) {
                    self.wake_for_signal(to, sig);
                }
            }
        }
    }

    /// Thread `to` was sent `sig`: if it waits for it, or waits on a futex
    /// or sleeps and does not block it, it wakes (the futex wait returns as
    /// if woken: every caller of a futex wait checks again; a sleep is cut
    /// short).
    fn wake_for_signal(&mut self, to: ThreadId, sig: u32) {
        let thread = &self.threads[to as usize];
        let waits = match thread.signals.waits_for {
            Some(set) => set & bit(sig) != 0 || thread.signals.mask & bit(sig) == 0,
            None => thread.signals.mask & bit(sig) == 0,
        };
        if waits && is_blocked(thread.state()) {
            if matches!(thread.state(), ThreadState::Waiting { .. }) {
                self.threads[to as usize].wake = Some(0);
            }
            self.set_state(to, ThreadState::Runnable);
        }
    }

    /// The signal, lowest first, pending for thread `me` or the process
    /// that `me` does not block.
    pub fn deliverable_signal(&self, me: ThreadId) -> Option<u32> {
        let signals = &self.threads[me as usize].signals;
        let open = (signals.pending | self.signals.process_pending) & !signals.mask;
        (open != 0).then(|| open.trailing_zeros() + 1)
    }

    /// Whether thread `me` has a signal to be delivered where it stands
    /// next outside a library step or atomic section: then its scheduling
    /// points all call the host.
    pub fn signal_due(&self, me: ThreadId) -> bool {
        self.threads[me as usize].library_depth == 0 && self.signal_due_in_library(me)
    }

    /// Whether thread `me` has a signal to be delivered where it stands,
    /// were it outside any library step: outside an atomic section, in
    /// code of its own, with a signal pending that it does not block.
    pub fn signal_due_in_library(&self, me: ThreadId) -> bool {
        // Nothing is pending before a first send: one branch for programs
        // without signals.
        if !self.signals.sent {
            return false;
        }
        let thread = &self.threads[me as usize];
        thread.atomic_depth == 0
            && thread.signals.runs_own_code
            && self.deliverable_signal(me).is_some()
    }

    /// Takes signal `sig`, pending for thread `me` or else the process,
    /// off what is pending; says whether it was the thread's.
    pub fn take_signal(&mut self, me: ThreadId, sig: u32) -> bool {
        let signals = &mut self.threads[me as usize].signals;
        let to_thread = signals.pending & bit(sig) != 0;
        if to_thread {
            signals.pending &= !bit(sig);
        } else {
            self.signals.process_pending &= !bit(sig);
        }
        to_thread
    }

    /// Delivers the signal `sig` to thread `me`, taken off what is
    /// pending: its action, and for a handler, the thread's mask while it
    /// runs (`SA_RESETHAND` makes the action the default again). Returns
    /// the delivery and the mask to restore after the handler.
    pub fn begin_delivery(&mut self, me: ThreadId, sig: u32) -> (Delivery, u64) {
        let to_thread = self.take_signal(me, sig);
        let action = self.signals.action(sig);
        self.happened(me, Happening::SignalDelivered { sig });
        let before = self.threads[me as usize].signals.mask;
        if let Action::Handle { mask, flags } = action {
            let own = if flags & SA_NODEFER != 0 { 0 } else { bit(sig) };
            self.change_signal_mask(me, MaskChange::Block, mask | own);
            if flags & SA_RESETHAND != 0 {
                self.signals.actions[sig as usize] = Action::Default;
            }
        }
        let delivery = Delivery {
            sig,
            action,
            to_thread,
        };
        (delivery, before)
    }

    /// Whether a thread sent a signal.
    pub fn signals_sent(&self) -> bool {
        self.signals.sent
    }

    /// The signals pending for thread `me` or the process.
    pub fn pending_signals(&self, me: ThreadId) -> u64 {
        self.threads[me as usize].signals.pending | self.signals.process_pending
    }
}

/// Whether a thread in `state` is blocked in a way a signal interrupts: a
/// futex wait (or a wait for signals) or a sleep.
fn is_blocked(state: ThreadState) -> bool {
    matches!(
        state,
        ThreadState::Waiting { .. } | ThreadState::Sleeping { .. }
    )
}
