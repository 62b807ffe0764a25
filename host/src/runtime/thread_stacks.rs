//! The dead part of each thread's stack: the bytes of its stack below its
//! stack pointer, which belong to frames that returned.
//!
//! A stateful search and the livelock check compare memory; a thread that
//! called a function leaves that function's spilled values below its stack
//! pointer, and two states that differ only there would count as two. A
//! program whose behaviour is defined never reads them again: C, C++ and
//! Rust give a frame's storage back when the function returns, and the
//! WebAssembly C ABI has no part of the stack below the stack pointer that a
//! caller may keep using. The one exception is a leaf function's *red zone*:
//! LLVM lets a function that calls nothing keep up to [`RED_ZONE`] bytes
//! below the stack pointer without moving it, and weft's instrumentation
//! adds calls to such functions; so while any frame of the thread runs a
//! function that reads the stack pointer without setting it, those bytes
//! stay live.
//!
//! Where a thread's stack ends below is known for threads that wasi-libc's
//! `pthread_create` made (every C, C++ and Rust thread): their start
//! argument's first word is the stack's top, and the thread's `pthread`
//! record, just above it, holds the block the stack was carved from. A
//! thread whose stack weft cannot place keeps all its bytes.

use std::ops::Range;
use wasmparser::{KnownCustom, Name, Operator, Parser, Payload};

/// The bytes below the stack pointer that a leaf function compiled by LLVM
/// may use without moving the stack pointer.
pub(crate) const RED_ZONE: u32 = 128;

/// How far above a thread's stack top its `pthread` record is looked for.
const RECORD_SEARCH_BYTES: u32 = 16 << 10;

/// Where the module keeps its threads' stack pointers.
#[derive(Debug, Default)]
pub(crate) struct StackPointer {
    /// The global that holds it, if the module's thread start shows it.
    global: Option<u32>,
    /// By defined function: whether it may use its red zone (it reads the
    /// stack pointer and never sets it).
    uses_red_zone: Vec<bool>,
}

impl StackPointer {
    /// What `wasm` shows of its stack pointer: the global its name section
    /// calls `__stack_pointer`, and which functions may use their red
    /// zone. A module without that name (a stripped one) gives nothing,
    /// and its stacks count whole.
    pub(crate) fn of(wasm: &[u8]) -> Self {
        Self::read(wasm).unwrap_or_default()
    }

    fn read(wasm: &[u8]) -> Result<Self, wasmparser::BinaryReaderError> {
        let mut bodies = Vec::new();
        let mut global = None;
        for payload in Parser::new(0).parse_all(wasm) {
            match payload? {
                Payload::CodeSectionEntry(body) => bodies.push(body),
                Payload::CustomSection(section) => {
                    if let KnownCustom::Name(names) = section.as_known() {
                        global = global.or(stack_pointer_named(names)?);
                    }
                }
                _ => {}
            }
        }
        let Some(global) = global else {
            return Ok(Self::default());
        };
        let uses_red_zone = bodies
            .iter()
            .map(|body| reads_without_setting(body, global))
            .collect::<Result<_, _>>()?;
        Ok(StackPointer {
            global: Some(global),
            uses_red_zone,
        })
    }

    /// The global that holds a thread's stack pointer, when known.
    pub(crate) fn global(&self) -> Option<u32> {
        self.global
    }

    /// Whether a frame running defined function `function` (`None`: a
    /// frame that is no known function) may use its red zone.
    pub(crate) fn uses_red_zone(&self, function: Option<u32>) -> bool {
        function
            .and_then(|f| self.uses_red_zone.get(f as usize).copied())
            .unwrap_or(true)
    }

    /// The lowest live byte of a thread's stack whose stack pointer is
    /// `pointer`, keeping the red zone below it when a frame of the thread
    /// may use it (see [`StackPointer::uses_red_zone`]).
    pub(crate) fn live_floor(pointer: u32, keeps_red_zone: bool) -> u32 {
        if keeps_red_zone {
            pointer.saturating_sub(RED_ZONE)
        } else {
            pointer
        }
    }
}

/// The global the name section calls `__stack_pointer` (as LLVM's linker
/// names it), if any.
fn stack_pointer_named(
    names: wasmparser::NameSectionReader<'_>,
) -> Result<Option<u32>, wasmparser::BinaryReaderError> {
    for subsection in names {
        if let Name::Global(map) = subsection? {
            for naming in map {
                let naming = naming?;
                if naming.name == "__stack_pointer" {
                    return Ok(Some(naming.index));
                }
            }
        }
    }
    Ok(None)
}

/// Whether `body` reads global `global` and never sets it.
fn reads_without_setting(
    body: &wasmparser::FunctionBody<'_>,
    global: u32,
) -> Result<bool, wasmparser::BinaryReaderError> {
    let mut reads = false;
    for operator in body.get_operators_reader()? {
        match operator? {
            Operator::GlobalSet { global_index } if global_index == global => return Ok(false),
            Operator::GlobalGet { global_index } if global_index == global => reads = true,
            _ => {}
        }
    }
    Ok(reads)
}

/// The stack of a thread that wasi-libc's `pthread_create` spawned with
/// start argument `start_arg`, read from `memory` when the thread is
/// spawned: from the bottom of the block it was carved from (or of the
/// size the record gives, if higher) up to its top. `None` when the memory
/// does not hold wasi-libc's layout there.
///
/// The record is found by its shape: a word holding its own address (the
/// record's `self`), and after it the block's base and size, the stack's
/// top and the stack's size, with the top inside the block.
pub(crate) fn spawned_stack(memory: &[u8], start_arg: u32) -> Option<Range<u32>> {
    let word = |at: u32| -> Option<u32> {
        let at = at as usize;
        let bytes = memory.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    };
    let top = word(start_arg)?;
    let search_end = top.saturating_add(RECORD_SEARCH_BYTES);
    let mut record = top.checked_add(3)? & !3;
    while record < search_end {
        if word(record)? == record {
            // The stack's top comes a few words after `self`.
            for field in (record + 12..record + 128).step_by(4) {
                if word(field)? != top {
                    continue;
                }
                let (base, size) = (word(field - 8)?, word(field - 4)?);
                let stack_size = word(field + 4)?;
                let block_end = base.checked_add(size)?;
                let fits = base > 0
                    && base < top
                    && top <= block_end
                    && block_end as usize <= memory.len()
                    && stack_size > 0
                    && stack_size <= top;
                if fits {
                    return Some(base.max(top - stack_size)..top);
                }
            }
        }
        record += 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory where the start argument at 0x100 gives the stack top
    /// 0x3000, and the `pthread` record above it (self, prev, next, ...,
    /// block base, block size, stack top, stack size) holds `block` and
    /// `stack_size`.
    fn spawned(block: Range<u32>, stack_size: u32) -> Vec<u8> {
        let mut memory = vec![0u8; 0x4000];
        let mut put = |at: u32, value: u32| {
            memory[at as usize..at as usize + 4].copy_from_slice(&value.to_le_bytes());
        };
        put(0x100, 0x3000);
        let record = 0x3020;
        put(record, record);
        put(record + 40, block.start);
        put(record + 44, block.end - block.start);
        put(record + 48, 0x3000);
        put(record + 52, stack_size);
        memory
    }

    #[test]
    fn a_spawned_stack_runs_from_its_block_up_to_its_top() {
        let memory = spawned(0x1000..0x3100, 0x2004);
        assert_eq!(spawned_stack(&memory, 0x100), Some(0x1000..0x3000));
    }

    #[test]
    fn a_stack_whose_record_does_not_fit_is_not_placed() {
        // The block ends below the stack's top.
        let memory = spawned(0x1000..0x2000, 0x2000);
        assert_eq!(spawned_stack(&memory, 0x100), None);
        // No record at all.
        assert_eq!(spawned_stack(&vec![0u8; 0x4000], 0x100), None);
    }

    #[test]
    fn the_stack_pointer_is_the_global_named_so_and_leaves_use_their_red_zone() {
        let wasm = wat::parse_str(
            r#"(module
                (memory 1 1)
                (global $__tls_base (mut i32) (i32.const 0))
                (global $__stack_pointer (mut i32) (i32.const 4096))
                (func $leaf (result i32) (i32.load (i32.sub (global.get $__stack_pointer) (i32.const 8))))
                (func $framed (global.set $__stack_pointer (i32.sub (global.get $__stack_pointer) (i32.const 16))))
                (func $plain (result i32) (i32.const 1)))"#,
        )
        .unwrap();
        let sp = StackPointer::of(&wasm);
        assert_eq!(sp.global(), Some(1));
        assert!(sp.uses_red_zone(Some(0)));
        assert!(!sp.uses_red_zone(Some(1)));
        assert!(!sp.uses_red_zone(Some(2)));
        assert!(sp.uses_red_zone(None));
        assert_eq!(StackPointer::live_floor(1000, true), 1000 - RED_ZONE);
        assert_eq!(StackPointer::live_floor(1000, false), 1000);
        let unnamed = wat::parse_str("(module (global (mut i32) (i32.const 0)))").unwrap();
        assert_eq!(StackPointer::of(&unnamed).global(), None);
    }
}
