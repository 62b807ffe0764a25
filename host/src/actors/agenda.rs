//! What Bita runs next: the generated schedule expected to cover the most
//! pairs, or a free (uniformly random) execution when free executions have
//! been covering more than that schedule would.
//!
//! A schedule's worth is the number of its aims that are still open and
//! would complete a pair (the other order is achieved): goals reached by
//! other executions since it was generated make it worth less. It is
//! scaled by what followed schedules covered per aim so far (their free
//! deliveries after the schedule cover pairs too). A free execution's worth
//! is the mean number of pairs the free executions after the first one
//! covered (the first cannot cover anything: no order is known yet); it is
//! measured once the worthiest schedule of the first execution has run.

use super::criteria::Goal;
use std::collections::HashSet;

/// A schedule to run, and the goals (by criterion slot) it aims at.
pub type Planned = (Vec<u64>, Vec<(usize, Goal)>);

/// The generated schedules not run yet, and what free executions gained.
#[derive(Debug, Default)]
pub struct Agenda {
    planned: Vec<Planned>,
    /// Free executions measured (the first execution is not).
    free_runs: u64,
    /// Pairs those executions covered.
    free_gain: u64,
    /// Aims of the schedules followed, worth when they were chosen.
    followed_worth: u64,
    /// Pairs those executions covered.
    followed_gain: u64,
    /// Whether any schedule was followed.
    followed_once: bool,
}

impl Agenda {
    /// Adds a generated schedule.
    pub fn push(&mut self, planned: Planned) {
        self.planned.push(planned);
    }

    /// The next schedule to follow and its worth, or `None` for a free
    /// execution; `achieved` holds the orders achieved so far, by criterion
    /// slot.
    pub fn next(&mut self, achieved: &[HashSet<Goal>]) -> Option<(Planned, u64)> {
        let completes = |&(c, (a, b)): &(usize, Goal)| {
            !achieved[c].contains(&(a, b)) && achieved[c].contains(&(b, a))
        };
        let (best, worth) = self
            .planned
            .iter()
            .map(|(_, aims)| aims.iter().filter(|aim| completes(aim)).count())
            .enumerate()
            // The oldest among equals.
            .rev()
            .max_by_key(|&(_, worth)| worth)?;
        let free_worth =
            (self.free_runs > 0).then(|| self.free_gain as f64 / self.free_runs as f64);
        let per_aim = (self.followed_gain + 1) as f64 / (self.followed_worth + 1) as f64;
        let follow = match free_worth {
            Some(mean) => worth as f64 * per_aim.max(1.0) >= mean,
            // The worthiest schedule of the first execution runs before
            // the free executions are measured.
            None => !self.followed_once,
        };
        if !follow {
            return None;
        }
        self.followed_once = true;
        Some((self.planned.remove(best), worth as u64))
    }

    /// A schedule chosen with `worth` was followed and covered `gain` pairs.
    pub fn followed(&mut self, worth: u64, gain: u64) {
        self.followed_worth += worth;
        self.followed_gain += gain;
    }

    /// A free execution that was not the first one covered `gain` pairs.
    pub fn free_finished(&mut self, gain: u64) {
        self.free_runs += 1;
        self.free_gain += gain;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn achieved(orders: &[Goal]) -> Vec<HashSet<Goal>> {
        vec![orders.iter().copied().collect()]
    }

    #[test]
    fn runs_the_worthiest_schedule_then_measures_a_free_execution() {
        let mut agenda = Agenda::default();
        let done = achieved(&[(1, 2), (3, 4), (5, 6)]);
        agenda.push((vec![10], vec![(0, (2, 1))]));
        agenda.push((vec![20], vec![(0, (4, 3)), (0, (6, 5))]));
        agenda.push((vec![30], vec![(0, (4, 3)), (0, (6, 5))]));
        // The oldest of the worthiest.
        assert_eq!(
            agenda.next(&done).map(|(p, worth)| (p.0, worth)),
            Some((vec![20], 2))
        );
        agenda.followed(2, 2);
        // Nothing known of free executions yet: run one.
        assert_eq!(agenda.next(&done), None);
        agenda.free_finished(1);
        assert_eq!(agenda.next(&done).map(|(p, _)| p.0), Some(vec![30]));
        assert_eq!(agenda.next(&done).map(|(p, _)| p.0), Some(vec![10]));
        assert_eq!(agenda.next(&done), None, "nothing left");
    }

    #[test]
    fn prefers_free_executions_while_they_cover_more() {
        let mut agenda = Agenda::default();
        agenda.followed(1, 1);
        agenda.free_finished(5);
        agenda.push((vec![10], vec![(0, (2, 1)), (0, (4, 3))]));
        // An aim already achieved, or whose other order is unknown, is
        // worth nothing.
        let done = achieved(&[(1, 2), (2, 1)]);
        assert_eq!(agenda.next(&done), None);
        agenda.free_finished(0);
        agenda.free_finished(0);
        agenda.free_finished(0);
        agenda.free_finished(0);
        // Mean gain 1: a schedule worth 1 runs.
        let done = achieved(&[(1, 2), (3, 4)]);
        assert_eq!(agenda.next(&done).map(|(p, _)| p.0), Some(vec![10]));
    }

    #[test]
    fn a_schedule_is_worth_what_followed_ones_covered_per_aim() {
        let mut agenda = Agenda::default();
        agenda.free_finished(3);
        agenda.push((vec![10], vec![(0, (2, 1))]));
        let done = achieved(&[(1, 2)]);
        // Followed schedules covered 1 pair per aim: worth 1 < 3.
        agenda.followed(4, 4);
        assert_eq!(agenda.next(&done), None);
        // 15 pairs over 4 aims (16 / 5 with one of each assumed): worth 3.2.
        agenda.followed(0, 11);
        assert_eq!(agenda.next(&done).map(|(p, _)| p.0), Some(vec![10]));
    }
}
