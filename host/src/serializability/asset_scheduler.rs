//! AssetFuzzer's phase II: an active scheduler that tries to make one
//! potential atomic-set violation happen.
//!
//! The target is a pattern's accesses by code site: `u`'s first access
//! `e_i`, then `u'`'s `e_k` (and `e_l`), then `u`'s next access `e_j`. At
//! every decision the scheduler picks at random among the enabled threads
//! it does not postpone:
//! - before `e_i` happened, a thread about to perform `e_k` is postponed;
//! - after `e_i`, `u`'s thread is postponed (at once when its vulnerable
//!   window lockset is empty, else once it released a lock) until `u'` has
//!   done its accesses; then `u'`'s thread is postponed the same way, so
//!   that `u` performs `e_j`;
//! - when every enabled thread is postponed, a random one runs anyway.
//!
//! Postponing only ever means choosing another enabled thread, so the
//! decisions replay without this scheduler.

use crate::instrument::SiteId;
use crate::sched::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A potential violation to make happen, by the code sites of its accesses
/// in pattern order and the role of each (`true`: `u`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Site of each access, in pattern order.
    pub sites: Vec<SiteId>,
    /// Whether each access is `u`'s (else `u'`'s).
    pub by_u: Vec<bool>,
    /// `u` releases no lock inside the window: postpone it at once.
    pub vwls_empty: bool,
}

/// The active scheduler of phase II.
#[derive(Debug)]
pub struct AssetScheduler {
    rng: Pcg64Mcg,
    target: Target,
    /// Accesses of the target done so far (a prefix of the pattern).
    done: usize,
    /// Thread of `u` and of `u'` once known.
    u: Option<ThreadId>,
    v: Option<ThreadId>,
    /// Locks the role's thread held when it made its last access of the
    /// target.
    locks_at: [u32; 2],
}

impl AssetScheduler {
    /// A scheduler aiming at `target`, with choices determined by `seed`.
    pub fn new(seed: u64, target: Target) -> Self {
        AssetScheduler {
            rng: Pcg64Mcg::seed_from_u64(seed),
            target,
            done: 0,
            u: None,
            v: None,
            locks_at: [0, 0],
        }
    }

    /// Whether the target's accesses all happened in the last execution.
    pub fn reached(&self) -> bool {
        self.done == self.target.sites.len()
    }

    fn role_thread(&self, by_u: bool) -> Option<ThreadId> {
        if by_u { self.u } else { self.v }
    }

    /// Whether thread `t` must wait now.
    fn postponed(&self, t: &ThreadView) -> bool {
        let sites = &self.target.sites;
        if self.done == 0 {
            // e_k (the first access of u') must not come before e_i.
            let first_v = self.target.by_u.iter().position(|u| !u);
            return first_v.is_some_and(|k| t.next.is_some_and(|op| op.site == sites[k]));
        }
        if self.reached() {
            return false;
        }
        // The role whose turn it is not waits, once it has started.
        let waiting_is_u = !self.target.by_u[self.done];
        let Some(waiting) = self.role_thread(waiting_is_u) else {
            return false;
        };
        if t.id != waiting {
            return false;
        }
        let released = t.locks_held < self.locks_at[slot(waiting_is_u)];
        self.target.vwls_empty || released
    }

    /// Notes that `t`, about to make its pending access, was chosen.
    fn advance(&mut self, t: &ThreadView) {
        let Some(site) = t.next.map(|op| op.site) else {
            return;
        };
        if self.reached() || site != self.target.sites[self.done] {
            return;
        }
        let by_u = self.target.by_u[self.done];
        match self.role_thread(by_u) {
            Some(thread) if thread != t.id => return,
            Some(_) => {}
            None => {
                // The two roles are different threads.
                if self.role_thread(!by_u) == Some(t.id) {
                    return;
                }
                if by_u {
                    self.u = Some(t.id);
                } else {
                    self.v = Some(t.id);
                }
            }
        }
        self.locks_at[slot(by_u)] = t.locks_held;
        self.done += 1;
    }
}

/// Index of a role in per-role arrays.
fn slot(by_u: bool) -> usize {
    if by_u { 0 } else { 1 }
}

impl Scheduler for AssetScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        _current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let free: Vec<&ThreadView> = enabled.iter().filter(|t| !self.postponed(t)).collect();
        let pool: Vec<&ThreadView> = if free.is_empty() {
            enabled.iter().collect()
        } else {
            free
        };
        let chosen = *pool[(self.rng.next_u64() % pool.len() as u64) as usize];
        self.advance(&chosen);
        Ok(chosen.id)
    }

    /// Every enabled thread has a chance at every decision.
    fn fair_by_itself(&self) -> bool {
        true
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(crate::sched::value_in(self.rng.next_u64(), bound))
    }

    fn observe(&mut self, event: Notice<'_>) {
        if let Notice::ExecutionStarted = event {
            self.done = 0;
            self.u = None;
            self.v = None;
            self.locks_at = [0, 0];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(id: ThreadId, pending: Option<SiteId>) -> ThreadView {
        ThreadView {
            id,
            yielding: false,
            polling: false,
            wakes_at: None,
            next: pending.map(|site| crate::sched::NextOp {
                kind: crate::instrument::AccessKind::Load,
                addr: 0,
                len: 4,
                src: 0,
                site,
            }),
            locks_held: 0,
            starting: false,
        }
    }

    #[test]
    fn drives_u_prime_between_the_two_accesses_of_u() {
        // Pattern 9: u reads site 1, u' writes 2 and 3, u reads 4.
        let target = Target {
            sites: vec![1, 2, 3, 4],
            by_u: vec![true, false, false, true],
            vwls_empty: true,
        };
        for seed in 0..20 {
            let mut s = AssetScheduler::new(seed, target.clone());
            // u' may not write before u's first read.
            assert_eq!(
                s.choose(&[view(1, Some(1)), view(2, Some(2))], None, 0)
                    .unwrap(),
                1
            );
            // u is postponed now; u' writes twice.
            assert_eq!(
                s.choose(&[view(1, Some(4)), view(2, Some(2))], None, 1)
                    .unwrap(),
                2
            );
            assert_eq!(
                s.choose(&[view(1, Some(4)), view(2, Some(3))], None, 2)
                    .unwrap(),
                2
            );
            // Now u' waits and u reads again.
            assert_eq!(
                s.choose(&[view(1, Some(4)), view(2, Some(9))], None, 3)
                    .unwrap(),
                1
            );
            assert!(s.reached());
        }
    }

    #[test]
    fn everyone_postponed_means_someone_runs() {
        let target = Target {
            sites: vec![1, 2, 4],
            by_u: vec![true, false, true],
            vwls_empty: true,
        };
        let mut s = AssetScheduler::new(1, target);
        assert_eq!(s.choose(&[view(1, Some(1))], None, 0).unwrap(), 1);
        // Only u can run, and it is postponed: it runs anyway.
        assert_eq!(s.choose(&[view(1, Some(4))], None, 1).unwrap(), 1);
    }
}
