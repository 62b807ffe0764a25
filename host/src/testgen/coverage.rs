//! Concurrent method pairs: which pairs of methods ran at the same time
//! (covered count `c`), how often each was chosen (tried count `r`), and
//! CovCon's choice of the next pair.
//!
//! Two calls overlap when one starts while the other is running (its entry
//! seen, its exit not yet). The score of a pair is 0 if it was never tried,
//! else `max(|r - c|, 1) * max(r, 1)`; lower scores come first. Pairs are
//! drawn at random from the lowest-scored ones (100, or a quarter of all
//! pairs when there are fewer than 400), recomputed when that set is used
//! up.
//!
//! `c` counts the overlaps of every run, and weft runs each test under
//! several schedules (the paper ran it once), so `c` outgrows `r` and the
//! order is in effect by covered count: the least covered pairs first.
//! Adding a test's overlaps per run instead (which keeps `c` on the
//! paper's scale) made CovCon need 1.19x more tests over the 220 runs of
//! `./x compare-classes` (geometric mean of the per-seed ratios, t = 3.3,
//! on the class subjects as they were before they grew to 9-11 methods),
//! so `c` stays as it is.

use super::class::Class;
use super::plan::{Report, Test};
use crate::activity::{Activity, Entry};
use crate::instrument::SiteTable;
use rand_core::RngCore;

/// Coverage of the concurrent method pairs of one class.
#[derive(Clone, Debug)]
pub struct PairCoverage {
    methods: usize,
    covered: Vec<u64>,
    tried: Vec<u64>,
    pool: Vec<usize>,
}

impl PairCoverage {
    /// No pair covered or tried yet, for a class of `methods` methods.
    pub fn new(methods: usize) -> Self {
        let pairs = methods * (methods + 1) / 2;
        PairCoverage {
            methods,
            covered: vec![0; pairs],
            tried: vec![0; pairs],
            pool: Vec::new(),
        }
    }

    /// Index of the unordered pair `(a, b)`.
    pub fn pair(&self, a: usize, b: usize) -> usize {
        let (i, j) = (a.min(b), a.max(b));
        i * self.methods - i * (i + 1) / 2 + j
    }

    /// The methods of pair `p`.
    pub fn methods_of(&self, p: usize) -> (usize, usize) {
        let mut k = 0;
        for i in 0..self.methods {
            for j in i..self.methods {
                if k == p {
                    return (i, j);
                }
                k += 1;
            }
        }
        (0, 0)
    }

    /// Number of pairs.
    pub fn pairs(&self) -> usize {
        self.covered.len()
    }

    /// Pairs covered at least once.
    pub fn covered_pairs(&self) -> usize {
        self.covered.iter().filter(|&&c| c > 0).count()
    }

    /// How often pair `p` was tried.
    pub fn tried(&self, p: usize) -> u64 {
        self.tried[p]
    }

    fn score(&self, p: usize) -> u64 {
        let (r, c) = (self.tried[p], self.covered[p]);
        if r == 0 {
            0
        } else {
            r.abs_diff(c).max(1) * r.max(1)
        }
    }

    /// Picks the next pair (CovCon's prioritisation) and counts it tried.
    pub fn choose(&mut self, rng: &mut impl RngCore) -> usize {
        if self.pool.is_empty() {
            let mut order: Vec<usize> = (0..self.pairs()).collect();
            order.sort_by_key(|&p| (self.score(p), p));
            let size = if self.pairs() < 400 {
                (self.pairs() / 4).max(1)
            } else {
                100
            };
            order.truncate(size);
            self.pool = order;
        }
        let pick = self
            .pool
            .swap_remove((rng.next_u64() % self.pool.len() as u64) as usize);
        self.tried[pick] += 1;
        pick
    }

    /// Counts the pairs that overlapped in one run (Algorithm 1: a method
    /// starting counts once with every method other threads are in).
    /// `events` are (thread, method, entered), in the order they happened.
    pub fn update(&mut self, events: &[MethodEvent]) {
        let mut stacks: Vec<(usize, Vec<usize>)> = Vec::new();
        for &(thread, method, entered) in events {
            if entered {
                for (other, stack) in &stacks {
                    if *other == thread {
                        continue;
                    }
                    for &m in stack {
                        let p = self.pair(method, m);
                        self.covered[p] += 1;
                    }
                }
                match stacks.iter_mut().find(|(t, _)| *t == thread) {
                    Some((_, stack)) => stack.push(method),
                    None => stacks.push((thread, vec![method])),
                }
            } else if let Some((_, stack)) = stacks.iter_mut().find(|(t, _)| *t == thread) {
                stack.pop();
            }
        }
    }
}

/// A method entry or exit: (thread, method, entered).
pub type MethodEvent = (usize, usize, bool);

/// The top-level calls a driver reported, as method events (phases stand
/// for threads).
pub fn report_events(test: &Test, report: &Report) -> Vec<MethodEvent> {
    report
        .events
        .iter()
        .filter_map(|&(phase, call, entered)| {
            let method = test.call(call)?.method?;
            Some((phase as usize, method, entered))
        })
        .collect()
}

/// Every method entry and exit of an execution, nested calls included:
/// the driver's calls (`weft.gen_call`) and calls of a method's function
/// from inside the module (a module loaded with `log_calls`).
pub fn activity_events(activity: &[Entry], sites: &SiteTable, class: &Class) -> Vec<MethodEvent> {
    let by_func = |func: u32| class.methods.iter().position(|m| m.func == func);
    activity
        .iter()
        .filter_map(|e| {
            let thread = e.thread as usize;
            match e.activity {
                // Number 0 is the constructor; method k is number k + 1.
                Activity::GenEnter(n) if n > 0 => Some((thread, n as usize - 1, true)),
                Activity::GenExit(n) if n > 0 => Some((thread, n as usize - 1, false)),
                Activity::Call(site) => {
                    let m = by_func(sites.get(site)?.callee?)?;
                    Some((thread, m, true))
                }
                Activity::Returned(site) => {
                    let m = by_func(sites.get(site)?.callee?)?;
                    Some((thread, m, false))
                }
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testgen::plan::{Arg, Call};
    use rand_core::SeedableRng;

    #[test]
    fn pairs_index_both_ways_and_untried_pairs_come_first() {
        let mut c = PairCoverage::new(3);
        assert_eq!(c.pairs(), 6);
        for p in 0..6 {
            let (a, b) = c.methods_of(p);
            assert_eq!(c.pair(a, b), p);
            assert_eq!(c.pair(b, a), p);
        }
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let first: Vec<usize> = (0..6).map(|_| c.choose(&mut rng)).collect();
        let mut sorted = first.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            vec![0, 1, 2, 3, 4, 5],
            "every pair once before any twice"
        );
    }

    #[test]
    fn overlapping_calls_cover_their_pair() {
        let call = |m| Call {
            method: Some(m),
            args: vec![Arg::Result(0)],
        };
        let test = Test {
            prefix: vec![Call {
                method: None,
                args: vec![],
            }],
            suffixes: [vec![call(0)], vec![call(1)]],
        };
        let mut c = PairCoverage::new(2);
        let report = Report {
            events: vec![(1, 1, true), (2, 2, true), (2, 2, false), (1, 1, false)],
            results: vec![],
        };
        c.update(&report_events(&test, &report));
        assert_eq!(c.covered_pairs(), 1);
        assert_eq!(c.covered[c.pair(0, 1)], 1);
        // A nested call counts too: thread 1 in method 0 calls method 1
        // while thread 2 enters method 1.
        let mut c = PairCoverage::new(2);
        c.update(&[
            (1, 0, true),
            (1, 1, true),
            (2, 1, true),
            (2, 1, false),
            (1, 1, false),
            (1, 0, false),
        ]);
        assert_eq!(c.covered[c.pair(1, 0)], 1);
        assert_eq!(c.covered[c.pair(1, 1)], 1);
    }
}
