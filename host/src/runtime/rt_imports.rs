//! The `weft_rt` imports that instrumentation inserts, and `thread-spawn`.
//!
//! `point` is synchronous and cheap: it records the access and asks the
//! scheduler; only when another thread must run does the guest call `park`,
//! the one import that suspends its fiber. wait and notify are asynchronous
//! imports that park by themselves.

use super::analysis::{Access, Happening, Interest};
use super::looping::CompleteStates;
use super::sdk_imports::Ended;
use super::shared_memory::GuestMemory;
use super::signal_imports::{deliver_signals, deliver_signals_at_wait};
use super::state::{ExecHandle, ExecState};
use super::thread::ThreadState;
use super::{ThreadData, memory_access};
use crate::abi;
use crate::instrument::{AccessKind, Site};
use crate::sched::NextOp;
use crate::trace::EventKind;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use wasmtime::{Caller, Linker};
use wasmtime::{Result, bail};

/// A future that is pending exactly once: awaiting it suspends the calling
/// guest thread until the executor polls that thread again.
#[derive(Default)]
pub(crate) struct Park {
    polled: bool,
}

impl Future for Park {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.polled {
            Poll::Ready(())
        } else {
            self.polled = true;
            Poll::Pending
        }
    }
}

/// Suspends the calling thread; the scheduler has already chosen who runs.
/// Fails (with [`Ended`]) once the executor unwinds the threads of an
/// execution that ended (see [`ExecState::unwinding`]), so that the
/// thread's wasm returns and its instance can run a thread of the next
/// execution.
pub(crate) async fn park(exec: ExecHandle) -> Result<()> {
    let unwound = || wasmtime::Error::new(Ended);
    if exec.get().unwinding {
        return Err(unwound());
    }
    exec.get().parked = true;
    Park { polled: false }.await;
    if exec.get().unwinding {
        return Err(unwound());
    }
    Ok(())
}

/// A scheduling point inside an asynchronous import: asks the scheduler and
/// parks if another thread was chosen. (The import delivered the signals
/// due to the thread before it recorded its event: an import is where a
/// native thread would have entered the kernel at the latest, see
/// [`super::signal_imports`].) A signal sent to the thread while it was
/// parked is delivered as it goes on, before what it stood at.
pub(crate) async fn yield_point(caller: &mut Caller<'_, ThreadData>) -> Result<()> {
    super::frames::note(caller);
    let me = caller.data().tid;
    let exec = caller.data().exec.clone();
    let must_park = {
        let mut state = exec.get();
        state.point_reached(me);
        state.schedule(me)
    };
    if must_park {
        super::frames::note_parking(caller);
        park(exec).await?;
        deliver_signals(caller).await?;
    }
    Ok(())
}

/// The effective address of a wait or notify at `site` (cut to 32 bits for
/// bookkeeping, and whole), and its width.
fn effective(caller: &Caller<'_, ThreadData>, addr: i32, site: i32) -> Result<(u32, u64, u8)> {
    let site_info = site_of(&caller.data().exec.get(), site)?;
    Ok((
        site_info.address(addr),
        site_info.full_address(addr),
        site_info.width,
    ))
}

/// The site an instrumented call names.
fn site_of(exec: &ExecState, site: i32) -> Result<Site> {
    match exec.sites.get(site as u32) {
        Some(site_info) => Ok(*site_info),
        None => bail!("instrumentation error: unknown site {site}"),
    }
}

fn point(mut caller: Caller<'_, ThreadData>, addr: i32, site: i32) -> Result<i32> {
    super::frames::note(&mut caller);
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let site_info = site_of(&exec, site)?;
    let addr = site_info.address(addr);
    let access = Access {
        site: site as u32,
        kind: site_info.kind,
        width: site_info.width,
        addr,
        len: site_info.width as u32,
        src: 0,
    };
    reached_access(&mut exec, me, &access)
}

/// `weft_rt.bulk`: `memory.copy` or `memory.fill` is about to run.
fn bulk(
    mut caller: Caller<'_, ThreadData>,
    dst: i32,
    src: i32,
    len: i32,
    site: i32,
) -> Result<i32> {
    super::frames::note(&mut caller);
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let site_info = site_of(&exec, site)?;
    let access = Access {
        site: site as u32,
        kind: site_info.kind,
        width: 0,
        addr: dst as u32,
        len: len as u32,
        src: src as u32,
    };
    reached_access(&mut exec, me, &access)
}

/// Thread `me` reached the scheduling point of `access`: the analyses see
/// it, and unless they all ignore it, it is recorded and scheduled.
/// Returns whether the thread must park.
fn reached_access(
    exec: &mut ExecState,
    me: crate::trace::ThreadId,
    access: &Access,
) -> Result<i32> {
    // A signal due to the thread may be delivered here, before the access:
    // `park` runs its handler, then comes back to the access.
    if exec.signal_due(me) && exec.choose_value(2) != Some(0) {
        exec.threads[me as usize].signals.interrupted_at = Some(*access);
        return Ok(1);
    }
    // Comparing complete states, every access is a scheduling point: its
    // call is where the thread's frames are read.
    if exec.access(me, access) == Interest::Ignore
        && exec.limit_watch.complete_states != CompleteStates::On
    {
        return Ok(0);
    }
    exec.record_access(me, access.kind, access.addr, access.site);
    exec.stand_at(me, access.next_op());
    exec.happened(me, Happening::Reached(access.site));
    Ok(exec.schedule(me) as i32)
}

/// `weft_rt.park`: the thread parks if the scheduler chose another thread;
/// or, at an access where a signal is delivered (see [`reached_access`]),
/// the signal's handler runs and the thread comes back to the access.
async fn park_import(caller: &mut Caller<'_, ThreadData>) -> Result<()> {
    super::frames::note(caller);
    super::frames::note_parking(caller);
    let me = caller.data().tid;
    let interrupted = caller.data().exec.get().threads[me as usize]
        .signals
        .interrupted_at
        .take();
    if let Some(access) = interrupted {
        deliver_signals(caller).await?;
        let must_park = reached_access(&mut caller.data().exec.get(), me, &access)?;
        if must_park == 0 {
            return Ok(());
        }
        if caller.data().exec.get().threads[me as usize]
            .signals
            .interrupted_at
            .is_some()
        {
            // Another signal is delivered at the same access.
            return Box::pin(park_import(caller)).await;
        }
    }
    park(caller.data().exec.clone()).await?;
    // Sent while the thread was parked: delivered as it goes on.
    deliver_signals(caller).await?;
    Ok(())
}

/// A wait or notify on the futex at `addr`, as the scheduler sees it.
fn futex_op(kind: AccessKind, addr: u32, site: u32) -> NextOp {
    NextOp {
        kind,
        addr,
        len: 4,
        src: 0,
        site,
    }
}

/// Traps as the engine would on a wait or notify of `width` bytes at the
/// effective address `full` (base plus offset, not wrapped): unaligned
/// first, then out of bounds.
fn check_futex_address(
    caller: &Caller<'_, ThreadData>,
    full: u64,
    width: u8,
    what: &str,
) -> Result<()> {
    if !full.is_multiple_of(width as u64) {
        bail!("unaligned atomic: {what} on address {full:#x}");
    }
    let shared = shared_memory(caller, what)?;
    if full + width as u64 > shared.visible_bytes() as u64 {
        bail!("out of bounds memory access: {what} on address {full:#x}");
    }
    Ok(())
}

async fn wait(
    caller: &mut Caller<'_, ThreadData>,
    addr: i32,
    expected: i64,
    timeout: i64,
    site: i32,
) -> Result<i32> {
    let me = caller.data().tid;
    deliver_signals_at_wait(caller).await?;
    let (eff, full, width) = effective(caller, addr, site)?;
    {
        let mut exec = caller.data().exec.get();
        exec.record(
            me,
            EventKind::Access(AccessKind::Wait),
            eff,
            Some(site as u32),
        );
        exec.stand_at(me, futex_op(AccessKind::Wait, eff, site as u32));
        exec.happened(me, Happening::Reached(site as u32));
    }
    yield_point(caller).await?;
    check_futex_address(caller, full, width, "wait")?;
    let bytes = memory_access::read(caller, eff as u64, width as u64)?;
    let value = if width == 4 {
        u32::from_le_bytes(bytes.try_into().expect("4 bytes")) as i32 as i64
    } else {
        i64::from_le_bytes(bytes.try_into().expect("8 bytes"))
    };
    if value != expected {
        return Ok(1);
    }
    let must_park = {
        let mut exec = caller.data().exec.get();
        if timeout >= 0 {
            exec.touched_clock();
        }
        let deadline = (timeout >= 0).then(|| exec.clock_ns.saturating_add(timeout as u64));
        exec.block(me, eff, deadline, Some(site as u32));
        exec.record(me, EventKind::Block, eff, Some(site as u32));
        exec.happened(me, Happening::BlockBegin);
        exec.schedule(me)
    };
    if must_park {
        super::frames::note_parking(caller);
        park(caller.data().exec.clone()).await?;
    }
    let woke = {
        let mut exec = caller.data().exec.get();
        exec.happened(me, Happening::BlockEnd);
        exec.threads[me as usize].wake.take().unwrap_or(0)
    };
    // A signal that woke the wait is delivered as it wakes.
    deliver_signals_at_wait(caller).await?;
    Ok(woke)
}

async fn notify(
    caller: &mut Caller<'_, ThreadData>,
    addr: i32,
    count: i32,
    site: i32,
) -> Result<i32> {
    let me = caller.data().tid;
    deliver_signals(caller).await?;
    let (eff, full, _) = effective(caller, addr, site)?;
    {
        let mut exec = caller.data().exec.get();
        exec.record(
            me,
            EventKind::Access(AccessKind::Notify),
            eff,
            Some(site as u32),
        );
        exec.stand_at(me, futex_op(AccessKind::Notify, eff, site as u32));
        exec.happened(me, Happening::Reached(site as u32));
    }
    yield_point(caller).await?;
    check_futex_address(caller, full, 4, "notify")?;
    Ok(caller.data().exec.get().notify(me, eff, count as u32) as i32)
}

/// The shared memory behind an import that instrumentation inserts only in
/// modules with one.
fn shared_memory<'a>(caller: &'a Caller<'_, ThreadData>, import: &str) -> Result<&'a GuestMemory> {
    match caller.data().shared_memory.as_deref() {
        Some(shared) => Ok(shared),
        None => bail!("instrumentation error: {import} without a shared memory"),
    }
}

fn memory_grow(caller: Caller<'_, ThreadData>, delta: i32) -> Result<i32> {
    let shared = shared_memory(&caller, abi::MEMORY_GROW.name)?;
    let old = shared.size_pages() as u64;
    let new_bytes = (old + delta as u32 as u64) * 65536;
    let mut exec = caller.data().exec.get();
    if new_bytes > exec.limits.max_memory_bytes {
        exec.memory_refused();
        return Ok(-1);
    }
    drop(exec);
    match shared.grow(delta as u32 as u64) {
        Some(old) => {
            let mut exec = caller.data().exec.get();
            exec.touched_memory_size();
            exec.memory_resized(shared.visible_bytes());
            Ok(old as i32)
        }
        None => Ok(-1),
    }
}

/// `weft_rt.memory_size`: the shared memory's size in pages as the guest
/// sees it.
fn memory_size(caller: Caller<'_, ThreadData>) -> Result<i32> {
    caller.data().exec.get().touched_memory_size();
    Ok(shared_memory(&caller, abi::MEMORY_SIZE.name)?.size_pages() as i32)
}

/// `weft_rt.bounds`: traps unless `[addr, addr + len)` is inside the shared
/// memory; returns the memory's size in bytes.
fn bounds(caller: Caller<'_, ThreadData>, addr: i32, len: i32) -> Result<()> {
    let size = shared_memory(&caller, abi::BOUNDS.name)?.visible_bytes() as u64;
    if addr as u32 as u64 + len as u32 as u64 > size {
        return Err(wasmtime::Trap::MemoryOutOfBounds.into());
    }
    Ok(())
}

/// `weft_rt.note_read`: a `memory.copy` is about to read `len` bytes at
/// `addr` (see [`abi::READ_MAP`]).
fn note_read(caller: Caller<'_, ThreadData>, addr: i32, len: i32) {
    let start = addr as u32 as usize;
    let end = start.saturating_add(len as u32 as usize);
    caller.data().exec.get().note_read(start..end);
}

/// `weft_rt.log_full`: the thread's access log is full; the analyses read
/// it. Returns whether the thread must park (the execution ended).
fn log_full(caller: Caller<'_, ThreadData>) -> i32 {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    exec.drain_log(me);
    i32::from(exec.end.is_some())
}

/// `weft_rt.library_access`: the program's call of a C library function
/// that touches its memory returned (see [`abi::LIBRARY_ACCESS`]); the
/// analyses hear what it touched. Returns whether the thread must park.
fn library_access(
    caller: Caller<'_, ThreadData>,
    site: i32,
    a0: i32,
    a1: i32,
    a2: i32,
    a3: i32,
    result: i32,
) -> i32 {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let args = [a0, a1, a2, a3].map(|a| a as u32);
    exec.library_accessed(me, site as u32, args, result as u32);
    i32::from(exec.end.is_some())
}

/// `weft_rt.exit_value`: the value the thread passed to `pthread_exit`, as
/// its start routine's result, or -1 when the routine is to be called (see
/// [`abi::EXIT_VALUE`]).
fn exit_value(caller: Caller<'_, ThreadData>) -> i64 {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    exec.threads[me as usize]
        .exit_value
        .take()
        .map_or(-1, i64::from)
}

/// `weft_rt.signature_mismatch`: the guest entered wasm-ld's stub for a
/// call of `function` (its index in the original module) whose signature
/// does not match the definition; the stub would trap.
fn signature_mismatch(_caller: Caller<'_, ThreadData>, function: i32) -> Result<()> {
    Err(wasmtime::Error::new(SignatureMismatch(function as u32)))
}

/// The trap of [`signature_mismatch`]: the stub's function index, named
/// when the execution's outcome is told.
#[derive(Debug)]
pub(crate) struct SignatureMismatch(pub u32);

impl std::fmt::Display for SignatureMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a call whose signature does not match the called function's definition"
        )
    }
}

impl std::error::Error for SignatureMismatch {}

/// `weft_rt.unreachable`: the guest's `unreachable` trap.
fn unreachable(_caller: Caller<'_, ThreadData>) -> Result<()> {
    Err(wasmtime::Trap::UnreachableCodeReached.into())
}

async fn thread_spawn(caller: &mut Caller<'_, ThreadData>, start_arg: i32) -> Result<i32> {
    let me = caller.data().tid;
    let child = {
        let mut exec = caller.data().exec.get();
        if exec.live_threads() as u32 >= exec.limits.max_threads {
            exec.thread_refused();
            return Ok(-1);
        }
        let child = exec.add_thread();
        // A new thread starts with its creator's signal mask (POSIX).
        exec.threads[child as usize].signals.mask = exec.threads[me as usize].signals.mask;
        exec.happened(me, Happening::Spawned { child });
        if exec.log_bitmap.is_some()
            && let Some(points) = &exec.threads[me as usize].points
        {
            points.record();
        }
        exec.spawn_queue.push((child, start_arg));
        if caller.data().live_locals.is_some() {
            exec.threads[child as usize].frames = Some(super::frames::not_started(start_arg));
            exec.threads[child as usize].stack = exec.memory.as_deref().and_then(|memory| {
                super::thread_stacks::spawned_stack(memory.quiet_bytes(), start_arg as u32)
            });
        }
        exec.record(me, EventKind::Spawn { child }, 0, None);
        child
    };
    yield_point(caller).await?;
    Ok(child as i32)
}

/// `sched_yield`: a scheduling point at which the caller prefers others.
pub(crate) async fn sched_yield(caller: &mut Caller<'_, ThreadData>) -> Result<i32> {
    let me = caller.data().tid;
    deliver_signals(caller).await?;
    {
        let mut exec = caller.data().exec.get();
        exec.record(me, EventKind::Yield, 0, None);
        exec.set_state(me, ThreadState::Yielded);
    }
    yield_point(caller).await?;
    Ok(0)
}

/// A logged call or return (see `InstrumentOptions::log_calls`).
fn log_call(caller: &Caller<'_, ThreadData>, what: Happening<'_>) {
    let me = caller.data().tid;
    caller.data().exec.get().happened(me, what);
}

/// Adds the `weft_rt` imports and `wasi.thread-spawn` to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
    linker.func_wrap(abi::RT_MODULE, abi::POINT.name, point)?;
    linker.func_wrap_async(abi::RT_MODULE, abi::PARK.name, |mut caller, (): ()| {
        Box::new(async move { park_import(&mut caller).await })
    })?;
    linker.func_wrap_async(
        abi::RT_MODULE,
        abi::WAIT32.name,
        |mut caller, (addr, expected, timeout, site): (i32, i32, i64, i32)| {
            Box::new(async move { wait(&mut caller, addr, expected as i64, timeout, site).await })
        },
    )?;
    linker.func_wrap_async(
        abi::RT_MODULE,
        abi::WAIT64.name,
        |mut caller, (addr, expected, timeout, site): (i32, i64, i64, i32)| {
            Box::new(async move { wait(&mut caller, addr, expected, timeout, site).await })
        },
    )?;
    linker.func_wrap_async(
        abi::RT_MODULE,
        abi::NOTIFY.name,
        |mut caller, (addr, count, site): (i32, i32, i32)| {
            Box::new(async move { notify(&mut caller, addr, count, site).await })
        },
    )?;
    linker.func_wrap(abi::RT_MODULE, abi::MEMORY_GROW.name, memory_grow)?;
    linker.func_wrap(abi::RT_MODULE, abi::BULK.name, bulk)?;
    linker.func_wrap(abi::RT_MODULE, abi::MEMORY_SIZE.name, memory_size)?;
    linker.func_wrap(abi::RT_MODULE, abi::BOUNDS.name, bounds)?;
    linker.func_wrap(abi::RT_MODULE, abi::RT_NOTE_READ.name, note_read)?;
    linker.func_wrap(abi::RT_MODULE, abi::UNREACHABLE.name, unreachable)?;
    linker.func_wrap(
        abi::RT_MODULE,
        abi::RT_SIGNATURE_MISMATCH.name,
        signature_mismatch,
    )?;
    linker.func_wrap(abi::RT_MODULE, abi::LOG_FULL.name, log_full)?;
    linker.func_wrap(abi::RT_MODULE, abi::LIBRARY_ACCESS.name, library_access)?;
    linker.func_wrap(abi::RT_MODULE, abi::EXIT_VALUE.name, exit_value)?;
    linker.func_wrap(
        abi::RT_MODULE,
        abi::RT_CALL.name,
        |c: Caller<'_, ThreadData>, site: i32| {
            log_call(&c, Happening::Call(site as u32));
        },
    )?;
    linker.func_wrap(
        abi::RT_MODULE,
        abi::RT_RETURNED.name,
        |c: Caller<'_, ThreadData>, site: i32| log_call(&c, Happening::Returned(site as u32)),
    )?;
    linker.func_wrap_async(
        abi::THREAD_SPAWN.0,
        abi::THREAD_SPAWN.1,
        |mut caller, (start_arg,): (i32,)| {
            Box::new(async move { thread_spawn(&mut caller, start_arg).await })
        },
    )?;
    Ok(())
}
