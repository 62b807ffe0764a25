//! Selectively uniform random walk (SURW), after Zhao, Wolff, Mathur and
//! Roychoudhury, "Selectively Uniform Concurrency Testing", ASPLOS 2025.
//!
//! Choosing thread `t` with probability proportional to the number of
//! events it has left samples every interleaving of those events with the
//! same probability, where a uniform choice among threads favours the
//! interleavings in which short threads finish early. SURW applies that
//! weighting only to *interesting* events, so that their interleavings are
//! sampled uniformly while the other events run in between without a say:
//! at each decision a thread is picked uniformly; if its next operation is
//! interesting, it runs only if it is the thread a weighted draw intended
//! to do the next interesting event (else it is set aside until that
//! thread's interesting event has run).
//!
//! How weft estimates what the paper assumes known ([`SurwPlan`], learnt
//! from earlier executions of the same exploration, which run the uniform
//! random strategy):
//! - the candidates are the *shared* addresses: those two threads touched,
//!   one of them writing (the paper selects events on shared objects; weft
//!   keeps only conflicting ones);
//! - each execution selects which of them are interesting, from its seed:
//!   every shared address in half of the executions, one address drawn
//!   uniformly in the other half. Selecting one variable keeps the
//!   accesses of a runtime library (allocator and thread-list locks, which
//!   every thread touches) from standing in for the program's own, and is
//!   how a bug between two accesses of one variable among many threads is
//!   found quickly; selecting all finds the bugs that span variables;
//! - a thread's weight is, summed over the selected addresses, the largest
//!   number of accesses it made to that address in one of those
//!   executions, plus the weights of the threads it created, which are
//!   taken from it when they are created (threads are identified across
//!   executions by their id, which follows creation order);
//! - a thread with no weight left that reaches an interesting event counts
//!   as having one;
//! - a thread that only lets time pass or spins (it yields, sleeps, polls)
//!   is never the intended one while another can be, and threads set aside
//!   for an intended thread that blocked or started spinning are free
//!   again: the paper's walk would keep them aside until that thread
//!   reaches an interesting event, which a thread waiting for them never
//!   does.
//!
//! An execution that reaches the step limit goes on round-robin
//! ([`super::Fair`]).

use super::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::instrument::AccessKind;
use crate::trace::{Event, EventKind, ThreadId};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// What SURW knows of a program from earlier executions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SurwPlan {
    /// Each shared address, with the most accesses each thread (by id) made
    /// to it in one execution.
    shared: BTreeMap<u32, Vec<u64>>,
    /// The thread that created each thread, by thread id.
    parents: Vec<Option<ThreadId>>,
}

impl SurwPlan {
    /// A plan learnt from the events of earlier executions.
    pub fn learn<'a>(executions: impl IntoIterator<Item = &'a [Event]>) -> Self {
        let executions: Vec<&[Event]> = executions.into_iter().collect();
        let mut plan = SurwPlan::default();
        // Addresses two threads touched, one of them writing.
        let mut touched: HashMap<u32, (ThreadId, bool, bool)> = HashMap::new();
        for events in &executions {
            for event in events.iter() {
                let EventKind::Access(kind) = event.kind else {
                    continue;
                };
                let writes = !matches!(kind, AccessKind::Load | AccessKind::AtomicLoad);
                let entry = touched
                    .entry(event.addr)
                    .or_insert((event.thread, false, false));
                entry.1 |= entry.0 != event.thread;
                entry.2 |= writes;
            }
        }
        for (&addr, _) in touched.iter().filter(|&(_, &(_, two, w))| two && w) {
            plan.shared.insert(addr, Vec::new());
        }
        for events in &executions {
            let mut own: HashMap<u32, Vec<u64>> = HashMap::new();
            for event in events.iter() {
                match event.kind {
                    EventKind::Spawn { child } => {
                        let child = child as usize;
                        if plan.parents.len() <= child {
                            plan.parents.resize(child + 1, None);
                        }
                        plan.parents[child] = Some(event.thread);
                    }
                    EventKind::Access(_) if plan.shared.contains_key(&event.addr) => {
                        let counts = own.entry(event.addr).or_default();
                        let slot = event.thread as usize;
                        if counts.len() <= slot {
                            counts.resize(slot + 1, 0);
                        }
                        counts[slot] += 1;
                    }
                    _ => {}
                }
            }
            for (addr, counts) in own {
                let most = plan.shared.get_mut(&addr).expect("a shared address");
                if most.len() < counts.len() {
                    most.resize(counts.len(), 0);
                }
                for (most, n) in most.iter_mut().zip(counts) {
                    *most = (*most).max(n);
                }
            }
        }
        plan
    }

    /// Whether the plan selects any event.
    pub fn is_empty(&self) -> bool {
        self.shared.is_empty()
    }

    /// The interesting addresses of the execution seeded with `seed`:
    /// every shared one for even seeds, one drawn with `rng` for odd ones.
    fn select(&self, seed: u64, rng: &mut Pcg64Mcg) -> BTreeSet<u32> {
        if seed.is_multiple_of(2) || self.shared.is_empty() {
            return self.shared.keys().copied().collect();
        }
        let pick = (rng.next_u64() % self.shared.len() as u64) as usize;
        self.shared.keys().nth(pick).copied().into_iter().collect()
    }

    /// Each thread's weight (by id) when `selected` are the interesting
    /// addresses: its own accesses to them and its descendants'.
    fn weights(&self, selected: &BTreeSet<u32>) -> Vec<u64> {
        let mut weights = vec![0; self.parents.len()];
        for (addr, counts) in &self.shared {
            if !selected.contains(addr) {
                continue;
            }
            if weights.len() < counts.len() {
                weights.resize(counts.len(), 0);
            }
            for (weight, n) in weights.iter_mut().zip(counts) {
                *weight += n;
            }
        }
        // Children have larger ids than their parents.
        for child in (0..weights.len()).rev() {
            if let Some(Some(parent)) = self.parents.get(child) {
                weights[*parent as usize] += weights[child];
            }
        }
        weights
    }
}

/// The SURW strategy.
#[derive(Debug)]
pub struct SurwScheduler {
    rng: Pcg64Mcg,
    seed: u64,
    plan: Arc<SurwPlan>,
    /// This execution's interesting addresses.
    selected: BTreeSet<u32>,
    /// Interesting events each thread (with the threads it has yet to
    /// create) still has, by thread id.
    weight: Vec<u64>,
    /// The thread the weighted draw chose to do the next interesting event.
    intended: Option<ThreadId>,
    /// Threads set aside at an interesting event until the intended one
    /// has done its own.
    set_aside: Vec<ThreadId>,
}

impl SurwScheduler {
    /// A SURW scheduler following `plan`, with choices determined by
    /// `seed`.
    pub fn new(seed: u64, plan: Arc<SurwPlan>) -> Self {
        SurwScheduler {
            rng: Pcg64Mcg::seed_from_u64(seed),
            seed,
            plan,
            selected: BTreeSet::new(),
            weight: Vec::new(),
            intended: None,
            set_aside: Vec::new(),
        }
    }

    fn weight_of(&self, id: ThreadId) -> u64 {
        self.weight.get(id as usize).copied().unwrap_or(0).max(1)
    }

    /// Whether the thread's next operation is interesting: an access to a
    /// selected address, or a library call whose object holds one.
    fn interesting(&self, thread: &ThreadView) -> bool {
        thread.next.is_some_and(|op| match op.object() {
            Some(object) => {
                let (start, end) = (
                    object.start as u32,
                    object.end.min(u64::from(u32::MAX)) as u32,
                );
                self.selected.range(start..end).next().is_some()
            }
            None => self.selected.contains(&op.addr),
        })
    }

    /// Draws the thread to do the next interesting event among `free`,
    /// each with probability proportional to its weight.
    fn draw_intended(&mut self, free: &[&ThreadView]) -> ThreadId {
        let total: u64 = free.iter().map(|t| self.weight_of(t.id)).sum();
        let mut pick = self.rng.next_u64() % total;
        for t in free {
            let w = self.weight_of(t.id);
            if pick < w {
                return t.id;
            }
            pick -= w;
        }
        free[free.len() - 1].id
    }
}

impl Scheduler for SurwScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        if let Some(starting) = super::keeps_a_starting_thread(enabled, current) {
            return Ok(starting);
        }
        // The threads set aside wait for the intended one; once it cannot
        // run, or only spins, they are free again.
        if let Some(t) = self.intended
            && !enabled.iter().any(|e| e.id == t && !e.yielding)
        {
            self.intended = None;
            self.set_aside.clear();
        }
        loop {
            let free: Vec<&ThreadView> = enabled
                .iter()
                .filter(|t| !self.set_aside.contains(&t.id))
                .collect();
            if free.is_empty() {
                self.set_aside.clear();
                self.intended = None;
                continue;
            }
            let picked = free[(self.rng.next_u64() % free.len() as u64) as usize];
            if !self.interesting(picked) {
                return Ok(picked.id);
            }
            let intended = match self.intended {
                Some(t) => t,
                None => {
                    // A thread that only lets time pass or spins cannot be
                    // the one others wait for.
                    let working: Vec<&ThreadView> =
                        free.iter().copied().filter(|t| !t.yielding).collect();
                    let t = self.draw_intended(if working.is_empty() { &free } else { &working });
                    self.intended = Some(t);
                    t
                }
            };
            if picked.id == intended {
                if let Some(w) = self.weight.get_mut(intended as usize) {
                    *w = w.saturating_sub(1);
                }
                self.set_aside.clear();
                self.intended = None;
                return Ok(picked.id);
            }
            self.set_aside.push(picked.id);
        }
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(super::value_in(self.rng.next_u64(), bound))
    }

    fn observe(&mut self, event: Notice<'_>) {
        match event {
            Notice::ExecutionStarted => {
                self.selected = self.plan.select(self.seed, &mut self.rng);
                self.weight = self.plan.weights(&self.selected);
                self.intended = None;
                self.set_aside.clear();
            }
            Notice::ThreadCreated(id) => {
                // The child's weight was part of its parent's.
                let Some(Some(parent)) = self.plan.parents.get(id as usize) else {
                    return;
                };
                let child = self.weight.get(id as usize).copied().unwrap_or(0);
                if let Some(w) = self.weight.get_mut(*parent as usize) {
                    *w = w.saturating_sub(child);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn access(
        thread: ThreadId,
        kind: AccessKind,
        addr: u32,
        site: crate::instrument::SiteId,
    ) -> Event {
        Event {
            thread,
            kind: EventKind::Access(kind),
            addr,
            site: Some(site),
        }
    }

    #[test]
    fn learns_shared_addresses_and_weights_with_descendants() {
        let spawn = |thread, child| Event {
            thread,
            kind: EventKind::Spawn { child },
            addr: 0,
            site: None,
        };
        let events = vec![
            spawn(0, 1),
            access(1, AccessKind::Store, 8, 10),
            access(0, AccessKind::Load, 8, 11),
            access(1, AccessKind::Store, 8, 10),
            // Only thread 1 touches 16, only reads touch 24.
            access(1, AccessKind::Store, 16, 12),
            access(0, AccessKind::AtomicLoad, 24, 13),
            access(1, AccessKind::AtomicLoad, 24, 14),
        ];
        let plan = SurwPlan::learn([events.as_slice()]);
        assert_eq!(plan.shared.keys().copied().collect::<Vec<_>>(), vec![8]);
        assert_eq!(plan.parents, vec![None, Some(0)]);
        // Thread 1 made two accesses to 8; thread 0 one, plus its child's.
        let all = plan.select(0, &mut Pcg64Mcg::seed_from_u64(0));
        assert_eq!(plan.weights(&all), vec![3, 2]);
        assert_eq!(plan.weights(&BTreeSet::new()), vec![0, 0]);
    }

    #[test]
    fn odd_seeds_select_one_shared_address() {
        let events: Vec<Event> = [8, 16, 24]
            .into_iter()
            .flat_map(|addr| {
                [
                    access(0, AccessKind::AtomicStore, addr, 1),
                    access(1, AccessKind::AtomicLoad, addr, 2),
                ]
            })
            .collect();
        let plan = SurwPlan::learn([events.as_slice()]);
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        assert_eq!(plan.select(2, &mut rng).len(), 3);
        let mut seen = HashSet::new();
        for _ in 0..30 {
            let one = plan.select(1, &mut rng);
            assert_eq!(one.len(), 1);
            seen.extend(one);
        }
        assert_eq!(seen, HashSet::from([8, 16, 24]));
    }

    #[test]
    fn a_library_call_on_an_object_that_holds_a_selected_address_is_interesting() {
        let mut surw = SurwScheduler::new(0, Arc::new(SurwPlan::default()));
        surw.selected = BTreeSet::from([1004]);
        let mut view = crate::sched::tests::views(&[0])[0];
        let call = |mutex| crate::sched::NextOp {
            kind: AccessKind::Call,
            addr: 12,
            len: 0,
            src: mutex,
            site: u32::MAX,
        };
        view.next = Some(call(1000));
        assert!(surw.interesting(&view));
        view.next = Some(call(1008));
        assert!(!surw.interesting(&view));
        // A call's function index is no address.
        surw.selected = BTreeSet::from([12]);
        assert!(!surw.interesting(&view));
    }

    #[test]
    fn uninteresting_events_run_as_picked() {
        let plan = Arc::new(SurwPlan::default());
        let mut surw = SurwScheduler::new(1, plan);
        surw.observe(Notice::ExecutionStarted);
        let enabled = crate::sched::tests::views(&[0, 1, 2]);
        let mut seen = HashSet::new();
        for step in 0..60 {
            seen.insert(surw.choose(&enabled, None, step).unwrap());
        }
        assert_eq!(seen.len(), 3);
    }
}
