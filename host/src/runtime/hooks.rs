//! The `weft_rt` imports that instrumentation inserts, and `thread-spawn`.
//!
//! `point` is synchronous and cheap: it records the access and asks the
//! scheduler; only when another thread must run does the guest call `park`,
//! the one import that suspends its fiber. wait and notify are asynchronous
//! imports that park by themselves.

use super::activity::Activity;
use super::atomic_sets::SetRecorder;
use super::guest_memory::GuestMemory;
use super::state::{ExecHandle, ExecState, ThreadState};
use super::{ThreadData, memory};
use crate::abi;
use crate::instrument::{AccessKind, Site};
use crate::trace::EventKind;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use wasmtime::{Caller, Linker};
use wasmtime::{Result, bail};

/// A future that is pending exactly once: awaiting it suspends the calling
/// guest thread until the executor polls that thread again.
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
pub(crate) async fn park(exec: ExecHandle) {
    exec.get().parked = true;
    Park { polled: false }.await
}

/// A scheduling point inside an asynchronous import: asks the scheduler and
/// parks if another thread was chosen.
pub(crate) async fn yield_point(caller: &mut Caller<'_, ThreadData>) {
    let me = caller.data().tid;
    let exec = caller.data().exec.clone();
    settle_sets(&mut exec.get(), caller.data().shared_memory.as_deref(), me);
    let must_park = exec.get().schedule(me);
    if must_park {
        park(exec).await;
    }
}

/// Settles the thread's last atomic operation for the atomic-set checks (a
/// scheduling point that is not an access: another thread may run next).
pub(crate) fn settle_sets(
    exec: &mut ExecState,
    memory: Option<&GuestMemory>,
    me: crate::trace::ThreadId,
) {
    watch_sets(exec, memory, me, None, |_, _| false);
}

/// The atomic-set recorder's part of a hook of thread `me`, when atomic
/// sets are checked: settles the thread's previous atomic operation, lets
/// `access` record what the thread is about to do (it gets the recorder and
/// a reader of shared memory, and says whether an atomic set is touched),
/// and notes the access the thread now stands at. Returns what `access`
/// said (false when sets are not checked).
fn watch_sets(
    exec: &mut ExecState,
    memory: Option<&GuestMemory>,
    me: crate::trace::ThreadId,
    at: Option<(u32, u32)>,
    access: impl FnOnce(&mut SetRecorder, &dyn Fn(u32, u8) -> u64) -> bool,
) -> bool {
    let Some(sets) = exec.sets.as_mut() else {
        return false;
    };
    let read = |addr: u32, width: u8| memory.map_or(0, |m| memory::shared_value(m, addr, width));
    sets.settle(me, read);
    let watched = access(sets, &read);
    exec.threads[me as usize].pending = at;
    exec.schedule_changed();
    watched
}

/// Effective address of an access: the dynamic address plus the static
/// offset of its site.
fn effective(
    caller: &Caller<'_, ThreadData>,
    addr: i32,
    site: i32,
) -> Result<(u32, AccessKind, u8)> {
    let site_info = site_of(&caller.data().exec.get(), site)?;
    Ok((site_info.address(addr), site_info.kind, site_info.width))
}

/// The site an instrumented call names.
fn site_of(exec: &ExecState, site: i32) -> Result<Site> {
    match exec.sites.get(site as u32) {
        Some(site_info) => Ok(*site_info),
        None => bail!("instrumentation error: unknown site {site}"),
    }
}

fn point(caller: Caller<'_, ThreadData>, addr: i32, site: i32) -> Result<i32> {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let site_info = site_of(&exec, site)?;
    if exec.sets.is_some() {
        let eff = site_info.address(addr);
        let at = Some((site as u32, eff));
        let watched = watch_sets(
            &mut exec,
            caller.data().shared_memory.as_deref(),
            me,
            at,
            |sets, read| sets.access(me, site as u32, &site_info, eff, read(eff, site_info.width)),
        );
        // Plain accesses matter only where they touch an atomic set.
        if !watched && matches!(site_info.kind, AccessKind::Load | AccessKind::Store) {
            return Ok(0);
        }
    }
    exec.record(
        me,
        EventKind::Access(site_info.kind),
        site_info.address(addr),
        Some(site as u32),
    );
    exec.log(me, Activity::Point(site as u32));
    Ok(exec.schedule(me) as i32)
}

/// `weft_rt.bulk`: `memory.copy` or `memory.fill` is about to run.
fn bulk(caller: Caller<'_, ThreadData>, dst: i32, src: i32, len: i32, site: i32) -> Result<i32> {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let site_info = site_of(&exec, site)?;
    if exec.sets.is_some() {
        let at = Some((site as u32, dst as u32));
        let watched = watch_sets(
            &mut exec,
            caller.data().shared_memory.as_deref(),
            me,
            at,
            |sets, _| {
                sets.access_range(
                    me,
                    site as u32,
                    site_info.kind,
                    dst as u32,
                    src as u32,
                    len as u32,
                )
            },
        );
        if !watched {
            return Ok(0);
        }
    }
    exec.record(
        me,
        EventKind::Access(site_info.kind),
        dst as u32,
        Some(site as u32),
    );
    exec.log(me, Activity::Point(site as u32));
    Ok(exec.schedule(me) as i32)
}

fn check_wait_address(caller: &Caller<'_, ThreadData>, eff: u32, width: u8) -> Result<()> {
    if !eff.is_multiple_of(width as u32) {
        bail!("unaligned atomic: wait on address {eff:#x}");
    }
    match &caller.data().shared_memory {
        Some(shared) if (eff as usize + width as usize) <= shared.visible_bytes() => Ok(()),
        Some(_) => bail!("out of bounds memory access: wait on address {eff:#x}"),
        None => bail!("memory.atomic.wait on a memory that is not shared"),
    }
}

async fn wait(
    caller: &mut Caller<'_, ThreadData>,
    addr: i32,
    expected: i64,
    timeout: i64,
    site: i32,
) -> Result<i32> {
    let me = caller.data().tid;
    let (eff, _, width) = effective(caller, addr, site)?;
    {
        let mut exec = caller.data().exec.get();
        exec.record(
            me,
            EventKind::Access(AccessKind::Wait),
            eff,
            Some(site as u32),
        );
        exec.log(me, Activity::Point(site as u32));
    }
    yield_point(caller).await;
    check_wait_address(caller, eff, width)?;
    let bytes = memory::read(caller, eff as u64, width as u64)?;
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
        let deadline = (timeout >= 0).then(|| exec.clock_ns.saturating_add(timeout as u64));
        exec.block(me, eff, deadline, Some(site as u32));
        exec.record(me, EventKind::Block, eff, Some(site as u32));
        exec.log(me, Activity::BlockBegin);
        exec.schedule(me)
    };
    if must_park {
        park(caller.data().exec.clone()).await;
    }
    let mut exec = caller.data().exec.get();
    exec.log(me, Activity::BlockEnd);
    Ok(exec.threads[me as usize].wake.take().unwrap_or(0))
}

async fn notify(
    caller: &mut Caller<'_, ThreadData>,
    addr: i32,
    count: i32,
    site: i32,
) -> Result<i32> {
    let me = caller.data().tid;
    let (eff, _, _) = effective(caller, addr, site)?;
    {
        let mut exec = caller.data().exec.get();
        exec.record(
            me,
            EventKind::Access(AccessKind::Notify),
            eff,
            Some(site as u32),
        );
        exec.log(me, Activity::Point(site as u32));
    }
    yield_point(caller).await;
    if !eff.is_multiple_of(4) {
        bail!("unaligned atomic: notify on address {eff:#x}");
    }
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
        exec.memory_limit_hit = true;
        return Ok(-1);
    }
    drop(exec);
    match shared.grow(delta as u32 as u64) {
        Some(old) => {
            caller
                .data()
                .exec
                .get()
                .memory_resized(shared.visible_bytes());
            Ok(old as i32)
        }
        None => Ok(-1),
    }
}

/// `weft_rt.memory_size`: the shared memory's size in pages as the guest
/// sees it.
fn memory_size(caller: Caller<'_, ThreadData>) -> Result<i32> {
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

/// `weft_rt.unreachable`: the guest's `unreachable` trap.
fn unreachable(_caller: Caller<'_, ThreadData>) -> Result<()> {
    Err(wasmtime::Trap::UnreachableCodeReached.into())
}

async fn thread_spawn(caller: &mut Caller<'_, ThreadData>, start_arg: i32) -> Result<i32> {
    let me = caller.data().tid;
    let child = {
        let mut exec = caller.data().exec.get();
        if exec.threads.len() as u32 >= exec.limits.max_threads {
            exec.thread_limit_hit = true;
            return Ok(-1);
        }
        let child = exec.add_thread();
        if let Some(sets) = exec.sets.as_mut() {
            sets.spawned(me, child);
        }
        exec.spawn_queue.push((child, start_arg));
        exec.record(me, EventKind::Spawn { child }, 0, None);
        child
    };
    yield_point(caller).await;
    Ok(child as i32)
}

/// `sched_yield`: a scheduling point at which the caller prefers others.
pub(crate) async fn sched_yield(caller: &mut Caller<'_, ThreadData>) -> Result<i32> {
    let me = caller.data().tid;
    {
        let mut exec = caller.data().exec.get();
        exec.record(me, EventKind::Yield, 0, None);
        exec.set_state(me, ThreadState::Yielded);
    }
    yield_point(caller).await;
    Ok(0)
}

/// Adds the `weft_rt` imports and `wasi.thread-spawn` to `linker`.
/// A logged call or return (see `InstrumentOptions::log_calls`): noted in
/// the activity log, and a unit of work when its site is one.
fn log_call(caller: &Caller<'_, ThreadData>, activity: Activity) {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    if let Some(sets) = exec.sets.as_mut()
        && let Activity::Call(site) | Activity::Returned(site) = activity
    {
        sets.call(me, site, matches!(activity, Activity::Returned(_)));
    }
    exec.log(me, activity);
}

pub(crate) fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
    linker.func_wrap(abi::RT_MODULE, abi::POINT.name, point)?;
    linker.func_wrap_async(abi::RT_MODULE, abi::PARK.name, |caller, (): ()| {
        let exec = caller.data().exec.clone();
        Box::new(async move { park(exec).await })
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
    linker.func_wrap(abi::RT_MODULE, abi::UNREACHABLE.name, unreachable)?;
    linker.func_wrap(
        abi::RT_MODULE,
        abi::RT_CALL.name,
        |c: Caller<'_, ThreadData>, site: i32| {
            log_call(&c, Activity::Call(site as u32));
        },
    )?;
    linker.func_wrap(
        abi::RT_MODULE,
        abi::RT_RETURNED.name,
        |c: Caller<'_, ThreadData>, site: i32| log_call(&c, Activity::Returned(site as u32)),
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
