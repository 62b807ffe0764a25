//! The entry through which weft runs a C program's signal handlers: an
//! export appended to a module that has weft's `weft_signal_deliver`
//! (`guest-sdk/c/weft_signal.c`, linked into a program that installs a
//! handler) and a stack pointer, `__stack_pointer`.
//!
//! A handler runs where the schedule delivers its signal, in the middle of
//! the thread's code, as a call on the thread's stack. A C function that
//! calls nothing uses the memory below the stack pointer without moving
//! it, so the entry moves the stack pointer down past the deepest frame
//! any function of the module makes before it calls the handler, and back
//! after: the frame of the code the signal interrupted stays whole.

use super::{Result, Rewriter};
use crate::abi;
use wasm_encoder::reencode::Reencode;
use wasm_encoder::{Function, Instruction, ValType};

/// The function of `weft_signal.c` that runs a signal's handler.
const DELIVER_FUNCTION: &str = "weft_signal_deliver";

/// The global that holds a C program's stack pointer, as wasm-ld names it.
const STACK_POINTER: &str = "__stack_pointer";

/// Stack alignment a C frame keeps.
const STACK_ALIGN: u32 = 16;

/// What the signal entry of a module calls and moves.
#[derive(Clone, Copy, Debug)]
pub(super) struct SignalEntry {
    /// `weft_signal_deliver(sig, code)`, by original index.
    deliver: u32,
    /// The stack pointer's global.
    stack_pointer: u32,
    /// Bytes the entry moves the stack pointer down by.
    below: u32,
}

impl Rewriter<'_> {
    /// The module's signal entry, if it has what one needs.
    pub(super) fn find_signal_entry(&self) -> Option<SignalEntry> {
        let survey = self.survey;
        let (&deliver, _) = survey
            .func_names
            .iter()
            .find(|&(&index, name)| index >= survey.func_imports && name == DELIVER_FUNCTION)?;
        let i32 = wasmparser::ValType::I32;
        if survey.func_sig(deliver)? != ([i32, i32].as_slice(), [].as_slice()) {
            return None;
        }
        let (&stack_pointer, _) = survey
            .global_names
            .iter()
            .find(|&(_, name)| name == STACK_POINTER)?;
        let deepest = survey
            .frames_below
            .get(&stack_pointer)
            .copied()
            .unwrap_or(0);
        Some(SignalEntry {
            deliver,
            stack_pointer,
            below: deepest.saturating_add(STACK_ALIGN - 1) / STACK_ALIGN * STACK_ALIGN,
        })
    }

    /// Type index of the signal entry's `(i32, i32) -> ()`: after every
    /// other appended type.
    pub(super) fn signal_entry_type(&self) -> u32 {
        let entry_types = if self.entries.is_some() { 2 } else { 0 };
        let log_types = if self.logs_accesses() {
            crate::instrument::access_log::PARAMS.len() as u32
        } else {
            0
        };
        self.survey.type_count
            + abi::RT_IMPORTS.len() as u32
            + entry_types
            + log_types
            + self.wrapped.len() as u32
    }

    /// Function index of the signal entry: after every other appended
    /// function.
    pub(super) fn signal_entry_function(&self) -> u32 {
        let entry_wrappers = self.entries.map_or(0, |e| e.wrappers().count() as u32);
        let log_functions = if self.logs_accesses() {
            crate::instrument::access_log::PARAMS.len() as u32
        } else {
            0
        };
        self.first_appended_function() + entry_wrappers + log_functions + self.wrapped.len() as u32
    }

    /// The signal entry's body: moves the stack pointer down, calls
    /// `weft_signal_deliver(sig, code)`, moves it back. A signal delivered
    /// inside a library step (at a wait) runs its handlers outside it: the
    /// library depth the guest counts is zero around them.
    pub(super) fn signal_entry_body(&mut self, entry: SignalEntry) -> Result<Function> {
        let deliver = self.function_index(entry.deliver)?;
        // Local 2 keeps the stack pointer of the interrupted code, local 3
        // its library depth.
        let mut f = Function::new([(2, ValType::I32)]);
        let depth = self.library_depth_global();
        if let Some(depth) = depth {
            f.instruction(&Instruction::GlobalGet(depth));
            f.instruction(&Instruction::LocalSet(3));
            f.instruction(&Instruction::I32Const(0));
            f.instruction(&Instruction::GlobalSet(depth));
        }
        f.instruction(&Instruction::GlobalGet(entry.stack_pointer));
        f.instruction(&Instruction::LocalTee(2));
        f.instruction(&Instruction::I32Const(entry.below as i32));
        f.instruction(&Instruction::I32Sub);
        f.instruction(&Instruction::I32Const(-(STACK_ALIGN as i32)));
        f.instruction(&Instruction::I32And);
        f.instruction(&Instruction::GlobalSet(entry.stack_pointer));
        f.instruction(&Instruction::LocalGet(0));
        f.instruction(&Instruction::LocalGet(1));
        f.instruction(&Instruction::Call(deliver));
        f.instruction(&Instruction::LocalGet(2));
        f.instruction(&Instruction::GlobalSet(entry.stack_pointer));
        if let Some(depth) = depth {
            f.instruction(&Instruction::LocalGet(3));
            f.instruction(&Instruction::GlobalSet(depth));
        }
        f.instruction(&Instruction::End);
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::options;

    /// A module with a `weft_signal_deliver`, a stack pointer, and a leaf
    /// function whose frame is 200 bytes below the stack pointer.
    const WAT: &str = r#"(module
        (memory 1 1 shared)
        (global $__stack_pointer (mut i32) (i32.const 4096))
        (func $weft_signal_deliver (param i32 i32))
        (func $leaf (result i32)
            global.get $__stack_pointer
            i32.const 200
            i32.sub)
        (func $_start (export "_start")))"#;

    #[test]
    fn the_entry_moves_the_stack_pointer_past_the_deepest_frame_and_back() {
        let wasm = wat::parse_str(WAT).unwrap();
        let out = crate::instrument::instrument(&wasm, &options()).unwrap();
        let text = wasmprinter::print_bytes(&out.wasm).unwrap();
        let export = format!("(export \"{}\" (func", crate::abi::SIGNAL_ENTRY_EXPORT);
        assert!(text.contains(&export), "{text}");
        // 200 rounded up to 16.
        assert!(text.contains("i32.const 208"), "{text}");
        assert!(text.contains("i32.const -16"), "{text}");
    }

    #[test]
    fn a_module_without_the_deliver_function_has_no_entry() {
        let wasm = wat::parse_str(WAT.replace("$weft_signal_deliver", "$other")).unwrap();
        let out = crate::instrument::instrument(&wasm, &options()).unwrap();
        let text = wasmprinter::print_bytes(&out.wasm).unwrap();
        assert!(!text.contains(crate::abi::SIGNAL_ENTRY_EXPORT), "{text}");
    }
}
