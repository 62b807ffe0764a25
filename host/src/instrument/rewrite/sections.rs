//! What the rewrite appends to the module's sections: the `weft_rt` imports
//! and their types, the shared memory turned into an import, the point
//! buffer (memory 1, exported for the host), the entry wrappers, and the
//! functions that log accesses.

use super::{Result, Rewriter};
use crate::abi;
use crate::instrument::access_log;
use crate::instrument::survey::MemoryPlan;
use wasm_encoder::reencode::Reencode;
use wasm_encoder::{CodeSection, EntityType, Function, ImportSection, Instruction, MemoryType};
use wasm_encoder::{TypeSection, ValType};

impl Rewriter<'_> {
    /// Appends the types of the `weft_rt` imports, of the entry wrappers and
    /// of the logging functions.
    pub(super) fn append_types(&mut self, types: &mut TypeSection) {
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
        for wrapped in &self.wrapped {
            // The function's arguments, then the call's site.
            types.ty().function(
                vec![ValType::I32; wrapped.params as usize + 1],
                vec![ValType::I32; usize::from(wrapped.returns)],
            );
        }
        if self.signal_entry.is_some() {
            types.ty().function([ValType::I32, ValType::I32], []);
        }
        self.emitted_types = true;
    }

    /// Appends the `weft_rt` imports and, when the module defined its shared
    /// memory, that memory as an import (the host provides it).
    pub(super) fn append_imports(&mut self, imports: &mut ImportSection) {
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

    /// Declares the entry wrappers, the logging functions and the wrappers
    /// of library calls.
    pub(super) fn append_functions(&mut self, functions: &mut wasm_encoder::FunctionSection) {
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
        for position in 0..self.wrapped.len() {
            functions.function(self.wrapper_function_type(position));
        }
        if self.signal_entry.is_some() {
            functions.function(self.signal_entry_type());
        }
        for ty in self.adapter_types() {
            functions.function(ty);
        }
    }

    /// Defines the point buffer memory (exported for the host) when the
    /// memory is shared: memory 1, after the imported shared memory.
    pub(super) fn define_point_buffer(&mut self, memories: &mut wasm_encoder::MemorySection) {
        // One-byte pages keep the memory small: the pooling allocator
        // clears all of it after every execution.
        let bytes = match self.read_map() {
            Some((offset, bytes)) => offset + bytes + abi::ReadMap::SLACK,
            None => abi::point_memory_bytes(self.logged_sites()),
        };
        memories.memory(MemoryType {
            minimum: bytes,
            maximum: Some(bytes),
            memory64: false,
            shared: false,
            page_size_log2: Some(0),
        });
        self.emitted_memories = true;
    }

    /// Exports the point buffer.
    pub(super) fn export_point_buffer(&mut self, exports: &mut wasm_encoder::ExportSection) {
        exports.export(
            abi::POINT_BUFFER.export,
            wasm_encoder::ExportKind::Memory,
            1,
        );
        self.emitted_exports = true;
    }

    /// Exports the thread entry past its wrapper and the entry wrappers.
    pub(super) fn append_exports(
        &mut self,
        exports: &mut wasm_encoder::ExportSection,
    ) -> Result<()> {
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
            let first = self.first_appended_function();
            for (n, (name, _, _)) in entries.wrappers().enumerate() {
                exports.export(name, wasm_encoder::ExportKind::Func, first + n as u32);
            }
        }
        if self.signal_entry.is_some() {
            exports.export(
                abi::SIGNAL_ENTRY_EXPORT,
                wasm_encoder::ExportKind::Func,
                self.signal_entry_function(),
            );
        }
        Ok(())
    }

    /// Appends the bodies of the entry wrappers, of the logging functions
    /// and of the wrappers of library calls. A wrapper resets the globals, runs the start function and
    /// calls its export's function.
    pub(super) fn append_bodies(&mut self, code: &mut CodeSection) -> Result<()> {
        if let Some(entries) = self.entries {
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
        }
        if self.logs_accesses() {
            for body in access_log::bodies(|sig| self.rt_func(sig)) {
                code.function(&body);
            }
        }
        for wrapped in self.wrapped.clone() {
            let callee = self.function_index(wrapped.callee)?;
            let body =
                access_log::library_call_wrapper(callee, wrapped.params, wrapped.returns, |sig| {
                    self.rt_func(sig)
                });
            code.function(&body);
        }
        if let Some(entry) = self.signal_entry {
            let body = self.signal_entry_body(entry)?;
            code.function(&body);
        }
        for body in self.adapter_bodies()? {
            code.function(&body);
        }
        Ok(())
    }

    /// Type index of the `n`-th appended wrapper type: `() -> ()`, then
    /// `(i32, i32) -> ()`.
    fn wrapper_type(&self, n: u32) -> u32 {
        self.survey.type_count + abi::RT_IMPORTS.len() as u32 + n
    }

    /// Type index of the `n`-th appended logging function's type.
    pub(super) fn log_type(&self, n: u32) -> u32 {
        self.wrapper_type(if self.entries.is_some() { 2 } else { 0 }) + n
    }
}
