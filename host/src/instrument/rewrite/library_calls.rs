//! Calls of C library functions that touch their caller's memory (see
//! [`crate::library::caller_memory`]), with
//! [`caller_memory`](crate::instrument::InstrumentOptions::caller_memory):
//! a call from the program's own code goes through a wrapper the rewrite
//! appends (one per function, see
//! [`crate::instrument::access_log::library_call_wrapper`]), given the
//! call's site, which tells the host what the call touched. The
//! function's own accesses are not logged: the host's ranges stand for
//! them, at the caller's line.

use super::Rewriter;
use crate::instrument::AccessKind;
use crate::instrument::sites::Site;
use crate::library::Owner;
use crate::library::caller_memory::{self, Touch};
use wasm_encoder::{Function, Instruction};
use wasmparser::{Operator, ValType};

/// A function whose calls go through a wrapper.
#[derive(Clone, Copy, Debug)]
pub(super) struct Wrapped {
    /// The function (original index).
    pub callee: u32,
    /// How it touches its caller's memory.
    pub touch: Touch,
    /// How many `i32` arguments it takes.
    pub params: u32,
    /// Whether it returns an `i32`.
    pub returns: bool,
}

impl Rewriter<'_> {
    /// The functions defined in the module whose name and type are those
    /// of a C library function that touches its caller's memory, by index.
    pub(super) fn find_wrapped_functions(&self) -> Vec<Wrapped> {
        let mut wrapped: Vec<Wrapped> = self
            .survey
            .func_names
            .iter()
            .filter(|&(&index, _)| index >= self.survey.func_imports)
            .filter_map(|(&callee, name)| {
                let touch = caller_memory::of_function(name)?;
                let (params, results) = self.survey.func_sig(callee)?;
                let all_i32 = params.iter().chain(results).all(|t| *t == ValType::I32);
                (all_i32 && touch.accepts(params.len(), results.len())).then_some(Wrapped {
                    callee,
                    touch,
                    params: params.len() as u32,
                    returns: !results.is_empty(),
                })
            })
            .collect();
        wrapped.sort_unstable_by_key(|w| w.callee);
        wrapped
    }

    /// Where function `func` is among the wrapped functions.
    pub(super) fn wrapped_position(&self, func: u32) -> Option<usize> {
        self.wrapped.binary_search_by_key(&func, |w| w.callee).ok()
    }

    /// Emits `op` at `pos` in function `func` as a call of its wrapper
    /// when it calls a wrapped function from the program's own code; says
    /// whether it did.
    pub(super) fn emit_library_call(
        &mut self,
        f: &mut Function,
        op: &Operator,
        func: u32,
        pos: usize,
    ) -> bool {
        let Operator::Call { function_index } = *op else {
            return false;
        };
        let Some(position) = self.wrapped_position(function_index) else {
            return false;
        };
        if self.wrapped_position(func).is_some() || self.owner_of(pos) != Owner::Program {
            return false;
        }
        let code_offset = self.code_offset(pos);
        let site = self.sites.push(Site {
            kind: AccessKind::LibraryCall,
            func,
            code_offset,
            mem_offset: 0,
            width: 0,
            callee: Some(function_index),
            touch: Some(self.wrapped[position].touch),
        });
        f.instruction(&Instruction::I32Const(site as i32));
        f.instruction(&Instruction::Call(self.wrapper_function(position)));
        true
    }

    /// Function index of the wrapper of the `position`-th wrapped
    /// function: after the logging functions.
    fn wrapper_function(&self, position: usize) -> u32 {
        let log = self
            .log_functions()
            .expect("functions are wrapped only where accesses are logged");
        log.log_bulk + 1 + position as u32
    }

    /// Type index of the wrapper of the `position`-th wrapped function:
    /// after the logging functions' types.
    pub(super) fn wrapper_function_type(&self, position: usize) -> u32 {
        self.log_type(crate::instrument::access_log::PARAMS.len() as u32) + position as u32
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{body_of, options};

    /// A module with the C library's `strlen` and a program that calls it.
    const WAT: &str = r#"(module
        (memory 1 1 shared)
        (func $strlen (param i32) (result i32)
            (i32.load8_u (local.get 0)))
        (func $main (result i32)
            (call $strlen (i32.const 16))))"#;

    #[test]
    fn the_program_calls_the_library_through_a_wrapper_given_its_site() {
        let mut logging = options();
        logging.log_accesses = true;
        logging.caller_memory = true;
        let main = body_of(WAT, logging, "main");
        // The wrapper comes after weft's imports, the two functions and
        // the two logging functions.
        let wrapper = format!("call {}", crate::abi::RT_IMPORTS.len() + 4);
        assert_eq!(main, ["i32.const 16", "i32.const 0", wrapper.as_str()]);
        // The wrapped function's own load is not logged.
        let strlen = body_of(WAT, logging, "strlen");
        assert!(
            !strlen.iter().any(|line| line.starts_with("call")),
            "{strlen:?}"
        );
        // Without the option the call is left alone.
        logging.caller_memory = false;
        let main = body_of(WAT, logging, "main");
        assert_eq!(main, ["i32.const 16", "call $strlen"]);
    }
}
