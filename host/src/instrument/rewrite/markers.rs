//! What a function's own name asks of the runtime: SV-COMP's error, abort
//! and assume functions, `__VERIFIER_atomic_*` sections, the C library
//! functions that run as one step, and wasm-ld's signature-mismatch stubs.
//! Markers go at the function's entry, at every way out of it, and around
//! its calls through a pointer.

use super::Rewriter;
use crate::abi;
use wasm_encoder::{BlockType, Function, Instruction, ValType};
use wasmparser::Operator;

/// The markers one function gets.
#[derive(Clone, Copy, Default)]
pub(super) struct Markers {
    /// The function is an atomic section: it begins at entry and ends at
    /// every way out.
    atomic: bool,
    /// The function is a library step, numbered by its function index.
    library_step: Option<u32>,
    /// With the library depth in the guest (see
    /// [`Rewriter::library_depth_global`]): the local that keeps the depth
    /// across the step's calls through a pointer.
    kept_depth: Option<u32>,
}

impl Rewriter<'_> {
    /// The whole body of a function SV-COMP's conventions replace: the
    /// program's own `assume_abort_if_not(int)` would abort, which weft
    /// would report as a bug; an assumption discards the execution instead.
    /// `None` for any other function.
    pub(super) fn replaced_body(&self, defined: u32, name: Option<&str>) -> Option<Function> {
        if name != Some(abi::ASSUME_FUNCTION)
            || self.survey.params_of_defined(defined as usize) != 1
        {
            return None;
        }
        let mut f = Function::new([]);
        f.instruction(&Instruction::LocalGet(0));
        f.instruction(&Instruction::Call(self.rt_func(&abi::RT_ASSUME)));
        f.instruction(&Instruction::End);
        Some(f)
    }

    /// The global that counts how deeply the running thread is nested in
    /// library steps, under
    /// [`crate::instrument::InstrumentOptions::library_depth_in_guest`]:
    /// after the dropped-segment flags. Only the outermost step's entry
    /// and exit call the host.
    pub(super) fn library_depth_global(&self) -> Option<u32> {
        let options = self.options;
        (options.library_steps && options.library_depth_in_guest && self.shares_memory())
            .then(|| self.survey.global_count + self.dropped_flag_count())
    }

    /// Appends the library depth's global, if the module has one.
    pub(super) fn append_library_depth(&self, globals: &mut wasm_encoder::GlobalSection) {
        if self.library_depth_global().is_some() {
            globals.global(
                wasm_encoder::GlobalType {
                    val_type: ValType::I32,
                    mutable: true,
                    shared: false,
                },
                &wasm_encoder::ConstExpr::i32_const(0),
            );
        }
    }

    /// Puts the library depth back to zero, if the module has one.
    pub(super) fn emit_library_depth_reset(&self, f: &mut Function) {
        if let Some(depth) = self.library_depth_global() {
            f.instruction(&Instruction::I32Const(0));
            f.instruction(&Instruction::GlobalSet(depth));
        }
    }

    /// Whether function `func`, whose body is `operators`, needs a local
    /// that keeps the library depth across its calls through a pointer.
    pub(super) fn keeps_library_depth(&self, func: u32, operators: &[(usize, Operator)]) -> bool {
        self.library_depth_global().is_some()
            && self.is_library_step(func)
            && operators.iter().any(|(_, op)| {
                matches!(op, Operator::CallIndirect { .. } | Operator::CallRef { .. })
            })
    }

    /// Emits the markers at the entry of function `func` named `name`, and
    /// returns those its exits need; `kept_depth` is the local of
    /// [`Self::keeps_library_depth`], when the function has one.
    pub(super) fn emit_entry_markers(
        &self,
        f: &mut Function,
        func: u32,
        name: Option<&str>,
        kept_depth: Option<u32>,
    ) -> Markers {
        if name.is_some_and(|n| abi::ERROR_FUNCTIONS.contains(&n)) {
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_REACH_ERROR)));
        } else if name == Some(abi::ABORT_FUNCTION) {
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_ABORT)));
        } else if name.is_some_and(|n| n.starts_with(abi::SIGNATURE_MISMATCH_PREFIX)) {
            f.instruction(&Instruction::I32Const(func as i32));
            f.instruction(&Instruction::Call(
                self.rt_func(&abi::RT_SIGNATURE_MISMATCH),
            ));
        }
        let markers = Markers {
            atomic: name.is_some_and(|n| n.starts_with(abi::ATOMIC_FUNCTION_PREFIX)),
            library_step: self.is_library_step(func).then_some(func),
            kept_depth,
        };
        if markers.atomic {
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_ATOMIC_BEGIN)));
        }
        if markers.library_step.is_some() {
            match self.library_depth_global() {
                Some(depth) => {
                    // Only the outermost step tells the host.
                    f.instruction(&Instruction::GlobalGet(depth));
                    f.instruction(&Instruction::I32Eqz);
                    f.instruction(&Instruction::If(BlockType::Empty));
                    self.emit_library_entry(f, func);
                    f.instruction(&Instruction::End);
                    f.instruction(&Instruction::GlobalGet(depth));
                    f.instruction(&Instruction::I32Const(1));
                    f.instruction(&Instruction::I32Add);
                    f.instruction(&Instruction::GlobalSet(depth));
                }
                None => self.emit_library_entry(f, func),
            }
        }
        markers
    }

    /// Emits the host's entry of library step `func`. Under
    /// [`crate::instrument::InstrumentOptions::quick_library_entry`], the
    /// guest first asks the host synchronously whether the full entry is
    /// needed, where that may spare it: at a step that is no scheduling
    /// point, and at any step when the host counts the depth (the guest
    /// that counts it calls the host only outside every other step).
    fn emit_library_entry(&self, f: &mut Function, func: u32) {
        let quiet = self.is_quiet_step(func);
        let ask = match (self.options.quick_library_entry, quiet) {
            (false, _) => None,
            (true, true) => Some(&abi::RT_LIBRARY_ENTER_QUICK),
            (true, false) => self
                .library_depth_global()
                .is_none()
                .then_some(&abi::RT_LIBRARY_BEGIN_QUICK),
        };
        if let Some(ask) = ask {
            f.instruction(&Instruction::Call(self.rt_func(ask)));
            f.instruction(&Instruction::If(BlockType::Empty));
        }
        f.instruction(&Instruction::I32Const(func as i32));
        let defined = func.saturating_sub(self.survey.func_imports) as usize;
        if self.survey.first_param_is_i32(defined) {
            f.instruction(&Instruction::LocalGet(0));
        } else {
            f.instruction(&Instruction::I32Const(0));
        }
        let begin = if quiet {
            &abi::RT_LIBRARY_ENTER
        } else {
            &abi::RT_LIBRARY_BEGIN
        };
        f.instruction(&Instruction::Call(self.rt_func(begin)));
        if ask.is_some() {
            f.instruction(&Instruction::End);
        }
    }

    /// Emits the markers that go before `op`: the end of an atomic section
    /// or library step where `op` leaves the function (`leaves`: its last
    /// `end`, a return, a tail call), and a library step's pause before a
    /// call through a pointer (code that may be the program's). Returns
    /// whether the step resumes after `op` ([`Self::emit_resume_marker`]).
    pub(super) fn emit_markers_before(
        &self,
        f: &mut Function,
        markers: Markers,
        op: &Operator,
        last: bool,
    ) -> bool {
        let leaves = last
            || matches!(
                op,
                Operator::Return
                    | Operator::ReturnCall { .. }
                    | Operator::ReturnCallIndirect { .. }
                    | Operator::ReturnCallRef { .. }
            );
        if markers.atomic && leaves {
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_ATOMIC_END)));
        }
        let depth = self.library_depth_global();
        if markers.library_step.is_some() && leaves {
            if let Some(depth) = depth {
                // Only the outermost step tells the host.
                f.instruction(&Instruction::GlobalGet(depth));
                f.instruction(&Instruction::I32Const(1));
                f.instruction(&Instruction::I32Sub);
                f.instruction(&Instruction::GlobalSet(depth));
                f.instruction(&Instruction::GlobalGet(depth));
                f.instruction(&Instruction::I32Eqz);
                f.instruction(&Instruction::If(BlockType::Empty));
            }
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_LIBRARY_END)));
            if depth.is_some() {
                f.instruction(&Instruction::End);
            }
        }
        let calls_out = markers.library_step.is_some()
            && matches!(op, Operator::CallIndirect { .. } | Operator::CallRef { .. });
        if calls_out {
            if let (Some(depth), Some(kept)) = (depth, markers.kept_depth) {
                // The code called is outside every step.
                f.instruction(&Instruction::GlobalGet(depth));
                f.instruction(&Instruction::LocalSet(kept));
                f.instruction(&Instruction::I32Const(0));
                f.instruction(&Instruction::GlobalSet(depth));
            }
            f.instruction(&Instruction::Call(self.rt_func(&abi::RT_LIBRARY_PAUSE)));
        }
        calls_out
    }

    /// After a library step's call through a pointer: the step goes on
    /// (under [`crate::instrument::InstrumentOptions::rust_runtime_steps`],
    /// a step that is no scheduling point goes on without one).
    pub(super) fn emit_resume_marker(&self, f: &mut Function, markers: Markers) {
        if let Some(step) = markers.library_step {
            let resume = if self.options.rust_runtime_steps && self.is_quiet_step(step) {
                &abi::RT_LIBRARY_RESUME_QUIET
            } else {
                &abi::RT_LIBRARY_RESUME
            };
            f.instruction(&Instruction::I32Const(step as i32));
            f.instruction(&Instruction::Call(self.rt_func(resume)));
            if let (Some(depth), Some(kept)) = (self.library_depth_global(), markers.kept_depth) {
                f.instruction(&Instruction::LocalGet(kept));
                f.instruction(&Instruction::GlobalSet(depth));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{body_of, options};

    #[test]
    fn an_atomic_section_begins_at_entry_and_ends_at_every_way_out() {
        let body = body_of(
            r#"(module
                (func $__VERIFIER_atomic_inc (param i32)
                    local.get 0
                    if
                        return
                    end
                    nop))"#,
            options(),
            "__VERIFIER_atomic_inc",
        );
        assert_eq!(
            body,
            [
                "call weft_rt.atomic_begin",
                "local.get 0",
                "if",
                "call weft_rt.atomic_end",
                "return",
                "end",
                "nop",
                "call weft_rt.atomic_end",
            ]
        );
    }

    #[test]
    fn reach_error_and_abort_tell_the_runtime_first() {
        let wat = r#"(module
            (func $reach_error unreachable)
            (func $abort unreachable))"#;
        let reach = body_of(wat, options(), "reach_error");
        assert_eq!(reach[0], "call weft_rt.reach_error");
        let abort = body_of(wat, options(), "abort");
        assert_eq!(abort[0], "call weft_rt.abort");
    }

    #[test]
    fn assume_abort_if_not_becomes_an_assumption() {
        let body = body_of(
            r#"(module
                (func $assume_abort_if_not (param i32)
                    local.get 0
                    i32.eqz
                    if
                        unreachable
                    end))"#,
            options(),
            "assume_abort_if_not",
        );
        assert_eq!(body, ["local.get 0", "call weft_rt.assume"]);
    }

    #[test]
    fn a_library_step_pauses_around_calls_through_a_pointer() {
        let mut with_steps = options();
        with_steps.library_steps = true;
        let wat = r#"(module
            (type $t (func))
            (table 1 funcref)
            (func $__pthread_join (param i32)
                local.get 0
                call_indirect (type $t)))"#;
        let body = body_of(wat, with_steps, "__pthread_join");
        assert_eq!(
            body,
            [
                "i32.const 0",
                // The first argument, the thread joined.
                "local.get 0",
                "call weft_rt.library_begin",
                "local.get 0",
                "call weft_rt.library_pause",
                "call_indirect (type $t)",
                "i32.const 0",
                "call weft_rt.library_resume",
                "call weft_rt.library_end",
            ]
        );
        // Without library steps the same function is left alone.
        let plain = body_of(wat, options(), "__pthread_join");
        assert_eq!(plain, ["local.get 0", "call_indirect (type $t)"]);
        // With the quick entry, the full one runs only when the host asks.
        with_steps.quick_library_entry = true;
        let quick = body_of(wat, with_steps, "__pthread_join");
        assert_eq!(
            quick[..6],
            [
                "call weft_rt.library_begin_quick",
                "if",
                "i32.const 0",
                "local.get 0",
                "call weft_rt.library_begin",
                "end",
            ]
        );
        assert_eq!(quick[6..], body[3..]);
    }

    #[test]
    fn with_the_depth_in_the_guest_only_the_outermost_step_calls_the_host() {
        let mut depth_in_guest = options();
        depth_in_guest.library_steps = true;
        depth_in_guest.quick_library_entry = true;
        depth_in_guest.library_depth_in_guest = true;
        let wat = r#"(module
            (type $t (func))
            (memory 1 1 shared)
            (table 1 funcref)
            (func $__pthread_join (param i32)
                local.get 0
                call_indirect (type $t)))"#;
        let body = body_of(wat, depth_in_guest, "__pthread_join");
        assert_eq!(
            body,
            [
                // Global 0 counts the depth: the host hears of the step
                // only outside every other step.
                "global.get 0",
                "i32.eqz",
                "if",
                "i32.const 0",
                "local.get 0",
                "call weft_rt.library_begin",
                "end",
                "global.get 0",
                "i32.const 1",
                "i32.add",
                "global.set 0",
                "local.get 0",
                // The code called through the pointer is outside every
                // step: local 1 keeps the depth until it returns.
                "global.get 0",
                "local.set 1",
                "i32.const 0",
                "global.set 0",
                "call weft_rt.library_pause",
                "call_indirect (type $t)",
                "i32.const 0",
                "call weft_rt.library_resume",
                "local.get 1",
                "global.set 0",
                "global.get 0",
                "i32.const 1",
                "i32.sub",
                "global.set 0",
                "global.get 0",
                "i32.eqz",
                "if",
                "call weft_rt.library_end",
                "end",
            ]
        );
        // Without a shared memory (one thread) the host counts the depth.
        let unshared = wat.replace("(memory 1 1 shared)", "(memory 1)");
        let body = body_of(&unshared, depth_in_guest, "__pthread_join");
        assert_eq!(body[0], "call weft_rt.library_begin_quick");
    }

    #[test]
    fn rusts_runtime_machinery_is_a_step_and_its_bookkeeping_resumes_quietly() {
        let mut with_steps = options();
        with_steps.library_steps = true;
        with_steps.quiet_bookkeeping = true;
        let wat = r#"(module
            (type $t (func))
            (table 1 funcref)
            (func $std::rt::lang_start_internal (param i32)
                local.get 0
                call_indirect (type $t))
            (func $std::io::stdio::_print (param i32)
                nop))"#;
        let start = body_of(wat, with_steps, "std::rt::lang_start_internal");
        let print = body_of(wat, with_steps, "std::io::stdio::_print");
        // Without the option, both are the program's.
        assert_eq!(start, ["local.get 0", "call_indirect (type $t)"]);
        assert_eq!(print, ["nop"]);
        with_steps.rust_runtime_steps = true;
        let start = body_of(wat, with_steps, "std::rt::lang_start_internal");
        assert_eq!(
            start,
            [
                "i32.const 0",
                "local.get 0",
                "call weft_rt.library_enter",
                "local.get 0",
                "call weft_rt.library_pause",
                "call_indirect (type $t)",
                // Back from `main`: no scheduling point.
                "i32.const 0",
                "call weft_rt.library_resume_quiet",
                "call weft_rt.library_end",
            ]
        );
        let print = body_of(wat, with_steps, "std::io::stdio::_print");
        assert_eq!(
            print,
            [
                "i32.const 1",
                "local.get 0",
                "call weft_rt.library_begin",
                "nop",
                "call weft_rt.library_end",
            ]
        );
    }

    #[test]
    fn a_rust_locks_inlined_fast_path_is_noted_as_the_call_it_stands_for() {
        let mut with_steps = options();
        with_steps.library_steps = true;
        let contended =
            "_RNvMNtNtNtNtCs1cbpOjQgv0Q_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended";
        let wat = format!(
            r#"(module
            (memory 1 1 shared)
            (func ${contended} (param i32))
            (func $lock (param i32)
                local.get 0
                i32.const 1
                i32.atomic.rmw.add
                drop
                local.get 0
                i32.const 0
                i32.const 1
                i32.atomic.rmw.cmpxchg
                if
                    local.get 0
                    call ${contended}
                end))"#
        );
        let wasm = wat::parse_str(&wat).unwrap();
        let rewritten = crate::instrument::instrument(&wasm, &with_steps).unwrap();
        // Site 0 is the addition, site 1 the compare-exchange; function 0
        // the slow path.
        assert_eq!(rewritten.sites.guards(), [(1, 0)]);
        // A call that no path reaches from the compare-exchange (a branch
        // leaves the block first) has no fast path.
        let shared = wat.replace("if\n", "if\n                    br 0\n");
        let shared = crate::instrument::instrument(&wat::parse_str(&shared).unwrap(), &with_steps);
        assert!(shared.unwrap().sites.guards().is_empty());
        let plain = crate::instrument::instrument(&wasm, &options()).unwrap();
        assert!(plain.sites.guards().is_empty());
    }

    #[test]
    fn a_rust_read_locks_load_and_compare_exchange_are_noted_as_one_fast_path() {
        let contended =
            "_RNvMNtNtNtNtCs1cbpOjQgv0Q_3std3sys4sync6rwlock5futexNtB2_6RwLock14read_contended";
        // RwLock::read as rustc lays it out: the load leads to the slow
        // path when the lock is not free for readers, the compare-exchange
        // right after it when it fails.
        let wat = format!(
            r#"(module
            (memory 1 1 shared)
            (func ${contended} (param i32))
            (func $read (param i32) (local i32)
                block
                    block
                        local.get 0
                        i32.atomic.load
                        local.tee 1
                        i32.const 5
                        i32.gt_u
                        br_if 0
                        local.get 0
                        local.get 1
                        local.get 1
                        i32.const 1
                        i32.add
                        i32.atomic.rmw.cmpxchg
                        local.get 1
                        i32.eq
                        br_if 1
                    end
                    local.get 0
                    call ${contended}
                end))"#
        );
        let wasm = wat::parse_str(&wat).unwrap();
        let mut one_step = options();
        one_step.library_steps = true;
        one_step.read_lock_one_step = true;
        let rewritten = crate::instrument::instrument(&wasm, &one_step).unwrap();
        // Site 0 is the load, site 1 the compare-exchange.
        assert_eq!(rewritten.sites.guards(), [(0, 0), (1, 0)]);
        assert_eq!(rewritten.sites.read_lock_fast_paths(), [(0, 1)]);
        // Without the option, the two are fast paths of their own.
        let mut steps = one_step;
        steps.read_lock_one_step = false;
        let two = crate::instrument::instrument(&wasm, &steps).unwrap();
        assert_eq!(two.sites.guards(), [(0, 0), (1, 0)]);
        assert!(two.sites.read_lock_fast_paths().is_empty());
        // A mutex's slow path after a load and a compare-exchange: no
        // read lock.
        let mutex = wat.replace(
            "6rwlock5futexNtB2_6RwLock14read_contended",
            "5mutex5futexNtB2_5Mutex14lock_contended",
        );
        let mutex =
            crate::instrument::instrument(&wat::parse_str(&mutex).unwrap(), &one_step).unwrap();
        assert!(mutex.sites.read_lock_fast_paths().is_empty());
    }
}
