//! Loads, stores and atomic read-modify-writes: a scheduling point where the
//! configured points hook them, a log entry where accesses are logged, and
//! on a shared memory a check against the size the guest sees.

use super::scratch::Scratch;
use super::{Result, Rewriter};
use crate::abi;
use crate::instrument::AccessKind;
use crate::instrument::Points;
use crate::instrument::ops::{self, Access, Operands, Scalar};
use crate::library::Owner;
use wasm_encoder::reencode::Reencode;
use wasm_encoder::{BlockType, Function, Instruction, MemArg};
use wasmparser::Operator;

impl Rewriter<'_> {
    /// Emits the memory access `op` at `pos` in function `func` if it needs
    /// anything around it; says whether it did.
    pub(super) fn emit_access(
        &mut self,
        f: &mut Function,
        op: &Operator,
        func: u32,
        pos: usize,
        scratch: &Scratch,
    ) -> Result<bool> {
        let hooked = self.hooked(op);
        let Some(access) = hooked.or_else(|| self.checked(op)) else {
            return Ok(false);
        };
        Self::save_operands(f, access, scratch);
        if let Some(hooked) = hooked {
            let site = self.site(hooked.kind, func, pos, hooked.memarg.offset, hooked.width);
            self.emit_point(f, site, scratch);
            // An allocator call logged as one access of its lock logs
            // none of its own atomics.
            let log = self.log_functions().filter(|_| !self.in_allocator_lock);
            if let Some(log) = log {
                match self.failed_cas_site(hooked, func, pos) {
                    Some(failed) => log.emit_call_at(f, scratch.addr, |f| {
                        Self::emit_cas_outcome_site(f, hooked, scratch, site, failed);
                    }),
                    None => log.emit_call(f, scratch.addr, site, false),
                }
            }
        } else if let (Some(logged), Some(log)) = (self.logged(op, pos), self.log_functions()) {
            let site = self.site(logged.kind, func, pos, logged.memarg.offset, logged.width);
            log.emit_call(f, scratch.addr, self.checked_site(site)?, true);
        }
        if self.shares_memory() {
            Self::emit_access_check(f, access, scratch);
        }
        if let Some(map) = self.read_map()
            && access.kind.reads()
        {
            Self::emit_read_mark(f, access, scratch, map);
        }
        Self::restore_operands(f, access, scratch);
        f.instruction(&self.instruction(op.clone())?);
        Ok(true)
    }

    /// With `failed_cas_reads`, for a compare-exchange of the program's own
    /// code: a second site, the atomic load that the compare-exchange is
    /// when it fails, which its log entry names then.
    fn failed_cas_site(&mut self, access: Access, func: u32, pos: usize) -> Option<i32> {
        let program = self.owner_of(pos) == Owner::Program;
        if !self.options.failed_cas_reads || access.kind != AccessKind::AtomicCmpxchg || !program {
            return None;
        }
        let offset = access.memarg.offset;
        Some(self.site(AccessKind::AtomicLoad, func, pos, offset, access.width))
    }

    /// Pushes `succeeded` when the compare-exchange `access`, whose operands
    /// are in `scratch`, is about to find the value it expects, else
    /// `failed`. Only this thread runs until it does, so memory holds what
    /// it will find.
    fn emit_cas_outcome_site(
        f: &mut Function,
        access: Access,
        scratch: &Scratch,
        succeeded: i32,
        failed: i32,
    ) {
        let Operands::AddrTwoValues(ty) = access.operands else {
            unreachable!("a compare-exchange takes two values");
        };
        let memarg = MemArg {
            offset: access.memarg.offset,
            align: 0,
            memory_index: 0,
        };
        f.instruction(&Instruction::I32Const(succeeded));
        f.instruction(&Instruction::I32Const(failed));
        f.instruction(&Instruction::LocalGet(scratch.addr));
        let wide = ty == Scalar::I64;
        f.instruction(&match (wide, access.width) {
            (false, 1) => Instruction::I32Load8U(memarg),
            (false, 2) => Instruction::I32Load16U(memarg),
            (false, _) => Instruction::I32Load(memarg),
            (true, 1) => Instruction::I64Load8U(memarg),
            (true, 2) => Instruction::I64Load16U(memarg),
            (true, 4) => Instruction::I64Load32U(memarg),
            (true, _) => Instruction::I64Load(memarg),
        });
        // The expected value, cut to the width compared.
        f.instruction(&Instruction::LocalGet(scratch.value(ty, 0)));
        let mask: Option<u64> = match (wide, access.width) {
            (_, 1) => Some(0xff),
            (_, 2) => Some(0xffff),
            (true, 4) => Some(0xffff_ffff),
            _ => None,
        };
        if let Some(mask) = mask {
            if wide {
                f.instruction(&Instruction::I64Const(mask as i64));
                f.instruction(&Instruction::I64And);
            } else {
                f.instruction(&Instruction::I32Const(mask as i32));
                f.instruction(&Instruction::I32And);
            }
        }
        f.instruction(&if wide {
            Instruction::I64Eq
        } else {
            Instruction::I32Eq
        });
        f.instruction(&Instruction::Select);
    }

    /// Whether `op` is an access that needs the scratch locals.
    pub(super) fn access_needs_scratch(&self, op: &Operator) -> bool {
        self.hooked(op).is_some() || self.checked(op).is_some()
    }

    /// The access to the shared memory `op` is, which gets a bounds check.
    fn checked(&self, op: &Operator) -> Option<Access> {
        if self.shares_memory() {
            ops::memory_access(op)
        } else {
            None
        }
    }

    /// The hooked access `op` is, under the configured points.
    fn hooked(&self, op: &Operator) -> Option<Access> {
        ops::atomic_access(op).or_else(|| match self.options.points {
            Points::Memory => ops::plain_access(op),
            Points::Sync => None,
        })
    }

    /// The plain access `op` at `pos` is when plain accesses are logged,
    /// this one included, and `op` is not hooked as a scheduling point
    /// anyway.
    fn logged(&self, op: &Operator, pos: usize) -> Option<Access> {
        if !self.logs_accesses() || self.hooked(op).is_some() || !self.logs_at(pos) {
            return None;
        }
        ops::plain_access(op).or_else(|| ops::simd_access(op))
    }

    /// Moves an access's operands (address, then values) from the stack
    /// into scratch locals.
    fn save_operands(f: &mut Function, access: Access, scratch: &Scratch) {
        match access.operands {
            Operands::Addr => {}
            Operands::AddrValue(ty) => {
                f.instruction(&Instruction::LocalSet(scratch.value(ty, 0)));
            }
            Operands::AddrTwoValues(ty) => {
                f.instruction(&Instruction::LocalSet(scratch.value(ty, 1)));
                f.instruction(&Instruction::LocalSet(scratch.value(ty, 0)));
            }
        }
        f.instruction(&Instruction::LocalSet(scratch.addr));
    }

    /// Pushes back the operands [`Self::save_operands`] saved.
    fn restore_operands(f: &mut Function, access: Access, scratch: &Scratch) {
        f.instruction(&Instruction::LocalGet(scratch.addr));
        match access.operands {
            Operands::Addr => {}
            Operands::AddrValue(ty) => {
                f.instruction(&Instruction::LocalGet(scratch.value(ty, 0)));
            }
            Operands::AddrTwoValues(ty) => {
                f.instruction(&Instruction::LocalGet(scratch.value(ty, 0)));
                f.instruction(&Instruction::LocalGet(scratch.value(ty, 1)));
            }
        }
    }

    /// The scheduling point of a hooked access whose address is in
    /// `scratch.addr`: parks when the host says so.
    fn emit_point(&self, f: &mut Function, site: i32, scratch: &Scratch) {
        if self.shares_memory() {
            self.emit_buffered_point(f, site, scratch);
        } else {
            for instruction in &self.host_point(site, scratch) {
                f.instruction(instruction);
            }
        }
    }

    /// A point that, while the host has granted the thread a budget, only
    /// writes `(site, addr)` to the point buffer and spends one unit;
    /// without budget it calls `weft_rt.point`, and `weft_rt.park` when the
    /// host says so. (See [`abi::POINT_BUFFER`] for the buffer's layout.)
    ///
    /// Both ways cost the same fuel when the thread goes on: time slices
    /// come every so much fuel, so where they fall must not depend on
    /// whether a point was passed inside wasm or through the host (a replay
    /// asks the host at points the exploration passed inside wasm).
    fn emit_buffered_point(&self, f: &mut Function, site: i32, scratch: &Scratch) {
        let buffer = |offset: u64| wasm_encoder::MemArg {
            offset,
            align: 2,
            memory_index: 1,
        };
        let budgeted = [
            // budget -= 1; the point's entry is the new budget.
            Instruction::I32Const(0),
            Instruction::LocalGet(scratch.entry),
            Instruction::I32Const(1),
            Instruction::I32Sub,
            Instruction::LocalTee(scratch.entry),
            Instruction::I32Store(buffer(abi::POINT_BUFFER.budget)),
            // entries[budget] = site | addr << 32
            Instruction::LocalGet(scratch.entry),
            Instruction::I32Const(3),
            Instruction::I32Shl,
            Instruction::LocalGet(scratch.addr),
            Instruction::I64ExtendI32U,
            Instruction::I64Const(32),
            Instruction::I64Shl,
            Instruction::I64Const(i64::from(site as u32)),
            Instruction::I64Or,
            Instruction::I64Store(wasm_encoder::MemArg {
                offset: abi::POINT_BUFFER.entries,
                align: 3,
                memory_index: 1,
            }),
        ];
        let host = self.host_point(site, scratch);
        // The host way, when the thread goes on: all but the call to park.
        let going_on = fuel(&host) - 1;
        f.instruction(&Instruction::I32Const(0));
        f.instruction(&Instruction::I32Load(buffer(abi::POINT_BUFFER.budget)));
        f.instruction(&Instruction::LocalTee(scratch.entry));
        f.instruction(&Instruction::If(BlockType::Empty));
        for instruction in &budgeted {
            f.instruction(instruction);
        }
        f.instruction(&Instruction::Else);
        for _ in going_on..fuel(&budgeted) {
            f.instruction(&Instruction::I32Const(0));
            f.instruction(&Instruction::Drop);
        }
        for instruction in &host {
            f.instruction(instruction);
        }
        f.instruction(&Instruction::End);
    }

    /// `weft_rt.point`, then `weft_rt.park` if the host says so.
    fn host_point(&self, site: i32, scratch: &Scratch) -> [Instruction<'static>; 6] {
        [
            Instruction::LocalGet(scratch.addr),
            Instruction::I32Const(site),
            Instruction::Call(self.rt_func(&abi::POINT)),
            Instruction::If(BlockType::Empty),
            Instruction::Call(self.rt_func(&abi::PARK)),
            Instruction::End,
        ]
    }

    /// Before an access to the shared memory whose address is in
    /// `scratch.addr`: an access that would end past the size the guest sees
    /// gets an address near 4 GiB instead, where wasmtime traps it as out of
    /// bounds just as it would trap the original address in a fresh memory.
    /// (weft keeps the size the guest sees, which can be smaller than the
    /// mapping: an execution starts at the initial size even when an
    /// earlier one grew the memory; weft never maps the top 64 KiB of the
    /// 4 GiB space.) The low four bits of the address are kept, so that a
    /// misaligned atomic access still traps as misaligned first.
    fn emit_access_check(f: &mut Function, access: Access, scratch: &Scratch) {
        let span = access.memarg.offset + u64::from(access.width);
        f.instruction(&Instruction::I32Const(15));
        f.instruction(&Instruction::LocalGet(scratch.addr));
        f.instruction(&Instruction::I32And);
        f.instruction(&Instruction::I32Const(abi::OUT_OF_BOUNDS_ADDRESS as i32));
        f.instruction(&Instruction::I32Or);
        f.instruction(&Instruction::LocalGet(scratch.addr));
        f.instruction(&Instruction::LocalGet(scratch.addr));
        f.instruction(&Instruction::I64ExtendI32U);
        f.instruction(&Instruction::I64Const(span as i64));
        f.instruction(&Instruction::I64Add);
        Self::emit_visible_size(f);
        f.instruction(&Instruction::I64GtU);
        f.instruction(&Instruction::Select);
        f.instruction(&Instruction::LocalSet(scratch.addr));
    }

    /// Before a read of the shared memory whose (checked) address is in
    /// `scratch.addr`: sets the bits of the granules it reads in the map of
    /// read bytes at `(offset, bytes)` of memory 1 (see
    /// [`abi::READ_MAP`]), with one two-byte or of the map's byte of the
    /// first granule (an access of at most 16 bytes spans at most three
    /// granules, ten bits from the first one's).
    fn emit_read_mark(f: &mut Function, access: Access, scratch: &Scratch, map: (u64, u64)) {
        let (offset, bytes) = map;
        let at = scratch.entry;
        let map_byte = [
            Instruction::I32Const(6),
            Instruction::I32ShrU,
            Instruction::I32Const((bytes - 1) as i32),
            Instruction::I32And,
        ];
        let memarg = MemArg {
            offset,
            align: 0,
            memory_index: 1,
        };
        // The address read, then the map's byte of its granule, twice
        // (for the store, and for the load).
        f.instruction(&Instruction::LocalGet(scratch.addr));
        if access.memarg.offset != 0 {
            f.instruction(&Instruction::I32Const(access.memarg.offset as i32));
            f.instruction(&Instruction::I32Add);
        }
        f.instruction(&Instruction::LocalTee(at));
        for instruction in &map_byte {
            f.instruction(instruction);
        }
        f.instruction(&Instruction::LocalGet(at));
        for instruction in &map_byte {
            f.instruction(instruction);
        }
        f.instruction(&Instruction::I32Load16U(memarg));
        // One bit per granule read: (2 << (granules - 1)) - 1 ...
        if access.width == 1 {
            f.instruction(&Instruction::I32Const(1));
        } else {
            f.instruction(&Instruction::I32Const(2));
            f.instruction(&Instruction::LocalGet(at));
            f.instruction(&Instruction::I32Const(7));
            f.instruction(&Instruction::I32And);
            f.instruction(&Instruction::I32Const(i32::from(access.width) - 1));
            f.instruction(&Instruction::I32Add);
            f.instruction(&Instruction::I32Const(3));
            f.instruction(&Instruction::I32ShrU);
            f.instruction(&Instruction::I32Shl);
            f.instruction(&Instruction::I32Const(1));
            f.instruction(&Instruction::I32Sub);
        }
        // ... from the first granule's bit in its byte.
        f.instruction(&Instruction::LocalGet(at));
        f.instruction(&Instruction::I32Const(3));
        f.instruction(&Instruction::I32ShrU);
        f.instruction(&Instruction::I32Const(7));
        f.instruction(&Instruction::I32And);
        f.instruction(&Instruction::I32Shl);
        f.instruction(&Instruction::I32Or);
        f.instruction(&Instruction::I32Store16(memarg));
    }

    /// Pushes the size of the shared memory the guest sees, in bytes (an
    /// i64 the host keeps current in the point buffer).
    pub(super) fn emit_visible_size(f: &mut Function) {
        f.instruction(&Instruction::I32Const(0));
        f.instruction(&Instruction::I64Load(wasm_encoder::MemArg {
            offset: abi::POINT_BUFFER.size,
            align: 3,
            memory_index: 1,
        }));
    }
}

/// The fuel wasmtime charges for `instructions`: one unit each, but for
/// the structural ones it charges nothing for (`nop`, `drop`, `block`,
/// `loop`, `else`, `end`, `unreachable`, `return`).
fn fuel(instructions: &[Instruction<'_>]) -> u32 {
    instructions
        .iter()
        .filter(|i| {
            !matches!(
                i,
                Instruction::Nop
                    | Instruction::Drop
                    | Instruction::Block(_)
                    | Instruction::Loop(_)
                    | Instruction::Else
                    | Instruction::End
                    | Instruction::Unreachable
                    | Instruction::Return
            )
        })
        .count() as u32
}

#[cfg(test)]
mod tests {
    use super::super::testing::{body_of, options};
    use crate::instrument::Points;

    #[test]
    fn a_decrement_only_branched_on_is_noted_as_a_counting_operation() {
        let wat = r#"(module
            (memory 1 1 shared)
            (func $release (param i32)
                local.get 0
                i32.const 1
                i32.atomic.rmw.add
                drop
                block
                    local.get 0
                    i32.const 1
                    i32.atomic.rmw.sub
                    i32.const 1
                    i32.ne
                    br_if 0
                    atomic.fence
                end))"#;
        let wasm = wat::parse_str(wat).unwrap();
        let rewritten = crate::instrument::instrument(&wasm, &options()).unwrap();
        // Site 0, the addition whose result is dropped, is not one; site 1
        // is.
        let counts = rewritten.sites.counts();
        assert_eq!(counts.len(), 1, "{counts:?}");
        assert_eq!(counts[0].0, 1);
        assert_eq!(counts[0].1.against, 1);
    }

    /// The calls of the log functions in a rewritten `body` (every call
    /// but those of `weft_rt`'s imports).
    fn log_calls(body: &[String]) -> usize {
        body.iter()
            .filter(|line| line.starts_with("call ") && !line.contains("weft_rt."))
            .count()
    }

    #[test]
    fn an_allocator_call_logs_one_access_of_its_lock_and_not_the_locks_atomics() {
        // The lock's acquire and release, as dlmalloc takes its lock.
        let wat = r#"(module
            (memory 1 1 shared)
            (func $dlfree (param i32)
                i32.const 64
                i32.const 0
                i32.const 1
                i32.atomic.rmw.cmpxchg
                drop
                i32.const 64
                i32.const 0
                i32.atomic.store))"#;
        let mut logging = options();
        logging.log_accesses = true;
        logging.library_steps = true;
        let lock_entry = [
            format!("i32.const {}", crate::abi::ALLOCATOR_LOCK_WORD as i32),
            format!("i32.const {}", crate::abi::ALLOCATOR_LOCK_SITE as i32),
            "i32.const 0".to_string(),
        ];
        let lock_atomics = body_of(wat, logging, "dlfree");
        assert_eq!(log_calls(&lock_atomics), 2, "{lock_atomics:#?}");
        assert!(!lock_atomics.windows(3).any(|w| w == lock_entry));
        logging.allocator_as_one_lock = true;
        let one_lock = body_of(wat, logging, "dlfree");
        assert_eq!(log_calls(&one_lock), 1, "{one_lock:#?}");
        assert!(
            one_lock.windows(3).any(|w| w == lock_entry),
            "{one_lock:#?}"
        );
        // Where a thread may stop inside the allocator, the lock's atomics
        // stay in the log.
        logging.points = Points::Memory;
        assert_eq!(log_calls(&body_of(wat, logging, "dlfree")), 2);
    }

    #[test]
    fn a_threads_creation_logs_its_atomics_and_not_its_plain_accesses() {
        // A store to the new thread's descriptor, and the thread id stored
        // atomically.
        let wat = r#"(module
            (memory 1 1 shared)
            (func $__pthread_create (param i32)
                local.get 0
                i32.const 2
                i32.store offset=8
                local.get 0
                i32.const 5
                i32.atomic.store offset=4))"#;
        let mut logging = options();
        logging.log_accesses = true;
        let logged = body_of(wat, logging, "__pthread_create");
        assert_eq!(log_calls(&logged), 2, "{logged:#?}");
        logging.quiet_thread_lifecycle = true;
        let quiet = body_of(wat, logging, "__pthread_create");
        assert_eq!(log_calls(&quiet), 1, "{quiet:#?}");
        // A function of the program is logged as it was.
        let program = wat.replace("$__pthread_create", "$create_worker");
        assert_eq!(log_calls(&body_of(&program, logging, "create_worker")), 2);
    }

    #[test]
    fn a_compare_exchange_logs_the_load_it_is_when_it_will_fail() {
        let wat = r#"(module
            (memory 1 1 shared)
            (func $claim (param i32) (result i32)
                local.get 0
                i32.const 0
                i32.const 7
                i32.atomic.rmw8.cmpxchg_u offset=2))"#;
        let mut logging = options();
        logging.log_accesses = true;
        logging.failed_cas_reads = true;
        let body = body_of(wat, logging, "claim");
        // Site 0 when memory holds the expected byte, else site 1; the
        // address is in scratch local 1, the expected value in 2.
        let outcome = [
            "i32.const 0",
            "i32.const 1",
            "local.get 1",
            "i32.load8_u offset=2",
            "local.get 2",
            "i32.const 255",
            "i32.and",
            "i32.eq",
            "select",
        ];
        assert!(
            body.windows(outcome.len()).any(|w| w == outcome),
            "{body:#?}"
        );
        logging.failed_cas_reads = false;
        let body = body_of(wat, logging, "claim");
        assert!(
            !body.iter().any(|line| line == "i32.load8_u offset=2"),
            "{body:#?}"
        );
    }

    #[test]
    fn without_a_shared_memory_an_atomic_store_is_a_host_point() {
        let wat = r#"(module
            (memory 1)
            (func $store (param i32 i32)
                local.get 0
                local.get 1
                i32.atomic.store offset=4))"#;
        let body = body_of(wat, options(), "store");
        // Scratch: the address in 2, the i32 values in 3 and 4.
        assert_eq!(
            body,
            [
                "local.get 0",
                "local.get 1",
                "local.set 3",
                "local.set 2",
                "local.get 2",
                "i32.const 0",
                "call weft_rt.point",
                "if",
                "call weft_rt.park",
                "end",
                "local.get 2",
                "local.get 3",
                "i32.atomic.store offset=4",
            ]
        );
    }

    #[test]
    fn a_plain_load_of_the_shared_memory_is_checked_against_the_visible_size() {
        let wat = r#"(module
            (memory 1 1 shared)
            (func $load (param i32) (result i32)
                local.get 0
                i32.load offset=8))"#;
        let body = body_of(wat, options(), "load");
        assert_eq!(
            body,
            [
                "local.get 0",
                "local.set 1",
                "i32.const 15",
                "local.get 1",
                "i32.and",
                "i32.const -256",
                "i32.or",
                "local.get 1",
                "local.get 1",
                "i64.extend_i32_u",
                "i64.const 12",
                "i64.add",
                "i32.const 0",
                "i64.load 1 offset=8",
                "i64.gt_u",
                "select",
                "local.set 1",
                "local.get 1",
                "i32.load offset=8",
            ]
        );
    }

    #[test]
    fn with_read_tracking_a_load_marks_its_granules_and_a_store_does_not() {
        let wat = r#"(module
            (memory 1 2 shared)
            (func $load (param i32) (result i32)
                local.get 0
                i32.load offset=4)
            (func $store (param i32)
                local.get 0
                i32.const 1
                i32.store))"#;
        let mut tracking = options();
        tracking.track_reads = true;
        let load = body_of(wat, tracking, "load");
        // After the 4 KiB point buffer: a map of 2 pages / 64 = 2 KiB.
        let mark = [
            "i32.load16_u 1 offset=4096 align=1",
            "i32.store16 1 offset=4096 align=1",
        ];
        for line in mark {
            assert!(load.iter().any(|l| l == line), "{line}: {load:#?}");
        }
        assert!(load.contains(&"i32.const 2047".to_string()), "{load:#?}");
        let store = body_of(wat, tracking, "store");
        assert!(!store.iter().any(|l| l.contains("store16")), "{store:#?}");
        tracking.track_reads = false;
        let untracked = body_of(wat, tracking, "load");
        assert!(
            !untracked.iter().any(|l| l.contains("16")),
            "{untracked:#?}"
        );
    }

    #[test]
    fn with_memory_points_the_buffered_point_costs_the_same_fuel_both_ways() {
        let wat = r#"(module
            (memory 1 1 shared)
            (func $load (param i32) (result i32)
                local.get 0
                i32.load))"#;
        let mut memory = options();
        memory.points = Points::Memory;
        let body = body_of(wat, memory, "load");
        let start = body.iter().position(|l| l == "if").unwrap();
        let middle = body.iter().position(|l| l == "else").unwrap();
        let end = start + body[start..].iter().position(|l| l == "end").unwrap();
        let charged = |lines: &[String]| {
            lines
                .iter()
                .filter(|l| !matches!(l.as_str(), "drop" | "end" | "else"))
                .count()
        };
        // The budgeted way writes the buffer; the other goes to the host
        // (all but the call to park, which only runs when the thread
        // stops). `drop`, `else` and `end` cost no fuel.
        let budgeted = charged(&body[start + 1..middle]);
        let host = charged(&body[middle + 1..end]) - 1;
        assert!(body[start + 1..middle].contains(&"i64.store 1 offset=32".to_string()));
        assert!(body[middle + 1..end].contains(&"call weft_rt.point".to_string()));
        assert_eq!(budgeted, host);
    }
}
