//! Instructions the host carries out instead of the engine: wait and notify
//! (the host owns blocking and waking), `memory.grow` and `memory.size` of
//! the shared memory (the host keeps the size the guest sees), and
//! `unreachable` (a trap the host reports with the thread's state).

use super::Rewriter;
use crate::abi;
use crate::instrument::AccessKind::{Notify, Wait};
use crate::instrument::ops::{self, Replaced};
use wasm_encoder::{Function, Instruction};
use wasmparser::Operator;

impl Rewriter<'_> {
    /// Emits the host call that replaces `op` at `pos` in function `func`,
    /// if it is replaced; says whether it did.
    pub(super) fn emit_replaced(
        &mut self,
        f: &mut Function,
        op: &Operator,
        func: u32,
        pos: usize,
    ) -> bool {
        let Some(replaced) = self.replacement(op) else {
            return false;
        };
        let (sig, site) = match replaced {
            Replaced::Wait32(m) => (abi::WAIT32, Some(self.site(Wait, func, pos, m.offset, 4))),
            Replaced::Wait64(m) => (abi::WAIT64, Some(self.site(Wait, func, pos, m.offset, 8))),
            Replaced::Notify(m) => (abi::NOTIFY, Some(self.site(Notify, func, pos, m.offset, 4))),
            Replaced::MemoryGrow => (abi::MEMORY_GROW, None),
            Replaced::MemorySize => (abi::MEMORY_SIZE, None),
            Replaced::Unreachable => (abi::UNREACHABLE, None),
        };
        if let Some(site) = site {
            f.instruction(&Instruction::I32Const(site));
        }
        f.instruction(&Instruction::Call(self.rt_func(&sig)));
        if let Replaced::Unreachable = replaced {
            // The call never returns; the instruction keeps the code after
            // it unreachable for validation.
            f.instruction(&Instruction::Unreachable);
        }
        true
    }

    fn replacement(&self, op: &Operator) -> Option<Replaced> {
        match ops::replaced(op) {
            // Without a shared memory there is one thread, and the
            // engine's own instructions are exact: a wait traps, a notify
            // wakes nobody (after the same bounds and alignment checks).
            Some(
                Replaced::MemoryGrow
                | Replaced::MemorySize
                | Replaced::Wait32(_)
                | Replaced::Wait64(_)
                | Replaced::Notify(_),
            ) if !self.shares_memory() => None,
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{body_of, options};

    const WAIT: &str = r#"(module
        (memory 1 1 shared)
        (func $wait (param i32) (result i32)
            local.get 0
            i32.const 0
            i64.const -1
            memory.atomic.wait32 offset=4
            memory.size
            drop
            unreachable))"#;

    #[test]
    fn the_host_waits_sizes_and_traps_for_the_shared_memory() {
        let body = body_of(WAIT, options(), "wait");
        assert_eq!(
            body,
            [
                "local.get 0",
                "i32.const 0",
                "i64.const -1",
                "i32.const 0",
                "call weft_rt.wait32",
                "call weft_rt.memory_size",
                "drop",
                "call weft_rt.unreachable",
                "unreachable",
            ]
        );
    }

    #[test]
    fn without_a_shared_memory_only_unreachable_is_replaced() {
        let wat = WAIT.replace("(memory 1 1 shared)", "(memory 1 1)");
        let body = body_of(&wat, options(), "wait");
        assert!(body.contains(&"memory.atomic.wait32 offset=4".to_string()));
        assert!(body.contains(&"memory.size".to_string()));
        assert!(body.contains(&"call weft_rt.unreachable".to_string()));
    }
}
