//! Calls through a function pointer whose type is not the function's.
//!
//! Old-style C passes `void f()` where `void (*)(void *)` is expected and
//! calls it with an argument; a callback that returns a value is stored
//! where one returning nothing is expected. Native code runs such programs
//! (the caller's extra arguments are ignored, a result nobody reads is
//! lost); wasm's `call_indirect` checks the callee's type and traps.
//!
//! For each type `T` of the module's calls through table 0 that some
//! function of the table could receive so, the rewrite appends a dispatch
//! function `(T's parameters, slot) -> T's results`, and such calls go
//! through it: a `br_table` on the slot calls each such function directly,
//! with the leading arguments it takes and its results dropped where `T`
//! has none; every other slot goes through the `call_indirect` as before
//! (a null slot or any other mismatch still traps). Only the casts native
//! code gets right are adapted: the callee takes a prefix of the caller's
//! arguments, of the same types, and returns what the caller expects or
//! the caller expects nothing. Nothing is adapted when an instruction
//! changes a table or a segment's slots are not known.

use super::{Result, Rewriter};
use crate::instrument::survey::Survey;
use wasm_encoder::reencode::Reencode;
use wasm_encoder::{BlockType, Function, Instruction};
use wasmparser::{Operator, ValType};

/// The most slots a dispatch's `br_table` spans.
const MOST_SLOTS: u32 = 1 << 16;

/// The dispatch function of the calls of one type through table 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CastDispatch {
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
    /// The dispatch functions the module needs, by the calls' type.
    pub(super) fn cast_dispatches(&self) -> Vec<CastDispatch> {
        if self.mutates_tables || self.table_slots_uncertain {
            return Vec::new();
        }
        self.indirect_call_types
            .iter()
            .filter_map(|&ty| {
                let (params, results) = self.func_sigs.get(ty as usize)?.as_ref()?;
                if !params.iter().chain(results).all(is_number) {
                    return None;
                }
                let cases: Vec<CastCase> = self
                    .table_functions
                    .range(..MOST_SLOTS)
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
                (!cases.is_empty()).then_some(CastDispatch { ty, cases })
            })
            .collect()
    }
}

/// Whether values of type `ty` can be passed through a dispatch unchanged.
fn is_number(ty: &ValType) -> bool {
    matches!(
        ty,
        ValType::I32 | ValType::I64 | ValType::F32 | ValType::F64 | ValType::V128
    )
}

impl Rewriter<'_> {
    /// Emits `op` as a call of its dispatch function when it is a call
    /// through table 0 of a type that has one; says whether it did.
    pub(super) fn emit_cast_dispatch(&self, f: &mut Function, op: &Operator) -> bool {
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
        let Some(n) = self.casts.iter().position(|d| d.ty == type_index) else {
            return false;
        };
        let function = self.cast_dispatch_function(n as u32);
        f.instruction(&if tail {
            Instruction::ReturnCall(function)
        } else {
            Instruction::Call(function)
        });
        true
    }

    /// Type index of the `n`-th dispatch function: after every other
    /// appended type.
    pub(super) fn cast_dispatch_type(&self, n: u32) -> u32 {
        self.signal_entry_type() + u32::from(self.signal_entry.is_some()) + n
    }

    /// Function index of the `n`-th dispatch function: after every other
    /// appended function.
    fn cast_dispatch_function(&self, n: u32) -> u32 {
        self.signal_entry_function() + u32::from(self.signal_entry.is_some()) + n
    }

    /// The parameters and results of the dispatch functions' types, in
    /// order: each call type's parameters, then the slot.
    pub(super) fn cast_dispatch_types(
        &mut self,
    ) -> Result<Vec<(Vec<wasm_encoder::ValType>, Vec<wasm_encoder::ValType>)>> {
        let mut types = Vec::new();
        for dispatch in self.casts.clone() {
            let (params, results) = self.survey.func_sigs[dispatch.ty as usize]
                .clone()
                .expect("a dispatch's type is a function type");
            let mut params = params
                .into_iter()
                .map(|ty| self.val_type(ty))
                .collect::<Result<Vec<_>>>()?;
            params.push(wasm_encoder::ValType::I32);
            let results = results
                .into_iter()
                .map(|ty| self.val_type(ty))
                .collect::<Result<Vec<_>>>()?;
            types.push((params, results));
        }
        Ok(types)
    }

    /// The dispatch functions' bodies, in order.
    pub(super) fn cast_dispatch_bodies(&mut self) -> Result<Vec<Function>> {
        let mut bodies = Vec::new();
        for dispatch in self.casts.clone() {
            let params = self.survey.func_sigs[dispatch.ty as usize]
                .as_ref()
                .map_or(0, |(params, _)| params.len() as u32);
            bodies.push(self.cast_dispatch_body(&dispatch, params)?);
        }
        Ok(bodies)
    }

    /// One dispatch function: a block per case inside a default block, a
    /// `br_table` on the slot (local `params`) into them.
    fn cast_dispatch_body(&mut self, dispatch: &CastDispatch, params: u32) -> Result<Function> {
        let slot = params;
        let cases = &dispatch.cases;
        let mut f = Function::new([]);
        for _ in 0..=cases.len() {
            f.instruction(&Instruction::Block(BlockType::Empty));
        }
        let last = cases.last().map_or(0, |case| case.slot);
        let default = cases.len() as u32;
        let targets: Vec<u32> = (0..=last)
            .map(|s| {
                cases
                    .iter()
                    .position(|case| case.slot == s)
                    .map_or(default, |n| n as u32)
            })
            .collect();
        f.instruction(&Instruction::LocalGet(slot));
        f.instruction(&Instruction::BrTable(targets.into(), default));
        for case in cases {
            f.instruction(&Instruction::End);
            for param in 0..case.params {
                f.instruction(&Instruction::LocalGet(param));
            }
            f.instruction(&Instruction::Call(self.function_index(case.function)?));
            for _ in 0..case.dropped {
                f.instruction(&Instruction::Drop);
            }
            f.instruction(&Instruction::Return);
        }
        f.instruction(&Instruction::End);
        for param in 0..=params {
            f.instruction(&Instruction::LocalGet(param));
        }
        f.instruction(&Instruction::CallIndirect {
            type_index: dispatch.ty,
            table_index: 0,
        });
        f.instruction(&Instruction::End);
        Ok(f)
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
        assert_eq!(text.matches("br_table").count(), 1, "{text}");
        call(WAT, 1).unwrap();
        call(WAT, 2).unwrap();
        call(WAT, 3).unwrap();
    }

    #[test]
    fn a_null_slot_and_a_call_native_code_gets_wrong_still_trap() {
        let wat = WAT.replace("(func $f)", "(func $f (param i64))");
        let text = instrumented(&wat);
        assert_eq!(text.matches("br_table").count(), 1, "{text}");
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
    fn a_module_whose_calls_match_has_no_dispatch() {
        let wat = WAT.replace("(func $f)", "(func $f (param i32))").replace(
            "(func $h (param i32) (result i32) i32.const 7)",
            "(func $h (param i32))",
        );
        let text = instrumented(&wat);
        assert!(!text.contains("br_table"), "{text}");
    }

    #[test]
    fn a_module_that_changes_its_table_has_no_dispatch() {
        let wat = WAT.replace(
            "(func $f)",
            "(func $f i32.const 1 ref.null func table.set 0)",
        );
        let text = instrumented(&wat);
        assert!(!text.contains("br_table"), "{text}");
    }
}
