//! Bulk instructions on memory 0 (`memory.copy`, `memory.fill`,
//! `memory.init`): a scheduling point with `--points memory`, a bounds guard
//! against the size the guest sees when the memory is shared, and a log
//! entry when accesses are logged.

use super::scratch::Scratch;
use super::{Result, Rewriter};
use crate::abi;
use crate::instrument::AccessKind;
use crate::instrument::Points;
use crate::instrument::ops::{self, BulkRanges};
use wasm_encoder::reencode::Reencode;
use wasm_encoder::{BlockType, Function, Instruction};
use wasmparser::Operator;

impl Rewriter<'_> {
    /// Emits the bulk instruction `op` at `pos` in function `func` if it
    /// needs anything around it; says whether it did.
    pub(super) fn emit_bulk_instruction(
        &mut self,
        f: &mut Function,
        op: &Operator,
        func: u32,
        pos: usize,
        scratch: &Scratch,
    ) -> Result<bool> {
        let Some(ranges) = self.guarded_bulk(op) else {
            let Some(kind) = self.hooked_bulk(op) else {
                return Ok(false);
            };
            let site = self.site(kind, func, pos, 0, 0);
            self.emit_bulk_point(f, site, scratch);
            f.instruction(&self.instruction(op.clone())?);
            return Ok(true);
        };
        if let Some(kind) = self.hooked_bulk(op) {
            let site = self.site(kind, func, pos, 0, 0);
            self.emit_bulk_point(f, site, scratch);
            if let Some(log) = self.log_functions() {
                log.emit_bulk_call(f, scratch.bulk_operands(), site, false);
            }
        }
        let in_place = self.survey.prefilled.contains(&pos);
        self.emit_bounds_guard(f, ranges, scratch, in_place);
        if let (Some(kind), Some(log)) = (self.logged_bulk(op, pos), self.log_functions()) {
            // The guard left the operands in the scratch locals.
            let site = self.site(kind, func, pos, 0, 0);
            let site = self.checked_site(site)?;
            log.emit_bulk_call(f, scratch.bulk_operands(), site, true);
        }
        if self.read_map().is_some() && ranges == BulkRanges::DstAndSrc && !in_place {
            // The guard left the operands in the scratch locals.
            let [_, source, len] = scratch.bulk_operands();
            f.instruction(&Instruction::LocalGet(source));
            f.instruction(&Instruction::LocalGet(len));
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_NOTE_READ)));
        }
        match *op {
            Operator::MemoryInit { data_index, .. }
                if let Some(flag) = self.dropped_flag(data_index) =>
            {
                self.emit_memory_init(f, data_index, flag, scratch, in_place);
            }
            _ if in_place => {
                f.instruction(&super::segments::COPY_IN_PLACE);
            }
            _ => {
                f.instruction(&self.instruction(op.clone())?);
            }
        }
        Ok(true)
    }

    /// The ranges to check before `op`, a bulk instruction on the shared
    /// memory.
    fn guarded_bulk(&self, op: &Operator) -> Option<BulkRanges> {
        if self.shares_memory() {
            ops::bulk_ranges(op)
        } else {
            None
        }
    }

    /// The bulk memory access `op` is, hooked with `--points memory`.
    pub(super) fn hooked_bulk(&self, op: &Operator) -> Option<AccessKind> {
        match self.options.points {
            Points::Memory => ops::bulk_access(op),
            Points::Sync => None,
        }
    }

    /// The bulk instruction `op` at `pos` is when plain accesses are logged,
    /// this one included, and bulk instructions are not hooked as
    /// scheduling points anyway.
    fn logged_bulk(&self, op: &Operator, pos: usize) -> Option<AccessKind> {
        if !self.logs_accesses() || self.hooked_bulk(op).is_some() || !self.logs_at(pos) {
            return None;
        }
        ops::bulk_access(op)
    }

    /// Whether `op` is a bulk instruction that needs the scratch locals.
    pub(super) fn bulk_needs_scratch(&self, op: &Operator) -> bool {
        self.hooked_bulk(op).is_some() || self.guarded_bulk(op).is_some()
    }

    /// Before a bulk instruction on the shared memory: checks each range it
    /// touches against the size the guest sees and, past it, calls
    /// `weft_rt.bounds`, which traps. (weft keeps the size the guest sees,
    /// which can be smaller than the mapping wasmtime checks against.)
    /// Leaves the operands on the stack, the first one twice when `in_place`
    /// (for a copy of the destination onto itself, see [`crate::instrument::prefill`]).
    fn emit_bounds_guard(
        &self,
        f: &mut Function,
        ranges: BulkRanges,
        scratch: &Scratch,
        in_place: bool,
    ) {
        let [first, second, len] = scratch.bulk_operands();
        f.instruction(&Instruction::LocalSet(len));
        f.instruction(&Instruction::LocalSet(second));
        f.instruction(&Instruction::LocalSet(first));
        let starts = match ranges {
            BulkRanges::DstAndSrc => &[first, second][..],
            BulkRanges::Dst => &[first][..],
        };
        for &start in starts {
            f.instruction(&Instruction::LocalGet(start));
            f.instruction(&Instruction::I64ExtendI32U);
            f.instruction(&Instruction::LocalGet(len));
            f.instruction(&Instruction::I64ExtendI32U);
            f.instruction(&Instruction::I64Add);
            Self::emit_visible_size(f);
            f.instruction(&Instruction::I64GtU);
            f.instruction(&Instruction::If(BlockType::Empty));
            f.instruction(&Instruction::LocalGet(start));
            f.instruction(&Instruction::LocalGet(len));
            f.instruction(&Instruction::Call(self.rt_func(&abi::BOUNDS)));
            f.instruction(&Instruction::End);
        }
        let second = if in_place { first } else { second };
        for local in [first, second, len] {
            f.instruction(&Instruction::LocalGet(local));
        }
    }

    /// The scheduling point of `memory.copy`/`memory.fill`: its three
    /// operands saved, passed to `weft_rt.bulk`, and pushed back.
    fn emit_bulk_point(&self, f: &mut Function, site: i32, scratch: &Scratch) {
        let operands = scratch.bulk_operands();
        for &local in operands.iter().rev() {
            f.instruction(&Instruction::LocalSet(local));
        }
        for local in operands {
            f.instruction(&Instruction::LocalGet(local));
        }
        f.instruction(&Instruction::I32Const(site));
        f.instruction(&Instruction::Call(self.rt_func(&abi::BULK)));
        f.instruction(&Instruction::If(BlockType::Empty));
        f.instruction(&Instruction::Call(self.rt_func(&abi::PARK)));
        f.instruction(&Instruction::End);
        for local in operands {
            f.instruction(&Instruction::LocalGet(local));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{body_of, options};
    use crate::instrument::Points;

    const FILL: &str = r#"(module
        (memory 1 1 shared)
        (func $fill (param i32 i32 i32)
            local.get 0
            local.get 1
            local.get 2
            memory.fill))"#;

    #[test]
    fn with_read_tracking_a_copy_tells_the_host_its_source_and_a_fill_does_not() {
        let copy = r#"(module
            (memory 1 1 shared)
            (func $copy (param i32 i32 i32)
                local.get 0
                local.get 1
                local.get 2
                memory.copy))"#;
        let mut tracking = options();
        tracking.track_reads = true;
        // Source and length, from the scratch locals 4 and 5, then the copy.
        let body = body_of(copy, tracking, "copy");
        let tail = [
            "local.get 4",
            "local.get 5",
            "call weft_rt.note_read",
            "memory.copy",
        ];
        assert!(body.ends_with(&tail.map(String::from)), "{body:#?}");
        let fill = body_of(FILL, tracking, "fill");
        assert!(!fill.iter().any(|l| l.contains("note_read")), "{fill:#?}");
        tracking.track_reads = false;
        let untracked = body_of(copy, tracking, "copy");
        assert!(
            !untracked.iter().any(|l| l.contains("note_read")),
            "{untracked:#?}"
        );
    }

    #[test]
    fn a_fill_of_the_shared_memory_is_guarded_against_the_size_the_guest_sees() {
        let body = body_of(FILL, options(), "fill");
        // Scratch locals start after the three parameters: 3, 4, 5.
        assert_eq!(
            body,
            [
                "local.get 0",
                "local.get 1",
                "local.get 2",
                "local.set 5",
                "local.set 4",
                "local.set 3",
                "local.get 3",
                "i64.extend_i32_u",
                "local.get 5",
                "i64.extend_i32_u",
                "i64.add",
                "i32.const 0",
                "i64.load 1 offset=8",
                "i64.gt_u",
                "if",
                "local.get 3",
                "local.get 5",
                "call weft_rt.bounds",
                "end",
                "local.get 3",
                "local.get 4",
                "local.get 5",
                "memory.fill",
            ]
        );
    }

    #[test]
    fn with_memory_points_a_fill_is_a_scheduling_point_first() {
        let mut memory = options();
        memory.points = Points::Memory;
        let body = body_of(FILL, memory, "fill");
        assert_eq!(
            body[3..15],
            [
                "local.set 5",
                "local.set 4",
                "local.set 3",
                "local.get 3",
                "local.get 4",
                "local.get 5",
                "i32.const 0",
                "call weft_rt.bulk",
                "if",
                "call weft_rt.park",
                "end",
                "local.get 3",
            ]
        );
        // The guard follows, as without the point.
        assert_eq!(body[17], "local.set 5");
        assert!(body.contains(&"call weft_rt.bounds".to_string()));
    }
}
