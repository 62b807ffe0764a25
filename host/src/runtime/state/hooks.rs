//! Calling the analyses of an execution: installing them, telling them
//! what happened, asking them what they make of a step or an end.

use super::ExecState;
use crate::runtime::analysis::{Access, Analysis, Cx, ExecView, Happening, Interest};
use crate::trace::ThreadId;

impl ExecState {
    /// Installs the analyses of this execution (before any thread exists).
    pub fn install(&mut self, analyses: Vec<Box<dyn Analysis>>) {
        self.every_point |= analyses.iter().any(|a| a.needs_every_point());
        self.analyses = analyses;
    }

    /// Runs `hook` on every analysis, in order.
    #[inline]
    pub(super) fn each_analysis(&mut self, mut hook: impl FnMut(&mut dyn Analysis, &mut Cx<'_>)) {
        if self.analyses.is_empty() {
            return;
        }
        let mut analyses = std::mem::take(&mut self.analyses);
        let mut cx = Cx { state: self };
        for analysis in &mut analyses {
            hook(analysis.as_mut(), &mut cx);
        }
        self.analyses = analyses;
    }

    /// The first answer of `query` over the analyses, in order.
    pub(super) fn ask_analyses<R>(
        &self,
        query: impl Fn(&dyn Analysis, &ExecView<'_>) -> Option<R>,
    ) -> Option<R> {
        let view = ExecView { state: self };
        self.analyses.iter().find_map(|a| query(a.as_ref(), &view))
    }

    /// Runs `f` on the installed analysis of type `T`, if there is one.
    pub fn with_analysis<T: Analysis, R>(
        &mut self,
        f: impl FnOnce(&mut T, &mut Cx<'_>) -> R,
    ) -> Option<R> {
        let index = self
            .analyses
            .iter_mut()
            .position(|a| (a.as_mut() as &mut dyn std::any::Any).is::<T>())?;
        let mut analyses = std::mem::take(&mut self.analyses);
        let analysis = (analyses[index].as_mut() as &mut dyn std::any::Any)
            .downcast_mut::<T>()
            .expect("the position found a `T`");
        let result = f(analysis, &mut Cx { state: self });
        self.analyses = analyses;
        Some(result)
    }

    /// Tells the analyses that `me` did `what`.
    #[inline]
    pub fn happened(&mut self, me: ThreadId, what: Happening<'_>) {
        self.drain_log(me);
        self.each_analysis(|a, cx| a.happened(cx, me, &what));
    }

    /// Tells the analyses that `me` stands at a scheduling point that is
    /// not an access of its own.
    #[inline]
    pub fn point_reached(&mut self, me: ThreadId) {
        self.drain_log(me);
        self.each_analysis(|a, cx| a.point(cx, me));
    }

    /// Tells the analyses that `me` is about to make `access`; whether it
    /// stays a scheduling point.
    #[inline]
    pub fn access(&mut self, me: ThreadId, access: &Access) -> Interest {
        self.drain_log(me);
        let mut interest = Interest::Keep;
        self.each_analysis(|a, cx| {
            if a.access(cx, me, access) == Interest::Ignore {
                interest = Interest::Ignore;
            }
        });
        interest
    }

    /// Asks the analyses whether `me` must be held before performing SDK
    /// event `event`.
    pub fn holds_before_event(&mut self, me: ThreadId, event: &str) -> bool {
        let mut hold = false;
        self.each_analysis(|a, cx| hold |= a.before_event(cx, me, event));
        hold
    }

    /// The event a thread performs when it first names itself, if an
    /// analysis wants one.
    pub fn start_event(&self) -> Option<&'static str> {
        self.analyses.iter().find_map(|a| a.start_event())
    }

    /// Starts the analyses (the main thread exists).
    pub fn begin_analyses(&mut self) {
        self.each_analysis(|a, cx| a.begin(cx));
    }

    /// The analyses' reports, once the execution is over.
    pub fn finish_analyses(&mut self) -> crate::runtime::analysis::Reports {
        let analyses = std::mem::take(&mut self.analyses);
        crate::runtime::analysis::Reports::new(
            analyses.into_iter().filter_map(|a| a.finish()).collect(),
        )
    }
}
