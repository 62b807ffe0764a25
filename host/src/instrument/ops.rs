//! Classification of wasm memory instructions: which ones become scheduling
//! points, what they do and what their operands look like.

use super::sites::AccessKind;
use wasmparser::{MemArg, Operator};

/// Type of the value operand(s) an access takes besides its address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Only the address (loads).
    Addr,
    /// Address and one value of this type (stores, read-modify-writes).
    AddrValue(Scalar),
    /// Address, expected value and replacement (compare-and-exchange).
    AddrTwoValues(Scalar),
}

/// A scalar value type that an access can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    I32,
    I64,
    F32,
    F64,
    V128,
}

/// An instruction that instrumentation turns into a hooked access.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    pub kind: AccessKind,
    pub operands: Operands,
    pub memarg: MemArg,
    pub width: u8,
}

/// An instruction that instrumentation replaces by a call of a host import.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Replaced {
    Wait32(MemArg),
    Wait64(MemArg),
    Notify(MemArg),
    MemoryGrow,
    MemorySize,
    Unreachable,
}

/// Which operands of a bulk memory instruction address the memory: the
/// range `[operand, operand + len)` of each must be in bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BulkRanges {
    /// `memory.copy`: destination and source.
    DstAndSrc,
    /// `memory.fill` and `memory.init`: the destination only.
    Dst,
}

fn access(kind: AccessKind, operands: Operands, memarg: MemArg, width: u8) -> Option<Access> {
    Some(Access {
        kind,
        operands,
        memarg,
        width,
    })
}

/// The atomic access `op` performs, if it is one.
pub(crate) fn atomic_access(op: &Operator) -> Option<Access> {
    use AccessKind::*;
    use Operands::*;
    use Scalar::*;
    match *op {
        Operator::I32AtomicLoad { memarg } => access(AtomicLoad, Addr, memarg, 4),
        Operator::I64AtomicLoad { memarg } => access(AtomicLoad, Addr, memarg, 8),
        Operator::I32AtomicLoad8U { memarg } | Operator::I64AtomicLoad8U { memarg } => {
            access(AtomicLoad, Addr, memarg, 1)
        }
        Operator::I32AtomicLoad16U { memarg } | Operator::I64AtomicLoad16U { memarg } => {
            access(AtomicLoad, Addr, memarg, 2)
        }
        Operator::I64AtomicLoad32U { memarg } => access(AtomicLoad, Addr, memarg, 4),
        Operator::I32AtomicStore { memarg } => access(AtomicStore, AddrValue(I32), memarg, 4),
        Operator::I32AtomicStore8 { memarg } => access(AtomicStore, AddrValue(I32), memarg, 1),
        Operator::I32AtomicStore16 { memarg } => access(AtomicStore, AddrValue(I32), memarg, 2),
        Operator::I64AtomicStore { memarg } => access(AtomicStore, AddrValue(I64), memarg, 8),
        Operator::I64AtomicStore8 { memarg } => access(AtomicStore, AddrValue(I64), memarg, 1),
        Operator::I64AtomicStore16 { memarg } => access(AtomicStore, AddrValue(I64), memarg, 2),
        Operator::I64AtomicStore32 { memarg } => access(AtomicStore, AddrValue(I64), memarg, 4),
        Operator::I32AtomicRmwAdd { memarg }
        | Operator::I32AtomicRmwSub { memarg }
        | Operator::I32AtomicRmwAnd { memarg }
        | Operator::I32AtomicRmwOr { memarg }
        | Operator::I32AtomicRmwXor { memarg } => access(AtomicRmw, AddrValue(I32), memarg, 4),
        Operator::I32AtomicRmwXchg { memarg } => access(AtomicXchg, AddrValue(I32), memarg, 4),
        Operator::I32AtomicRmw8AddU { memarg }
        | Operator::I32AtomicRmw8SubU { memarg }
        | Operator::I32AtomicRmw8AndU { memarg }
        | Operator::I32AtomicRmw8OrU { memarg }
        | Operator::I32AtomicRmw8XorU { memarg } => access(AtomicRmw, AddrValue(I32), memarg, 1),
        Operator::I32AtomicRmw8XchgU { memarg } => access(AtomicXchg, AddrValue(I32), memarg, 1),
        Operator::I32AtomicRmw16AddU { memarg }
        | Operator::I32AtomicRmw16SubU { memarg }
        | Operator::I32AtomicRmw16AndU { memarg }
        | Operator::I32AtomicRmw16OrU { memarg }
        | Operator::I32AtomicRmw16XorU { memarg } => access(AtomicRmw, AddrValue(I32), memarg, 2),
        Operator::I32AtomicRmw16XchgU { memarg } => access(AtomicXchg, AddrValue(I32), memarg, 2),
        Operator::I64AtomicRmwAdd { memarg }
        | Operator::I64AtomicRmwSub { memarg }
        | Operator::I64AtomicRmwAnd { memarg }
        | Operator::I64AtomicRmwOr { memarg }
        | Operator::I64AtomicRmwXor { memarg } => access(AtomicRmw, AddrValue(I64), memarg, 8),
        Operator::I64AtomicRmwXchg { memarg } => access(AtomicXchg, AddrValue(I64), memarg, 8),
        Operator::I64AtomicRmw8AddU { memarg }
        | Operator::I64AtomicRmw8SubU { memarg }
        | Operator::I64AtomicRmw8AndU { memarg }
        | Operator::I64AtomicRmw8OrU { memarg }
        | Operator::I64AtomicRmw8XorU { memarg } => access(AtomicRmw, AddrValue(I64), memarg, 1),
        Operator::I64AtomicRmw8XchgU { memarg } => access(AtomicXchg, AddrValue(I64), memarg, 1),
        Operator::I64AtomicRmw16AddU { memarg }
        | Operator::I64AtomicRmw16SubU { memarg }
        | Operator::I64AtomicRmw16AndU { memarg }
        | Operator::I64AtomicRmw16OrU { memarg }
        | Operator::I64AtomicRmw16XorU { memarg } => access(AtomicRmw, AddrValue(I64), memarg, 2),
        Operator::I64AtomicRmw16XchgU { memarg } => access(AtomicXchg, AddrValue(I64), memarg, 2),
        Operator::I64AtomicRmw32AddU { memarg }
        | Operator::I64AtomicRmw32SubU { memarg }
        | Operator::I64AtomicRmw32AndU { memarg }
        | Operator::I64AtomicRmw32OrU { memarg }
        | Operator::I64AtomicRmw32XorU { memarg } => access(AtomicRmw, AddrValue(I64), memarg, 4),
        Operator::I64AtomicRmw32XchgU { memarg } => access(AtomicXchg, AddrValue(I64), memarg, 4),
        Operator::I32AtomicRmwCmpxchg { memarg } => {
            access(AtomicCmpxchg, AddrTwoValues(I32), memarg, 4)
        }
        Operator::I32AtomicRmw8CmpxchgU { memarg } => {
            access(AtomicCmpxchg, AddrTwoValues(I32), memarg, 1)
        }
        Operator::I32AtomicRmw16CmpxchgU { memarg } => {
            access(AtomicCmpxchg, AddrTwoValues(I32), memarg, 2)
        }
        Operator::I64AtomicRmwCmpxchg { memarg } => {
            access(AtomicCmpxchg, AddrTwoValues(I64), memarg, 8)
        }
        Operator::I64AtomicRmw8CmpxchgU { memarg } => {
            access(AtomicCmpxchg, AddrTwoValues(I64), memarg, 1)
        }
        Operator::I64AtomicRmw16CmpxchgU { memarg } => {
            access(AtomicCmpxchg, AddrTwoValues(I64), memarg, 2)
        }
        Operator::I64AtomicRmw32CmpxchgU { memarg } => {
            access(AtomicCmpxchg, AddrTwoValues(I64), memarg, 4)
        }
        _ => None,
    }
}

/// The SIMD load or store `op` performs, if it is one.
pub(crate) fn simd_access(op: &Operator) -> Option<Access> {
    use AccessKind::*;
    use Operands::*;
    match *op {
        Operator::V128Load { memarg } => access(Load, Addr, memarg, 16),
        Operator::V128Load8x8S { memarg }
        | Operator::V128Load8x8U { memarg }
        | Operator::V128Load16x4S { memarg }
        | Operator::V128Load16x4U { memarg }
        | Operator::V128Load32x2S { memarg }
        | Operator::V128Load32x2U { memarg }
        | Operator::V128Load64Splat { memarg }
        | Operator::V128Load64Zero { memarg } => access(Load, Addr, memarg, 8),
        Operator::V128Load8Splat { memarg } => access(Load, Addr, memarg, 1),
        Operator::V128Load16Splat { memarg } => access(Load, Addr, memarg, 2),
        Operator::V128Load32Splat { memarg } | Operator::V128Load32Zero { memarg } => {
            access(Load, Addr, memarg, 4)
        }
        Operator::V128Load8Lane { memarg, .. } => access(Load, AddrValue(Scalar::V128), memarg, 1),
        Operator::V128Load16Lane { memarg, .. } => access(Load, AddrValue(Scalar::V128), memarg, 2),
        Operator::V128Load32Lane { memarg, .. } => access(Load, AddrValue(Scalar::V128), memarg, 4),
        Operator::V128Load64Lane { memarg, .. } => access(Load, AddrValue(Scalar::V128), memarg, 8),
        Operator::V128Store { memarg } => access(Store, AddrValue(Scalar::V128), memarg, 16),
        Operator::V128Store8Lane { memarg, .. } => {
            access(Store, AddrValue(Scalar::V128), memarg, 1)
        }
        Operator::V128Store16Lane { memarg, .. } => {
            access(Store, AddrValue(Scalar::V128), memarg, 2)
        }
        Operator::V128Store32Lane { memarg, .. } => {
            access(Store, AddrValue(Scalar::V128), memarg, 4)
        }
        Operator::V128Store64Lane { memarg, .. } => {
            access(Store, AddrValue(Scalar::V128), memarg, 8)
        }
        _ => None,
    }
}

/// Every instruction that reads or writes memory through an address
/// operand: atomic, plain scalar and SIMD accesses (not the bulk
/// instructions, nor wait and notify, which instrumentation replaces).
pub(crate) fn memory_access(op: &Operator) -> Option<Access> {
    atomic_access(op)
        .or_else(|| plain_access(op))
        .or_else(|| simd_access(op))
}

/// The plain (non-atomic) scalar load or store `op` performs, if it is one.
pub(crate) fn plain_access(op: &Operator) -> Option<Access> {
    use AccessKind::*;
    use Operands::*;
    use Scalar::*;
    match *op {
        Operator::I32Load { memarg } | Operator::F32Load { memarg } => {
            access(Load, Addr, memarg, 4)
        }
        Operator::I64Load { memarg } | Operator::F64Load { memarg } => {
            access(Load, Addr, memarg, 8)
        }
        Operator::I32Load8S { memarg }
        | Operator::I32Load8U { memarg }
        | Operator::I64Load8S { memarg }
        | Operator::I64Load8U { memarg } => access(Load, Addr, memarg, 1),
        Operator::I32Load16S { memarg }
        | Operator::I32Load16U { memarg }
        | Operator::I64Load16S { memarg }
        | Operator::I64Load16U { memarg } => access(Load, Addr, memarg, 2),
        Operator::I64Load32S { memarg } | Operator::I64Load32U { memarg } => {
            access(Load, Addr, memarg, 4)
        }
        Operator::I32Store { memarg } => access(Store, AddrValue(I32), memarg, 4),
        Operator::I32Store8 { memarg } => access(Store, AddrValue(I32), memarg, 1),
        Operator::I32Store16 { memarg } => access(Store, AddrValue(I32), memarg, 2),
        Operator::I64Store { memarg } => access(Store, AddrValue(I64), memarg, 8),
        Operator::I64Store8 { memarg } => access(Store, AddrValue(I64), memarg, 1),
        Operator::I64Store16 { memarg } => access(Store, AddrValue(I64), memarg, 2),
        Operator::I64Store32 { memarg } => access(Store, AddrValue(I64), memarg, 4),
        Operator::F32Store { memarg } => access(Store, AddrValue(F32), memarg, 4),
        Operator::F64Store { memarg } => access(Store, AddrValue(F64), memarg, 8),
        _ => None,
    }
}

/// The bulk memory instruction `op` is (`memory.copy` or `memory.fill` on
/// memory 0), if it is one.
pub(crate) fn bulk_access(op: &Operator) -> Option<AccessKind> {
    match *op {
        Operator::MemoryCopy {
            dst_mem: 0,
            src_mem: 0,
        } => Some(AccessKind::Copy),
        Operator::MemoryFill { mem: 0 } => Some(AccessKind::Fill),
        _ => None,
    }
}

/// The host call that replaces `op`, if it is replaced.
pub(crate) fn replaced(op: &Operator) -> Option<Replaced> {
    match *op {
        Operator::MemoryAtomicWait32 { memarg } => Some(Replaced::Wait32(memarg)),
        Operator::MemoryAtomicWait64 { memarg } => Some(Replaced::Wait64(memarg)),
        Operator::MemoryAtomicNotify { memarg } => Some(Replaced::Notify(memarg)),
        Operator::MemoryGrow { mem: 0 } => Some(Replaced::MemoryGrow),
        Operator::MemorySize { mem: 0 } => Some(Replaced::MemorySize),
        Operator::Unreachable => Some(Replaced::Unreachable),
        _ => None,
    }
}

/// The memory ranges `op` writes or reads in bulk (three operands, length
/// last), if it is a bulk instruction on memory 0.
pub(crate) fn bulk_ranges(op: &Operator) -> Option<BulkRanges> {
    match *op {
        Operator::MemoryCopy {
            dst_mem: 0,
            src_mem: 0,
        } => Some(BulkRanges::DstAndSrc),
        Operator::MemoryFill { mem: 0 } | Operator::MemoryInit { mem: 0, .. } => {
            Some(BulkRanges::Dst)
        }
        _ => None,
    }
}
