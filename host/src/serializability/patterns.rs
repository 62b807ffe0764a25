//! The eleven access patterns that make an execution not atomic-set
//! serializable (Vaziri, Tip and Dolby), as data, and a matcher that finds
//! them in the accesses of one execution.
//!
//! `u` and `u'` are two units of work of different threads; `m1 != m2` are
//! two locations of one atomic set. Rows 6, 8 and 9 stand for two orders of
//! `u'`'s accesses, so there are 14 concrete patterns.

use crate::failure::{Failure, FailureKind};
use crate::runtime::ExecutionResult;
use crate::serializability::atomic_sets::{SetAccess, SetLog};

/// Which unit an access of a pattern belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `u`, the unit whose atomicity breaks.
    U,
    /// `u'`, the unit that interleaves.
    V,
}

/// Which location an access of a pattern touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// `m1`.
    A,
    /// `m2` (different from `m1`).
    B,
}

/// One access of a pattern: its unit, whether it writes, its location.
pub type Step = (Role, bool, Loc);

/// A concrete problematic pattern.
#[derive(Debug)]
pub struct Pattern {
    /// The row of the table (1 to 11).
    pub number: u8,
    /// What goes wrong.
    pub name: &'static str,
    /// The accesses, in the order they happen.
    pub steps: &'static [Step],
}

use Loc::{A, B};
use Role::{U, V};
const R: bool = false;
const W: bool = true;

/// The 14 concrete patterns.
pub const PATTERNS: [Pattern; 14] = [
    Pattern {
        number: 1,
        name: "stale read used for an update",
        steps: &[(U, R, A), (V, W, A), (U, W, A)],
    },
    Pattern {
        number: 2,
        name: "two reads disagree",
        steps: &[(U, R, A), (V, W, A), (U, R, A)],
    },
    Pattern {
        number: 3,
        name: "intermediate state observed",
        steps: &[(U, W, A), (V, R, A), (U, W, A)],
    },
    Pattern {
        number: 4,
        name: "read differs from own last write",
        steps: &[(U, W, A), (V, W, A), (U, R, A)],
    },
    Pattern {
        number: 5,
        name: "lost write",
        steps: &[(U, W, A), (V, W, A), (U, W, A)],
    },
    Pattern {
        number: 6,
        name: "inconsistent state left",
        steps: &[(U, W, A), (V, W, A), (V, W, B), (U, W, B)],
    },
    Pattern {
        number: 6,
        name: "inconsistent state left",
        steps: &[(U, W, A), (V, W, B), (V, W, A), (U, W, B)],
    },
    Pattern {
        number: 7,
        name: "inconsistent state left",
        steps: &[(U, W, A), (V, W, B), (U, W, B), (V, W, A)],
    },
    Pattern {
        number: 8,
        name: "inconsistent state observed",
        steps: &[(U, W, A), (V, R, A), (V, R, B), (U, W, B)],
    },
    Pattern {
        number: 8,
        name: "inconsistent state observed",
        steps: &[(U, W, A), (V, R, B), (V, R, A), (U, W, B)],
    },
    Pattern {
        number: 9,
        name: "inconsistent state observed",
        steps: &[(U, R, A), (V, W, A), (V, W, B), (U, R, B)],
    },
    Pattern {
        number: 9,
        name: "inconsistent state observed",
        steps: &[(U, R, A), (V, W, B), (V, W, A), (U, R, B)],
    },
    Pattern {
        number: 10,
        name: "inconsistent state observed",
        steps: &[(U, R, A), (V, W, B), (U, R, B), (V, W, A)],
    },
    Pattern {
        number: 11,
        name: "inconsistent state observed",
        steps: &[(U, W, A), (V, R, B), (U, W, B), (V, R, A)],
    },
];

/// A pattern that happened: the pattern (index in [`PATTERNS`]) and its
/// accesses (indices in the log), in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Index in [`PATTERNS`].
    pub pattern: usize,
    /// The accesses, indices in [`SetLog::accesses`].
    pub accesses: Vec<usize>,
}

impl Violation {
    /// The pattern.
    pub fn pattern(&self) -> &'static Pattern {
        &PATTERNS[self.pattern]
    }

    /// The failure users see for this violation in `log`: which atomic
    /// set, which pattern, and its accesses (read or write, address, unit
    /// of work, thread), in the thread of its first access. Every
    /// serializability failure is made here.
    pub fn failure(&self, log: &SetLog) -> Failure {
        let first = &log.accesses[self.accesses[0]];
        let pattern = self.pattern();
        let steps: Vec<String> = self
            .accesses
            .iter()
            .map(|&i| {
                let a = &log.accesses[i];
                let unit = a.unit.map_or("?", |u| log.units[u as usize].name.as_str());
                format!(
                    "{}({:#x}) by `{unit}` in thread {}",
                    if a.write { "W" } else { "R" },
                    a.addr,
                    a.thread
                )
            })
            .collect();
        Failure {
            kind: FailureKind::Serializability,
            message: format!(
                "atomic set `{}` is not serializable: pattern {} ({}): {}",
                log.sets[first.set as usize].name,
                pattern.number,
                pattern.name,
                steps.join(", ")
            ),
            thread: first.thread,
        }
    }
}

/// The serializability failure `result` shows, when atomic sets were
/// checked: its first violation, as `weft serializability` reports it.
pub fn serializability_failure(result: &ExecutionResult) -> Option<Failure> {
    let log = super::atomic_sets::log_of(result)?;
    violations(log).first().map(|v| v.failure(log))
}

/// Bindings of a partial match.
#[derive(Clone, Copy, Default)]
struct Binding {
    u: Option<u32>,
    v: Option<u32>,
    a: Option<u32>,
    b: Option<u32>,
}

/// Whether `access` can play `step` under `binding`; the extended binding.
fn fits(log: &SetLog, step: Step, access: &SetAccess, mut b: Binding) -> Option<Binding> {
    let (role, write, loc) = step;
    let unit = access.unit?;
    if access.write != write {
        return None;
    }
    let thread = |u: u32| log.units[u as usize].thread;
    match role {
        Role::U => match b.u {
            Some(u) if u != unit => return None,
            None if b.v.is_some_and(|v| thread(v) == access.thread) => return None,
            _ => b.u = Some(unit),
        },
        Role::V => match b.v {
            Some(v) if v != unit => return None,
            None if b.u.is_some_and(|u| thread(u) == access.thread) => return None,
            _ => b.v = Some(unit),
        },
    }
    match loc {
        Loc::A => match b.a {
            Some(a) if a != access.addr => return None,
            None if b.b == Some(access.addr) => return None,
            _ => b.a = Some(access.addr),
        },
        Loc::B => match b.b {
            Some(x) if x != access.addr => return None,
            None if b.a == Some(access.addr) => return None,
            _ => b.b = Some(access.addr),
        },
    }
    Some(b)
}

/// Extends a match of `pattern.steps[..chosen.len()]`, trying accesses
/// after the last chosen one.
fn extend(
    log: &SetLog,
    set: &[usize],
    pattern: &Pattern,
    chosen: &mut Vec<usize>,
    binding: Binding,
) -> bool {
    let Some(&step) = pattern.steps.get(chosen.len()) else {
        return true;
    };
    let from = chosen.last().map_or(0, |&last| last + 1);
    for (pos, &i) in set.iter().enumerate().skip(from) {
        if let Some(next) = fits(log, step, &log.accesses[i], binding) {
            chosen.push(pos);
            if extend(log, set, pattern, chosen, next) {
                return true;
            }
            chosen.pop();
        }
    }
    false
}

/// The patterns that happened in `log`, at most one per pattern and pair
/// of code sites of `u` (the first found).
pub fn violations(log: &SetLog) -> Vec<Violation> {
    let mut found: Vec<Violation> = Vec::new();
    for set in 0..log.sets.len() as u32 {
        let accesses: Vec<usize> = (0..log.accesses.len())
            .filter(|&i| log.accesses[i].set == set && log.accesses[i].unit.is_some())
            .collect();
        for (p, pattern) in PATTERNS.iter().enumerate() {
            // Every first access starts a search, so that each u gets its
            // chance.
            for start in 0..accesses.len() {
                let Some(binding) = fits(
                    log,
                    pattern.steps[0],
                    &log.accesses[accesses[start]],
                    Binding::default(),
                ) else {
                    continue;
                };
                let mut chosen = vec![start];
                if !extend(log, &accesses, pattern, &mut chosen, binding) {
                    continue;
                }
                let violation = Violation {
                    pattern: p,
                    accesses: chosen.iter().map(|&pos| accesses[pos]).collect(),
                };
                let sites = |v: &Violation| -> Vec<u32> {
                    v.accesses.iter().map(|&i| log.accesses[i].site).collect()
                };
                if !found
                    .iter()
                    .any(|f| f.pattern().number == pattern.number && sites(f) == sites(&violation))
                {
                    found.push(violation);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serializability::atomic_sets::{AtomicSet, UnitInstance};

    /// Accesses (thread, unit, addr, write) in order, all in one set.
    fn log(accesses: &[(u32, u32, u32, bool)]) -> SetLog {
        let mut units: Vec<UnitInstance> = Vec::new();
        for &(thread, unit, _, _) in accesses {
            if units.len() <= unit as usize {
                units.resize(
                    unit as usize + 1,
                    UnitInstance {
                        name: String::new(),
                        thread: 0,
                    },
                );
            }
            units[unit as usize] = UnitInstance {
                name: format!("unit{unit}"),
                thread,
            };
        }
        SetLog {
            sets: vec![AtomicSet {
                name: "x".into(),
                start: 0,
                len: 16,
            }],
            units,
            accesses: accesses
                .iter()
                .enumerate()
                .map(|(i, &(thread, unit, addr, write))| SetAccess {
                    thread,
                    unit: Some(unit),
                    set: 0,
                    addr,
                    write,
                    site: i as u32,
                    step: i as u64,
                    locks: Vec::new(),
                    clock: Default::default(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_account_copy_is_pattern_9() {
        // copy reads checking; credit writes checking and savings; copy
        // reads savings.
        let found = violations(&log(&[
            (1, 0, 0, R),
            (2, 1, 0, W),
            (2, 1, 8, W),
            (1, 0, 8, R),
        ]));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pattern().number, 9);
        assert_eq!(found[0].accesses, vec![0, 1, 2, 3]);
    }

    #[test]
    fn serial_executions_match_nothing() {
        let serial = log(&[(1, 0, 0, R), (1, 0, 8, R), (2, 1, 0, W), (2, 1, 8, W)]);
        assert!(violations(&serial).is_empty());
        // The same unit in one thread cannot interleave with itself.
        let same = log(&[(1, 0, 0, R), (1, 1, 0, W), (1, 0, 0, W)]);
        assert!(violations(&same).is_empty());
    }

    #[test]
    fn single_location_patterns() {
        let lost_update = log(&[(1, 0, 0, R), (2, 1, 0, W), (1, 0, 0, W)]);
        let numbers: Vec<u8> = violations(&lost_update)
            .iter()
            .map(|v| v.pattern().number)
            .collect();
        assert_eq!(numbers, vec![1]);
        let lost_write = log(&[(1, 0, 0, W), (2, 1, 0, W), (1, 0, 0, W)]);
        let numbers: Vec<u8> = violations(&lost_write)
            .iter()
            .map(|v| v.pattern().number)
            .collect();
        assert_eq!(numbers, vec![5]);
    }
}
