//! The `weft` imports guest SDKs call (see `guest-sdk/ABI.md`).

use super::analysis::Happening;
use super::outcome::Outcome;
use super::signal_imports::deliver_signals;
use super::state::ExecState;
use super::thread::ThreadState;
use super::{ThreadData, memory_access, rt_imports};
use crate::abi;
use crate::trace::{EventKind, ThreadId};
use wasmtime::{Caller, Linker, Result};

/// Longest name or message the SDK calls accept, in bytes.
const MAX_TEXT: u32 = 4096;

/// The text of `len` bytes at `ptr` (at most [`MAX_TEXT`]), invalid UTF-8
/// replaced.
pub(crate) fn text(caller: &mut Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<String> {
    let len = (len as u32).min(MAX_TEXT);
    let bytes = memory_access::read(caller, ptr as u32 as u64, len as u64)?;
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
    fire(caller, &name, false).await
}

/// The thread takes its name; the first time, it performs the start event
/// an analysis may ask for.
async fn thread_name(caller: &mut Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<()> {
    let name = text(caller, ptr, len)?;
    let me = caller.data().tid;
    let start = {
        let mut exec = caller.data().exec.get();
        let first = me != 0 && exec.threads[me as usize].name.is_none();
        exec.threads[me as usize].name = Some(name);
        if first { exec.start_event() } else { None }
    };
    if let Some(start) = start {
        fire(caller, start, true).await?;
    }
    Ok(())
}

/// The thread performs event `name` (`implicit`: one an analysis asked
/// for): held first while an analysis holds it, then recorded.
async fn fire(caller: &mut Caller<'_, ThreadData>, name: &str, implicit: bool) -> Result<()> {
    let me = caller.data().tid;
    deliver_signals(caller).await?;
    let must_wait = {
        let mut exec = caller.data().exec.get();
        let hold = exec.holds_before_event(me, name);
        if exec.end.is_some() {
            return Err(wasmtime::Error::new(Ended));
        }
        if hold {
            exec.set_state(me, ThreadState::Held);
        }
        hold
    };
    if must_wait {
        rt_imports::yield_point(caller).await?;
    }
    {
        let mut exec = caller.data().exec.get();
        exec.record_label(me, name, 0);
        exec.happened(me, Happening::Event { name, implicit });
        if exec.end.is_some() {
            return Err(wasmtime::Error::new(Ended));
        }
    }
    rt_imports::yield_point(caller).await?;
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

/// A spawned thread called `pthread_exit`: unwinds its stack up to its
/// entry call, after which the executor finishes the thread through
/// [`abi::THREAD_RESUME_EXPORT`].
#[derive(Debug)]
pub(crate) struct ThreadExit;

impl std::fmt::Display for ThreadExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the thread called pthread_exit")
    }
}

impl std::error::Error for ThreadExit {}

/// `weft.thread_exit(value)`: see [`abi::THREAD_EXIT`].
async fn thread_exit(caller: &mut Caller<'_, ThreadData>, value: i32) -> Result<()> {
    let me = caller.data().tid;
    deliver_signals(caller).await?;
    if me != 0 {
        let resumable = caller.get_export(abi::THREAD_RESUME_EXPORT).is_some();
        let mut exec = caller.data().exec.get();
        if !resumable {
            exec.finish(Outcome::HostError(format!(
                "thread {me} called pthread_exit, which needs wasi-libc's `{}` in the \
                 module's name section; this module does not name it",
                abi::THREAD_START_C
            )));
            return Err(wasmtime::Error::new(Ended));
        }
        exec.drain_points(me);
        exec.threads[me as usize].exit_value = Some(value as u32);
        return Err(wasmtime::Error::new(ThreadExit));
    }
    {
        let mut exec = caller.data().exec.get();
        exec.record(me, EventKind::Outlive, 0, None);
        exec.set_state(me, ThreadState::Outliving);
        exec.happened(me, Happening::BlockBegin);
    }
    rt_imports::yield_point(caller).await?;
    let mut exec = caller.data().exec.get();
    if exec.end.is_some() {
        return Err(wasmtime::Error::new(Ended));
    }
    for exited in 1..exec.threads.len() as ThreadId {
        exec.happened(me, Happening::Outlived { exited });
    }
    exec.happened(me, Happening::BlockEnd);
    Ok(())
}

/// `weft_rt.reach_error`: the program called `reach_error()`.
fn reach_error(caller: Caller<'_, ThreadData>) -> Result<()> {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    exec.happened(me, Happening::ReachedError);
    end_if_ended(&exec)
}

/// `weft_rt.abort`: the program called `abort()`; under a property the
/// path ends there.
fn abort(caller: Caller<'_, ThreadData>) -> Result<()> {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    exec.happened(me, Happening::Aborted);
    end_if_ended(&exec)
}

/// Unwinds the calling thread if an analysis ended the execution.
fn end_if_ended(exec: &ExecState) -> Result<()> {
    match exec.end {
        Some(_) => Err(wasmtime::Error::new(Ended)),
        None => Ok(()),
    }
}

/// Where every outermost atomic section starts, for the schedulers: a
/// notify of this address, which conflicts with every other section's
/// start, so that searches order sections against each other (the
/// accesses inside are not scheduling points).
pub(crate) const ATOMIC_SECTIONS: crate::sched::NextOp = crate::sched::NextOp {
    kind: crate::instrument::AccessKind::Notify,
    addr: u32::MAX - 3,
    len: 4,
    src: 0,
    site: u32::MAX,
};

async fn atomic_begin(caller: &mut Caller<'_, ThreadData>) -> Result<()> {
    let me = caller.data().tid;
    let outermost = caller.data().exec.get().threads[me as usize].atomic_depth == 0;
    if outermost {
        deliver_signals(caller).await?;
        {
            let mut exec = caller.data().exec.get();
            exec.record(me, EventKind::SectionBegin, 0, None);
            exec.stand_at(me, ATOMIC_SECTIONS);
        }
        rt_imports::yield_point(caller).await?;
    }
    let mut exec = caller.data().exec.get();
    if exec.end.is_some() {
        return Err(wasmtime::Error::new(Ended));
    }
    // Points inside the section are not decisions: end any run of
    // decisions the scheduler committed to.
    exec.drain_points(me);
    let depth = &mut exec.threads[me as usize].atomic_depth;
    *depth = depth.saturating_add(1);
    if *depth == 1 {
        exec.atomic_sections = true;
        exec.happened(me, Happening::AtomicBegin);
    }
    Ok(())
}

fn atomic_end(caller: Caller<'_, ThreadData>) {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let depth = &mut exec.threads[me as usize].atomic_depth;
    let outermost = *depth == 1;
    *depth = depth.saturating_sub(1);
    if outermost {
        exec.happened(me, Happening::AtomicEnd);
    }
}

/// The operation a thread stands at when it calls a library function that
/// is one step: a call, which commutes with everything by itself (what the
/// step does inside the library decides what it depends on).
fn library_call(function: u32, argument: u32) -> crate::sched::NextOp {
    crate::sched::NextOp {
        kind: crate::instrument::AccessKind::Call,
        addr: function,
        len: 0,
        src: argument,
        site: u32::MAX,
    }
}

/// `weft_rt.library_begin(function, argument)`: the thread calls a library
/// function that is one step, with `argument` first (see
/// [`abi::RT_LIBRARY_BEGIN`]). Outside any other step of the kind (and any atomic
/// section), the call is a scheduling point, after which the thread goes
/// on inside the library without another thread running first, unless it
/// blocks.
async fn library_begin(
    caller: &mut Caller<'_, ThreadData>,
    function: i32,
    argument: i32,
) -> Result<()> {
    let me = caller.data().tid;
    let depth = caller.data().exec.get().threads[me as usize].library_depth;
    let call = library_call(function as u32, argument as u32);
    library_step_resumes(caller, call, depth.saturating_add(1), depth == 0).await
}

/// `weft_rt.library_enter(function, argument)`: the thread calls a library
/// function that is one step but no scheduling point (see
/// [`abi::RT_LIBRARY_ENTER`]): outside any other step (and any atomic
/// section), the step starts here without a decision. A signal due to the
/// thread is delivered first, as at every other call: a thread whose only
/// calls allocate (a loop over a list it grows and shrinks) takes its
/// signals there.
async fn library_enter(caller: &mut Caller<'_, ThreadData>) -> Result<()> {
    let me = caller.data().tid;
    deliver_signals(caller).await?;
    enter_quiet_step(&mut caller.data().exec.get(), me);
    Ok(())
}

/// `weft_rt.library_begin_quick()`: the entry of a library step that is a
/// scheduling point when outermost (see [`abi::RT_LIBRARY_BEGIN_QUICK`]).
/// Nested in another step or inside an atomic section, the step begins
/// here as [`library_begin`] would begin it, and the answer is 0; else the
/// answer is 1 and the guest calls [`library_begin`].
fn library_begin_quick(caller: Caller<'_, ThreadData>) -> Result<i32> {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let thread = &exec.threads[me as usize];
    let depth = thread.library_depth;
    if depth == 0 && thread.atomic_depth == 0 {
        return Ok(1);
    }
    goes_on_in_library(&mut exec, me, depth.saturating_add(1), depth == 0)?;
    Ok(0)
}

/// `weft_rt.library_enter_quick()`: the entry of a library step that is no
/// scheduling point (see [`abi::RT_LIBRARY_ENTER_QUICK`]). With no signal
/// due to the thread, the step begins here as [`library_enter`] would
/// begin it, and the answer is 0; else the answer is 1 and the guest calls
/// [`library_enter`], which delivers the signal first.
fn library_enter_quick(caller: Caller<'_, ThreadData>) -> Result<i32> {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    if exec.end.is_none() && exec.signal_due(me) {
        return Ok(1);
    }
    enter_quiet_step(&mut exec, me);
    Ok(0)
}

/// Thread `me` enters a library function that is a step but no scheduling
/// point, its signals delivered: a step of its own outside any other step
/// and atomic section, else part of the one it is in.
fn enter_quiet_step(exec: &mut ExecState, me: ThreadId) {
    let thread = &mut exec.threads[me as usize];
    if thread.library_depth == 0 && thread.atomic_depth == 0 {
        exec.library_step_starts(me, 1);
    } else {
        thread.library_depth = thread.library_depth.saturating_add(1);
    }
}

/// `weft_rt.library_end()`: the library function returns.
fn library_end(caller: Caller<'_, ThreadData>) {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    if exec.threads[me as usize].library_depth == 1 {
        // The step ends: the points it passed inside wasm are recorded,
        // and what is left of its budget is taken back (the program's
        // points are decisions again).
        exec.drain_points(me);
    }
    let depth = &mut exec.threads[me as usize].library_depth;
    *depth = depth.saturating_sub(1);
}

/// `weft_rt.library_pause()`: a library function calls through a function
/// pointer; the library step ends until [`library_resume`].
fn library_pause(caller: Caller<'_, ThreadData>) {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    // The step ends until the library resumes (see `library_end`).
    let depth = exec.library_step_pauses(me);
    let thread = &mut exec.threads[me as usize];
    thread.paused_library_depths.push(depth);
    // The library calls code that may be the program's: a new thread's
    // routine, once its stack is set up.
    thread.signals.runs_own_code = true;
}

/// `weft_rt.library_resume(function)`: the call through a function pointer
/// returned to library function `function`, which goes on as a new step.
async fn library_resume(caller: &mut Caller<'_, ThreadData>, function: i32) -> Result<()> {
    let me = caller.data().tid;
    let depth = {
        let mut exec = caller.data().exec.get();
        let thread = &mut exec.threads[me as usize];
        thread.paused_library_depths.pop().unwrap_or_default()
    };
    library_step_resumes(caller, library_call(function as u32, 0), depth, depth > 0).await
}

/// `weft_rt.library_resume_quiet(function)`: the call through a function
/// pointer returned to library function `function`, a step that is no
/// scheduling point, which goes on as a new step without one.
fn library_resume_quiet(caller: Caller<'_, ThreadData>, _function: i32) -> Result<()> {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let thread = &mut exec.threads[me as usize];
    let depth = thread.paused_library_depths.pop().unwrap_or_default();
    goes_on_in_library(&mut exec, me, depth, depth > 0)
}

/// The thread goes on at library depth `depth` with the call `call`, a
/// library step that starts there when `starts`: outside an atomic
/// section that is a scheduling point, and the step counts its points from
/// there.
async fn library_step_resumes(
    caller: &mut Caller<'_, ThreadData>,
    call: crate::sched::NextOp,
    depth: u32,
    starts: bool,
) -> Result<()> {
    let me = caller.data().tid;
    let in_section = caller.data().exec.get().threads[me as usize].atomic_depth > 0;
    if starts && !in_section {
        // Signals due are delivered before the call (see `signal_imports`).
        deliver_signals(caller).await?;
        {
            let mut exec = caller.data().exec.get();
            let function = call.addr;
            exec.record(me, EventKind::LibraryCall { function }, 0, None);
            exec.stand_at(me, call);
        }
        rt_imports::yield_point(caller).await?;
    }
    goes_on_in_library(&mut caller.data().exec.get(), me, depth, starts)
}

/// Thread `me`, past any scheduling point of its call, goes on at library
/// depth `depth`, a library step that starts there when `starts`; fails
/// (with [`Ended`]) once the execution has ended.
fn goes_on_in_library(exec: &mut ExecState, me: ThreadId, depth: u32, starts: bool) -> Result<()> {
    if exec.end.is_some() {
        return Err(wasmtime::Error::new(Ended));
    }
    if starts {
        exec.library_step_starts(me, depth);
    } else {
        exec.threads[me as usize].library_depth = depth;
    }
    Ok(())
}

/// The `weft` SDK imports the runtime provides itself; analyses link the
/// others.
pub(crate) const IMPORTS: [abi::Signature; 8] = [
    abi::EVENT,
    abi::THREAD_EXIT,
    abi::THREAD_NAME,
    abi::ASSERT,
    abi::CHOOSE,
    abi::ASSUME,
    abi::ATOMIC_BEGIN,
    abi::ATOMIC_END,
];

/// Adds the `weft` SDK imports of [`IMPORTS`] to `linker`.
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
    linker.func_wrap_async(
        abi::SDK_MODULE,
        abi::THREAD_EXIT.name,
        |mut caller, (value,): (i32,)| {
            Box::new(async move { thread_exit(&mut caller, value).await })
        },
    )?;
    linker.func_wrap(abi::SDK_MODULE, abi::ASSERT.name, assert)?;
    linker.func_wrap(abi::SDK_MODULE, abi::CHOOSE.name, choose)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ASSUME.name, assume)?;
    linker.func_wrap_async(
        abi::SDK_MODULE,
        abi::ATOMIC_BEGIN.name,
        |mut caller, (): ()| Box::new(async move { atomic_begin(&mut caller).await }),
    )?;
    linker.func_wrap(abi::SDK_MODULE, abi::ATOMIC_END.name, atomic_end)?;
    // The same behaviour, for calls that instrumentation inserts.
    linker.func_wrap_async(
        abi::RT_MODULE,
        abi::RT_ATOMIC_BEGIN.name,
        |mut caller, (): ()| Box::new(async move { atomic_begin(&mut caller).await }),
    )?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_ATOMIC_END.name, atomic_end)?;
    linker.func_wrap_async(
        abi::RT_MODULE,
        abi::RT_LIBRARY_BEGIN.name,
        |mut caller, (function, argument): (i32, i32)| {
            Box::new(async move { library_begin(&mut caller, function, argument).await })
        },
    )?;
    linker.func_wrap_async(
        abi::RT_MODULE,
        abi::RT_LIBRARY_ENTER.name,
        |mut caller, (_function, _argument): (i32, i32)| {
            Box::new(async move { library_enter(&mut caller).await })
        },
    )?;
    linker.func_wrap(
        abi::RT_MODULE,
        abi::RT_LIBRARY_BEGIN_QUICK.name,
        library_begin_quick,
    )?;
    linker.func_wrap(
        abi::RT_MODULE,
        abi::RT_LIBRARY_ENTER_QUICK.name,
        library_enter_quick,
    )?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_LIBRARY_END.name, library_end)?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_LIBRARY_PAUSE.name, library_pause)?;
    linker.func_wrap_async(
        abi::RT_MODULE,
        abi::RT_LIBRARY_RESUME.name,
        |mut caller, (function,): (i32,)| {
            Box::new(async move { library_resume(&mut caller, function).await })
        },
    )?;
    linker.func_wrap(
        abi::RT_MODULE,
        abi::RT_LIBRARY_RESUME_QUIET.name,
        library_resume_quiet,
    )?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_ASSUME.name, assume)?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_REACH_ERROR.name, reach_error)?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_ABORT.name, abort)?;
    Ok(())
}
