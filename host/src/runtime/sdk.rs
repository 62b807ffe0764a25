//! The `weft` imports guest SDKs call (see `guest-sdk/ABI.md`).

use super::activity::Activity;
use super::outcome::Outcome;
use super::state::ThreadState;
use super::{ThreadData, hooks, memory};
use crate::abi;
use crate::imunit::monitor::START;
use crate::trace::EventKind;
use wasmtime::{Caller, Linker, Result};

/// Longest name or message the SDK calls accept, in bytes.
const MAX_TEXT: u32 = 4096;

fn text(caller: &mut Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<String> {
    let len = (len as u32).min(MAX_TEXT);
    let bytes = memory::read(caller, ptr as u32 as u64, len as u64)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The execution already ended; unwinds the calling thread.
#[derive(Debug)]
pub(crate) struct Ended;

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the execution ended")
    }
}

impl std::error::Error for Ended {}

async fn event(caller: &mut Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<()> {
    let name = text(caller, ptr, len)?;
    fire(caller, name).await
}

/// The thread takes its name; under a schedule that is its implicit
/// `start` event.
async fn thread_name(caller: &mut Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<()> {
    let name = text(caller, ptr, len)?;
    let me = caller.data().tid;
    let first = {
        let mut exec = caller.data().exec.get();
        let first = me != 0 && exec.threads[me as usize].name.is_none();
        exec.threads[me as usize].name = Some(name);
        first && exec.monitor.is_some()
    };
    if first {
        fire(caller, START.to_string()).await?;
    }
    Ok(())
}

/// The thread performs event `name`: checked (passive mode) or held until
/// its orderings hold (active mode), then recorded.
async fn fire(caller: &mut Caller<'_, ThreadData>, name: String) -> Result<()> {
    let me = caller.data().tid;
    // Under an enforced schedule the event waits until its orderings hold.
    let must_wait = {
        let mut exec = caller.data().exec.get();
        if exec.monitor.is_some() && exec.passive {
            exec.threads[me as usize].held_at = Some(name.clone());
            let violated = exec.held_unmet(me);
            exec.threads[me as usize].held_at = None;
            if !violated.is_empty() {
                exec.finish(Outcome::ScheduleViolation {
                    thread: me,
                    event: name,
                    violated,
                });
                return Err(wasmtime::Error::new(Ended));
            }
        }
        let waits = exec.monitor.is_some() && !exec.passive && {
            exec.threads[me as usize].held_at = Some(name.clone());
            !exec.held_unmet(me).is_empty()
        };
        if waits {
            exec.set_state(me, ThreadState::Held);
        } else {
            exec.threads[me as usize].held_at = None;
        }
        waits
    };
    if must_wait {
        hooks::yield_point(caller).await;
        caller.data().exec.get().threads[me as usize].held_at = None;
    }
    {
        let mut exec = caller.data().exec.get();
        let label = exec.label(&name);
        exec.record(me, EventKind::Label { label }, 0, None);
        if name != START {
            exec.log(me, Activity::Event(name.clone()));
        }
        if !exec.monitor_event(me, &name) {
            return Err(wasmtime::Error::new(Ended));
        }
    }
    hooks::yield_point(caller).await;
    Ok(())
}

fn assert(mut caller: Caller<'_, ThreadData>, cond: i32, ptr: i32, len: i32) -> Result<()> {
    if cond != 0 {
        return Ok(());
    }
    let message = text(&mut caller, ptr, len)?;
    let me = caller.data().tid;
    caller.data().exec.get().finish(Outcome::Assertion {
        thread: me,
        message,
    });
    Err(wasmtime::Error::new(Ended))
}

fn choose(caller: Caller<'_, ThreadData>, bound: i64) -> Result<i64> {
    match caller.data().exec.get().choose_value(bound as u64) {
        Some(value) => Ok(value as i64),
        None => Err(wasmtime::Error::new(Ended)),
    }
}

fn assume(caller: Caller<'_, ThreadData>, cond: i32) -> Result<()> {
    if cond != 0 {
        return Ok(());
    }
    let me = caller.data().tid;
    caller
        .data()
        .exec
        .get()
        .finish(Outcome::Discarded { thread: me });
    Err(wasmtime::Error::new(Ended))
}

fn atomic_begin(caller: Caller<'_, ThreadData>) {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    // Points inside the section are not decisions: end any run of
    // decisions the scheduler committed to.
    exec.drain_points(me);
    let depth = &mut exec.threads[me as usize].atomic_depth;
    *depth = depth.saturating_add(1);
}

fn atomic_end(caller: Caller<'_, ThreadData>) {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let depth = &mut exec.threads[me as usize].atomic_depth;
    *depth = depth.saturating_sub(1);
}

fn atomic_set(
    mut caller: Caller<'_, ThreadData>,
    name_ptr: i32,
    name_len: i32,
    ptr: i32,
    len: i32,
) -> Result<()> {
    let name = text(&mut caller, name_ptr, name_len)?;
    if let Some(sets) = caller.data().exec.get().sets.as_mut() {
        sets.register(name, ptr as u32, len as u32);
    }
    Ok(())
}

fn unit_begin(mut caller: Caller<'_, ThreadData>, name_ptr: i32, name_len: i32) -> Result<()> {
    let name = text(&mut caller, name_ptr, name_len)?;
    let me = caller.data().tid;
    if let Some(sets) = caller.data().exec.get().sets.as_mut() {
        sets.unit_begin(me, name);
    }
    Ok(())
}

fn unit_end(caller: Caller<'_, ThreadData>) {
    let me = caller.data().tid;
    if let Some(sets) = caller.data().exec.get().sets.as_mut() {
        sets.unit_end(me);
    }
}

/// Adds the `weft` SDK imports to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
    linker.func_wrap_async(
        abi::SDK_MODULE,
        abi::EVENT.name,
        |mut caller, (ptr, len): (i32, i32)| {
            Box::new(async move { event(&mut caller, ptr, len).await })
        },
    )?;
    linker.func_wrap_async(
        abi::SDK_MODULE,
        abi::THREAD_NAME.name,
        |mut caller, (ptr, len): (i32, i32)| {
            Box::new(async move { thread_name(&mut caller, ptr, len).await })
        },
    )?;
    linker.func_wrap(abi::SDK_MODULE, abi::ASSERT.name, assert)?;
    linker.func_wrap(abi::SDK_MODULE, abi::CHOOSE.name, choose)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ASSUME.name, assume)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ATOMIC_BEGIN.name, atomic_begin)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ATOMIC_END.name, atomic_end)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ATOMIC_SET.name, atomic_set)?;
    linker.func_wrap(abi::SDK_MODULE, abi::UNIT_BEGIN.name, unit_begin)?;
    linker.func_wrap(abi::SDK_MODULE, abi::UNIT_END.name, unit_end)?;
    // The same behaviour, for calls that instrumentation inserts.
    linker.func_wrap(abi::RT_MODULE, abi::RT_ATOMIC_BEGIN.name, atomic_begin)?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_ATOMIC_END.name, atomic_end)?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_ASSUME.name, assume)?;
    Ok(())
}
