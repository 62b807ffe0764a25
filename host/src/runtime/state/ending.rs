//! How an execution ends: the outcome that stands, and what the analyses
//! make of it.

use super::ExecState;
use crate::runtime::analysis::ExecView;
use crate::runtime::outcome::Outcome;

impl ExecState {
    /// Ends the execution unless it already ended.
    pub fn finish(&mut self, outcome: Outcome) {
        if self.end.is_none() {
            self.end = Some(outcome);
        }
    }

    /// Each analysis in turn says what the end means
    /// ([`crate::runtime::analysis::Analysis::reinterpret`]). Then, when the execution passed: the
    /// first failure an analysis finds in it becomes its outcome. When it
    /// failed or was cut short by a limit: a failure an analysis found
    /// before that end does.
    pub fn judge(&mut self) {
        let Some(end) = self.end.take() else {
            return;
        };
        let end = self.analyses.iter().fold(end, |end, a| a.reinterpret(end));
        self.end = Some(end.clone());
        let passed = end == Outcome::Exited(0);
        let ended_early = end.failure().is_some() || end.cut().is_some();
        if self.analyses.is_empty() || !(passed || ended_early) {
            return;
        }
        let mut analyses = std::mem::take(&mut self.analyses);
        let view = ExecView { state: self };
        let verdict = analyses.iter_mut().find_map(|a| {
            if passed {
                a.verdict(&view)
            } else {
                a.before_end(&view, &end)
            }
        });
        self.analyses = analyses;
        if let Some(outcome) = verdict {
            self.end = Some(outcome);
        }
    }
}
