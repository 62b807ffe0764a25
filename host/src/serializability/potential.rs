//! AssetFuzzer's phase I: from the accesses of a profiling execution, the
//! pattern instances that another schedule could produce.
//!
//! For two units of work of different threads on one atomic set, every way
//! their accesses could fill a pattern (each unit's accesses in program
//! order) is kept if
//! - the pattern's order contradicts no relaxed happens-before edge
//!   (program order, thread creation, wait/notify), and
//! - no lock that one unit holds throughout a window of the pattern (from
//!   one of its accesses to its next one, without releasing it in between)
//!   is held by the other unit's accesses inside that window.
//!
//! The vulnerable-window lockset (VWLS) of `u`: the locks it holds at its
//! first access of the pattern and releases before its next one. Phase II
//! postpones `u` at once when it is empty, else only after the release.

use super::patterns::{Loc, PATTERNS, Role};
use crate::instrument::SiteId;
use crate::serializability::atomic_sets::{SetAccess, SetLog, happens_before};
use std::collections::HashSet;

/// A pattern instance that could happen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Potential {
    /// Index in [`PATTERNS`].
    pub pattern: usize,
    /// The code site of each access of the pattern, in order.
    pub sites: Vec<SiteId>,
    /// Names of the units of work `u` and `u'`.
    pub units: [String; 2],
    /// The atomic set.
    pub set: String,
    /// `u` releases no lock between its accesses: postpone it at once.
    pub vwls_empty: bool,
}

/// The potential violations in one profiling execution.
pub fn potential_violations(log: &SetLog) -> Vec<Potential> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for set in 0..log.sets.len() as u32 {
        let mut by_unit: Vec<(u32, Vec<usize>)> = Vec::new();
        for (i, a) in log.accesses.iter().enumerate() {
            let (Some(unit), true) = (a.unit, a.set == set) else {
                continue;
            };
            match by_unit.iter_mut().find(|(u, _)| *u == unit) {
                Some((_, list)) => list.push(i),
                None => by_unit.push((unit, vec![i])),
            }
        }
        for (u, u_accesses) in &by_unit {
            for (v, v_accesses) in &by_unit {
                if log.units[*u as usize].thread == log.units[*v as usize].thread {
                    continue;
                }
                for (p, pattern) in PATTERNS.iter().enumerate() {
                    let mut chosen = Vec::new();
                    fill(
                        log,
                        pattern.steps,
                        u_accesses,
                        v_accesses,
                        &mut chosen,
                        &mut |chosen| {
                            if let Some(potential) = check(log, p, chosen, *u, *v, set)
                                && seen.insert(potential.clone())
                            {
                                found.push(potential);
                            }
                        },
                    );
                }
            }
        }
    }
    found
}

/// Enumerates the assignments of accesses to the pattern's steps: each
/// role's accesses in program order, locations as the pattern says.
fn fill(
    log: &SetLog,
    steps: &[(Role, bool, Loc)],
    u: &[usize],
    v: &[usize],
    chosen: &mut Vec<usize>,
    found: &mut dyn FnMut(&[usize]),
) {
    let Some(&(role, write, loc)) = steps.get(chosen.len()) else {
        found(chosen);
        return;
    };
    let pool = if role == Role::U { u } else { v };
    // After the role's previous access, in program order.
    let after = chosen
        .iter()
        .zip(steps)
        .filter(|(_, s)| s.0 == role)
        .map(|(&i, _)| i)
        .next_back();
    let addr_of = |l: Loc| {
        chosen
            .iter()
            .zip(steps)
            .find(|(_, s)| s.2 == l)
            .map(|(&i, _)| log.accesses[i].addr)
    };
    let other = if loc == Loc::A { Loc::B } else { Loc::A };
    let (same, different) = (addr_of(loc), addr_of(other));
    for &i in pool {
        let a = &log.accesses[i];
        if a.write != write || after.is_some_and(|prev| i <= prev) {
            continue;
        }
        if same.is_some_and(|addr| addr != a.addr) || different.is_some_and(|addr| addr == a.addr) {
            continue;
        }
        chosen.push(i);
        fill(log, steps, u, v, chosen, found);
        chosen.pop();
    }
}

/// Locks `thread` holds from access `from` to access `to` without
/// releasing them.
fn held_throughout(log: &SetLog, from: usize, to: usize) -> Vec<u32> {
    let (a, b) = (&log.accesses[from], &log.accesses[to]);
    a.locks
        .iter()
        .copied()
        .filter(|l| b.locks.contains(l))
        .filter(|l| {
            !log.releases
                .iter()
                .any(|&(at, t, lock)| t == a.thread && lock == *l && at > from && at <= to)
        })
        .collect()
}

fn check(log: &SetLog, p: usize, chosen: &[usize], u: u32, v: u32, set: u32) -> Option<Potential> {
    let steps = PATTERNS[p].steps;
    let access = |k: usize| -> &SetAccess { &log.accesses[chosen[k]] };
    // The pattern's order must not contradict happens-before.
    for x in 0..chosen.len() {
        for y in x + 1..chosen.len() {
            if steps[x].0 != steps[y].0 && happens_before(&access(y).clock, &access(x).clock) {
                return None;
            }
        }
    }
    // Windows: consecutive accesses of one role with the other's between.
    let mut vwls_empty = true;
    for x in 0..chosen.len() {
        let Some(y) = (x + 1..chosen.len()).find(|&y| steps[y].0 == steps[x].0) else {
            continue;
        };
        if y == x + 1 {
            continue;
        }
        let guarded = held_throughout(log, chosen[x], chosen[y]);
        if (x + 1..y).any(|z| guarded.iter().any(|l| access(z).locks.contains(l))) {
            return None;
        }
        if steps[x].0 == Role::U {
            let released = access(x).locks.iter().any(|l| !guarded.contains(l));
            vwls_empty &= !released;
        }
    }
    Some(Potential {
        pattern: p,
        sites: chosen.iter().map(|&i| log.accesses[i].site).collect(),
        units: [
            log.units[u as usize].name.clone(),
            log.units[v as usize].name.clone(),
        ],
        set: log.sets[set as usize].name.clone(),
        vwls_empty,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serializability::atomic_sets::{AtomicSet, UnitInstance};
    use crate::trace::clock::VectorClock;

    fn access(
        thread: u32,
        unit: u32,
        addr: u32,
        write: bool,
        locks: &[u32],
        clock: &[u32],
    ) -> SetAccess {
        let mut times = VectorClock::default();
        for (thread, &time) in clock.iter().enumerate() {
            times.set(thread as u32, time);
        }
        SetAccess {
            thread,
            unit: Some(unit),
            set: 0,
            addr,
            write,
            site: addr + if write { 100 } else { 0 },
            step: 0,
            locks: locks.to_vec(),
            clock: times,
        }
    }

    fn account(copy_locks: &[u32], releases: Vec<(usize, u32, u32)>) -> SetLog {
        SetLog {
            sets: vec![AtomicSet {
                name: "x".into(),
                start: 0,
                len: 16,
            }],
            units: vec![
                UnitInstance {
                    name: "copy".into(),
                    thread: 1,
                },
                UnitInstance {
                    name: "credit".into(),
                    thread: 2,
                },
            ],
            // Serial profile: copy reads both, then credit updates both.
            accesses: vec![
                access(1, 0, 0, false, copy_locks, &[0, 1, 0]),
                access(1, 0, 8, false, copy_locks, &[0, 2, 0]),
                access(2, 1, 0, false, &[50], &[0, 0, 1]),
                access(2, 1, 0, true, &[50], &[0, 0, 1]),
                access(2, 1, 8, false, &[50], &[0, 0, 2]),
                access(2, 1, 8, true, &[50], &[0, 0, 2]),
            ],
            releases,
            ..Default::default()
        }
    }

    #[test]
    fn the_non_atomic_copy_could_see_pattern_9() {
        // copy takes and releases the lock around each read.
        let log = account(&[50], vec![(1, 1, 50), (2, 1, 50), (6, 2, 50)]);
        let found = potential_violations(&log);
        let nine: Vec<&Potential> = found
            .iter()
            .filter(|p| PATTERNS[p.pattern].number == 9)
            .collect();
        assert!(!nine.is_empty(), "{found:?}");
        assert_eq!(nine[0].units, ["copy".to_string(), "credit".to_string()]);
        assert!(
            !nine[0].vwls_empty,
            "copy releases the lock between its reads"
        );
    }

    #[test]
    fn one_critical_section_rules_it_out() {
        // copy holds the lock across both reads: nothing can slip between.
        let log = account(&[50], vec![(2, 1, 50), (6, 2, 50)]);
        let found = potential_violations(&log);
        assert!(found.iter().all(|p| p.units[0] != "copy"), "{found:?}");
    }

    #[test]
    fn happens_before_rules_it_out() {
        let mut log = account(&[], Vec::new());
        // credit's accesses all happen after copy's (e.g. copy's thread
        // created credit's thread afterwards).
        for a in &mut log.accesses[2..] {
            a.clock.set(1, 2);
        }
        let found = potential_violations(&log);
        assert!(found.iter().all(|p| p.units[0] != "copy"), "{found:?}");
    }
}
