//! The start function folded into the entry points.
//!
//! wasmtime runs a module's start function on a fiber of its own while it
//! instantiates; a thread's entry call then needs a second one. Modules of
//! threaded programs have a start function (LLVM's `__wasm_init_memory`), so
//! the rewrite drops the start section and exports wrappers that call the
//! start function first, then the entry point: one fiber per thread. Nothing
//! the guest can observe runs between instantiation and the entry call, so
//! the guest sees the same order of events.
//!
//! A module with a shared memory gets the wrappers even without a start
//! function: they first put every mutable global (the ones the rewrite
//! appends included) back to its initial value, so that an instance can run
//! a thread of one execution after another exactly as a fresh one would
//! (see [`super::Instrumented::reusable_instances`]).

use super::survey::{MemoryPlan, Survey};
use crate::abi;
use wasmparser::ValType;

/// Where the wrappers go and what they call (original function indices).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntryWrappers {
    /// The start function, if the module has one.
    pub start: Option<u32>,
    /// `_start`.
    pub main: u32,
    /// `wasi_thread_start`, when the module exports it with its type.
    pub thread: Option<u32>,
}

impl EntryWrappers {
    /// The wrappers of `survey`'s module: `None` when it has neither a start
    /// function nor a shared memory, defines no function, or exports
    /// `_start` with another type than `() -> ()` (the executor then reports
    /// that, as without wrappers).
    pub fn plan(survey: &Survey) -> Option<Self> {
        let start = survey.start_func;
        let shared = matches!(survey.memory, MemoryPlan::Shared(_));
        if (start.is_none() && !shared) || survey.defined_func_types.is_empty() {
            return None;
        }
        let main = survey.func_export(abi::MAIN_EXPORT, &[], &[])?;
        let thread = survey.func_export(abi::THREAD_START_EXPORT, &[ValType::I32; 2], &[]);
        Some(EntryWrappers {
            start,
            main,
            thread,
        })
    }

    /// The wrappers' export names with the function each calls after the
    /// start function, and whether it passes on the two thread arguments.
    pub fn wrappers(&self) -> impl Iterator<Item = (&'static str, u32, bool)> {
        std::iter::once((abi::MAIN_WRAPPER, self.main, false)).chain(
            self.thread
                .map(|thread| (abi::THREAD_WRAPPER, thread, true)),
        )
    }
}

/// `wasm` without its start section, and the start function's index.
/// `wasm` must be a valid module.
pub(crate) fn split_start(wasm: &[u8]) -> (Vec<u8>, Option<u32>) {
    const HEADER: usize = 8;
    const START_SECTION: u8 = 8;
    let mut out = wasm[..HEADER.min(wasm.len())].to_vec();
    let mut start = None;
    let mut at = HEADER;
    while at < wasm.len() {
        let id = wasm[at];
        let (size, size_bytes) = leb128(&wasm[at + 1..]);
        let end = at + 1 + size_bytes + size as usize;
        if id == START_SECTION {
            start = Some(leb128(&wasm[at + 1 + size_bytes..end]).0);
        } else {
            out.extend_from_slice(&wasm[at..end]);
        }
        at = end;
    }
    (out, start)
}

/// An unsigned LEB128 number and how many bytes it took.
fn leb128(bytes: &[u8]) -> (u32, usize) {
    let mut value = 0u32;
    for (i, byte) in bytes.iter().enumerate().take(5) {
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return (value, i + 1);
        }
    }
    (value, bytes.len().min(5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_section_is_cut_out_and_named() {
        let wasm = wat::parse_str(
            r#"(module (func $a) (func $b) (start $b) (export "_start" (func $a)))"#,
        )
        .unwrap();
        let (cut, start) = split_start(&wasm);
        assert_eq!(start, Some(1));
        assert!(cut.len() < wasm.len());
        wasmparser::Validator::new().validate_all(&cut).unwrap();
        assert_eq!(split_start(&cut), (cut.clone(), None));
    }
}
