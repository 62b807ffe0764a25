//! Random scheduling: at every scheduling point, any enabled thread runs
//! next with equal probability.
//!
//! Simple and effective for bugs that need few preemptions at common points;
//! weak for bugs that need one specific thread to run for a long stretch
//! (PCT covers those).

use super::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Uniformly random choice among the enabled threads, from a seeded PCG.
#[derive(Debug)]
pub struct RandomScheduler {
    /// Generator.
    rng: Pcg64Mcg,
    /// The committed decisions drawn so far: how many, and the thread the
    /// draw after them picked (another than the running one), if one did.
    committed: Option<(u64, Option<ThreadId>)>,
    /// The thread the next decision picks: drawn while committing, for the
    /// decision right after the committed ones.
    drawn: Option<ThreadId>,
    /// The enabled threads that draw was among; it stands only for a
    /// decision among the same threads.
    drawn_among: Vec<ThreadId>,
}

impl RandomScheduler {
    /// A scheduler whose choices are determined by `seed`.
    pub fn new(seed: u64) -> Self {
        RandomScheduler {
            rng: Pcg64Mcg::seed_from_u64(seed),
            committed: None,
            drawn: None,
            drawn_among: Vec::new(),
        }
    }

    /// One uniform draw among `enabled`.
    fn draw(&mut self, enabled: &[ThreadView]) -> ThreadId {
        let pick = (self.rng.next_u64() % enabled.len() as u64) as usize;
        enabled[pick].id
    }
}

impl Scheduler for RandomScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        if let Some(starting) = super::keeps_a_starting_thread(enabled, current) {
            return Ok(starting);
        }
        if let Some(drawn) = self.drawn.take()
            && enabled
                .iter()
                .map(|t| t.id)
                .eq(self.drawn_among.iter().copied())
        {
            return Ok(drawn);
        }
        Ok(self.draw(enabled))
    }

    /// Draws the decisions ahead, one draw each as `choose` would, until one
    /// picks another thread or `max` keep `current`. Each decision is
    /// independent, so drawing them early changes nothing about how likely
    /// any schedule is: the draw that picked another thread stands for the
    /// decision right after the committed ones, among the same threads; a
    /// run cut short discards it.
    fn keeps(&mut self, enabled: &[ThreadView], current: ThreadId, _step: u64, max: u64) -> u64 {
        let mut kept = 0;
        let mut next = None;
        while kept < max {
            let pick = self.draw(enabled);
            if pick != current {
                next = Some(pick);
                break;
            }
            kept += 1;
        }
        self.committed = Some((kept, next));
        self.drawn_among.clear();
        self.drawn_among.extend(enabled.iter().map(|t| t.id));
        kept
    }

    /// Every enabled thread has a chance at every decision.
    fn fair_by_itself(&self) -> bool {
        true
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(super::value_in(self.rng.next_u64(), bound))
    }

    fn observe(&mut self, event: Notice<'_>) {
        match event {
            Notice::ExecutionStarted => {
                self.committed = None;
                self.drawn = None;
            }
            Notice::KeepsPassed(passed) => {
                if let Some((kept, next)) = self.committed.take()
                    && passed == kept
                {
                    self.drawn = next;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::views;

    #[test]
    fn same_seed_same_choices_and_all_threads_chosen() {
        let enabled = views(&[0, 1, 2]);
        let run = |seed| {
            let mut s = RandomScheduler::new(seed);
            (0..64)
                .map(|i| s.choose(&enabled, None, i).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let choices = run(7);
        for id in 0..3 {
            assert!(choices.contains(&id));
        }
    }

    /// Decisions of `steps` points where `enabled` stays the same, the
    /// running thread being the last one chosen; with `commit`, runs of
    /// kept decisions are committed ahead as the runtime does.
    fn decisions(seed: u64, enabled: &[ThreadView], steps: u64, commit: bool) -> Vec<ThreadId> {
        let mut s = RandomScheduler::new(seed);
        s.observe(Notice::ExecutionStarted);
        let mut out = Vec::new();
        let mut current = enabled[0].id;
        while (out.len() as u64) < steps {
            let chosen = s.choose(enabled, Some(current), out.len() as u64).unwrap();
            out.push(chosen);
            if commit && chosen == current {
                let room = steps - out.len() as u64;
                let kept = s.keeps(enabled, current, out.len() as u64, room.min(5));
                out.extend(std::iter::repeat_n(current, kept as usize));
                s.observe(Notice::KeepsPassed(kept));
            }
            current = chosen;
        }
        out
    }

    #[test]
    fn committed_decisions_are_the_decisions_one_by_one() {
        for n in [2, 3] {
            let enabled = views(&(0..n).collect::<Vec<_>>());
            for seed in 0..20 {
                assert_eq!(
                    decisions(seed, &enabled, 200, true),
                    decisions(seed, &enabled, 200, false),
                    "seed {seed}, {n} threads"
                );
            }
        }
    }

    #[test]
    fn a_run_cut_short_or_among_other_threads_draws_afresh() {
        let two = views(&[0, 1]);
        let three = views(&[0, 1, 2]);
        for cut_short in [false, true] {
            let mut s = RandomScheduler::new(3);
            // A commitment that ends with a draw for thread 1.
            let kept = loop {
                let kept = s.keeps(&two, 0, 0, 8);
                if kept > 0 && kept < 8 {
                    break kept;
                }
            };
            s.observe(Notice::KeepsPassed(if cut_short { kept - 1 } else { kept }));
            let fresh = |s: &RandomScheduler, among: &[ThreadView]| {
                let mut rng = s.rng.clone();
                among[(rng.next_u64() % among.len() as u64) as usize].id
            };
            if cut_short {
                // The draw after the committed decisions does not stand.
                let expected = fresh(&s, &two);
                assert_eq!(s.choose(&two, Some(0), 9).unwrap(), expected);
            } else {
                // Among other threads, the drawn thread does not stand.
                let expected = fresh(&s, &three);
                assert_eq!(s.choose(&three, Some(0), 9).unwrap(), expected);
            }
        }
    }
}
