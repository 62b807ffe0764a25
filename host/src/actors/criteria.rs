//! The coverage criteria: orderings of two receives of one actor.
//!
//! - PR: any two receives of the same actor.
//! - PCR: two receives of the same actor with no other receive of it in
//!   between.
//! - PBR: two receives of the same actor, at least one of which changes
//!   its behaviour, with no behaviour change of it in between.
//!
//! A set of executions covers a related pair when it achieved both orders.
//! Replies to the driver's asks are not asynchronous receives and take no
//! part.

use crate::actors::mailboxes::{ActorLog, DRIVER, Receive};
use std::collections::HashSet;

/// A coverage criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Criterion {
    /// Pair of receives.
    Pr,
    /// Pair of consecutive receives.
    Pcr,
    /// Pair of a behaviour change and a receive.
    Pbr,
}

impl Criterion {
    /// Every criterion.
    pub const ALL: [Criterion; 3] = [Criterion::Pr, Criterion::Pcr, Criterion::Pbr];

    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Criterion::Pr => "pr",
            Criterion::Pcr => "pcr",
            Criterion::Pbr => "pbr",
        }
    }
}

/// An ordering goal: the receive with the first hash before the second.
pub type Goal = (u64, u64);

/// Whether `order[a]` and `order[b]` (positions, `a < b`, indices into
/// `receives`) are related by `criterion`, in the sequence `order`.
pub fn related(
    receives: &[Receive],
    order: &[usize],
    a: usize,
    b: usize,
    criterion: Criterion,
) -> bool {
    let (ri, rj) = (&receives[order[a]], &receives[order[b]]);
    if ri.receiver != rj.receiver || ri.receiver == DRIVER {
        return false;
    }
    let between = order[a + 1..b]
        .iter()
        .map(|&k| &receives[k])
        .filter(|r| r.receiver == ri.receiver);
    match criterion {
        Criterion::Pr => true,
        Criterion::Pcr => between.count() == 0,
        Criterion::Pbr => {
            (ri.became.is_some() || rj.became.is_some())
                && between.filter(|r| r.became.is_some()).count() == 0
        }
    }
}

/// The goals a sequence of receives achieves.
pub fn goals_of(receives: &[Receive], order: &[usize], criterion: Criterion) -> HashSet<Goal> {
    let mut out = HashSet::new();
    for a in 0..order.len() {
        for b in a + 1..order.len() {
            if related(receives, order, a, b, criterion) {
                out.insert((receives[order[a]].hash, receives[order[b]].hash));
            }
        }
    }
    out
}

/// The goals an execution achieved.
pub fn goals(log: &ActorLog, criterion: Criterion) -> HashSet<Goal> {
    let order: Vec<usize> = (0..log.receives.len()).collect();
    goals_of(&log.receives, &order, criterion)
}

/// Covered pairs (both orders achieved) and related pairs seen, from the
/// goals achieved.
pub fn coverage(achieved: &HashSet<Goal>) -> (usize, usize) {
    let mut pairs: HashSet<(u64, u64)> = HashSet::new();
    let mut covered = 0;
    for &(a, b) in achieved {
        let key = (a.min(b), a.max(b));
        if pairs.insert(key) && achieved.contains(&(b, a)) {
            covered += 1;
        }
    }
    (covered, pairs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receive(hash: u64, receiver: u32, became: bool) -> Receive {
        Receive {
            hash,
            receiver,
            sender: DRIVER,
            kind: String::new(),
            sent_in: None,
            after_quiet: 0,
            became: became.then(|| "b".to_string()),
        }
    }

    #[test]
    fn criteria_relate_receives_of_one_actor() {
        let r = vec![
            receive(1, 0, false),
            receive(2, 1, false),
            receive(3, 0, true),
            receive(4, 0, false),
        ];
        let order = [0, 1, 2, 3];
        assert!(related(&r, &order, 0, 2, Criterion::Pr));
        assert!(
            !related(&r, &order, 0, 1, Criterion::Pr),
            "different actors"
        );
        assert!(related(&r, &order, 0, 2, Criterion::Pcr), "actor 1 between");
        assert!(!related(&r, &order, 0, 3, Criterion::Pcr));
        assert!(related(&r, &order, 2, 3, Criterion::Pbr));
        assert!(
            !related(&r, &order, 0, 3, Criterion::Pbr),
            "a change between"
        );
        let g = goals_of(&r, &order, Criterion::Pr);
        assert!(g.contains(&(1, 3)) && g.contains(&(3, 4)) && !g.contains(&(3, 1)));
        assert_eq!(coverage(&g), (0, 3));
        let mut both = g.clone();
        both.insert((3, 1));
        assert_eq!(coverage(&both), (1, 3));
    }
}
