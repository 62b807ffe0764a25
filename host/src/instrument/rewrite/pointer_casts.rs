//! Calls through a function pointer whose type is not the function's.
//!
//! Old-style C passes `void f()` where `void (*)(void *)` is expected and
//! calls it with an argument; a callback that returns a value is stored
//! where one returning nothing is expected. Native code runs such programs
//! (the caller's extra arguments are ignored, a result nobody reads is
//! lost); wasm's `call_indirect` checks the callee's type and traps.
//!
//! For each type `T` of the module's calls through table 0 that some
//! function of the table could receive so, the rewrite appends a copy of
//! table 0 in which each such function's slot holds an adapter of type `T`
//! (it calls the function with the leading arguments it takes and drops
//! the results `T` has not), and the calls of type `T` go through that
//! table. A call that matches its callee costs what it did (the same one
//! instruction, so traces and replay files stay as they were); a null
//! slot or any other mismatch still traps. Only the casts native code gets
//! right are adapted: the callee takes a prefix of the caller's arguments,
//! of the same types, and returns what the caller expects or the caller
//! expects nothing. Nothing is adapted when an instruction changes a
//! table, a segment's slots are not known, table 0 is imported, there is
//! no room for another table (see [`crate::instrument::MOST_TABLES`]), or
//! the module's producers name Rust or Zig, which never make such calls.

use super::{Result, Rewriter};
use crate::instrument::MOST_TABLES;
use crate::instrument::survey::Survey;
use std::borrow::Cow;
use wasm_encoder::reencode::Reencode;
use wasm_encoder::{ConstExpr, ElementSection, Elements, Function, Instruction, TableSection};
use wasmparser::{Operator, ValType};

/// The copy of table 0 that the calls of one type go through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CastTable {
    /// The calls' type index.
    ty: u32,
    /// The slots whose function has another type that can take the call.
    cases: Vec<CastCase>,
}

/// One slot whose function a call of another type reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CastCase {
    /// The slot.
    slot: u32,
    /// The function in it, by original index.
    function: u32,
    /// How many of the call's arguments it takes (the leading ones).
    params: u32,
    /// How many results it returns that the call does not expect.
    dropped: u32,
}

impl Survey {
    /// The copies of table 0 the module needs, by the calls' type.
    pub(super) fn cast_tables(&self) -> Vec<CastTable> {
        let safe_language = self
            .languages
            .iter()
            .any(|language| matches!(language.as_str(), "Rust" | "Zig"));
        let table_zero_is_funcs = self.imported_tables == 0
            && self.defined_tables.first().is_some_and(|table| {
                table.element_type == wasmparser::RefType::FUNCREF && !table.table64
            });
        if safe_language
            || !table_zero_is_funcs
            || self.mutates_tables
            || self.table_slots_uncertain
        {
            return Vec::new();
        }
        let room = MOST_TABLES.saturating_sub(self.defined_tables.len() as u32) as usize;
        self.indirect_call_types
            .iter()
            .filter_map(|&ty| {
                let (params, results) = self.func_sigs.get(ty as usize)?.as_ref()?;
                if !params.iter().chain(results).all(is_number) {
                    return None;
                }
                let cases: Vec<CastCase> = self
                    .table_functions
                    .iter()
                    .filter_map(|(&slot, &function)| {
                        let (own_params, own_results) = self.func_sig(function)?;
                        if (own_params, own_results) == (params.as_slice(), results.as_slice()) {
                            return None;
                        }
                        let takes = params.starts_with(own_params);
                        let returns = own_results == results.as_slice() || results.is_empty();
                        (takes && returns).then(|| CastCase {
                            slot,
                            function,
                            params: own_params.len() as u32,
                            dropped: (own_results.len() - results.len()) as u32,
                        })
                    })
                    .collect();
                (!cases.is_empty()).then_some(CastTable { ty, cases })
            })
            .take(room)
            .collect()
    }
}

/// Whether values of type `ty` can be passed through an adapter unchanged.
fn is_number(ty: &ValType) -> bool {
    matches!(
        ty,
        ValType::I32 | ValType::I64 | ValType::F32 | ValType::F64 | ValType::V128
    )
}

impl Rewriter<'_> {
    /// Emits `op` through its type's copy of table 0 when it is a call
    /// through table 0 of a type that has one; says whether it did.
    pub(super) fn emit_cast_call(&self, f: &mut Function, op: &Operator) -> bool {
        let (type_index, tail) = match *op {
            Operator::CallIndirect {
                type_index,
                table_index: 0,
            } => (type_index, false),
            Operator::ReturnCallIndirect {
                type_index,
                table_index: 0,
            } => (type_index, true),
            _ => return false,
        };
        let Some(n) = self.casts.iter().position(|t| t.ty == type_index) else {
            return false;
        };
        let table_index = self.first_cast_table() + n as u32;
        f.instruction(&if tail {
            Instruction::ReturnCallIndirect {
                type_index,
                table_index,
            }
        } else {
            Instruction::CallIndirect {
                type_index,
                table_index,
            }
        });
        true
    }

    /// Index of the first copy of table 0: after the module's tables.
    fn first_cast_table(&self) -> u32 {
        self.survey.imported_tables + self.survey.defined_tables.len() as u32
    }

    /// Function index of the first adapter: after every other appended
    /// function.
    fn first_adapter(&self) -> u32 {
        self.signal_entry_function() + u32::from(self.signal_entry.is_some())
    }

    /// The adapters' types (their calls' types, which keep their indices),
    /// in order.
    pub(super) fn adapter_types(&self) -> Vec<u32> {
        self.casts
            .iter()
            .flat_map(|table| table.cases.iter().map(|_| table.ty))
            .collect()
    }

    /// The adapters' bodies, in order: each passes its leading arguments
    /// to its function and drops the results the call does not expect.
    pub(super) fn adapter_bodies(&mut self) -> Result<Vec<Function>> {
        let mut bodies = Vec::new();
        for table in self.casts.clone() {
            for case in &table.cases {
                let mut f = Function::new([]);
                for param in 0..case.params {
                    f.instruction(&Instruction::LocalGet(param));
                }
                f.instruction(&Instruction::Call(self.function_index(case.function)?));
                for _ in 0..case.dropped {
                    f.instruction(&Instruction::Drop);
                }
                f.instruction(&Instruction::End);
                bodies.push(f);
            }
        }
        Ok(bodies)
    }

    /// Appends the copies of table 0, of its type.
    pub(super) fn append_cast_tables(&mut self, tables: &mut TableSection) -> Result<()> {
        let Some(&table_zero) = self.survey.defined_tables.first() else {
            return Ok(());
        };
        for _ in 0..self.casts.len() {
            let ty = self.table_type(table_zero)?;
            tables.table(ty);
        }
        Ok(())
    }

    /// Fills the copies of table 0 as the module's segments fill it, with
    /// each adapted slot's adapter instead of its function: one active
    /// segment per run of consecutive slots.
    pub(super) fn append_cast_elements(&mut self, elements: &mut ElementSection) -> Result<()> {
        let mut adapter = self.first_adapter();
        let slots: Vec<(u32, u32)> = self
            .survey
            .table_functions
            .iter()
            .map(|(&slot, &function)| (slot, function))
            .collect();
        for (n, table) in self.casts.clone().iter().enumerate() {
            let table_index = self.first_cast_table() + n as u32;
            let mut run: Vec<u32> = Vec::new();
            let mut run_start = 0;
            for (i, &(slot, function)) in slots.iter().enumerate() {
                let index = if table.cases.iter().any(|case| case.slot == slot) {
                    adapter += 1;
                    adapter - 1
                } else {
                    self.function_index(function)?
                };
                if run.is_empty() {
                    run_start = slot;
                }
                run.push(index);
                let next_follows = slots.get(i + 1).is_some_and(|&(next, _)| next == slot + 1);
                if !next_follows {
                    elements.active(
                        Some(table_index),
                        &ConstExpr::i32_const(run_start as i32),
                        Elements::Functions(Cow::Owned(std::mem::take(&mut run))),
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::options;

    /// A module whose table holds `f` (no parameters), `g` (the call's
    /// type) and `h` (one parameter, a result), called through
    /// `(i32) -> ()`.
    const WAT: &str = r#"(module
        (type $callback (func (param i32)))
        (table 4 funcref)
        (elem (i32.const 1) $f $g $h)
        (func $f)
        (func $g (param i32))
        (func $h (param i32) (result i32) i32.const 7)
        (func $call (export "call") (param i32)
            i32.const 5
            local.get 0
            call_indirect (type $callback)))"#;

    fn instrumented(wat: &str) -> String {
        let wasm = wat::parse_str(wat).unwrap();
        let out = crate::instrument::instrument(&wasm, &options()).unwrap();
        wasmprinter::print_bytes(&out.wasm).unwrap()
    }

    /// Calls `call(slot)` of the instrumented module, single-threaded.
    fn call(wat: &str, slot: i32) -> wasmtime::Result<()> {
        let wasm = wat::parse_str(wat).unwrap();
        let out = crate::instrument::instrument(&wasm, &options()).unwrap();
        let engine = wasmtime::Engine::default();
        let module = wasmtime::Module::new(&engine, &out.wasm)?;
        let mut store = wasmtime::Store::new(&engine, ());
        let mut linker = wasmtime::Linker::new(&engine);
        linker.define_unknown_imports_as_traps(&module)?;
        let instance = linker.instantiate(&mut store, &module)?;
        let call = instance.get_typed_func::<i32, ()>(&mut store, "call")?;
        call.call(&mut store, slot)
    }

    #[test]
    fn a_call_reaches_a_function_that_takes_fewer_arguments_or_returns_more() {
        let text = instrumented(WAT);
        // One copy of the table, two adapters.
        assert_eq!(text.matches("(table (;").count(), 2, "{text}");
        assert!(text.contains("call_indirect 1 (type"), "{text}");
        call(WAT, 1).unwrap();
        call(WAT, 2).unwrap();
        call(WAT, 3).unwrap();
    }

    #[test]
    fn a_null_slot_and_a_call_native_code_gets_wrong_still_trap() {
        let wat = WAT.replace("(func $f)", "(func $f (param i64))");
        let text = instrumented(&wat);
        assert_eq!(text.matches("(table (;").count(), 2, "{text}");
        let trap = call(&wat, 1).unwrap_err();
        assert!(
            format!("{trap:?}").contains("indirect call type mismatch"),
            "{trap:?}"
        );
        let trap = call(&wat, 0).unwrap_err();
        assert!(
            format!("{trap:?}").contains("uninitialized element"),
            "{trap:?}"
        );
    }

    #[test]
    fn a_module_whose_calls_match_has_no_copy() {
        let wat = WAT.replace("(func $f)", "(func $f (param i32))").replace(
            "(func $h (param i32) (result i32) i32.const 7)",
            "(func $h (param i32))",
        );
        let text = instrumented(&wat);
        assert_eq!(text.matches("(table (;").count(), 1, "{text}");
    }

    #[test]
    fn a_module_that_changes_its_table_has_no_copy() {
        let wat = WAT.replace(
            "(func $f)",
            "(func $f i32.const 1 ref.null func table.set 0)",
        );
        let text = instrumented(&wat);
        assert_eq!(text.matches("(table (;").count(), 1, "{text}");
    }
}
