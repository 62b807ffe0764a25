//! The code that logs accesses for the race detector (see
//! [`crate::abi::ACCESS_LOG`]): two functions the rewrite appends to the
//! module, and the call of one of them that goes with every access it logs.
//! (Inlined at every access, the same code made modules several times
//! larger and slower to compile.)
//!
//! - `log(addr, site, check)`: logs a scalar access. With `check` (a plain
//!   access), and when the execution makes `site` a scheduling point (its
//!   bit in the log's bitmap is set), calls `weft_rt.point` first.
//! - `log_bulk(dst, src_or_value, len, site, check)`: the same for
//!   `memory.copy` and `memory.fill` (two entries; `weft_rt.bulk` for the
//!   point).
//!
//! A plain access calls them only while its thread records (see
//! [`abi::ACCESS_LOG`]): before the main thread's first spawn, a plain
//! access costs a load and a branch, and is neither logged nor a
//! scheduling point (with one thread, a point decides nothing). A function
//! costs the same fuel however the host reads the log, so time slices fall
//! at the same places in an exploration and in its replay.

use crate::abi::{self, Signature};
use wasm_encoder::{BlockType, Function, Instruction, MemArg, ValType};

/// Parameters of the appended functions, in the order they are appended.
pub(crate) const PARAMS: [&[ValType]; 2] = [&[ValType::I32; 3], &[ValType::I32; 5]];

/// Where the appended functions are, and the runtime imports they call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogFunctions {
    /// Index of `log`.
    pub log: u32,
    /// Index of `log_bulk`.
    pub log_bulk: u32,
}

impl LogFunctions {
    /// Logs the scalar access at `site` whose address is in local `addr`;
    /// with `check`, it is a scheduling point first when the execution
    /// makes `site` one.
    pub fn emit_call(&self, f: &mut Function, addr: u32, site: i32, check: bool) {
        emit_log_call(f, &[addr], |f| push_site(f, site), check, self.log);
    }

    /// Logs an access at `site` to the constant address `addr` (never a
    /// check of its own).
    pub fn emit_constant_call(&self, f: &mut Function, addr: u32, site: i32) {
        let push_address_and_site = |f: &mut Function| {
            f.instruction(&Instruction::I32Const(addr as i32));
            push_site(f, site);
        };
        emit_log_call(f, &[], push_address_and_site, false, self.log);
    }

    /// Logs the access of a scheduling point (never a check of its own)
    /// whose address is in local `addr` at the site that `site` pushes.
    pub fn emit_call_at(&self, f: &mut Function, addr: u32, site: impl FnOnce(&mut Function)) {
        emit_log_call(f, &[addr], site, false, self.log);
    }

    /// Logs the bulk access at `site` whose operands are in locals
    /// `operands` (destination, source or value, length), with `check` as
    /// [`LogFunctions::emit_call`].
    pub fn emit_bulk_call(&self, f: &mut Function, operands: [u32; 3], site: i32, check: bool) {
        emit_log_call(f, &operands, |f| push_site(f, site), check, self.log_bulk);
    }
}

/// Where the thread's `recording` flag is (see [`abi::ACCESS_LOG`]).
const RECORDING: MemArg = log_memory(abi::ACCESS_LOG.recording, 2);

/// Pushes whether the thread records its plain accesses.
fn push_recording(f: &mut Function) {
    f.instruction(&Instruction::I32Const(0));
    f.instruction(&Instruction::I32Load(RECORDING));
}

/// Pushes the constant `site`.
fn push_site(f: &mut Function, site: i32) {
    f.instruction(&Instruction::I32Const(site));
}

/// `callee(locals..., site, check)`, `site` pushing the site; a plain
/// access (`check`) only while the thread records its plain accesses.
fn emit_log_call(
    f: &mut Function,
    locals: &[u32],
    site: impl FnOnce(&mut Function),
    check: bool,
    callee: u32,
) {
    if check {
        push_recording(f);
        f.instruction(&Instruction::If(BlockType::Empty));
    }
    for &local in locals {
        f.instruction(&Instruction::LocalGet(local));
    }
    site(f);
    f.instruction(&Instruction::I32Const(i32::from(check)));
    f.instruction(&Instruction::Call(callee));
    if check {
        f.instruction(&Instruction::End);
    }
}

/// The bodies of the appended functions, in [`PARAMS`]' order; `rt` gives
/// the function index of a `weft_rt` import.
pub(crate) fn bodies(rt: impl Fn(&Signature) -> u32) -> [Function; 2] {
    [log_body(&rt), log_bulk_body(&rt)]
}

/// The wrapper the rewrite calls in place of a C library function that
/// touches its caller's memory (see [`crate::library::caller_memory`]):
/// takes the function's `params` `i32` arguments and the call's site,
/// calls function `callee` and returns what it returns (`returns`: one
/// `i32`). While the thread records its plain accesses, the call runs with
/// recording off (nothing the function or what it calls does is the
/// caller's access but for the ranges), and after it returns the wrapper
/// turns recording back on and tells the host of the call
/// ([`abi::LIBRARY_ACCESS`]), parking when the host says so.
pub(crate) fn library_call_wrapper(
    callee: u32,
    params: u32,
    returns: bool,
    rt: impl Fn(&Signature) -> u32,
) -> Function {
    let site = params;
    let recording = params + 1;
    let result = params + 2;
    let mut f = Function::new([(1 + u32::from(returns), ValType::I32)]);
    let set_recording = |f: &mut Function, value: Instruction<'_>| {
        f.instruction(&Instruction::I32Const(0));
        f.instruction(&value);
        f.instruction(&Instruction::I32Store(RECORDING));
    };
    push_recording(&mut f);
    f.instruction(&Instruction::LocalSet(recording));
    set_recording(&mut f, Instruction::I32Const(0));
    for arg in 0..params {
        f.instruction(&Instruction::LocalGet(arg));
    }
    f.instruction(&Instruction::Call(callee));
    if returns {
        f.instruction(&Instruction::LocalSet(result));
    }
    f.instruction(&Instruction::LocalGet(recording));
    f.instruction(&Instruction::If(BlockType::Empty));
    set_recording(&mut f, Instruction::LocalGet(recording));
    f.instruction(&Instruction::LocalGet(site));
    for arg in 0..4 {
        f.instruction(&if arg < params {
            Instruction::LocalGet(arg)
        } else {
            Instruction::I32Const(0)
        });
    }
    f.instruction(&if returns {
        Instruction::LocalGet(result)
    } else {
        Instruction::I32Const(0)
    });
    f.instruction(&Instruction::Call(rt(&abi::LIBRARY_ACCESS)));
    f.instruction(&Instruction::If(BlockType::Empty));
    f.instruction(&Instruction::Call(rt(&abi::PARK)));
    f.instruction(&Instruction::End);
    f.instruction(&Instruction::End);
    if returns {
        f.instruction(&Instruction::LocalGet(result));
    }
    f.instruction(&Instruction::End);
    f
}

/// `log(addr, site, check)`.
fn log_body(rt: &impl Fn(&Signature) -> u32) -> Function {
    let (addr, site, check, entry) = (0, 1, 2, 3);
    let mut f = Function::new([(1, ValType::I32)]);
    emit_point_check(
        &mut f,
        site,
        check,
        |f| {
            f.instruction(&Instruction::LocalGet(addr));
            f.instruction(&Instruction::LocalGet(site));
            f.instruction(&Instruction::Call(rt(&abi::POINT)));
        },
        rt,
    );
    emit_append(&mut f, entry, &[(addr, site)], rt);
    f.instruction(&Instruction::End);
    f
}

/// `log_bulk(dst, src_or_value, len, site, check)`.
fn log_bulk_body(rt: &impl Fn(&Signature) -> u32) -> Function {
    let (dst, mid, len, site, check, entry) = (0, 1, 2, 3, 4, 5);
    let mut f = Function::new([(1, ValType::I32)]);
    emit_point_check(
        &mut f,
        site,
        check,
        |f| {
            for local in [dst, mid, len, site] {
                f.instruction(&Instruction::LocalGet(local));
            }
            f.instruction(&Instruction::Call(rt(&abi::BULK)));
        },
        rt,
    );
    emit_append(&mut f, entry, &[(dst, site), (mid, len)], rt);
    f.instruction(&Instruction::End);
    f
}

/// `if check && bitmap[site]: if <point> { park }`, where `point` pushes
/// the result of the host call that makes the access a scheduling point.
fn emit_point_check(
    f: &mut Function,
    site: u32,
    check: u32,
    point: impl FnOnce(&mut Function),
    rt: &impl Fn(&Signature) -> u32,
) {
    f.instruction(&Instruction::LocalGet(check));
    f.instruction(&Instruction::If(BlockType::Empty));
    // bitmap[site / 8] & (1 << site % 8)
    f.instruction(&Instruction::LocalGet(site));
    f.instruction(&Instruction::I32Const(3));
    f.instruction(&Instruction::I32ShrU);
    f.instruction(&Instruction::I32Load8U(log_memory(
        abi::ACCESS_LOG.flags,
        0,
    )));
    f.instruction(&Instruction::I32Const(1));
    f.instruction(&Instruction::LocalGet(site));
    f.instruction(&Instruction::I32Const(7));
    f.instruction(&Instruction::I32And);
    f.instruction(&Instruction::I32Shl);
    f.instruction(&Instruction::I32And);
    f.instruction(&Instruction::If(BlockType::Empty));
    point(f);
    f.instruction(&Instruction::If(BlockType::Empty));
    f.instruction(&Instruction::Call(rt(&abi::PARK)));
    f.instruction(&Instruction::End);
    f.instruction(&Instruction::End);
    f.instruction(&Instruction::End);
}

/// Appends one entry per `(high, low)` pair of locals, `low | high << 32`,
/// and calls `weft_rt.log_full` each time the log's count passes a
/// multiple of [`abi::AccessLog::flush_every`]. `entry` is a scratch local.
fn emit_append(
    f: &mut Function,
    entry: u32,
    words: &[(u32, u32)],
    rt: &impl Fn(&Signature) -> u32,
) {
    let log = abi::ACCESS_LOG;
    let added = words.len() as i32;
    // len += added (the old count stays in `entry`)
    f.instruction(&Instruction::I32Const(0));
    f.instruction(&Instruction::I32Const(0));
    f.instruction(&Instruction::I32Load(log_memory(log.len, 2)));
    f.instruction(&Instruction::LocalTee(entry));
    f.instruction(&Instruction::I32Const(added));
    f.instruction(&Instruction::I32Add);
    f.instruction(&Instruction::I32Store(log_memory(log.len, 2)));
    for (next, &(high, low)) in words.iter().enumerate() {
        // entries[(old + next) % capacity] = low | high << 32
        f.instruction(&Instruction::LocalGet(entry));
        if next > 0 {
            f.instruction(&Instruction::I32Const(next as i32));
            f.instruction(&Instruction::I32Add);
        }
        f.instruction(&Instruction::I32Const(log.capacity as i32 - 1));
        f.instruction(&Instruction::I32And);
        f.instruction(&Instruction::I32Const(3));
        f.instruction(&Instruction::I32Shl);
        f.instruction(&Instruction::LocalGet(high));
        f.instruction(&Instruction::I64ExtendI32U);
        f.instruction(&Instruction::I64Const(32));
        f.instruction(&Instruction::I64Shl);
        f.instruction(&Instruction::LocalGet(low));
        f.instruction(&Instruction::I64ExtendI32U);
        f.instruction(&Instruction::I64Or);
        f.instruction(&Instruction::I64Store(log_memory(log.entries, 3)));
    }
    // if (old + added) % flush_every < added: the count passed a multiple.
    f.instruction(&Instruction::LocalGet(entry));
    f.instruction(&Instruction::I32Const(added));
    f.instruction(&Instruction::I32Add);
    f.instruction(&Instruction::I32Const(log.flush_every as i32 - 1));
    f.instruction(&Instruction::I32And);
    f.instruction(&Instruction::I32Const(added));
    f.instruction(&Instruction::I32LtU);
    f.instruction(&Instruction::If(BlockType::Empty));
    f.instruction(&Instruction::Call(rt(&abi::LOG_FULL)));
    f.instruction(&Instruction::If(BlockType::Empty));
    f.instruction(&Instruction::Call(rt(&abi::PARK)));
    f.instruction(&Instruction::End);
    f.instruction(&Instruction::End);
}

/// An access to memory 1 (the point buffer and access log) at `offset`.
const fn log_memory(offset: u64, align: u32) -> MemArg {
    MemArg {
        offset,
        align,
        memory_index: 1,
    }
}
