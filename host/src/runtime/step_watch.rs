//! What the runtime keeps of the running step for a scheduler that follows
//! steps ([`crate::sched::Scheduler::follows_steps`]): the bytes its first
//! operation touches and their value before, and whether it touched state
//! of the whole execution, so that the step's end can say whether it
//! changed memory and whether it commutes with anything.

use super::shared_memory::GuestMemory;
use crate::instrument::AccessKind;
use crate::sched::{NextOp, Step, StepEnd};
use crate::trace::ThreadId;

/// The running step, as far as its end needs it.
#[derive(Debug, Default)]
pub(super) struct StepWatch {
    /// The scheduler follows steps: without it, nothing is kept.
    pub(super) on: bool,
    /// The step touched state of the whole execution (see [`StepEnd`]).
    global: bool,
    /// The bytes the step's operation touches (address, width) and their
    /// value before it ran, or `None` when it touches more than 8 or none;
    /// and whether the operation may write.
    bytes: (Option<(u32, u8, u64)>, bool),
}

impl StepWatch {
    /// A watch that keeps steps only if `on`.
    pub(super) fn new(on: bool) -> Self {
        StepWatch {
            on,
            ..Self::default()
        }
    }

    /// The running step touched state of the whole execution that no
    /// memory access shows (virtual time, the random generator, the size
    /// of memory).
    pub(super) fn touched_global(&mut self) {
        self.global = true;
    }

    /// `thread` starts a step at `op` (the operation it stands at), woken
    /// by `woken_by`'s notify if it was; `memory` gives the value before.
    pub(super) fn start(
        &mut self,
        thread: ThreadId,
        op: Option<NextOp>,
        woken_by: Option<ThreadId>,
        memory: Option<&GuestMemory>,
    ) -> Step {
        let bytes = op
            .filter(|op| op.kind != AccessKind::Call && (1..=8).contains(&op.len))
            .map(|op| {
                let width = op.len as u8;
                (op.addr, width, value(memory, op.addr, width))
            });
        self.bytes = (bytes, op.is_some_and(|op| op.kind.writes()));
        Step {
            thread,
            op,
            woken_by,
            value: bytes.map(|(_, _, value)| value),
            continues: false,
        }
    }

    /// How the running step ended, with `memory` as it is now.
    pub(super) fn end(&mut self, memory: Option<&GuestMemory>) -> StepEnd {
        let (bytes, writes) = std::mem::take(&mut self.bytes);
        let changed = writes
            && bytes.is_none_or(|(addr, width, before)| value(memory, addr, width) != before);
        StepEnd {
            global: std::mem::take(&mut self.global),
            changed,
        }
    }
}

/// The value of `width` bytes at `addr` of the shared memory (0 without
/// one).
fn value(memory: Option<&GuestMemory>, addr: u32, width: u8) -> u64 {
    memory.map_or(0, |m| super::memory_access::shared_value(m, addr, width))
}
