//! Data segments of the shared memory that `memory.init` or `data.drop`
//! name. An instance serves many executions, so it must keep its segments:
//! `data.drop` only sets a "dropped" flag (a global), `memory.init` of a
//! flagged segment reads an appended empty segment instead, which is what a
//! dropped one is, and every execution starts with the flags reset.

use super::Rewriter;
use super::scratch::Scratch;
use wasm_encoder::{BlockType, Function, Instruction, ValType};
use wasmparser::Operator;

/// A copy of the range its operands give onto itself (they are the
/// destination twice and the length): what a copy whose bytes are in the
/// memory's first image becomes (see [`crate::instrument::prefill`]).
pub(super) const COPY_IN_PLACE: Instruction<'static> = Instruction::MemoryCopy {
    src_mem: 0,
    dst_mem: 0,
};

impl Rewriter<'_> {
    /// Emits `op` if it is `data.drop` of a flagged segment; says whether it
    /// did.
    pub(super) fn emit_data_drop(&self, f: &mut Function, op: &Operator) -> bool {
        let Operator::DataDrop { data_index } = *op else {
            return false;
        };
        let Some(flag) = self.dropped_flag(data_index) else {
            return false;
        };
        f.instruction(&Instruction::I32Const(1));
        f.instruction(&Instruction::GlobalSet(flag));
        true
    }

    /// The data segments of the shared memory that get a "dropped" flag:
    /// those `memory.init` or `data.drop` name.
    fn flagged_segments(&self) -> &[u32] {
        if self.shares_memory() {
            &self.survey.data_named
        } else {
            &[]
        }
    }

    /// The global holding `segment`'s "dropped" flag.
    pub(super) fn dropped_flag(&self, segment: u32) -> Option<u32> {
        let n = self.flagged_segments().binary_search(&segment).ok()?;
        Some(self.survey.global_count + n as u32)
    }

    /// A flag's initial value: an active segment is dropped once the
    /// instance exists.
    fn initially_dropped(&self, segment: u32) -> i32 {
        i32::from(self.survey.data_active.get(segment as usize) == Some(&true))
    }

    /// The empty passive segment appended for `memory.init` of a dropped
    /// segment, when segments are flagged.
    pub(super) fn empty_segment(&self) -> Option<u32> {
        (!self.flagged_segments().is_empty()).then_some(self.survey.data_active.len() as u32)
    }

    /// `memory.init` of a flagged segment: of the empty segment once the
    /// flag is set. `in_place`: the bytes are in memory already, and the
    /// copy is of the destination onto itself (its operands are the
    /// destination twice and the length; see [`crate::instrument::prefill`]).
    pub(super) fn emit_memory_init(
        &self,
        f: &mut Function,
        segment: u32,
        flag: u32,
        scratch: &Scratch,
        in_place: bool,
    ) {
        let operands = scratch.bulk_operands();
        let empty = self
            .empty_segment()
            .expect("a flagged segment comes with the empty one");
        for &local in operands.iter().rev() {
            f.instruction(&Instruction::LocalSet(local));
        }
        let emit = |f: &mut Function, bulk: Instruction| {
            for local in operands {
                f.instruction(&Instruction::LocalGet(local));
            }
            f.instruction(&bulk);
        };
        let init = |data_index| Instruction::MemoryInit { mem: 0, data_index };
        f.instruction(&Instruction::GlobalGet(flag));
        f.instruction(&Instruction::If(BlockType::Empty));
        emit(f, init(empty));
        f.instruction(&Instruction::Else);
        emit(
            f,
            if in_place {
                COPY_IN_PLACE
            } else {
                init(segment)
            },
        );
        f.instruction(&Instruction::End);
    }

    /// Appends the dropped-segment flags.
    pub(super) fn append_dropped_flags(&self, globals: &mut wasm_encoder::GlobalSection) {
        for &segment in self.flagged_segments() {
            globals.global(
                wasm_encoder::GlobalType {
                    val_type: ValType::I32,
                    mutable: true,
                    shared: false,
                },
                &wasm_encoder::ConstExpr::i32_const(self.initially_dropped(segment)),
            );
        }
    }

    /// How many globals [`Self::append_dropped_flags`] appends.
    pub(super) fn dropped_flag_count(&self) -> u32 {
        self.flagged_segments().len() as u32
    }

    /// Puts every dropped-segment flag back to its initial value.
    pub(super) fn emit_dropped_flag_resets(&self, f: &mut Function) {
        for (n, &segment) in self.flagged_segments().iter().enumerate() {
            f.instruction(&Instruction::I32Const(self.initially_dropped(segment)));
            f.instruction(&Instruction::GlobalSet(self.survey.global_count + n as u32));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{body_of, options};

    #[test]
    fn a_dropped_segment_is_a_flag_and_init_reads_the_empty_one_once_set() {
        let wat = r#"(module
            (memory 1 1 shared)
            (global $g (mut i32) (i32.const 0))
            (data $d "abc")
            (func $init
                i32.const 0
                i32.const 0
                i32.const 3
                memory.init $d
                data.drop $d))"#;
        let body = body_of(wat, options(), "init");
        // The module's one global is 0, so the flag is global 1; the empty
        // segment is appended as segment 1. Scratch locals start at 0.
        let flag_read = body.iter().position(|l| l == "global.get 1").unwrap();
        assert_eq!(
            body[flag_read - 6..],
            [
                "local.get 0",
                "local.get 1",
                "local.get 2",
                "local.set 2",
                "local.set 1",
                "local.set 0",
                "global.get 1",
                "if",
                "local.get 0",
                "local.get 1",
                "local.get 2",
                "memory.init 1",
                "else",
                "local.get 0",
                "local.get 1",
                "local.get 2",
                "memory.init $d",
                "end",
                "i32.const 1",
                "global.set 1",
            ]
        );
    }

    #[test]
    fn a_copy_whose_bytes_are_in_the_image_copies_its_range_onto_itself_at_the_same_cost() {
        let wat = |name: &str| {
            format!(
                r#"(module
                    (memory 1 1 shared)
                    (data $d "abc")
                    (func ${name}
                        i32.const 64
                        i32.const 0
                        i32.const 1
                        i32.atomic.rmw.cmpxchg
                        drop
                        i32.const 0
                        i32.const 0
                        i32.const 3
                        memory.init $d
                        i32.const 8
                        i32.const 0
                        i32.const 4
                        memory.fill
                        data.drop $d)
                    (func (export "_start"))
                    (start ${name}))"#
            )
        };
        let prefilled = body_of(&wat("__wasm_init_memory"), options(), "__wasm_init_memory");
        let copied = body_of(&wat("init"), options(), "init");
        // The same instructions (so the same fuel, a byte of a copy costing
        // what a byte of an init or a fill does), but for the copies.
        assert_eq!(prefilled.len(), copied.len());
        let differing: Vec<_> = prefilled
            .iter()
            .zip(&copied)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(
            differing,
            [
                ("local.get 0", "local.get 1"),
                ("memory.copy", "memory.init $d"),
                ("local.get 0", "local.get 1"),
                ("memory.copy", "memory.fill"),
            ]
        );
    }
}
