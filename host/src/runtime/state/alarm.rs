//! The process's alarm (`alarm`, `setitimer(ITIMER_REAL)`) on the virtual
//! clock: it rings (sends `SIGALRM` to the process) when the clock reaches
//! it, and the clock reaches it sooner when every thread waits for time
//! to pass: a sleeper due later, or no thread able to run at all (then
//! time jumps to the alarm, as it jumps to a sleeper's wake-up).

use super::ExecState;
use super::signals::Alarm;
use crate::runtime::outcome::Unenumerated;
use crate::runtime::thread::ThreadState;
use crate::trace::ThreadId;

/// `SIGALRM`.
const SIGALRM: u32 = 14;

impl ExecState {
    /// Sets the alarm to ring `value` nanoseconds from now and then every
    /// `interval` (0: once); a `value` of 0 disarms it. Returns what was
    /// left of the alarm before and its interval.
    pub fn set_alarm(&mut self, value: u64, interval: u64) -> (u64, u64) {
        self.touched_global_state();
        // When it rings depends on the clock, which the exhaustive search
        // does not enumerate (sleeps commute: see `touched_clock`).
        self.depended_on(Unenumerated::Clock);
        let before = self.alarm_left();
        let now = self.clock_ns;
        self.signals.alarm = (value > 0).then(|| Alarm {
            at: now.saturating_add(value),
            interval,
        });
        before
    }

    /// What is left of the alarm (0 when it is not set) and its interval.
    pub fn alarm_left(&self) -> (u64, u64) {
        self.signals.alarm.map_or((0, 0), |alarm| {
            (
                alarm.at.saturating_sub(self.clock_ns).max(1),
                alarm.interval,
            )
        })
    }

    /// Rings the alarm if the clock has reached it.
    pub fn ring_alarm_if_due(&mut self) {
        if self
            .signals
            .alarm
            .is_some_and(|alarm| alarm.at <= self.clock_ns)
        {
            self.ring_alarm();
        }
    }

    /// Thread `sleeper`, asleep until `until`, is to wake: if the alarm
    /// is due first, the clock goes to it and it rings. Says whether that
    /// cut the sleep short (the signal woke `sleeper`).
    pub(super) fn ring_alarm_before(&mut self, sleeper: ThreadId, until: u64) -> bool {
        let Some(alarm) = self.signals.alarm else {
            return false;
        };
        if alarm.at >= until {
            return false;
        }
        self.ring_alarm_at(alarm.at);
        !matches!(
            self.threads[sleeper as usize].state(),
            ThreadState::Sleeping { .. }
        )
    }

    /// No thread can run: if the alarm is set, time jumps to it and it
    /// rings. Says whether it did.
    pub(super) fn jump_to_alarm(&mut self) -> bool {
        let Some(alarm) = self.signals.alarm else {
            return false;
        };
        self.ring_alarm_at(alarm.at);
        true
    }

    /// Time passes to `at`, the alarm's, and it rings.
    fn ring_alarm_at(&mut self, at: u64) {
        self.clock_ns = self.clock_ns.max(at);
        self.step_watch.touched_global();
        self.ring_alarm();
    }

    /// Sends `SIGALRM` to the process (unless it ignores it) and sets the
    /// alarm's next ring, the first of its period after now.
    fn ring_alarm(&mut self) {
        let Some(alarm) = self.signals.alarm else {
            return;
        };
        self.signals.alarm = (alarm.interval > 0).then(|| {
            let periods = (self.clock_ns - alarm.at) / alarm.interval + 1;
            Alarm {
                at: alarm
                    .at
                    .saturating_add(periods.saturating_mul(alarm.interval)),
                interval: alarm.interval,
            }
        });
        self.raise_from_outside(SIGALRM);
    }
}
