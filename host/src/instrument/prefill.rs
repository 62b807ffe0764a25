//! Data the memory initialisation copies at fixed addresses, put in the
//! shared memory's first image instead.
//!
//! A threaded module's start function (LLVM's `__wasm_init_memory`) copies
//! its passive data segments into memory and zeroes its `.bss` once per
//! execution, on the main thread, before any code of the program runs:
//! every execution starts with the same copy (and the memory reset undoes
//! it). When those copies go to constant addresses that nothing else of the
//! function writes, weft puts the bytes in the memory's image instead (the
//! memory is that image whenever an execution starts) and the rewrite leaves
//! the copy out (below). What the guest sees is the same: the bytes are
//! there when the start function returns, and nothing runs before it.
//!
//! The rewrite keeps every instruction but the copy itself: the bulk
//! instruction's point, bounds check and log entry stay as they are, and
//! the copy (or fill) becomes a `memory.copy` of the range onto itself,
//! which changes nothing, costs the same fuel (one unit and one a byte, so
//! time slices end where they did) and is no work for the host's `memmove`.

use super::InstrumentError;
use super::ops::{self, Operands, Replaced};
use super::sites::AccessKind;
use super::survey::{DataInit, MemoryPlan, Survey};
use std::collections::BTreeSet;
use std::ops::Range;
use wasmparser::{DataKind, Operator, Parser, Payload};

/// The name LLVM's linker gives the memory initialisation.
const MEMORY_INITIALISATION: &str = crate::library::steps::MEMORY_INITIALISATION;

/// What the start function's copies become.
#[derive(Debug, Default)]
pub(crate) struct Prefill {
    /// The bytes to add to the memory's image.
    pub data: Vec<DataInit>,
    /// The code offsets of the bulk instructions that become a copy of
    /// their destination onto itself.
    pub sites: BTreeSet<usize>,
}

/// One write of the start function at constant operands.
enum Write {
    /// `memory.init segment` of `len` bytes from `source` to `at`.
    Init {
        site: usize,
        segment: u32,
        at: u64,
        source: u64,
        len: u64,
    },
    /// `memory.fill` of `len` zero bytes at `at`.
    Zeroes { site: usize, at: u64, len: u64 },
    /// Any other access, of `width` bytes at `at` (the initialisation's
    /// "done" flag).
    Word { at: u64, width: u64 },
}

impl Write {
    /// The bytes it touches.
    fn range(&self) -> Range<u64> {
        match *self {
            Write::Init { at, len, .. } | Write::Zeroes { at, len, .. } => at..at + len,
            Write::Word { at, width } => at..at + width,
        }
    }
}

/// The prefill of `wasm` (the module the rewrite reads), whose survey is
/// `survey`: nothing unless its start function is the memory
/// initialisation and touches memory only in the ways LLVM's does.
///
/// # Errors
///
/// When the module cannot be read.
pub(crate) fn plan(wasm: &[u8], survey: &Survey) -> Result<Prefill, InstrumentError> {
    let (MemoryPlan::Shared(memory), Some(start)) = (&survey.memory, survey.start_func) else {
        return Ok(Prefill::default());
    };
    if survey.func_names.get(&start).map(String::as_str) != Some(MEMORY_INITIALISATION) {
        return Ok(Prefill::default());
    }
    let Some(defined) = start.checked_sub(survey.func_imports) else {
        return Ok(Prefill::default());
    };
    let mut writes = None;
    let mut passive = Vec::new();
    let mut next_defined = 0;
    for payload in Parser::new(0).parse_all(wasm) {
        match payload? {
            Payload::CodeSectionEntry(body) => {
                if next_defined == defined {
                    writes = start_writes(&body)?;
                }
                next_defined += 1;
            }
            Payload::DataSection(reader) => {
                for data in reader {
                    let data = data?;
                    passive.push(matches!(data.kind, DataKind::Passive).then_some(data.data));
                }
            }
            _ => {}
        }
    }
    let Some(writes) = writes else {
        return Ok(Prefill::default());
    };
    // Every copy and fill must fit in the initial memory (else it traps, as
    // it should, when it runs), and none may overlap another access or an
    // active segment: each copy then finds the image's bytes, and a fill
    // finds zeroes.
    let initial_bytes = memory.min_pages.saturating_mul(1 << 16);
    if writes.iter().any(|write| write.range().end > initial_bytes) {
        return Ok(Prefill::default());
    }
    let active = memory
        .init
        .iter()
        .map(|init| init.offset..init.offset + init.bytes.len() as u64);
    let touched: Vec<Range<u64>> = writes.iter().map(Write::range).chain(active).collect();
    for (n, write) in writes.iter().enumerate() {
        if matches!(write, Write::Word { .. }) {
            continue;
        }
        let range = write.range();
        let overlaps = |(m, other): (usize, &Range<u64>)| {
            m != n && other.start < range.end && range.start < other.end
        };
        if touched.iter().enumerate().any(overlaps) {
            return Ok(Prefill::default());
        }
    }
    let mut prefill = Prefill::default();
    for write in writes {
        match write {
            Write::Init {
                site,
                segment,
                at,
                source,
                len,
            } => {
                let bytes = passive
                    .get(segment as usize)
                    .copied()
                    .flatten()
                    .and_then(|bytes| bytes.get(source as usize..(source + len) as usize));
                let Some(bytes) = bytes else {
                    return Ok(Prefill::default());
                };
                prefill.data.push(DataInit {
                    offset: at,
                    bytes: bytes.to_vec(),
                });
                prefill.sites.insert(site);
            }
            Write::Zeroes { site, .. } => {
                prefill.sites.insert(site);
            }
            Write::Word { .. } => {}
        }
    }
    Ok(prefill)
}

/// The writes of the start function `body`, if it begins with a
/// compare-and-exchange (the "done" flag that lets only the first thread
/// copy), every access has a constant address, every copy is of a segment
/// not dropped before it and every fill writes zeroes, and it calls
/// nothing; `None` for any other function.
fn start_writes(
    body: &wasmparser::FunctionBody<'_>,
) -> Result<Option<Vec<Write>>, InstrumentError> {
    let mut reader = body.get_operators_reader()?;
    let mut stack = ConstantStack::default();
    let mut writes = Vec::new();
    let mut dropped = Vec::new();
    while !reader.eof() {
        let site = reader.original_position();
        let op = reader.read()?;
        if writes.is_empty()
            && touches_memory(&op)
            && !matches!(op, Operator::I32AtomicRmwCmpxchg { .. })
        {
            return Ok(None);
        }
        let write = match op {
            Operator::MemoryInit { data_index, mem: 0 } => match stack.pop_constants::<3>() {
                Some([at, source, len]) if !dropped.contains(&data_index) => Write::Init {
                    site,
                    segment: data_index,
                    at,
                    source,
                    len,
                },
                _ => return Ok(None),
            },
            Operator::MemoryFill { mem: 0 } => match stack.pop_constants::<3>() {
                Some([at, 0, len]) => Write::Zeroes { site, at, len },
                _ => return Ok(None),
            },
            Operator::DataDrop { data_index } => {
                dropped.push(data_index);
                continue;
            }
            ref op if touches_memory(op) => {
                let Some((arity, results, memarg, width)) = word_access(op) else {
                    return Ok(None);
                };
                let Some(at) = stack.pop_address(arity) else {
                    return Ok(None);
                };
                stack.push_unknown(results);
                Write::Word {
                    at: at + memarg.offset,
                    width,
                }
            }
            ref op => {
                stack.step(op);
                continue;
            }
        };
        writes.push(write);
    }
    Ok(Some(writes))
}

/// The operand stack as far as it holds constants: what an instruction
/// the memory initialisation uses does to it, and any other empties it.
#[derive(Default)]
struct ConstantStack(Vec<Option<u64>>);

impl ConstantStack {
    /// Follows `op`, which is no access of memory.
    fn step(&mut self, op: &Operator) {
        match *op {
            Operator::I32Const { value } => self.0.push(Some(u64::from(value as u32))),
            Operator::I64Const { value } => self.0.push(Some(value as u64)),
            Operator::GlobalGet { .. } | Operator::LocalGet { .. } => self.0.push(None),
            Operator::GlobalSet { .. }
            | Operator::LocalSet { .. }
            | Operator::Drop
            | Operator::If { .. }
            | Operator::BrIf { .. }
            | Operator::BrTable { .. } => {
                self.0.pop();
            }
            Operator::Block { .. }
            | Operator::Loop { .. }
            | Operator::Else
            | Operator::End
            | Operator::Br { .. }
            | Operator::Nop => {}
            _ => self.0.clear(),
        }
    }

    /// The top `N` values, oldest first, if each is a known constant.
    fn pop_constants<const N: usize>(&mut self) -> Option<[u64; N]> {
        let at = self.0.len().checked_sub(N)?;
        let values: Vec<u64> = self.0.drain(at..).collect::<Option<_>>()?;
        values.try_into().ok()
    }

    /// The address under the top `arity` operands of an access, if it is
    /// a known constant; the operands are taken off.
    fn pop_address(&mut self, arity: usize) -> Option<u64> {
        let at = self.0.len().checked_sub(arity)?;
        let address = self.0[at];
        self.0.truncate(at);
        address
    }

    /// Pushes `n` values that are not known.
    fn push_unknown(&mut self, n: usize) {
        self.0.extend(std::iter::repeat_n(None, n));
    }
}

/// Whether `op` reads or writes memory, or runs code that may.
fn touches_memory(op: &Operator) -> bool {
    matches!(
        op,
        Operator::Call { .. }
            | Operator::CallIndirect { .. }
            | Operator::CallRef { .. }
            | Operator::ReturnCall { .. }
            | Operator::ReturnCallIndirect { .. }
            | Operator::ReturnCallRef { .. }
    ) || ops::bulk_ranges(op).is_some()
        || ops::memory_access(op).is_some()
        || matches!(
            ops::replaced(op),
            Some(
                Replaced::Wait32(_)
                    | Replaced::Wait64(_)
                    | Replaced::Notify(_)
                    | Replaced::MemoryGrow
            )
        )
}

/// The operand and result counts, memory argument and width of an access
/// of one word: a load, store or read-modify-write, a wait or a notify.
fn word_access(op: &Operator) -> Option<(usize, usize, wasmparser::MemArg, u64)> {
    if let Some(access) = ops::memory_access(op) {
        let (arity, results) = match (access.operands, access.kind) {
            (Operands::Addr, _) => (1, 1),
            (Operands::AddrValue(_), AccessKind::Store | AccessKind::AtomicStore) => (2, 0),
            (Operands::AddrValue(_), _) => (2, 1),
            (Operands::AddrTwoValues(_), _) => (3, 1),
        };
        return Some((arity, results, access.memarg, u64::from(access.width)));
    }
    match ops::replaced(op)? {
        Replaced::Wait32(memarg) => Some((3, 1, memarg, 4)),
        Replaced::Wait64(memarg) => Some((3, 1, memarg, 8)),
        Replaced::Notify(memarg) => Some((2, 1, memarg, 4)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory initialisation shaped as LLVM's: a flag taken by
    /// compare-and-exchange, two segments copied, `.bss` zeroed, the flag
    /// set and waiters woken; a later thread waits for the flag.
    /// `$BODY` is where a test puts an instruction of its own.
    const INITIALISATION: &str = r#"(module
        (memory 1 1 shared)
        (data $a "abc")
        (data $b "hello")
        (func $NAME
            block
                block
                    block
                        i32.const 64
                        i32.const 0
                        i32.const 1
                        i32.atomic.rmw.cmpxchg
                        br_table 0 1 2
                    end
                    i32.const 1024
                    global.set $base
                    i32.const 0
                    i32.const 0
                    i32.const 3
                    memory.init $a
                    i32.const 16
                    i32.const 1
                    i32.const 4
                    memory.init $b
                    $BODY
                    i32.const 32
                    i32.const 0
                    i32.const 8
                    memory.fill
                    i32.const 64
                    i32.const 2
                    i32.atomic.store
                    i32.const 64
                    i32.const -1
                    memory.atomic.notify
                    drop
                    br 1
                end
                i32.const 64
                i32.const 1
                i64.const -1
                memory.atomic.wait32
                drop
            end
            data.drop $a
            data.drop $b)
        (global $base (mut i32) (i32.const 0))
        (func (export "_start"))
        (start $NAME))"#;

    /// The prefill of [`INITIALISATION`] with its function named `name`
    /// and `body` in it.
    fn prefill_of(name: &str, body: &str) -> Prefill {
        let wat = INITIALISATION.replace("$NAME", name).replace("$BODY", body);
        let wasm = wat::parse_str(&wat).expect("the test's module parses");
        let (without_start, start) = super::super::entries::split_start(&wasm);
        let mut survey = Survey::of(&without_start).expect("the test's module is surveyed");
        survey.start_func = start;
        plan(&without_start, &survey).expect("the test's module is read")
    }

    #[test]
    fn the_initialisations_copies_go_into_the_image_and_its_fill_needs_nothing() {
        let prefill = prefill_of("$__wasm_init_memory", "");
        let data: Vec<_> = prefill
            .data
            .iter()
            .map(|d| (d.offset, &d.bytes[..]))
            .collect();
        assert_eq!(data, [(0, &b"abc"[..]), (16, &b"ello"[..])]);
        // The two copies and the fill.
        assert_eq!(prefill.sites.len(), 3);
    }

    #[test]
    fn anything_else_the_start_function_does_to_memory_leaves_the_copies_alone() {
        for body in [
            // A store over a byte a copy wrote.
            "i32.const 17 i32.const 7 i32.store",
            // A store at an address not known before it runs.
            "global.get $base i32.const 7 i32.atomic.store",
            // A copy over a byte a copy already wrote.
            "i32.const 2 i32.const 0 i32.const 3 memory.init $a",
            // A fill over the flag.
            "i32.const 60 i32.const 0 i32.const 8 memory.fill",
            // A fill of something other than zeroes.
            "i32.const 100 i32.const 1 i32.const 8 memory.fill",
            // A copy of a segment already dropped.
            "data.drop $a i32.const 100 i32.const 0 i32.const 3 memory.init $a",
            // A call, which may write anything.
            "call $__wasm_init_memory",
            // A fill past the initial memory, which must trap when it runs.
            "i32.const 65530 i32.const 0 i32.const 8 memory.fill",
        ] {
            let prefill = prefill_of("$__wasm_init_memory", body);
            assert!(prefill.sites.is_empty(), "{body}");
            assert!(prefill.data.is_empty(), "{body}");
        }
    }

    #[test]
    fn a_store_beside_the_copies_leaves_them_in_the_image() {
        let prefill = prefill_of("$__wasm_init_memory", "i32.const 200 i32.const 7 i32.store");
        assert_eq!(prefill.sites.len(), 3);
    }

    #[test]
    fn a_start_function_of_another_name_is_left_alone() {
        let prefill = prefill_of("$init", "");
        assert!(prefill.sites.is_empty());
    }
}
