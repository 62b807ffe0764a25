//! The progress line of the long-running commands: it appears on stderr
//! once a run has gone on for a second (a short run prints nothing) and
//! clears itself at the end.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// How long a run goes before its progress shows.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// A spinner and a message on stderr, shown after [`SHOW_AFTER`].
pub struct ProgressLine {
    bar: ProgressBar,
    /// Whether progress is shown at all (not with `--json`, say).
    enabled: bool,
    shown: bool,
}

impl ProgressLine {
    /// A line that shows only if `enabled`.
    pub fn new(enabled: bool) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("a valid template"));
        ProgressLine {
            bar,
            enabled,
            shown: false,
        }
    }

    /// The run has gone on for `elapsed`: shows `message()` once it has
    /// gone on long enough.
    pub fn update(&mut self, elapsed: Duration, message: impl FnOnce() -> String) {
        if self.enabled && !self.shown && elapsed >= SHOW_AFTER {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        if self.shown {
            self.bar.set_message(message());
            self.bar.tick();
        }
    }

    /// Clears the line.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
