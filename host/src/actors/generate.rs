//! Bita's schedule generation: from an execution's receives, schedules
//! (prefixes of receive hashes to enforce) that achieve orderings of
//! related receives not achieved yet.
//!
//! For every related pair `ri`, `rj` (`i < j`) not ordered by
//! must-happen-before, and each order of it not achieved: keep the
//! receives before `ri`, then those between that must precede `rj`, then
//! the pair in the wanted order. The receives after it that do not depend
//! on the pair form a tail, where the next not-yet-achieved ordering is
//! scheduled the same way. For PR the pair's second receive is pinned to
//! the end of the schedule, after every goal its tail schedules (each of
//! which also comes before it, a goal more); for PCR and PBR the pair stays
//! adjacent.

use super::criteria::{Criterion, Goal, goals_of, related};
use super::mhb::must_happen_before;
use crate::actors::mailboxes::{ActorLog, Receive};
use std::collections::HashSet;

/// How deep the tail may be rescheduled.
const MAX_DEPTH: usize = 32;

struct Generator<'a> {
    receives: &'a [Receive],
    mhb: Vec<Vec<bool>>,
    criterion: Criterion,
    achieved: &'a HashSet<Goal>,
}

impl Generator<'_> {
    fn ordered(&self, a: usize, b: usize) -> bool {
        self.mhb[a][b] || self.mhb[b][a]
    }

    fn hash(&self, k: usize) -> u64 {
        self.receives[k].hash
    }

    /// The schedule for the pair `seq[i]`, `seq[j]` (in that order, or
    /// swapped): the receives before `seq[i]`, those between that `seq[j]`
    /// must come after, then the pair. For PR, the pair's second receive is
    /// pinned: it goes to the end of the schedule, so every goal the tail
    /// schedules comes before it.
    fn schedule(
        &self,
        seq: &[usize],
        (i, j): (usize, usize),
        swap: bool,
        mut pinned: Vec<usize>,
        depth: usize,
    ) -> Vec<usize> {
        let (ri, rj) = (seq[i], seq[j]);
        let mut prefix: Vec<usize> = seq[..i].to_vec();
        prefix.extend(seq[i + 1..j].iter().copied().filter(|&k| self.mhb[k][rj]));
        if swap {
            prefix.extend([rj, ri]);
        } else {
            prefix.extend([ri, rj]);
        }
        let tail: Vec<usize> = seq[i + 1..]
            .iter()
            .copied()
            .filter(|k| !prefix.contains(k) && !self.mhb[ri][*k] && !self.mhb[rj][*k])
            .collect();
        if self.criterion == Criterion::Pr {
            pinned.extend(prefix.pop());
        }
        self.schedule_tail(prefix, tail, pinned, depth)
    }

    /// Schedules the first goal of `tail` not achieved yet after `prefix`,
    /// while the depth allows; then the `pinned` receives (PR's second
    /// receives, the first pinned last).
    fn schedule_tail(
        &self,
        prefix: Vec<usize>,
        tail: Vec<usize>,
        pinned: Vec<usize>,
        depth: usize,
    ) -> Vec<usize> {
        if depth < MAX_DEPTH {
            let seq: Vec<usize> = prefix.iter().chain(&tail).copied().collect();
            let base = prefix.len();
            for a in 0..tail.len() {
                for b in a + 1..tail.len() {
                    let (x, y) = (tail[a], tail[b]);
                    if self.ordered(x, y)
                        || !related(self.receives, &seq, base + a, base + b, self.criterion)
                    {
                        continue;
                    }
                    for swap in [false, true] {
                        let goal = if swap { (y, x) } else { (x, y) };
                        if !self
                            .achieved
                            .contains(&(self.hash(goal.0), self.hash(goal.1)))
                        {
                            let pair = (base + a, base + b);
                            return self.schedule(&seq, pair, swap, pinned, depth + 1);
                        }
                    }
                }
            }
        }
        let mut out = prefix;
        out.extend(pinned.into_iter().rev());
        out
    }
}

/// A generated schedule and the goals it aims at (those it planned first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// Receive hashes to deliver in this order.
    pub schedule: Vec<u64>,
    /// Goals this schedule added to the planned set.
    pub aims: Vec<Goal>,
}

/// New schedules from `log` for goals of `criterion` not in `planned`; the
/// goals each schedule plans are added to `planned`.
pub fn generate(
    log: &ActorLog,
    criterion: Criterion,
    planned: &mut HashSet<Goal>,
) -> Vec<Generated> {
    let n = log.receives.len();
    let seq: Vec<usize> = (0..n).collect();
    let mhb = must_happen_before(log);
    let mut out = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if mhb[i][j] || !related(&log.receives, &seq, i, j, criterion) {
                continue;
            }
            let (hi, hj) = (log.receives[i].hash, log.receives[j].hash);
            for (swap, goal) in [(false, (hi, hj)), (true, (hj, hi))] {
                if planned.contains(&goal) {
                    continue;
                }
                let generator = Generator {
                    receives: &log.receives,
                    mhb: mhb.clone(),
                    criterion,
                    achieved: planned,
                };
                let schedule = generator.schedule(&seq, (i, j), swap, Vec::new(), 0);
                // The pair itself counts even where the PR tail moved it.
                let mut aims: Vec<Goal> = goals_of(&log.receives, &schedule, criterion)
                    .into_iter()
                    .chain([goal])
                    .filter(|g| planned.insert(*g))
                    .collect();
                aims.sort_unstable();
                out.push(Generated {
                    schedule: schedule.iter().map(|&k| log.receives[k].hash).collect(),
                    aims,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::mailboxes::{ActorInfo, DRIVER};

    /// Bita's worked example with one action: ex (driver -> action), w
    /// (action -> writer), ad (action -> terminator), fl (terminator ->
    /// writer), fd (writer -> terminator).
    fn gatling() -> ActorLog {
        let actor = |kind: &str| ActorInfo {
            kind: kind.into(),
            hash: 0,
            created_in: None,
        };
        let (writer, terminator, action) = (0, 1, 2);
        let r = |hash, receiver, sender, sent_in| Receive {
            hash,
            receiver,
            sender,
            kind: String::new(),
            sent_in,
            after_quiet: 0,
            became: None,
        };
        ActorLog {
            actors: vec![actor("Writer"), actor("Terminator"), actor("Action")],
            receives: vec![
                r(1, action, DRIVER, None),
                r(2, writer, action, Some(0)),
                r(3, terminator, action, Some(0)),
                r(4, writer, terminator, Some(2)),
                r(5, terminator, writer, Some(3)),
            ],
            undelivered: 0,
        }
    }

    #[test]
    fn pr_puts_the_flush_before_the_write() {
        let log = gatling();
        let mut planned = super::super::criteria::goals(&log, Criterion::Pr);
        let generated = generate(&log, Criterion::Pr, &mut planned);
        // The only unordered related pair is w / fl at the writer.
        assert_eq!(generated.len(), 1);
        assert_eq!(generated[0].schedule, vec![1, 3, 4, 2], "<ex, ad, fl, w>");
        assert_eq!(generated[0].aims, vec![(4, 2)]);
        // Nothing left to generate.
        assert!(generate(&log, Criterion::Pr, &mut planned).is_empty());
    }
}
