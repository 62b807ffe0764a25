//! The rewrite itself: a [`Reencode`] pass that appends the `weft_rt` imports,
//! shifts function indices, hooks memory accesses, checks every access to a
//! shared memory against the size the guest sees, and replaces wait, notify
//! and `memory.grow` by host calls.

use super::InstrumentError;
use super::access_log::{self, LogFunctions};
use super::entries::EntryWrappers;
use super::ops::{self, Access, BulkRanges, Operands, Replaced, Scalar};
use super::sites::{Site, SiteTable};
use super::survey::{MemoryPlan, Survey};
use super::{InstrumentOptions, Points};
use crate::abi::{self, Signature};
use wasm_encoder::reencode::{Error, Reencode, utils};
use wasm_encoder::{
    BlockType, CodeSection, Encode, EntityType, Function, ImportSection, Instruction, MemoryType,
    TypeSection, ValType,
};
use wasmparser::FunctionBody;

type Result<T> = std::result::Result<T, Error<InstrumentError>>;

/// Scratch locals appended to a function that has hooked accesses.
struct Scratch {
    addr: u32,
    i32s: [u32; 2],
    i64s: [u32; 2],
    f32: u32,
    f64: u32,
    /// The remaining budget of the point buffer, which numbers the entry a
    /// point writes.
    entry: u32,
    v128: u32,
}

impl Scratch {
    const DECLS: [(u32, ValType); 7] = [
        (1, ValType::I32),
        (2, ValType::I32),
        (2, ValType::I64),
        (1, ValType::F32),
        (1, ValType::F64),
        (1, ValType::I32),
        (1, ValType::V128),
    ];

    fn at(base: u32) -> Self {
        Scratch {
            addr: base,
            i32s: [base + 1, base + 2],
            i64s: [base + 3, base + 4],
            f32: base + 5,
            f64: base + 6,
            entry: base + 7,
            v128: base + 8,
        }
    }

    fn value(&self, ty: Scalar, which: usize) -> u32 {
        match ty {
            Scalar::I32 => self.i32s[which],
            Scalar::I64 => self.i64s[which],
            Scalar::F32 => self.f32,
            Scalar::F64 => self.f64,
            Scalar::V128 => self.v128,
        }
    }
}

pub(crate) struct Rewriter<'s> {
    survey: &'s Survey,
    options: InstrumentOptions,
    /// Whether the plain access at a code offset is logged (when accesses
    /// are).
    log_at: &'s dyn Fn(u32) -> bool,
    pub sites: SiteTable,
    /// Index of the next defined function whose body is parsed.
    next_defined: u32,
    emitted_types: bool,
    emitted_imports: bool,
    emitted_globals: bool,
    emitted_memories: bool,
    emitted_exports: bool,
    /// The entry wrappers to append, when the start function is folded in.
    entries: Option<EntryWrappers>,
    /// Index of the next global the global section defines.
    next_global: u32,
    /// Encoded instructions that put the module's own mutable globals back
    /// to their initial values (run first by the entry wrappers).
    global_resets: Vec<u8>,
}

impl<'s> Rewriter<'s> {
    /// A rewriter of `survey`'s module that appends `entries`, if any, and
    /// logs the plain accesses at the code offsets `log_at` holds for.
    pub fn new(
        survey: &'s Survey,
        options: InstrumentOptions,
        entries: Option<EntryWrappers>,
        log_at: &'s dyn Fn(u32) -> bool,
    ) -> Self {
        Rewriter {
            survey,
            options,
            log_at,
            sites: SiteTable::default(),
            next_defined: 0,
            emitted_types: false,
            emitted_imports: false,
            emitted_globals: false,
            emitted_memories: false,
            emitted_exports: false,
            entries,
            next_global: survey.imported_globals,
            global_resets: Vec::new(),
        }
    }

    /// Type index of the `n`-th appended wrapper type: `() -> ()`, then
    /// `(i32, i32) -> ()`.
    fn wrapper_type(&self, n: u32) -> u32 {
        self.survey.type_count + abi::RT_IMPORTS.len() as u32 + n
    }

    /// Appends the bodies of the entry wrappers.
    fn append_wrapper_bodies(&mut self, code: &mut CodeSection) -> Result<()> {
        let Some(entries) = self.entries else {
            return Ok(());
        };
        let start = entries.start.map(|s| self.function_index(s)).transpose()?;
        for (_, callee, passes_args) in entries.wrappers() {
            let mut f = Function::new([]);
            self.emit_global_resets(&mut f);
            if let Some(start) = start {
                f.instruction(&Instruction::Call(start));
            }
            if passes_args {
                f.instruction(&Instruction::LocalGet(0));
                f.instruction(&Instruction::LocalGet(1));
            }
            f.instruction(&Instruction::Call(self.function_index(callee)?));
            f.instruction(&Instruction::End);
            code.function(&f);
        }
        Ok(())
    }

    /// Puts every mutable global back to its initial value: the module's
    /// own and the dropped-segment flags.
    fn emit_global_resets(&self, f: &mut Function) {
        f.raw(self.global_resets.iter().copied());
        for (n, &segment) in self.flagged_segments().iter().enumerate() {
            f.instruction(&Instruction::I32Const(self.initially_dropped(segment)));
            f.instruction(&Instruction::GlobalSet(self.survey.global_count + n as u32));
        }
    }

    /// The data segments of the shared memory that get a "dropped" flag:
    /// those `memory.init` or `data.drop` name. `data.drop` only sets the
    /// flag, so that an instance keeps its segments for the next execution,
    /// and `memory.init` of a flagged segment reads an empty segment instead,
    /// which is what a dropped one is.
    fn flagged_segments(&self) -> &[u32] {
        if self.shares_memory() {
            &self.survey.data_named
        } else {
            &[]
        }
    }

    /// The global holding `segment`'s "dropped" flag.
    fn dropped_flag(&self, segment: u32) -> Option<u32> {
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
    fn empty_segment(&self) -> Option<u32> {
        (!self.flagged_segments().is_empty()).then_some(self.survey.data_active.len() as u32)
    }

    /// `memory.init` of a flagged segment: of the empty segment once the
    /// flag is set.
    fn emit_memory_init(&self, f: &mut Function, segment: u32, flag: u32, scratch: &Scratch) {
        let (dst, src, len) = (scratch.addr, scratch.i32s[0], scratch.i32s[1]);
        let empty = self
            .empty_segment()
            .expect("a flagged segment comes with the empty one");
        f.instruction(&Instruction::LocalSet(len));
        f.instruction(&Instruction::LocalSet(src));
        f.instruction(&Instruction::LocalSet(dst));
        let init = |f: &mut Function, data_index: u32| {
            for local in [dst, src, len] {
                f.instruction(&Instruction::LocalGet(local));
            }
            f.instruction(&Instruction::MemoryInit { mem: 0, data_index });
        };
        f.instruction(&Instruction::GlobalGet(flag));
        f.instruction(&Instruction::If(BlockType::Empty));
        init(f, empty);
        f.instruction(&Instruction::Else);
        init(f, segment);
        f.instruction(&Instruction::End);
    }

    /// Function index of the `n`-th appended `weft_rt` import.
    fn rt_func(&self, sig: &Signature) -> u32 {
        let n = abi::RT_IMPORTS
            .iter()
            .position(|s| s.name == sig.name)
            .expect("every rt signature is listed in RT_IMPORTS") as u32;
        self.survey.func_imports + n
    }

    fn shares_memory(&self) -> bool {
        matches!(self.survey.memory, MemoryPlan::Shared(_))
    }

    /// Whether accesses to the shared memory are logged (a module without
    /// code has none).
    pub fn logs_accesses(&self) -> bool {
        self.options.log_accesses
            && self.shares_memory()
            && !self.survey.defined_func_types.is_empty()
    }

    /// The plain access `op` at `pos` is when plain accesses are logged,
    /// this one included, and `op` is not hooked as a scheduling point
    /// anyway.
    fn logged(&self, op: &wasmparser::Operator, pos: usize) -> Option<Access> {
        if !self.logs_accesses() || self.hooked(op).is_some() || !self.logs_at(pos) {
            return None;
        }
        ops::plain_access(op).or_else(|| ops::simd_access(op))
    }

    /// The bulk instruction `op` at `pos` is when plain accesses are logged,
    /// this one included, and bulk instructions are not hooked as
    /// scheduling points anyway.
    fn logged_bulk(&self, op: &wasmparser::Operator, pos: usize) -> Option<super::AccessKind> {
        if !self.logs_accesses() || self.hooked_bulk(op).is_some() || !self.logs_at(pos) {
            return None;
        }
        ops::bulk_access(op)
    }

    /// The functions that log accesses, when the module has them (see
    /// [`access_log`]): appended after the defined functions and the entry
    /// wrappers.
    fn log_functions(&self) -> Option<LogFunctions> {
        if !self.logs_accesses() {
            return None;
        }
        let first = self.survey.func_imports
            + abi::RT_IMPORTS.len() as u32
            + self.survey.defined_func_types.len() as u32
            + self.entries.map_or(0, |e| e.wrappers().count() as u32);
        Some(LogFunctions {
            log: first,
            log_bulk: first + 1,
        })
    }

    /// Type index of the `n`-th appended logging function's type.
    fn log_type(&self, n: u32) -> u32 {
        self.wrapper_type(if self.entries.is_some() { 2 } else { 0 }) + n
    }

    /// A site whose access may become a scheduling point through the access
    /// log's bitmap, which has a bit for each site the survey counted.
    fn checked_site(&self, site: i32) -> Result<i32> {
        if site as u64 >= self.survey.site_bound {
            return Err(Error::UserError(InstrumentError::Rewrite(format!(
                "site {site} is past the {} the survey counted",
                self.survey.site_bound
            ))));
        }
        Ok(site)
    }

    /// Pushes the size of the shared memory the guest sees, in bytes (an
    /// i64 the host keeps current in the point buffer).
    fn emit_visible_size(f: &mut Function) {
        f.instruction(&Instruction::I32Const(0));
        f.instruction(&Instruction::I64Load(wasm_encoder::MemArg {
            offset: abi::POINT_BUFFER.size,
            align: 3,
            memory_index: 1,
        }));
    }

    /// Appends the dropped-segment flags.
    fn append_globals(&mut self, globals: &mut wasm_encoder::GlobalSection) {
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
        self.emitted_globals = true;
    }

    /// Before a bulk instruction on the shared memory: checks each range it
    /// touches against the size the guest sees and, past it, calls
    /// `weft_rt.bounds`, which traps. (weft keeps the size the guest sees,
    /// which can be smaller than the mapping wasmtime checks against.)
    fn emit_bounds_guard(&mut self, f: &mut Function, ranges: BulkRanges, scratch: &Scratch) {
        let (first, second, len) = (scratch.addr, scratch.i32s[0], scratch.i32s[1]);
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
        for local in [first, second, len] {
            f.instruction(&Instruction::LocalGet(local));
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
    fn emit_buffered_point(&mut self, f: &mut Function, site: i32, scratch: &Scratch) {
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

    /// `weft_rt.point`, then `weft_rt.park` if the host says so.
    fn emit_host_point(&self, f: &mut Function, site: i32, scratch: &Scratch) {
        for instruction in &self.host_point(site, scratch) {
            f.instruction(instruction);
        }
    }

    /// Defines the point buffer memory (exported for the host) when the
    /// memory is shared: memory 1, after the imported shared memory.
    fn define_point_buffer(&self, memories: &mut wasm_encoder::MemorySection) {
        // One-byte pages keep the memory small: the pooling allocator
        // clears all of it after every execution.
        let bytes = if self.logs_accesses() {
            abi::ACCESS_LOG.memory_bytes(self.survey.site_bound)
        } else {
            abi::POINT_BUFFER.bytes
        };
        memories.memory(MemoryType {
            minimum: bytes,
            maximum: Some(bytes),
            memory64: false,
            shared: false,
            page_size_log2: Some(0),
        });
    }

    fn export_point_buffer(&mut self, exports: &mut wasm_encoder::ExportSection) {
        exports.export(
            abi::POINT_BUFFER.export,
            wasm_encoder::ExportKind::Memory,
            1,
        );
        self.emitted_exports = true;
    }

    /// The ranges to check before `op`, a bulk instruction on the shared
    /// memory.
    fn guarded_bulk(&self, op: &wasmparser::Operator) -> Option<BulkRanges> {
        if self.shares_memory() {
            ops::bulk_ranges(op)
        } else {
            None
        }
    }

    fn append_types(&mut self, types: &mut TypeSection) {
        for sig in abi::RT_IMPORTS {
            let conv = |v: &abi::Val| match v {
                abi::Val::I32 => ValType::I32,
                abi::Val::I64 => ValType::I64,
            };
            types.ty().function(
                sig.params.iter().map(conv).collect::<Vec<_>>(),
                sig.results.iter().map(conv).collect::<Vec<_>>(),
            );
        }
        if self.entries.is_some() {
            types.ty().function([], []);
            types.ty().function([ValType::I32, ValType::I32], []);
        }
        if self.logs_accesses() {
            for params in access_log::PARAMS {
                types.ty().function(params.iter().copied(), []);
            }
        }
        self.emitted_types = true;
    }

    fn append_imports(&mut self, imports: &mut ImportSection) {
        for (i, sig) in abi::RT_IMPORTS.iter().enumerate() {
            imports.import(
                abi::RT_MODULE,
                sig.name,
                EntityType::Function(self.survey.type_count + i as u32),
            );
        }
        if let MemoryPlan::Shared(plan) = &self.survey.memory
            && plan.was_defined
        {
            imports.import(
                &plan.import.0,
                &plan.import.1,
                EntityType::Memory(MemoryType {
                    minimum: plan.min_pages,
                    maximum: Some(plan.max_pages),
                    memory64: false,
                    shared: true,
                    page_size_log2: None,
                }),
            );
        }
        self.emitted_imports = true;
    }

    /// The bulk memory access `op` is, hooked with `--points memory`.
    fn hooked_bulk(&self, op: &wasmparser::Operator) -> Option<super::AccessKind> {
        match self.options.points {
            Points::Memory => ops::bulk_access(op),
            Points::Sync => None,
        }
    }

    /// `memory.copy`/`memory.fill` with its three operands saved, passed to
    /// `weft_rt.bulk`, and pushed back.
    fn emit_bulk(&mut self, f: &mut Function, site: i32, scratch: &Scratch) {
        let (dst, mid, len) = (scratch.addr, scratch.i32s[0], scratch.i32s[1]);
        f.instruction(&Instruction::LocalSet(len));
        f.instruction(&Instruction::LocalSet(mid));
        f.instruction(&Instruction::LocalSet(dst));
        for local in [dst, mid, len] {
            f.instruction(&Instruction::LocalGet(local));
        }
        f.instruction(&Instruction::I32Const(site));
        f.instruction(&Instruction::Call(self.rt_func(&abi::BULK)));
        f.instruction(&Instruction::If(BlockType::Empty));
        f.instruction(&Instruction::Call(self.rt_func(&abi::PARK)));
        f.instruction(&Instruction::End);
        for local in [dst, mid, len] {
            f.instruction(&Instruction::LocalGet(local));
        }
    }

    /// The access to the shared memory `op` is, which gets a bounds check.
    fn checked(&self, op: &wasmparser::Operator) -> Option<Access> {
        if self.shares_memory() {
            ops::memory_access(op)
        } else {
            None
        }
    }

    /// The hooked access `op` is, under the configured points.
    fn hooked(&self, op: &wasmparser::Operator) -> Option<Access> {
        ops::atomic_access(op).or_else(|| match self.options.points {
            Points::Memory => ops::plain_access(op),
            Points::Sync => None,
        })
    }

    fn replacement(&self, op: &wasmparser::Operator) -> Option<Replaced> {
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

    /// The code offset of the instruction at `pos` in the module's bytes.
    fn code_offset(&self, pos: usize) -> u32 {
        pos.saturating_sub(self.survey.code_section_start) as u32
    }

    /// Whether a plain access at `pos` is logged (when accesses are).
    fn logs_at(&self, pos: usize) -> bool {
        (self.log_at)(self.code_offset(pos))
    }

    fn site(
        &mut self,
        kind: super::AccessKind,
        func: u32,
        pos: usize,
        offset: u64,
        width: u8,
    ) -> i32 {
        let code_offset = self.code_offset(pos);
        self.sites.push(Site {
            kind,
            func,
            code_offset,
            mem_offset: offset,
            width,
            callee: None,
        }) as i32
    }

    /// A call site (for call logging): `callee` is the original index of a
    /// direct call's target.
    fn call_site(&mut self, func: u32, pos: usize, callee: Option<u32>) -> i32 {
        let code_offset = self.code_offset(pos);
        self.sites.push(Site {
            kind: super::AccessKind::Call,
            func,
            code_offset,
            mem_offset: 0,
            width: 0,
            callee,
        }) as i32
    }

    /// The call instruction `op` is (direct: with its target), if calls are
    /// logged.
    fn logged_call(&self, op: &wasmparser::Operator) -> Option<Option<u32>> {
        if !self.options.log_calls {
            return None;
        }
        match op {
            wasmparser::Operator::Call { function_index } => Some(Some(*function_index)),
            wasmparser::Operator::CallIndirect { .. } | wasmparser::Operator::CallRef { .. } => {
                Some(None)
            }
            _ => None,
        }
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
    fn emit_point(&mut self, f: &mut Function, site: i32, scratch: &Scratch) {
        if self.shares_memory() {
            self.emit_buffered_point(f, site, scratch);
        } else {
            self.emit_host_point(f, site, scratch);
        }
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

    /// In wasi-libc's thread start function, the call of the thread's start
    /// routine: made only when `weft_rt.exit_value` says so, else its value
    /// stands for the routine's result (see [`abi::EXIT_VALUE`]).
    fn emit_start_routine_call(
        &self,
        f: &mut Function,
        type_index: u32,
        table_index: u32,
        scratch: &Scratch,
    ) {
        let [arg, routine] = scratch.i32s;
        let exit_value = scratch.i64s[0];
        f.instruction(&Instruction::LocalSet(routine));
        f.instruction(&Instruction::LocalSet(arg));
        f.instruction(&Instruction::Call(self.rt_func(&abi::EXIT_VALUE)));
        f.instruction(&Instruction::LocalTee(exit_value));
        f.instruction(&Instruction::I64Const(-1));
        f.instruction(&Instruction::I64Eq);
        f.instruction(&Instruction::If(BlockType::Result(ValType::I32)));
        f.instruction(&Instruction::LocalGet(arg));
        f.instruction(&Instruction::LocalGet(routine));
        f.instruction(&Instruction::CallIndirect {
            type_index,
            table_index,
        });
        f.instruction(&Instruction::Else);
        f.instruction(&Instruction::LocalGet(exit_value));
        f.instruction(&Instruction::I32WrapI64);
        f.instruction(&Instruction::End);
    }

    fn emit_replaced(&mut self, f: &mut Function, replaced: Replaced, func: u32, pos: usize) {
        use super::AccessKind::{Notify, Wait};
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
    }
}

impl Reencode for Rewriter<'_> {
    type Error = InstrumentError;

    fn function_index(&mut self, func: u32) -> Result<u32> {
        if func < self.survey.func_imports {
            Ok(func)
        } else {
            Ok(func + abi::RT_IMPORTS.len() as u32)
        }
    }

    fn parse_type_section(
        &mut self,
        types: &mut TypeSection,
        section: wasmparser::TypeSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_type_section(self, types, section)?;
        self.append_types(types);
        Ok(())
    }

    fn parse_import_section(
        &mut self,
        imports: &mut ImportSection,
        section: wasmparser::ImportSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_import_section(self, imports, section)?;
        self.append_imports(imports);
        Ok(())
    }

    fn parse_export_section(
        &mut self,
        exports: &mut wasm_encoder::ExportSection,
        section: wasmparser::ExportSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_export_section(self, exports, section)?;
        if self.shares_memory() {
            self.export_point_buffer(exports);
        }
        if self.survey.thread_start_c().is_some()
            && let Some(entry) = self.survey.func_export(
                abi::THREAD_START_EXPORT,
                &[wasmparser::ValType::I32; 2],
                &[],
            )
        {
            // Straight to the thread's entry, past the wrapper that would
            // reset the instance's globals.
            let index = self.function_index(entry)?;
            exports.export(
                abi::THREAD_RESUME_EXPORT,
                wasm_encoder::ExportKind::Func,
                index,
            );
        }
        if let Some(entries) = self.entries {
            let first = self.survey.func_imports
                + abi::RT_IMPORTS.len() as u32
                + self.survey.defined_func_types.len() as u32;
            for (n, (name, _, _)) in entries.wrappers().enumerate() {
                exports.export(name, wasm_encoder::ExportKind::Func, first + n as u32);
            }
        }
        Ok(())
    }

    fn parse_function_section(
        &mut self,
        functions: &mut wasm_encoder::FunctionSection,
        section: wasmparser::FunctionSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_function_section(self, functions, section)?;
        if let Some(entries) = self.entries {
            for (_, _, passes_args) in entries.wrappers() {
                functions.function(self.wrapper_type(passes_args as u32));
            }
        }
        if self.logs_accesses() {
            for n in 0..access_log::PARAMS.len() as u32 {
                functions.function(self.log_type(n));
            }
        }
        Ok(())
    }

    fn parse_code_section(
        &mut self,
        code: &mut CodeSection,
        section: wasmparser::CodeSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_code_section(self, code, section)?;
        self.append_wrapper_bodies(code)?;
        if self.logs_accesses() {
            for body in access_log::bodies(|sig| self.rt_func(sig)) {
                code.function(&body);
            }
        }
        Ok(())
    }

    fn parse_global_section(
        &mut self,
        globals: &mut wasm_encoder::GlobalSection,
        section: wasmparser::GlobalSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_global_section(self, globals, section)?;
        self.append_globals(globals);
        Ok(())
    }

    fn parse_global(
        &mut self,
        globals: &mut wasm_encoder::GlobalSection,
        global: wasmparser::Global<'_>,
    ) -> Result<()> {
        let index = self.next_global;
        self.next_global += 1;
        if global.ty.mutable {
            let mut reader = global.init_expr.get_operators_reader();
            while !reader.eof() {
                let op = reader.read()?;
                if !matches!(op, wasmparser::Operator::End) {
                    self.instruction(op)?.encode(&mut self.global_resets);
                }
            }
            Instruction::GlobalSet(index).encode(&mut self.global_resets);
        }
        utils::parse_global(self, globals, global)
    }

    fn data_count(&mut self, count: u32) -> Result<u32> {
        Ok(count + u32::from(self.empty_segment().is_some()))
    }

    fn parse_data_section(
        &mut self,
        data: &mut wasm_encoder::DataSection,
        section: wasmparser::DataSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_data_section(self, data, section)?;
        if self.empty_segment().is_some() {
            data.passive([]);
        }
        Ok(())
    }

    fn parse_memory_section(
        &mut self,
        memories: &mut wasm_encoder::MemorySection,
        section: wasmparser::MemorySectionReader<'_>,
    ) -> Result<()> {
        if let MemoryPlan::Shared(plan) = &self.survey.memory {
            if !plan.was_defined {
                utils::parse_memory_section(self, memories, section)?;
            }
            // (A defined shared memory became an import.)
            self.define_point_buffer(memories);
            self.emitted_memories = true;
            return Ok(());
        }
        utils::parse_memory_section(self, memories, section)
    }

    fn parse_data(
        &mut self,
        data: &mut wasm_encoder::DataSection,
        datum: wasmparser::Data<'_>,
    ) -> Result<()> {
        if self.shares_memory()
            && matches!(
                datum.kind,
                wasmparser::DataKind::Active {
                    memory_index: 0,
                    ..
                }
            )
        {
            // Applied once per execution by the host; keep the segment (its
            // index may be named by `data.drop`) but make it passive.
            data.passive(datum.data.iter().copied());
            return Ok(());
        }
        utils::parse_data(self, data, datum)
    }

    fn parse_custom_section(
        &mut self,
        module: &mut wasm_encoder::Module,
        section: wasmparser::CustomSectionReader<'_>,
    ) -> Result<()> {
        // DWARF describes the original code offsets; weft reads it from the
        // original module, and the rewritten copy would only mislead.
        if section.name().starts_with(".debug") {
            return Ok(());
        }
        // The spec has engines ignore a malformed name section; so does
        // the rewrite, by leaving it out.
        if let wasmparser::KnownCustom::Name(names) = section.as_known()
            && malformed_names(names)
        {
            return Ok(());
        }
        utils::parse_custom_section(self, module, section)
    }

    fn intersperse_section_hook(
        &mut self,
        module: &mut wasm_encoder::Module,
        _after: Option<wasm_encoder::SectionId>,
        before: Option<wasm_encoder::SectionId>,
    ) -> Result<()> {
        use wasm_encoder::SectionId;
        // The sections that can come before an appended one, in module
        // order (custom sections first: a hook before one is past nothing).
        const ORDER: [SectionId; 9] = [
            SectionId::Custom,
            SectionId::Type,
            SectionId::Import,
            SectionId::Function,
            SectionId::Table,
            SectionId::Memory,
            SectionId::Tag,
            SectionId::Global,
            SectionId::Export,
        ];
        // Whether the hook is past where section `last` goes.
        let past = |last: SectionId| {
            let upto = ORDER.iter().position(|&s| s == last).map_or(0, |i| i + 1);
            before.is_none_or(|id| !ORDER[..upto].contains(&id))
        };
        if !self.emitted_types && !self.survey.has_type_section && past(SectionId::Type) {
            let mut types = TypeSection::new();
            self.append_types(&mut types);
            module.section(&types);
        }
        if !self.emitted_imports && !self.survey.has_import_section && past(SectionId::Import) {
            let mut imports = ImportSection::new();
            self.append_imports(&mut imports);
            module.section(&imports);
        }
        if !self.emitted_memories && self.shares_memory() && past(SectionId::Memory) {
            let mut memories = wasm_encoder::MemorySection::new();
            self.define_point_buffer(&mut memories);
            module.section(&memories);
            self.emitted_memories = true;
        }
        if !self.emitted_globals
            && !self.survey.has_global_section
            && self.shares_memory()
            && past(SectionId::Global)
        {
            let mut globals = wasm_encoder::GlobalSection::new();
            self.append_globals(&mut globals);
            module.section(&globals);
        }
        if !self.emitted_exports && self.shares_memory() && past(SectionId::Export) {
            let mut exports = wasm_encoder::ExportSection::new();
            self.export_point_buffer(&mut exports);
            module.section(&exports);
        }
        Ok(())
    }

    fn parse_function_body(
        &mut self,
        code: &mut CodeSection,
        body: FunctionBody<'_>,
    ) -> Result<()> {
        let defined = self.next_defined;
        self.next_defined += 1;
        let func = self.survey.func_imports + defined;

        let mut locals = Vec::new();
        let mut local_count = self.survey.params_of_defined(defined as usize);
        for pair in body.get_locals_reader()? {
            let (count, ty) = pair?;
            local_count += count;
            locals.push((count, self.val_type(ty)?));
        }

        let mut operators = Vec::new();
        let mut reader = body.get_operators_reader()?;
        while !reader.eof() {
            let pos = reader.original_position();
            operators.push((pos, reader.read()?));
        }
        let thread_start = self.survey.thread_start_c() == Some(func);
        let needs_scratch = thread_start
            || operators.iter().any(|(_, op)| {
                self.hooked(op).is_some()
                    || self.checked(op).is_some()
                    || self.hooked_bulk(op).is_some()
                    || self.guarded_bulk(op).is_some()
            });
        if needs_scratch {
            locals.extend(Scratch::DECLS);
        }
        let scratch = Scratch::at(local_count);

        let mut f = Function::new(locals);
        let name = self.survey.func_names.get(&func).map(String::as_str);
        if name == Some(abi::ASSUME_FUNCTION)
            && self.survey.params_of_defined(defined as usize) == 1
        {
            // The program's own `assume_abort_if_not(int)` would abort, which
            // weft would report as a bug; an assumption discards instead.
            f.instruction(&Instruction::LocalGet(0));
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_ASSUME)));
            f.instruction(&Instruction::End);
            code.function(&f);
            return Ok(());
        }
        if name.is_some_and(|n| abi::ERROR_FUNCTIONS.contains(&n)) {
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_REACH_ERROR)));
        } else if name == Some(abi::ABORT_FUNCTION) {
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_ABORT)));
        }
        let atomic = name.is_some_and(|n| n.starts_with(abi::ATOMIC_FUNCTION_PREFIX));
        if atomic {
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_ATOMIC_BEGIN)));
        }
        let library_step = self.options.library_steps
            && name.is_some_and(|n| abi::LIBRARY_STEP_FUNCTIONS.contains(&n));
        if library_step {
            f.instruction(&Instruction::I32Const(func as i32));
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_LIBRARY_BEGIN)));
        }
        let last = operators.len().saturating_sub(1);
        for (index, (pos, op)) in operators.into_iter().enumerate() {
            // Where the function is left: its end, a return, a tail call.
            let leaves = index == last
                || matches!(
                    op,
                    wasmparser::Operator::Return
                        | wasmparser::Operator::ReturnCall { .. }
                        | wasmparser::Operator::ReturnCallIndirect { .. }
                        | wasmparser::Operator::ReturnCallRef { .. }
                );
            if atomic && leaves {
                f.instruction(&Instruction::Call(self.rt_func(&abi::RT_ATOMIC_END)));
            }
            if library_step && leaves {
                f.instruction(&Instruction::Call(self.rt_func(&abi::RT_LIBRARY_END)));
            }
            // A library step also ends where it calls through a pointer
            // (code that may be the program's), and goes on after the call.
            let calls_out = library_step
                && matches!(
                    op,
                    wasmparser::Operator::CallIndirect { .. }
                        | wasmparser::Operator::CallRef { .. }
                );
            if calls_out {
                f.instruction(&Instruction::Call(self.rt_func(&abi::RT_LIBRARY_PAUSE)));
            }
            if let wasmparser::Operator::CallIndirect {
                type_index,
                table_index,
            } = op
                && thread_start
                && self.survey.is_start_routine_type(type_index)
            {
                let logged = self
                    .logged_call(&op)
                    .map(|callee| self.call_site(func, pos, callee));
                if let Some(site) = logged {
                    f.instruction(&Instruction::I32Const(site));
                    f.instruction(&Instruction::Call(self.rt_func(&abi::RT_CALL)));
                }
                self.emit_start_routine_call(&mut f, type_index, table_index, &scratch);
                if let Some(site) = logged {
                    f.instruction(&Instruction::I32Const(site));
                    f.instruction(&Instruction::Call(self.rt_func(&abi::RT_RETURNED)));
                }
            } else if let Some(callee) = self.logged_call(&op) {
                let site = self.call_site(func, pos, callee);
                f.instruction(&Instruction::I32Const(site));
                f.instruction(&Instruction::Call(self.rt_func(&abi::RT_CALL)));
                f.instruction(&self.instruction(op)?);
                f.instruction(&Instruction::I32Const(site));
                f.instruction(&Instruction::Call(self.rt_func(&abi::RT_RETURNED)));
            } else if let Some(ranges) = self.guarded_bulk(&op) {
                if let Some(kind) = self.hooked_bulk(&op) {
                    let site = self.site(kind, func, pos, 0, 0);
                    self.emit_bulk(&mut f, site, &scratch);
                    if let Some(log) = self.log_functions() {
                        log.emit_bulk_call(&mut f, bulk_operands(&scratch), site, false);
                    }
                }
                self.emit_bounds_guard(&mut f, ranges, &scratch);
                if let (Some(kind), Some(log)) = (self.logged_bulk(&op, pos), self.log_functions())
                {
                    // The guard left the operands in the scratch locals.
                    let site = self.site(kind, func, pos, 0, 0);
                    let site = self.checked_site(site)?;
                    log.emit_bulk_call(&mut f, bulk_operands(&scratch), site, true);
                }
                match op {
                    wasmparser::Operator::MemoryInit { data_index, .. }
                        if let Some(flag) = self.dropped_flag(data_index) =>
                    {
                        self.emit_memory_init(&mut f, data_index, flag, &scratch);
                    }
                    _ => {
                        f.instruction(&self.instruction(op)?);
                    }
                }
            } else if let wasmparser::Operator::DataDrop {
                data_index: segment,
            } = op
                && let Some(flag) = self.dropped_flag(segment)
            {
                f.instruction(&Instruction::I32Const(1));
                f.instruction(&Instruction::GlobalSet(flag));
            } else if let Some(kind) = self.hooked_bulk(&op) {
                let site = self.site(kind, func, pos, 0, 0);
                self.emit_bulk(&mut f, site, &scratch);
                f.instruction(&self.instruction(op)?);
            } else if let Some(access) = self.hooked(&op).or_else(|| self.checked(&op)) {
                Self::save_operands(&mut f, access, &scratch);
                if let Some(hooked) = self.hooked(&op) {
                    let site =
                        self.site(hooked.kind, func, pos, hooked.memarg.offset, hooked.width);
                    self.emit_point(&mut f, site, &scratch);
                    if let Some(log) = self.log_functions() {
                        log.emit_call(&mut f, scratch.addr, site, false);
                    }
                } else if let (Some(logged), Some(log)) =
                    (self.logged(&op, pos), self.log_functions())
                {
                    let site =
                        self.site(logged.kind, func, pos, logged.memarg.offset, logged.width);
                    log.emit_call(&mut f, scratch.addr, self.checked_site(site)?, true);
                }
                if self.shares_memory() {
                    Self::emit_access_check(&mut f, access, &scratch);
                }
                Self::restore_operands(&mut f, access, &scratch);
                f.instruction(&self.instruction(op)?);
            } else if let Some(replaced) = self.replacement(&op) {
                self.emit_replaced(&mut f, replaced, func, pos);
            } else {
                f.instruction(&self.instruction(op)?);
            }
            if calls_out {
                f.instruction(&Instruction::I32Const(func as i32));
                f.instruction(&Instruction::Call(self.rt_func(&abi::RT_LIBRARY_RESUME)));
            }
        }
        code.function(&f);
        Ok(())
    }
}

/// The operands of a bulk instruction that the scratch locals hold:
/// destination, source or value, length.
fn bulk_operands(scratch: &Scratch) -> [u32; 3] {
    [scratch.addr, scratch.i32s[0], scratch.i32s[1]]
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

/// Whether a name section has anything that does not parse, at any depth.
fn malformed_names(names: wasmparser::NameSectionReader<'_>) -> bool {
    use wasmparser::Name;
    let map_ok = |map: wasmparser::NameMap<'_>| map.into_iter().all(|n| n.is_ok());
    let indirect_ok = |map: wasmparser::IndirectNameMap<'_>| {
        map.into_iter().all(|n| n.is_ok_and(|n| map_ok(n.names)))
    };
    !names.into_iter().all(|name| match name {
        Err(_) => false,
        Ok(
            Name::Function(map)
            | Name::Type(map)
            | Name::Table(map)
            | Name::Memory(map)
            | Name::Global(map)
            | Name::Element(map)
            | Name::Data(map)
            | Name::Tag(map),
        ) => map_ok(map),
        Ok(Name::Local(map) | Name::Label(map) | Name::Field(map)) => indirect_ok(map),
        Ok(Name::Module { .. } | Name::Unknown { .. }) => true,
    })
}
