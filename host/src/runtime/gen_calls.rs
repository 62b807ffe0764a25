//! `weft.gen_call`: a generated concurrent test's driver (in the guest SDK)
//! asks weft to call one of the class's exported methods; weft calls the
//! export on the calling thread's own instance, so the method runs on that
//! guest thread with its stack.

use super::ThreadData;
use super::activity::Activity;
use crate::abi;
use wasmtime::{Caller, Extern, Linker, Result, Val, ValType};

async fn gen_call(caller: &mut Caller<'_, ThreadData>, method: i32, args: [i64; 4]) -> Result<i64> {
    let name = {
        let exec = caller.data().exec.get();
        exec.gen_methods.get(method as u32 as usize).cloned()
    };
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
    let me = caller.data().tid;
    let number = method as u32;
    caller.data().exec.get().log(me, Activity::GenEnter(number));
    func.call_async(&mut *caller, &params, &mut results).await?;
    caller.data().exec.get().log(me, Activity::GenExit(number));
    Ok(match results.first() {
        Some(Val::I32(v)) => *v as i64,
        Some(Val::I64(v)) => *v,
        _ => 0,
    })
}

/// Adds `weft.gen_call` to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
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
    use crate::runtime::{Outcome, Program, RunConfig};
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
        let mut program = Program::load(&wasm, Default::default()).unwrap();
        let run = RunConfig {
            gen_methods: vec!["add".into()],
            ..Default::default()
        };
        let (result, _) = program.execute(Box::new(RandomScheduler::new(0)), &run);
        assert_eq!(result.outcome, Outcome::Exited(0));
        let (result, _) = program.execute(Box::new(RandomScheduler::new(0)), &RunConfig::default());
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
