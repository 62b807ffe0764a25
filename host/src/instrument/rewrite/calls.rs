//! Calls: logged calls (for `weft generate`'s coverage of call sequences)
//! and, in wasi-libc's thread start function, the call of the thread's start
//! routine, which the runtime may skip when a replayed thread's result is
//! already known.

use super::scratch::Scratch;
use super::{Result, Rewriter};
use crate::abi;
use crate::instrument::AccessKind;
use crate::instrument::sites::Site;
use crate::instrument::survey::LooseRoutine;
use wasm_encoder::reencode::Reencode;
use wasm_encoder::{BlockType, Function, Instruction, ValType};
use wasmparser::Operator;

impl Rewriter<'_> {
    /// Emits the call `op` at `pos` in function `func` if calls need
    /// anything around them; says whether it did.
    pub(super) fn emit_call(
        &mut self,
        f: &mut Function,
        op: &Operator,
        func: u32,
        pos: usize,
        scratch: &Scratch,
    ) -> Result<bool> {
        let logged = self.logged_call(op);
        if let Operator::CallIndirect {
            type_index,
            table_index,
        } = *op
            && self.survey.thread_start_c() == Some(func)
            && self.survey.is_start_routine_type(type_index)
        {
            let site = logged.map(|callee| self.call_site(func, pos, callee));
            if let Some(site) = site {
                f.instruction(&Instruction::I32Const(site));
                f.instruction(&Instruction::Call(self.rt_func(&abi::RT_CALL)));
            }
            self.emit_start_routine_call(f, type_index, table_index, scratch)?;
            if let Some(site) = site {
                f.instruction(&Instruction::I32Const(site));
                f.instruction(&Instruction::Call(self.rt_func(&abi::RT_RETURNED)));
            }
            return Ok(true);
        }
        let Some(callee) = logged else {
            return Ok(false);
        };
        let site = self.call_site(func, pos, callee);
        f.instruction(&Instruction::I32Const(site));
        f.instruction(&Instruction::Call(self.rt_func(&abi::RT_CALL)));
        if !self.emit_cast_call(f, op) {
            f.instruction(&self.instruction(op.clone())?);
        }
        f.instruction(&Instruction::I32Const(site));
        f.instruction(&Instruction::Call(self.rt_func(&abi::RT_RETURNED)));
        Ok(true)
    }

    /// A call site (for call logging): `callee` is the original index of a
    /// direct call's target.
    fn call_site(&mut self, func: u32, pos: usize, callee: Option<u32>) -> i32 {
        let code_offset = self.code_offset(pos);
        self.sites.push(Site {
            kind: AccessKind::Call,
            func,
            code_offset,
            mem_offset: 0,
            width: 0,
            callee,
            touch: None,
        }) as i32
    }

    /// The call instruction `op` is (direct: with its target), if calls are
    /// logged.
    fn logged_call(&self, op: &Operator) -> Option<Option<u32>> {
        if !self.options.log_calls {
            return None;
        }
        match op {
            Operator::Call { function_index } => Some(Some(*function_index)),
            Operator::CallIndirect { .. } | Operator::CallRef { .. } => Some(None),
            _ => None,
        }
    }

    /// In wasi-libc's thread start function, the call of the thread's start
    /// routine: made only when `weft_rt.exit_value` says so, else its value
    /// stands for the routine's result (see [`abi::EXIT_VALUE`]).
    fn emit_start_routine_call(
        &mut self,
        f: &mut Function,
        type_index: u32,
        table_index: u32,
        scratch: &Scratch,
    ) -> Result<()> {
        let [arg, routine] = scratch.i32s;
        let exit_value = scratch.i64s[0];
        f.instruction(&Instruction::LocalSet(routine));
        f.instruction(&Instruction::LocalSet(arg));
        f.instruction(&Instruction::Call(self.rt_func(&abi::EXIT_VALUE)));
        f.instruction(&Instruction::LocalTee(exit_value));
        f.instruction(&Instruction::I64Const(-1));
        f.instruction(&Instruction::I64Eq);
        f.instruction(&Instruction::If(BlockType::Result(ValType::I32)));
        let loose = if table_index == 0 {
            self.survey.loose_start_routines()
        } else {
            Vec::new()
        };
        if !loose.is_empty() {
            f.instruction(&Instruction::Block(BlockType::Result(ValType::I32)));
            self.emit_loose_start_routine_calls(f, &loose, arg, routine)?;
        }
        f.instruction(&Instruction::LocalGet(arg));
        f.instruction(&Instruction::LocalGet(routine));
        f.instruction(&Instruction::CallIndirect {
            type_index,
            table_index,
        });
        if !loose.is_empty() {
            f.instruction(&Instruction::End);
        }
        f.instruction(&Instruction::Else);
        f.instruction(&Instruction::LocalGet(exit_value));
        f.instruction(&Instruction::I32WrapI64);
        f.instruction(&Instruction::End);
        Ok(())
    }

    /// Inside a block whose result is the routine's: when the routine
    /// (local `routine`, a slot of table 0) is one of the functions `loose`
    /// of table 0 whose type is not a start routine's but one old C passes
    /// to `pthread_create` (see `Survey::loose_start_routines`), calls it
    /// directly, with the argument (local `arg`) if it takes one, and
    /// leaves its result (or 0, a null pointer) as the block's. gcc's and
    /// clang's native code run such programs; wasm's `call_indirect` would
    /// trap on the mismatched type.
    fn emit_loose_start_routine_calls(
        &mut self,
        f: &mut Function,
        loose: &[(u32, LooseRoutine)],
        arg: u32,
        routine: u32,
    ) -> Result<()> {
        for &(slot, loose) in loose {
            let LooseRoutine {
                function,
                takes_arg,
                returns,
            } = loose;
            f.instruction(&Instruction::LocalGet(routine));
            f.instruction(&Instruction::I32Const(slot as i32));
            f.instruction(&Instruction::I32Eq);
            f.instruction(&Instruction::If(BlockType::Empty));
            if takes_arg {
                f.instruction(&Instruction::LocalGet(arg));
            }
            f.instruction(&Instruction::Call(self.function_index(function)?));
            if !returns {
                f.instruction(&Instruction::I32Const(0));
            }
            f.instruction(&Instruction::Br(1));
            f.instruction(&Instruction::End);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{body_of, options};

    #[test]
    fn a_logged_call_is_bracketed_by_its_site() {
        let mut logging = options();
        logging.log_calls = true;
        let wat = r#"(module
            (func $callee)
            (func $caller call $callee))"#;
        let body = body_of(wat, logging, "caller");
        assert_eq!(
            body,
            [
                "i32.const 0",
                "call weft_rt.call",
                "call $callee",
                "i32.const 0",
                "call weft_rt.returned",
            ]
        );
        let plain = body_of(wat, options(), "caller");
        assert_eq!(plain, ["call $callee"]);
    }

    #[test]
    fn the_start_routine_is_called_only_when_the_runtime_says_so() {
        let wat = r#"(module
            (type $routine (func (param i32) (result i32)))
            (table 1 funcref)
            (func $__wasi_thread_start_C (param i32 i32)
                local.get 1
                local.get 0
                call_indirect (type $routine)
                drop))"#;
        let body = body_of(wat, options(), "__wasi_thread_start_C");
        // Scratch locals start after the two parameters: the argument and
        // the routine in 3 and 4, the exit value in 5.
        assert_eq!(
            body,
            [
                "local.get 1",
                "local.get 0",
                "local.set 4",
                "local.set 3",
                "call weft_rt.exit_value",
                "local.tee 5",
                "i64.const -1",
                "i64.eq",
                "if (result i32)",
                "local.get 3",
                "local.get 4",
                "call_indirect (type $routine)",
                "else",
                "local.get 5",
                "i32.wrap_i64",
                "end",
                "drop",
            ]
        );
    }

    #[test]
    fn an_old_c_routine_of_another_type_is_called_directly() {
        // `void *worker()` (no parameter) and `void worker(void *)` (no
        // result) in the table beside a proper routine, each given to
        // `pthread_create`; a callback of the second type that no thread
        // starts with is left out.
        let wat = r#"(module
            (type $routine (func (param i32) (result i32)))
            (table 5 funcref)
            (elem (i32.const 1) func $proper $no_parameter $no_result $callback)
            (func $proper (param i32) (result i32) local.get 0)
            (func $no_parameter (result i32) i32.const 7)
            (func $no_result (param i32))
            (func $callback (param i32) (drop (i32.const 4)))
            (func $pthread_create (param i32 i32 i32 i32) (result i32) i32.const 0)
            (func $main
                (drop (call $pthread_create (i32.const 0) (i32.const 0) (i32.const 2) (i32.const 0)))
                (drop (call $pthread_create (i32.const 0) (i32.const 0) (i32.const 3) (i32.const 0))))
            (func $__wasi_thread_start_C (param i32 i32)
                local.get 1
                local.get 0
                call_indirect (type $routine)
                drop))"#;
        let body = body_of(wat, options(), "__wasi_thread_start_C");
        let start = body.iter().position(|l| l == "if (result i32)").unwrap();
        let end = body.iter().position(|l| l == "else").unwrap();
        assert_eq!(
            body[start + 1..end],
            [
                "block (result i32)",
                // Slot 2: no parameter, its result.
                "local.get 4",
                "i32.const 2",
                "i32.eq",
                "if",
                "call $no_parameter",
                "br 1 (;@2;)",
                "end",
                // Slot 3: the argument, a null result.
                "local.get 4",
                "i32.const 3",
                "i32.eq",
                "if",
                "local.get 3",
                "call $no_result",
                "i32.const 0",
                "br 1 (;@2;)",
                "end",
                "local.get 3",
                "local.get 4",
                "call_indirect (type $routine)",
                "end",
            ]
        );
    }
}
