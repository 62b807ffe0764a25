//! `weft.gen_call`: a generated concurrent test's driver (in the guest SDK)
//! asks weft to call one of the class's exported methods; weft calls the
//! export on the calling thread's own instance, so the method runs on that
//! guest thread with its stack. The [`ClassCalls`] analysis holds the
//! methods an execution may call.

use crate::abi;
use crate::activity::{Activity, ActivityLog};
use crate::runtime::analysis::Analysis;
use crate::runtime::analysis_imports::{self, Imports, ThreadData};
use wasmtime::{Caller, Extern, Linker, Result, Val, ValType};

/// The exports `weft.gen_call` may call in an execution, by number.
#[derive(Clone, Debug, Default)]
pub struct ClassCalls {
    methods: Vec<String>,
}

impl ClassCalls {
    /// Calls of `methods` (number `i` calls `methods[i]`).
    pub fn new(methods: Vec<String>) -> Self {
        ClassCalls { methods }
    }
}

/// The analysis only gives `weft.gen_call` its methods.
impl Analysis for ClassCalls {}

/// Notes a method call's entry or exit in the activity log, if one is
/// installed.
fn log(caller: &Caller<'_, ThreadData>, activity: Activity) {
    let me = analysis_imports::thread(caller);
    analysis_imports::with_analysis(caller, |log: &mut ActivityLog, _| log.push(me, activity));
}

async fn gen_call(caller: &mut Caller<'_, ThreadData>, method: i32, args: [i64; 4]) -> Result<i64> {
    let name = analysis_imports::with_analysis(caller, |calls: &mut ClassCalls, _| {
        calls.methods.get(method as u32 as usize).cloned()
    })
    .flatten();
    let Some(name) = name else {
        return Err(wasmtime::Error::msg(format!(
            "weft.gen_call: no method numbered {method} in this run"
        )));
    };
    let Some(Extern::Func(func)) = caller.get_export(&name) else {
        return Err(wasmtime::Error::msg(format!(
            "weft.gen_call: the module exports no function `{name}`"
        )));
    };
    let ty = func.ty(&*caller);
    let params: Vec<Val> = ty
        .params()
        .zip(args)
        .map(|(t, a)| match t {
            ValType::I64 => Val::I64(a),
            _ => Val::I32(a as i32),
        })
        .collect();
    let mut results = vec![Val::I64(0); ty.results().len()];
    let number = method as u32;
    log(caller, Activity::GenEnter(number));
    func.call_async(&mut *caller, &params, &mut results).await?;
    log(caller, Activity::GenExit(number));
    Ok(match results.first() {
        Some(Val::I32(v)) => *v as i64,
        Some(Val::I64(v)) => *v,
        _ => 0,
    })
}

/// `weft.gen_call`.
pub(crate) const IMPORTS: Imports = Imports {
    functions: &[abi::GEN_CALL],
    link: add_to_linker,
};

/// Adds `weft.gen_call` to `linker`.
fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
    linker.func_wrap_async(
        abi::SDK_MODULE,
        abi::GEN_CALL.name,
        |mut caller, (method, a0, a1, a2, a3): (i32, i64, i64, i64, i64)| {
            Box::new(async move { gen_call(&mut caller, method, [a0, a1, a2, a3]).await })
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::ClassCalls;
    use crate::runtime::{Outcome, RunConfig};
    use crate::sched::RandomScheduler;

    #[test]
    fn calls_the_export_on_the_calling_instance() {
        let wasm = wat::parse_str(
            r#"(module
              (import "weft" "gen_call" (func $call (param i32 i64 i64 i64 i64) (result i64)))
              (memory (export "memory") 1 1 shared)
              (func (export "add") (param $h i32) (param $x i32) (result i32)
                (i32.add (local.get $h) (local.get $x)))
              (func (export "_start")
                (if (i64.ne (call $call (i32.const 0) (i64.const 40) (i64.const 2) (i64.const 0) (i64.const 0))
                            (i64.const 42))
                  (then unreachable))))"#,
        )
        .unwrap();
        let mut program = crate::execution::load(&wasm, Default::default()).unwrap();
        let result = program.execute_with(
            Box::new(RandomScheduler::new(0)),
            &RunConfig::default(),
            &|| vec![Box::new(ClassCalls::new(vec!["add".into()]))],
        );
        assert_eq!(result.outcome, Outcome::Exited(0));
        let result = program.execute(Box::new(RandomScheduler::new(0)), &RunConfig::default());
        assert!(
            matches!(
                &result.outcome,
                Outcome::Trap { .. } | Outcome::HostError(_)
            ),
            "{:?}",
            result.outcome
        );
    }
}
