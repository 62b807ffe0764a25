//! Systematic exploration with a preemption bound: iterative context
//! bounding, after Musuvathi and Qadeer, "Iterative Context Bounding for
//! Systematic Testing of Multithreaded Programs", PLDI 2007 (CHESS).
//!
//! A stateless depth-first search over schedules: each execution follows a
//! prefix of decisions and then never preempts ([`DfsScheduler`]); after it,
//! the search backtracks to the deepest decision with a thread not tried
//! yet and runs the prefix that picks it. Round `c` explores every schedule
//! with at most `c` preemptions: an alternative that would need more is
//! kept for the next round instead of explored, so each schedule runs once,
//! in rounds of increasing bound. When the last round ends, every schedule
//! within the bound has run.

use super::systematic::Search;
use super::{Exhausted, Withheld};
use crate::runtime::ExecutionResult;
use crate::sched::{Decision, DfsScheduler, Plan, Prefixed, Strategy};
use crate::trace::ThreadId;
use std::collections::VecDeque;

/// One decision of the execution being extended.
#[derive(Clone, Debug)]
struct Node {
    /// The decision as the execution saw it.
    decision: Decision,
    /// Threads not tried yet at this decision (in this round or later).
    untried: Vec<ThreadId>,
    /// Preemptions of the path before this decision.
    preemptions: u32,
    /// The path up to and including this decision, in
    /// [`DfsSearch::links`]: its `chosen` is the thread this path picks
    /// here.
    link: u32,
}

/// The state of a bounded search.
#[derive(Debug)]
pub struct DfsSearch {
    /// This round's bound.
    bound: u32,
    /// The last round's bound.
    max_bound: u32,
    /// The decisions of the path being explored; those before `root_len`
    /// belong to the round's root and are not backtracked.
    path: Vec<Node>,
    root_len: usize,
    /// The prefix of the next execution, once backtracking chose one.
    next: Option<Prefix>,
    /// Roots of this round still to search.
    roots: VecDeque<Prefix>,
    /// Prefixes that need one preemption more than this round allows.
    deferred: Vec<Prefix>,
    /// Every decision of the explored tree, each pointing to the one before
    /// it: the paths prefixes refer to, sharing their common beginnings, so
    /// that a round whose executions defer millions of alternatives keeps
    /// each decision once (and in one allocation).
    links: Vec<Link>,
}

/// A prefix of decisions kept for later: a path of decisions that ran
/// (its last link), then `alternative`.
#[derive(Clone, Copy, Debug)]
struct Prefix {
    path: Option<u32>,
    alternative: Option<ThreadId>,
}

/// One decision of a path of the explored tree.
#[derive(Clone, Copy, Debug)]
struct Link {
    chosen: ThreadId,
    /// The decision before it, if any.
    parent: Option<u32>,
}

impl DfsSearch {
    /// A search of every schedule with at most `max_bound` preemptions.
    pub fn new(max_bound: u32) -> Self {
        DfsSearch {
            bound: 0,
            max_bound,
            path: Vec::new(),
            root_len: 0,
            next: None,
            roots: VecDeque::from([Prefix {
                path: None,
                alternative: None,
            }]),
            deferred: Vec::new(),
            links: Vec::new(),
        }
    }

    /// The decisions of `prefix`, written out.
    fn decisions(&self, prefix: Prefix) -> Vec<ThreadId> {
        let mut decisions = Vec::new();
        let mut link = prefix.path;
        while let Some(at) = link {
            let Link { chosen, parent } = self.links[at as usize];
            decisions.push(chosen);
            link = parent;
        }
        decisions.reverse();
        decisions.extend(prefix.alternative);
        decisions
    }

    /// A new link: `chosen` after the path ending at `parent`.
    fn link(&mut self, parent: Option<u32>, chosen: ThreadId) -> u32 {
        let at = u32::try_from(self.links.len()).expect("fewer than 2^32 decisions explored");
        self.links.push(Link { chosen, parent });
        at
    }

    /// The scheduler of the next execution; `None` when every schedule
    /// within the bound has run.
    fn next_prefixed(&mut self) -> Option<Prefixed<DfsScheduler>> {
        let after = |prefix| Prefixed::new(Plan::Threads(prefix), DfsScheduler::default());
        if let Some(prefix) = self.next.take() {
            return Some(after(self.decisions(prefix)));
        }
        loop {
            if let Some(root) = self.roots.pop_front() {
                let root = self.decisions(root);
                self.path.clear();
                self.root_len = root.len();
                return Some(after(root));
            }
            if self.bound >= self.max_bound || self.deferred.is_empty() {
                return None;
            }
            self.bound += 1;
            self.roots = std::mem::take(&mut self.deferred).into();
        }
    }

    /// Takes in the decisions of the execution that just ran, and chooses
    /// the prefix of the next one.
    fn record(&mut self, log: &[Decision]) {
        for (index, decision) in log.iter().enumerate().skip(self.path.len()) {
            let preemptions = self.path.last().map_or(0, |n| {
                n.preemptions + n.decision.preempts(self.links[n.link as usize].chosen) as u32
            });
            let untried = if index < self.root_len {
                Vec::new()
            } else {
                decision
                    .enabled
                    .iter()
                    .copied()
                    .filter(|&t| t != decision.chosen && Some(t) != decision.leaves)
                    .collect()
            };
            let link = self.link(self.path.last().map(|n| n.link), decision.chosen);
            self.path.push(Node {
                decision: decision.clone(),
                untried,
                preemptions,
                link,
            });
        }
        self.backtrack();
    }

    /// Finds the deepest decision with an alternative within this round's
    /// bound, deferring those beyond it.
    fn backtrack(&mut self) {
        while self.path.len() > self.root_len {
            let last = self.path.len() - 1;
            let parent = last.checked_sub(1).map(|p| self.path[p].link);
            while let Some(alternative) = self.path[last].untried.pop() {
                let node = &self.path[last];
                let cost = node.preemptions + node.decision.preempts(alternative) as u32;
                let prefix = Prefix {
                    path: parent,
                    alternative: Some(alternative),
                };
                if cost <= self.bound {
                    self.path[last].link = self.link(parent, alternative);
                    self.next = Some(prefix);
                    return;
                }
                self.deferred.push(prefix);
            }
            self.path.pop();
        }
    }
}

impl Search for DfsSearch {
    type Scheduler = Prefixed<DfsScheduler>;

    const STRATEGY: Strategy = Strategy::Dfs;

    fn next_scheduler(&mut self) -> Option<Prefixed<DfsScheduler>> {
        self.next_prefixed()
    }

    fn learn(
        &mut self,
        scheduler: Prefixed<DfsScheduler>,
        result: &ExecutionResult,
    ) -> Option<Withheld> {
        let dfs = scheduler.strategy();
        self.record(dfs.log());
        let why = [
            dfs.chose_values.then_some(Withheld::AnyValue),
            result.fair_from.map(|_| Withheld::StepLimit),
            dfs.left_busy.then_some(Withheld::LeftBusy),
            result.atomic_sections.then_some(Withheld::AtomicSections),
            result.unenumerated.map(Withheld::Input),
        ];
        why.into_iter().flatten().next()
    }

    fn claim(&self) -> Exhausted {
        Exhausted::Bounded {
            preemption_bound: self.bound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads that each run two steps, as decisions: the schedules
    /// are the interleavings of `aa` and `bb`.
    fn run(prefix: &[ThreadId]) -> Vec<Decision> {
        let mut left = [2u32, 2];
        let mut current: Option<ThreadId> = Some(0);
        let mut log = Vec::new();
        let mut prefix = prefix.iter().copied();
        loop {
            let enabled: Vec<ThreadId> = (0..2).filter(|&t| left[t as usize] > 0).collect();
            if enabled.len() < 2 {
                return log;
            }
            let keeps = current.filter(|c| enabled.contains(c));
            let chosen = prefix.next().or(keeps).unwrap_or(enabled[0]);
            log.push(Decision {
                enabled,
                keeps,
                leaves: None,
                chosen,
            });
            left[chosen as usize] -= 1;
            current = Some(chosen);
        }
    }

    fn explore(bound: u32) -> Vec<Vec<ThreadId>> {
        let mut search = DfsSearch::new(bound);
        let mut seen = Vec::new();
        while let Some(scheduler) = search.next_scheduler() {
            let Plan::Threads(prefix) = scheduler.plan() else {
                panic!("the bounded search plans threads only");
            };
            let log = run(prefix);
            seen.push(log.iter().map(|d| d.chosen).collect());
            search.record(&log);
        }
        seen
    }

    #[test]
    fn every_schedule_runs_once_in_rounds_of_increasing_preemptions() {
        // Without preemptions: a then b, or (preempting at once) b first.
        let zero = explore(0);
        assert_eq!(zero.len(), 1, "{zero:?}");
        let all = explore(3);
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "no schedule twice: {all:?}");
        // C(4, 2) = 6 interleavings of aa and bb.
        assert_eq!(all.len(), 6, "{all:?}");
        assert!(explore(1).len() < 6);
    }
}
