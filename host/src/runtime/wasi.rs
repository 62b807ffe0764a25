//! WASI preview 1 under weft: wasmtime-wasi provides the calls, and weft
//! shadows every call that must be deterministic or can block.
//!
//! Shadowed here: clocks (a virtual clock), `poll_oneoff` (sleeps in virtual
//! time), `random_get` (a seeded generator), `sched_yield` (a scheduling
//! point), `proc_exit` (ends every thread), `fd_write` on stdout/stderr
//! (captured per execution), `fd_fdstat_get`/`fd_seek`/`fd_close` (stdio is
//! all there is), and args/environ (fixed by the run's options).
//! Everything else (file descriptors, paths) goes to wasmtime-wasi with a
//! context that has no preopened directories, an empty stdin and no
//! network, so the guest sees no filesystem.

use super::analysis::Happening;
use super::outcome::Unenumerated;
use super::thread::ThreadState;
use super::{ThreadData, memory_access, rt_imports};
use crate::trace::EventKind;
use rand_core::RngCore;
use wasmtime::{Caller, Linker, Result};

/// The WASI preview 1 import module.
pub(crate) const MODULE: &str = "wasi_snapshot_preview1";

/// The calls weft defines itself; the others go to wasmtime-wasi.
pub(crate) const SHADOWED: &[&str] = &[
    "clock_time_get",
    "clock_res_get",
    "random_get",
    "fd_write",
    "fd_fdstat_get",
    "fd_seek",
    "fd_close",
    "args_sizes_get",
    "args_get",
    "environ_sizes_get",
    "environ_get",
    "proc_exit",
    "sched_yield",
    "poll_oneoff",
];

const ERRNO_SUCCESS: i32 = 0;
const ERRNO_BADF: i32 = 8;
const ERRNO_INTR: i32 = 27;
const ERRNO_INVAL: i32 = 28;
const ERRNO_NOTSUP: i32 = 58;
const ERRNO_SPIPE: i32 = 70;

/// Rights of stdin and of stdout/stderr (`fd_read`, `fd_write`).
const RIGHT_FD_READ: u64 = 1 << 1;
const RIGHT_FD_WRITE: u64 = 1 << 6;

/// Virtual nanoseconds that pass on every clock read, so that a loop
/// waiting for time to pass terminates.
const CLOCK_READ_TICK_NS: u64 = 1_000;

/// The realtime clock at virtual time 0: 2024-01-01T00:00:00Z.
const REALTIME_EPOCH_NS: u64 = 1_704_067_200_000_000_000;

/// A guest called `proc_exit`: every thread of the execution ends.
#[derive(Debug)]
pub(crate) struct GuestExit(pub i32);

impl std::fmt::Display for GuestExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the guest exited with code {}", self.0)
    }
}

impl std::error::Error for GuestExit {}

/// Adds wasmtime-wasi's preview 1 and weft's shadows to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
    wasmtime_wasi::p1::add_to_linker_async(linker, |data: &mut ThreadData| data.wasi())?;
    linker.allow_shadowing(true);
    linker.func_wrap(MODULE, "clock_time_get", clock_time_get)?;
    linker.func_wrap(MODULE, "clock_res_get", clock_res_get)?;
    linker.func_wrap(MODULE, "random_get", random_get)?;
    linker.func_wrap(MODULE, "fd_write", fd_write)?;
    linker.func_wrap(MODULE, "fd_fdstat_get", fd_fdstat_get)?;
    linker.func_wrap(MODULE, "fd_seek", fd_seek)?;
    linker.func_wrap(MODULE, "fd_close", fd_close)?;
    linker.func_wrap(MODULE, "args_sizes_get", args_sizes_get)?;
    linker.func_wrap(MODULE, "args_get", args_get)?;
    linker.func_wrap(MODULE, "environ_sizes_get", environ_sizes_get)?;
    linker.func_wrap(MODULE, "environ_get", environ_get)?;
    linker.func_wrap(
        MODULE,
        "proc_exit",
        |_: Caller<'_, ThreadData>, code: i32| -> Result<()> {
            Err(wasmtime::Error::new(GuestExit(code)))
        },
    )?;
    linker.func_wrap_async(MODULE, "sched_yield", |mut caller, (): ()| {
        Box::new(async move { rt_imports::sched_yield(&mut caller).await })
    })?;
    linker.func_wrap_async(
        MODULE,
        "poll_oneoff",
        |mut caller, (subs, events, nsubs, nevents): (i32, i32, i32, i32)| {
            Box::new(async move { poll_oneoff(&mut caller, subs, events, nsubs, nevents).await })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

fn clock_time_get(
    mut caller: Caller<'_, ThreadData>,
    id: i32,
    _precision: i64,
    out: i32,
) -> Result<i32> {
    let now = {
        let mut exec = caller.data().exec.get();
        exec.touched_global_state();
        exec.depended_on(Unenumerated::Clock);
        exec.host_reads += 1;
        exec.clock_ns += CLOCK_READ_TICK_NS;
        exec.ring_alarm_if_due();
        exec.clock_ns
    };
    let value = match id {
        0 => REALTIME_EPOCH_NS + now,
        1..=3 => now,
        _ => return Ok(ERRNO_INVAL),
    };
    memory_access::write(&mut caller, out as u32 as u64, &value.to_le_bytes())?;
    Ok(ERRNO_SUCCESS)
}

fn clock_res_get(mut caller: Caller<'_, ThreadData>, id: i32, out: i32) -> Result<i32> {
    if !(0..=3).contains(&id) {
        return Ok(ERRNO_INVAL);
    }
    memory_access::write(&mut caller, out as u32 as u64, &1u64.to_le_bytes())?;
    Ok(ERRNO_SUCCESS)
}

fn random_get(mut caller: Caller<'_, ThreadData>, buf: i32, len: i32) -> Result<i32> {
    let mut bytes = vec![0u8; len as u32 as usize];
    {
        let mut exec = caller.data().exec.get();
        exec.touched_global_state();
        exec.depended_on(Unenumerated::RandomBytes);
        exec.host_reads += 1;
        exec.random.fill_bytes(&mut bytes);
    }
    memory_access::write(&mut caller, buf as u32 as u64, &bytes)?;
    Ok(ERRNO_SUCCESS)
}

fn fd_write(
    mut caller: Caller<'_, ThreadData>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> Result<i32> {
    if (fd != 1 && fd != 2) || !stdio_open(&caller, fd) {
        return Ok(ERRNO_BADF);
    }
    let mut written = Vec::new();
    for i in 0..iovs_len as u32 as u64 {
        let iov = iovs as u32 as u64 + i * 8;
        let ptr = memory_access::read_u32(&mut caller, iov)?;
        let len = memory_access::read_u32(&mut caller, iov + 4)?;
        written.extend(memory_access::read(&mut caller, ptr as u64, len as u64)?);
    }
    let count = written.len() as u32;
    {
        let mut exec = caller.data().exec.get();
        let limit = exec.limits.max_output_bytes;
        let stream = if fd == 1 {
            &mut exec.stdout
        } else {
            &mut exec.stderr
        };
        let room = limit.saturating_sub(stream.len());
        stream.extend_from_slice(&written[..written.len().min(room)]);
    }
    memory_access::write(&mut caller, nwritten as u32 as u64, &count.to_le_bytes())?;
    Ok(ERRNO_SUCCESS)
}

/// Whether `fd` is one of stdin, stdout and stderr and the guest has not
/// closed it. No other descriptor exists: there is no filesystem.
fn stdio_open(caller: &Caller<'_, ThreadData>, fd: i32) -> bool {
    (0..3).contains(&fd) && caller.data().exec.get().closed_stdio & (1 << fd) == 0
}

/// Describes stdin, stdout and stderr as streams that are not terminals,
/// as wasmtime-wasi does for streams it does not inherit.
fn fd_fdstat_get(mut caller: Caller<'_, ThreadData>, fd: i32, out: i32) -> Result<i32> {
    if !stdio_open(&caller, fd) {
        return Ok(ERRNO_BADF);
    }
    let rights = if fd == 0 {
        RIGHT_FD_READ
    } else {
        RIGHT_FD_WRITE
    };
    // filetype (u8) 0 = unknown, flags (u16) at 2, rights at 8 and 16.
    let mut fdstat = [0u8; 24];
    fdstat[8..16].copy_from_slice(&rights.to_le_bytes());
    fdstat[16..24].copy_from_slice(&rights.to_le_bytes());
    memory_access::write(&mut caller, out as u32 as u64, &fdstat)?;
    Ok(ERRNO_SUCCESS)
}

/// Streams cannot seek.
fn fd_seek(
    caller: Caller<'_, ThreadData>,
    fd: i32,
    _offset: i64,
    _whence: i32,
    _out: i32,
) -> Result<i32> {
    Ok(if stdio_open(&caller, fd) {
        ERRNO_SPIPE
    } else {
        ERRNO_BADF
    })
}

/// Closes stdin, stdout or stderr for every thread of the execution.
fn fd_close(caller: Caller<'_, ThreadData>, fd: i32) -> Result<i32> {
    if !stdio_open(&caller, fd) {
        return Ok(ERRNO_BADF);
    }
    caller.data().exec.get().closed_stdio |= 1 << fd;
    Ok(ERRNO_SUCCESS)
}

fn args_sizes_get(caller: Caller<'_, ThreadData>, argc_out: i32, size_out: i32) -> Result<i32> {
    let args = caller.data().args.clone();
    write_sizes(caller, &args, argc_out, size_out)
}

fn args_get(caller: Caller<'_, ThreadData>, argv: i32, buf: i32) -> Result<i32> {
    let args = caller.data().args.clone();
    write_strings(caller, &args, argv, buf)
}

fn environ_sizes_get(caller: Caller<'_, ThreadData>, count_out: i32, size_out: i32) -> Result<i32> {
    let env = caller.data().env.clone();
    write_sizes(caller, &env, count_out, size_out)
}

fn environ_get(caller: Caller<'_, ThreadData>, environ: i32, buf: i32) -> Result<i32> {
    let env = caller.data().env.clone();
    write_strings(caller, &env, environ, buf)
}

/// Writes how many `strings` there are and the bytes they take with their
/// NULs (what `args_sizes_get` and `environ_sizes_get` return).
fn write_sizes(
    mut caller: Caller<'_, ThreadData>,
    strings: &[String],
    count_out: i32,
    size_out: i32,
) -> Result<i32> {
    let size: usize = strings.iter().map(|s| s.len() + 1).sum();
    memory_access::write(
        &mut caller,
        count_out as u32 as u64,
        &(strings.len() as u32).to_le_bytes(),
    )?;
    memory_access::write(
        &mut caller,
        size_out as u32 as u64,
        &(size as u32).to_le_bytes(),
    )?;
    Ok(ERRNO_SUCCESS)
}

/// Writes `strings`, NUL-terminated, from `buf` and a pointer to each at
/// `pointers` (what `args_get` and `environ_get` return).
fn write_strings(
    mut caller: Caller<'_, ThreadData>,
    strings: &[String],
    pointers: i32,
    buf: i32,
) -> Result<i32> {
    let mut at = buf as u32 as u64;
    for (i, string) in strings.iter().enumerate() {
        memory_access::write(
            &mut caller,
            pointers as u32 as u64 + 4 * i as u64,
            &(at as u32).to_le_bytes(),
        )?;
        let mut bytes = string.as_bytes().to_vec();
        bytes.push(0);
        memory_access::write(&mut caller, at, &bytes)?;
        at += bytes.len() as u64;
    }
    Ok(ERRNO_SUCCESS)
}

/// A subscription of `poll_oneoff` (48 bytes in guest memory).
struct Subscription {
    userdata: u64,
    tag: u8,
    /// For a clock: the absolute virtual deadline.
    deadline: u64,
}

async fn poll_oneoff(
    caller: &mut Caller<'_, ThreadData>,
    subs: i32,
    events: i32,
    nsubs: i32,
    nevents_out: i32,
) -> Result<i32> {
    if nsubs <= 0 {
        return Ok(ERRNO_INVAL);
    }
    let now = {
        let mut exec = caller.data().exec.get();
        exec.touched_clock();
        exec.clock_ns
    };
    let mut parsed = Vec::new();
    for i in 0..nsubs as u32 as u64 {
        let at = subs as u32 as u64 + 48 * i;
        let raw = memory_access::read(caller, at, 48)?;
        let userdata = u64::from_le_bytes(raw[0..8].try_into().expect("8 bytes"));
        let tag = raw[8];
        let deadline = if tag == 0 {
            let timeout = u64::from_le_bytes(raw[24..32].try_into().expect("8 bytes"));
            let flags = u16::from_le_bytes(raw[40..42].try_into().expect("2 bytes"));
            let clock = u32::from_le_bytes(raw[16..20].try_into().expect("4 bytes"));
            let absolute = flags & 1 != 0;
            if absolute {
                // An absolute deadline reads the clock as a reading does.
                caller.data().exec.get().depended_on(Unenumerated::Clock);
            }
            match (absolute, clock) {
                (false, _) => now.saturating_add(timeout),
                (true, 0) => timeout.saturating_sub(REALTIME_EPOCH_NS),
                (true, _) => timeout,
            }
        } else if tag <= 2 {
            0
        } else {
            return Ok(ERRNO_INVAL);
        };
        parsed.push(Subscription {
            userdata,
            tag,
            deadline,
        });
    }
    // File descriptors are always ready (stdin is empty, stdout/stderr are
    // captured); only when every subscription is a clock does the thread sleep.
    let fd_ready: Vec<&Subscription> = parsed.iter().filter(|s| s.tag != 0).collect();
    let mut out = Vec::new();
    if fd_ready.is_empty() {
        let until = parsed.iter().map(|s| s.deadline).min().unwrap_or(now);
        let me = caller.data().tid;
        super::signal_imports::deliver_signals(caller).await?;
        let now = loop {
            {
                let mut exec = caller.data().exec.get();
                exec.record(me, EventKind::Sleep { until_ns: until }, 0, None);
                exec.happened(me, Happening::SleepBegin);
                exec.set_state(me, ThreadState::Sleeping { until });
            }
            rt_imports::yield_point(caller).await?;
            let now = {
                let mut exec = caller.data().exec.get();
                exec.happened(me, Happening::SleepEnd);
                exec.clock_ns
            };
            if until <= now {
                break now;
            }
            // Only a signal wakes a sleeper early. Sent to the process, it
            // may have been taken by another thread first: then, as Linux
            // restarts a sleep when no signal was delivered to the
            // sleeper, it sleeps on.
            {
                let mut exec = caller.data().exec.get();
                if exec.deliverable_signal(me).is_none() {
                    continue;
                }
                // The signal's handler runs, and the sleep returns
                // `EINTR`, with what was left for weft's
                // `clock_nanosleep` to tell.
                exec.threads[me as usize].signals.sleep_left = until - now;
            }
            super::signal_imports::deliver_signals(caller).await?;
            return Ok(ERRNO_INTR);
        };
        for sub in parsed.iter().filter(|s| s.deadline <= now) {
            out.push(event(sub.userdata, 0, 0));
        }
    } else {
        for sub in fd_ready {
            let errno = if sub.tag == 1 || sub.tag == 2 {
                0
            } else {
                ERRNO_NOTSUP as u16
            };
            out.push(event(sub.userdata, errno, sub.tag));
        }
    }
    for (i, bytes) in out.iter().enumerate() {
        memory_access::write(caller, events as u32 as u64 + 32 * i as u64, bytes)?;
    }
    memory_access::write(
        caller,
        nevents_out as u32 as u64,
        &(out.len() as u32).to_le_bytes(),
    )?;
    Ok(ERRNO_SUCCESS)
}

/// An `event` record of `poll_oneoff` (32 bytes).
fn event(userdata: u64, errno: u16, tag: u8) -> [u8; 32] {
    let mut bytes = [0u8; 32];
    bytes[0..8].copy_from_slice(&userdata.to_le_bytes());
    bytes[8..10].copy_from_slice(&errno.to_le_bytes());
    bytes[10] = tag;
    bytes
}
