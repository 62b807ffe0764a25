//! The steps of an execution by the bytes their operations touch, so that
//! the steps a step depends on (see [`StepRecord::dependent`]) are found
//! among the few that touch its bytes rather than by testing every step.

use super::StepRecord;
use crate::instrument::AccessKind;

/// Bytes per slot of the index: an operation is filed under every slot it
/// touches a byte of.
const SLOT_BYTES: u64 = 8;

/// An operation longer than this is filed under no slot: its step is
/// tested against every other (bulk copies and fills are rare).
const MOST_INDEXED_BYTES: u64 = 64;

/// The steps of one execution, filed by the bytes their operations touch.
pub struct StepsByAddress<'s> {
    steps: &'s [StepRecord],
    /// Each slot with each step that has an operation touching it, in
    /// order of slot, then of step.
    by_slot: Vec<(u64, usize)>,
    /// Steps that may depend on a step whatever it touches: those that
    /// touched global state, and those with an operation too long to file.
    always: Vec<usize>,
    /// Steps that created a thread (two such steps depend on each other).
    spawned: Vec<usize>,
    /// One more than the highest thread id of the steps.
    threads: usize,
}

impl<'s> StepsByAddress<'s> {
    /// Files `steps`.
    pub fn new(steps: &'s [StepRecord]) -> Self {
        let mut index = StepsByAddress {
            steps,
            by_slot: Vec::new(),
            always: Vec::new(),
            spawned: Vec::new(),
            threads: steps
                .iter()
                .map(|step| step.thread as usize + 1)
                .max()
                .unwrap_or(0),
        };
        let mut slots = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            if step.spawned {
                index.spawned.push(i);
            }
            if slots_into(step, &mut slots) && !step.global {
                index.by_slot.extend(slots.iter().map(|&slot| (slot, i)));
            } else {
                index.always.push(i);
            }
        }
        index.by_slot.sort_unstable();
        index
    }

    /// The steps filed under `slot`, in order.
    fn filed(&self, slot: u64) -> &[(u64, usize)] {
        let start = self.by_slot.partition_point(|&(s, _)| s < slot);
        let end = start + self.by_slot[start..].partition_point(|&(s, _)| s == slot);
        &self.by_slot[start..end]
    }

    /// Of the steps that `step`, which comes after all of them (in a future
    /// of a state this execution reached), depends on (those for which
    /// [`StepRecord::dependent_before`] holds), the latest of each thread,
    /// in order. The earlier ones of a thread happen before its latest, so
    /// whatever orders or races with them is seen from it. `slots` are the
    /// slots `step` touches ([`slots_of`]: a search keeps them with the
    /// steps of its summaries).
    ///
    /// They are put at the end of `found`; `latest` is scratch.
    pub fn latest_dependent_by_thread(
        &self,
        step: &StepRecord,
        slots: Option<&[u64]>,
        latest: &mut Vec<Option<usize>>,
        found: &mut Vec<usize>,
    ) {
        latest.clear();
        latest.resize(self.threads, None);
        let mut scan = |filed: &mut dyn DoubleEndedIterator<Item = usize>| {
            let mut threads_found = 0;
            for i in filed.rev() {
                let thread = self.steps[i].thread as usize;
                if latest[thread].is_some_and(|l| l >= i) {
                    continue;
                }
                if self.steps[i].dependent_before(step) {
                    if latest[thread].is_none() {
                        threads_found += 1;
                    }
                    latest[thread] = Some(i);
                    if threads_found == self.threads {
                        break;
                    }
                }
            }
        };
        match slots.filter(|_| !step.global) {
            None => scan(&mut (0..self.steps.len())),
            Some(slots) => {
                scan(&mut self.always.iter().copied());
                if step.spawned {
                    scan(&mut self.spawned.iter().copied());
                }
                for &slot in slots {
                    scan(&mut self.filed(slot).iter().map(|&(_, i)| i));
                }
            }
        }
        let start = found.len();
        found.extend(latest.iter().flatten());
        found[start..].sort_unstable();
    }
}

/// The slots the operations of `step` touch (library calls touch none by
/// themselves), or `None` when one of them is too long to file.
pub fn slots_of(step: &StepRecord) -> Option<Vec<u64>> {
    let mut slots = Vec::new();
    slots_into(step, &mut slots).then_some(slots)
}

/// [`slots_of`] into `slots` (emptied first): false when an operation is
/// too long to file.
fn slots_into(step: &StepRecord, slots: &mut Vec<u64>) -> bool {
    slots.clear();
    for (op, writes) in step.operations() {
        if op.kind == AccessKind::Call {
            continue;
        }
        for (start, end, _) in op.ranges(writes) {
            if end - start > MOST_INDEXED_BYTES {
                return false;
            }
            slots.extend(start / SLOT_BYTES..end.div_ceil(SLOT_BYTES));
        }
    }
    slots.sort_unstable();
    slots.dedup();
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::NextOp;

    fn step(thread: u32, kind: AccessKind, addr: u32, len: u32) -> StepRecord {
        StepRecord {
            thread,
            op: Some(NextOp {
                kind,
                addr,
                len,
                src: 0,
                site: 0,
            }),
            wrote: kind.writes(),
            ..StepRecord::default()
        }
    }

    #[test]
    fn the_steps_found_are_those_every_test_finds() {
        let mut global = StepRecord {
            thread: 3,
            ..StepRecord::default()
        };
        global.global = true;
        let mut spawn = StepRecord {
            thread: 0,
            ..StepRecord::default()
        };
        spawn.spawned = true;
        let steps = vec![
            step(0, AccessKind::AtomicStore, 8, 4),
            step(1, AccessKind::AtomicLoad, 12, 4),
            step(1, AccessKind::AtomicRmw, 6, 4),
            global,
            spawn.clone(),
            step(2, AccessKind::Copy, 100, 4096),
            step(2, AccessKind::Wait, 16, 4),
            step(0, AccessKind::Call, 16, 0),
            step(1, AccessKind::AtomicLoad, 9, 1),
        ];
        let index = StepsByAddress::new(&steps);
        let mut probes = steps.clone();
        probes.push(step(4, AccessKind::AtomicStore, 10, 1));
        probes.push(step(4, AccessKind::Notify, 16, 4));
        probes.push(step(4, AccessKind::Fill, 0, 200));
        probes.push(spawn);
        for probe in &probes {
            let mut latest: Vec<usize> = Vec::new();
            for i in (0..steps.len()).rev() {
                let thread = steps[i].thread;
                if steps[i].dependent_before(probe)
                    && !latest.iter().any(|&l| steps[l].thread == thread)
                {
                    latest.push(i);
                }
            }
            latest.reverse();
            let mut found = vec![7];
            let slots = slots_of(probe);
            index.latest_dependent_by_thread(probe, slots.as_deref(), &mut Vec::new(), &mut found);
            assert_eq!(found[1..], latest, "{probe:?}");
        }
    }
}
