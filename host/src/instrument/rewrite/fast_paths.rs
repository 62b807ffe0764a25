//! Which atomic operations are the fast paths of a Rust lock inlined into
//! the program: the operations that may run last before a call of the
//! lock's slow path (one of [`crate::library::steps::RUST_STD_SLOW_PATHS`]).
//!
//! An optimised build inlines `Mutex::lock`'s compare-exchange,
//! `RwLock::read`'s load and compare-exchange and the unlocks' swap or
//! subtraction into the caller, and calls only the slow path. The slow
//! paths are private to std and called from nowhere else, so an atomic
//! operation that a call of one can follow directly (no other
//! instrumented instruction and no call between, on some path through
//! the function's blocks) is that lock's fast path.
//!
//! [`FastPathFlow`] follows, through the structured control flow of one
//! function, the set of instrumented operations that may have run last.
//! It under-approximates: a loop's start and anything it cannot follow
//! (exception handling) count as "something else", so an operation it
//! does not note stays an ordinary step of the program (more schedules,
//! never fewer).

use super::super::sites::SiteId;
use wasmparser::Operator;

/// What may have run last on a path: an atomic operation that could be a
/// fast path, or anything else (the function's start, a call, another
/// instrumented instruction, a loop's start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Last {
    Candidate(SiteId),
    Other,
}

/// The paths into a block's end (or an `if`'s), gathered from the
/// branches to it.
#[derive(Debug)]
struct Label {
    /// Branches to it go to its end (not a loop's start).
    forward: bool,
    /// What may have run last on the branches to it so far.
    arriving: Vec<Last>,
    /// An `if`'s: what ran last before it, for its `else` (or the missing
    /// one).
    entry: Option<Vec<Last>>,
}

/// The set of operations that may have run last, followed through one
/// function's body, one instruction at a time.
#[derive(Debug)]
pub(super) struct FastPathFlow {
    /// What may have run last here; empty where the code is unreachable.
    last: Vec<Last>,
    labels: Vec<Label>,
    /// The function has an instruction this does not follow: it notes no
    /// fast path.
    lost: bool,
}

impl FastPathFlow {
    /// The flow at a function's start.
    pub fn new() -> Self {
        FastPathFlow {
            last: vec![Last::Other],
            labels: Vec::new(),
            lost: false,
        }
    }

    /// The fast paths of a slow path's call that is the next instruction:
    /// the atomic operations that may have run right before it (asked
    /// before [`FastPathFlow::after`] follows the call).
    pub fn fast_paths_of_call(&self) -> Vec<SiteId> {
        if self.lost {
            return Vec::new();
        }
        let mut sites: Vec<SiteId> = self
            .last
            .iter()
            .filter_map(|last| match last {
                Last::Candidate(site) => Some(*site),
                Last::Other => None,
            })
            .collect();
        sites.sort_unstable();
        sites
    }

    /// The atomic operation that ran right before the next instruction on
    /// every path to it, if one did (nothing else instrumented, no call, no
    /// loop's start between).
    pub fn only_last(&self) -> Option<SiteId> {
        match self.last.as_slice() {
            [Last::Candidate(site)] if !self.lost => Some(*site),
            _ => None,
        }
    }

    /// Follows `op`, which was given the site `site` if it is
    /// instrumented.
    pub fn after(&mut self, op: &Operator, site: Option<SiteId>) {
        if let Some(site) = site {
            let last = if is_candidate(op) {
                Last::Candidate(site)
            } else {
                Last::Other
            };
            self.set(vec![last]);
        }
        match op {
            Operator::Block { .. } => self.labels.push(Label {
                forward: true,
                arriving: Vec::new(),
                entry: None,
            }),
            Operator::Loop { .. } => {
                self.labels.push(Label {
                    forward: false,
                    arriving: Vec::new(),
                    entry: None,
                });
                if !self.last.is_empty() {
                    self.set(vec![Last::Other]);
                }
            }
            Operator::If { .. } => self.labels.push(Label {
                forward: true,
                arriving: Vec::new(),
                entry: Some(self.last.clone()),
            }),
            Operator::Else => {
                let then_end = std::mem::take(&mut self.last);
                if let Some(label) = self.labels.last_mut() {
                    merge(&mut label.arriving, &then_end);
                    self.last = label.entry.take().unwrap_or_default();
                } else {
                    self.lost = true;
                }
            }
            Operator::End => {
                // The function's own end has no label.
                if let Some(label) = self.labels.pop() {
                    let mut last = std::mem::take(&mut self.last);
                    if let Some(entry) = &label.entry {
                        merge(&mut last, entry);
                    }
                    if label.forward {
                        merge(&mut last, &label.arriving);
                    }
                    self.last = last;
                }
            }
            Operator::Br { relative_depth } => {
                self.branch(*relative_depth);
                self.last.clear();
            }
            Operator::BrIf { relative_depth }
            | Operator::BrOnNull { relative_depth }
            | Operator::BrOnNonNull { relative_depth } => self.branch(*relative_depth),
            Operator::BrTable { targets } => {
                for depth in targets.targets().flatten().chain([targets.default()]) {
                    self.branch(depth);
                }
                self.last.clear();
            }
            Operator::Return
            | Operator::Unreachable
            | Operator::ReturnCall { .. }
            | Operator::ReturnCallIndirect { .. }
            | Operator::ReturnCallRef { .. } => self.last.clear(),
            Operator::Call { .. } | Operator::CallIndirect { .. } | Operator::CallRef { .. } => {
                self.set(vec![Last::Other])
            }
            Operator::Try { .. }
            | Operator::TryTable { .. }
            | Operator::Catch { .. }
            | Operator::CatchAll
            | Operator::Delegate { .. }
            | Operator::Throw { .. }
            | Operator::ThrowRef
            | Operator::Rethrow { .. } => self.lost = true,
            _ => {}
        }
    }

    /// What may run last from here on, unless the code here is
    /// unreachable.
    fn set(&mut self, last: Vec<Last>) {
        if !self.last.is_empty() {
            self.last = last;
        }
    }

    /// A branch to the label `depth` blocks out, with what may have run
    /// last here.
    fn branch(&mut self, depth: u32) {
        let Some(index) = self.labels.len().checked_sub(depth as usize + 1) else {
            // A branch out of the function: a return.
            return;
        };
        let label = &mut self.labels[index];
        if label.forward {
            merge(&mut label.arriving, &self.last);
        }
    }
}

/// Adds what `from` holds to `into`.
fn merge(into: &mut Vec<Last>, from: &[Last]) {
    for last in from {
        if !into.contains(last) {
            into.push(*last);
        }
    }
}

/// Whether `op` may be a Rust lock's inlined fast path: a 32-bit atomic
/// load (a read lock's look at the state), compare-exchange (a lock),
/// swap (a mutex's unlock) or subtraction (a read-write lock's unlock).
fn is_candidate(op: &Operator) -> bool {
    matches!(
        op,
        Operator::I32AtomicLoad { .. }
            | Operator::I32AtomicRmwCmpxchg { .. }
            | Operator::I32AtomicRmwXchg { .. }
            | Operator::I32AtomicRmwSub { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Follows `wat`'s function body (calls of function 0 are slow paths)
    /// with the instructions that access memory as the instrumented ones,
    /// calling `before` with the flow before each instruction.
    fn follow(wat: &str, mut before: impl FnMut(&FastPathFlow, &Operator)) {
        let module = format!("(module (memory 1 1 shared) (func $slow) (func {wat}))");
        let wasm = wat::parse_str(module).unwrap();
        for payload in wasmparser::Parser::new(0).parse_all(&wasm) {
            let wasmparser::Payload::CodeSectionEntry(body) = payload.unwrap() else {
                continue;
            };
            let mut flow = FastPathFlow::new();
            let mut next: SiteId = 0;
            let mut reader = body.get_operators_reader().unwrap();
            while !reader.eof() {
                let op = reader.read().unwrap();
                before(&flow, &op);
                let accesses = format!("{op:?}").contains("memarg");
                let site = accesses.then(|| {
                    next += 1;
                    next - 1
                });
                flow.after(&op, site);
            }
        }
    }

    /// The fast paths the flow finds for each slow-path call of `wat`'s
    /// function body.
    fn fast_paths(wat: &str) -> Vec<Vec<SiteId>> {
        let mut found = Vec::new();
        follow(wat, |flow, op| {
            if matches!(op, Operator::Call { function_index: 0 }) {
                found.push(flow.fast_paths_of_call());
            }
        });
        found
    }

    /// What [`FastPathFlow::only_last`] says before each compare-exchange
    /// of `wat`'s function body.
    fn before_compare_exchanges(wat: &str) -> Vec<Option<SiteId>> {
        let mut found = Vec::new();
        follow(wat, |flow, op| {
            if matches!(op, Operator::I32AtomicRmwCmpxchg { .. }) {
                found.push(flow.only_last());
            }
        });
        found
    }

    #[test]
    fn a_compare_exchange_branching_to_the_call_is_its_fast_path() {
        let found = fast_paths(
            "i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg
             if call $slow end",
        );
        assert_eq!(found, [vec![0]]);
    }

    #[test]
    fn a_read_locks_load_and_compare_exchange_both_lead_to_the_call() {
        // RwLock::read as rustc lays it out: the load branches to the slow
        // path when the lock cannot be read-locked, the compare-exchange
        // branches past it when it succeeds.
        let found = fast_paths(
            "block
               block
                 i32.const 0 i32.atomic.load
                 i32.const 5 i32.gt_u br_if 0
                 i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg
                 i32.const 0 i32.eq br_if 1
               end
               call $slow
             end",
        );
        assert_eq!(found, [vec![0, 1]]);
    }

    #[test]
    fn a_read_locks_compare_exchange_directly_follows_its_load() {
        let read_lock = before_compare_exchanges(
            "block
               i32.const 0 i32.atomic.load
               i32.const 5 i32.gt_u br_if 0
               i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg drop
             end",
        );
        assert_eq!(read_lock, [Some(0)]);
        // A plain access, a call or a join of two paths between: no.
        let plain = before_compare_exchanges(
            "i32.const 0 i32.atomic.load drop i32.const 0 i32.load drop
             i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg drop",
        );
        assert_eq!(plain, [None]);
        let call = before_compare_exchanges(
            "i32.const 0 i32.atomic.load drop call $slow
             i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg drop",
        );
        assert_eq!(call, [None]);
        let two_paths = before_compare_exchanges(
            "i32.const 0 i32.atomic.load
             if i32.const 4 i32.atomic.load drop end
             i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg drop",
        );
        assert_eq!(two_paths, [None]);
    }

    #[test]
    fn another_access_call_or_loop_between_hides_the_fast_path() {
        let plain_between = fast_paths(
            "i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg drop
             i32.const 0 i32.load drop call $slow",
        );
        assert_eq!(plain_between, [Vec::<SiteId>::new()]);
        let call_between = fast_paths(
            "i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg drop
             call 1 call $slow",
        );
        // Function 1 is the body itself: a call of anything else.
        assert_eq!(call_between, [Vec::<SiteId>::new()]);
        let loop_between = fast_paths(
            "i32.const 0 i32.const 0 i32.const 1 i32.atomic.rmw.cmpxchg drop
             loop call $slow end",
        );
        assert_eq!(loop_between, [Vec::<SiteId>::new()]);
        // A plain addition is no candidate.
        let addition = fast_paths("i32.const 0 i32.const 1 i32.atomic.rmw.add drop call $slow");
        assert_eq!(addition, [Vec::<SiteId>::new()]);
    }

    #[test]
    fn a_call_after_a_branch_away_or_a_return_has_none() {
        let skipped = fast_paths(
            "block i32.const 0 i32.const 1 i32.atomic.rmw.xchg drop br 0 call $slow end",
        );
        assert_eq!(skipped, [Vec::<SiteId>::new()]);
        let after_if = fast_paths(
            "i32.const 0 i32.const 1 i32.atomic.rmw.sub
             if i32.const 0 i32.const 0 i32.atomic.rmw.xchg drop else return end
             call $slow",
        );
        // Only the swap of the `then` side reaches the call.
        assert_eq!(after_if, [vec![1]]);
    }

    #[test]
    fn an_if_without_else_lets_what_ran_before_it_through() {
        let found = fast_paths(
            "i32.const 0 i32.const 1 i32.atomic.rmw.sub
             if i32.const 0 i32.const 0 i32.atomic.rmw.xchg drop end
             call $slow",
        );
        assert_eq!(found, [vec![0, 1]]);
    }
}
