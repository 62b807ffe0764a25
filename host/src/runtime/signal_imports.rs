//! The `weft_signal` imports, which the C library's signal functions call
//! (`guest-sdk/c/weft_signal.c`), and the delivery of signals.
//!
//! A signal sent to a thread is pending until the thread stands at a
//! scheduling point outside a library call with the signal unblocked, or
//! blocks in a futex wait inside one (see [`deliver_signals_at_wait`]).
//! At each of the thread's own points (its atomic accesses, say) from
//! then on the schedule decides whether it is delivered there (a decision
//! recorded as a value, so replays deliver it at the same point); at the
//! latest it is delivered where the thread next calls the library or the
//! host (a library call, a futex wait, a spawn, the return of its
//! routine), as Linux delivers a signal at the latest when the thread
//! next enters the kernel. Delivering it runs the program's handler on
//! the thread, there: weft calls the module's [`DELIVER_EXPORT`] (see
//! `instrument::rewrite::signal_entry`), which calls the handler, with the thread's mask the handler's until it
//! returns. A thread that sends a signal to itself (`raise`) and does not
//! block it, or unblocks a pending one, has it delivered before the call
//! returns, as POSIX says; a thread woken from a wait by a signal has it
//! delivered as it wakes. A signal whose action is the default ends the
//! execution as it would end the process, unless the default ignores it.

use super::ThreadData;
use super::analysis::Happening;
use super::outcome::Outcome;
use super::rt_imports::{park, yield_point};
use super::sdk_imports::Ended;
use super::state::{Action, DefaultAction, Delivery, LAST_SIGNAL, MaskChange, signal_wait_address};
use crate::abi;
use crate::trace::{EventKind, ThreadId};
use wasmtime::{Caller, Linker, Result};

/// The export that runs a signal's handler on the calling thread.
const DELIVER_EXPORT: &str = abi::SIGNAL_ENTRY_EXPORT;

/// The names of the `weft_signal` imports.
pub(crate) const IMPORTS: [&str; 10] = [
    "action",
    "mask",
    "send",
    "pending",
    "thread",
    "wait",
    "sleep_left",
    "alarm",
    "alarm_left",
    "alarm_interval",
];

/// `si_code` of a signal sent to the process (`kill`).
const SI_USER: i32 = 0;

/// `si_code` of a signal sent to one thread (`pthread_kill`, `raise`).
const SI_TKILL: i32 = -6;

/// A signal number as the guest passed it, if it is one.
fn signal_number(sig: i32) -> Option<u32> {
    u32::try_from(sig)
        .ok()
        .filter(|&sig| (1..=LAST_SIGNAL).contains(&sig))
}

/// A set as the guest passes it: its low and high words.
fn set_of(lo: i32, hi: i32) -> u64 {
    u64::from(lo as u32) | u64::from(hi as u32) << 32
}

/// `weft_signal.action(sig, kind, mask_lo, mask_hi, flags)`: the program
/// set signal `sig`'s action (`kind` 0: the default, 1: ignore, 2: its
/// handler).
fn action(
    caller: Caller<'_, ThreadData>,
    sig: i32,
    kind: i32,
    lo: i32,
    hi: i32,
    flags: i32,
) -> i32 {
    let Some(sig) = signal_number(sig) else {
        return -1;
    };
    let action = match kind {
        0 => Action::Default,
        1 => Action::Ignore,
        _ => Action::Handle {
            mask: set_of(lo, hi),
            flags: flags as u32,
        },
    };
    caller.data().exec.get().set_signal_action(sig, action);
    0
}

/// `weft_signal.mask(how, lo, hi)`: changes the calling thread's mask;
/// returns the mask before. A signal it unblocks that is pending is
/// delivered before the call returns.
async fn mask(caller: &mut Caller<'_, ThreadData>, how: i32, lo: i32, hi: i32) -> Result<i64> {
    let me = caller.data().tid;
    let before =
        caller
            .data()
            .exec
            .get()
            .change_signal_mask(me, MaskChange::from_how(how), set_of(lo, hi));
    deliver_signals(caller).await?;
    Ok(before as i64)
}

/// `weft_signal.send(thread, sig)`: sends `sig` (0: none, only checks the
/// thread) to thread `thread`, or to the process (-1). A scheduling point,
/// before the signal is sent. Returns 0, or -1 when there is no such
/// thread.
async fn send(caller: &mut Caller<'_, ThreadData>, thread: i32, sig: i32) -> Result<i32> {
    let me = caller.data().tid;
    let sig = if sig == 0 {
        0
    } else {
        signal_number(sig).unwrap_or(0)
    };
    let to = u32::try_from(thread).ok().map(|t| t as ThreadId);
    if sig != 0 {
        deliver_signals(caller).await?;
        caller
            .data()
            .exec
            .get()
            .record(me, EventKind::SignalSend { sig }, 0, None);
        yield_point(caller).await?;
    }
    if !caller.data().exec.get().send_signal(me, to, sig) {
        return Ok(-1);
    }
    // Sent to itself (or the process) unblocked: delivered before the
    // call returns.
    deliver_signals(caller).await?;
    Ok(0)
}

/// `weft_signal.pending()`: the signals pending for the calling thread or
/// the process.
fn pending(caller: Caller<'_, ThreadData>) -> i64 {
    let me = caller.data().tid;
    caller.data().exec.get().pending_signals(me) as i64
}

/// `weft_signal.thread()`: the calling thread's id.
fn thread(caller: Caller<'_, ThreadData>) -> i32 {
    caller.data().tid as i32
}

/// `weft_signal.sleep_left()`: nanoseconds left of the calling thread's
/// last sleep that a signal cut short (`poll_oneoff` returned `EINTR`).
fn sleep_left(caller: Caller<'_, ThreadData>) -> i64 {
    let me = caller.data().tid;
    guest_ns(
        caller.data().exec.get().threads[me as usize]
            .signals
            .sleep_left,
    )
}

/// `weft_signal.alarm(value, interval)`: sets the process's alarm to ring
/// `value` nanoseconds from now (0 disarms it) and then every `interval`;
/// returns what was left of it before.
fn alarm(caller: Caller<'_, ThreadData>, value: i64, interval: i64) -> i64 {
    let (value, interval) = (value.max(0) as u64, interval.max(0) as u64);
    let (left, _) = caller.data().exec.get().set_alarm(value, interval);
    guest_ns(left)
}

/// `weft_signal.alarm_left()`: nanoseconds until the alarm rings, or 0.
fn alarm_left(caller: Caller<'_, ThreadData>) -> i64 {
    let (left, _) = caller.data().exec.get().alarm_left();
    guest_ns(left)
}

/// `weft_signal.alarm_interval()`: the alarm's period, or 0.
fn alarm_interval(caller: Caller<'_, ThreadData>) -> i64 {
    let (_, interval) = caller.data().exec.get().alarm_left();
    guest_ns(interval)
}

/// Nanoseconds as the guest's `long long` (a time past its range is the
/// largest it holds).
fn guest_ns(ns: u64) -> i64 {
    i64::try_from(ns).unwrap_or(i64::MAX)
}

/// `weft_signal.wait(lo, hi, mode)`: mode 0 (`sigwait`) waits until a
/// signal of the set is pending and takes it without running its
/// handler; mode 1 (`sigsuspend`) makes the set the thread's mask until a
/// signal is delivered. Returns the signal.
async fn wait(caller: &mut Caller<'_, ThreadData>, lo: i32, hi: i32, mode: i32) -> Result<i32> {
    let me = caller.data().tid;
    let set = set_of(lo, hi);
    let restore = (mode != 0).then(|| {
        caller
            .data()
            .exec
            .get()
            .change_signal_mask(me, MaskChange::Set, set)
    });
    loop {
        {
            let mut exec = caller.data().exec.get();
            if exec.end.is_some() {
                return Err(wasmtime::Error::new(Ended));
            }
            if mode == 0 {
                let pending = exec.pending_signals(me) & set;
                if pending != 0 {
                    let sig = pending.trailing_zeros() + 1;
                    exec.take_signal(me, sig);
                    exec.threads[me as usize].signals.waits_for = None;
                    exec.record(me, EventKind::SignalDelivery { sig }, 0, None);
                    exec.happened(me, Happening::SignalDelivered { sig });
                    return Ok(sig as i32);
                }
            }
        }
        if mode != 0 && caller.data().exec.get().deliverable_signal(me).is_some() {
            let delivered = deliver_signals(caller).await?;
            let mut exec = caller.data().exec.get();
            exec.threads[me as usize].signals.waits_for = None;
            if let Some(mask) = restore {
                exec.change_signal_mask(me, MaskChange::Set, mask);
            }
            return Ok(delivered.map_or(0, |sig| sig as i32));
        }
        // Nothing yet: the thread waits until a signal wakes it.
        let must_park = {
            let mut exec = caller.data().exec.get();
            exec.threads[me as usize].signals.waits_for = Some(if mode == 0 { set } else { 0 });
            let addr = signal_wait_address(me);
            exec.block(me, addr, None, None);
            exec.record(me, EventKind::Block, addr, None);
            exec.schedule(me)
        };
        if must_park {
            super::frames::note_parking(caller);
            park(caller.data().exec.clone()).await?;
        }
        caller.data().exec.get().threads[me as usize].wake = None;
    }
}

/// Delivers the signals due to the calling thread at a futex wait, as it
/// blocks or wakes: as [`deliver_signals`], and inside a library step too.
/// A thread blocked in the kernel takes its signals there natively, in the
/// middle of the library call (a condition wait runs the handler before it
/// takes its mutex back, so the handler does not hold it); the step pauses
/// around the handlers, as around a call through a function pointer, and
/// goes on after them.
pub(crate) async fn deliver_signals_at_wait(caller: &mut Caller<'_, ThreadData>) -> Result<()> {
    let me = caller.data().tid;
    let paused = {
        let mut exec = caller.data().exec.get();
        let in_step = exec.threads[me as usize].library_depth > 0;
        (in_step && exec.signal_due_in_library(me)).then(|| exec.library_step_pauses(me))
    };
    let delivered = deliver_signals(caller).await;
    if let Some(depth) = paused {
        let mut exec = caller.data().exec.get();
        if exec.end.is_none() {
            exec.library_step_starts(me, depth);
        }
    }
    delivered.map(|_| ())
}

/// Delivers the signals due to the calling thread where it stands (see
/// the module's doc). Returns the last signal delivered.
pub(crate) async fn deliver_signals(caller: &mut Caller<'_, ThreadData>) -> Result<Option<u32>> {
    let me = caller.data().tid;
    let mut last = None;
    loop {
        let (delivery, restore) = {
            let mut exec = caller.data().exec.get();
            // An execution that ended is left to end where it would have.
            if exec.end.is_some() || !exec.signal_due(me) {
                return Ok(last);
            }
            let sig = exec.deliverable_signal(me).expect("a signal is due");
            exec.record(me, EventKind::SignalDelivery { sig }, 0, None);
            exec.begin_delivery(me, sig)
        };
        let Delivery {
            sig,
            action,
            to_thread,
        } = delivery;
        let code = if to_thread { SI_TKILL } else { SI_USER };
        last = Some(sig);
        match action {
            Action::Ignore => {}
            Action::Default => match DefaultAction::of(sig) {
                DefaultAction::Ignore => {}
                stop_or_end => {
                    let verb = if stop_or_end == DefaultAction::Stop {
                        "stops the process (and only another process could continue it)"
                    } else {
                        "ends the process"
                    };
                    caller.data().exec.get().finish(Outcome::Trap {
                        thread: me,
                        message: format!(
                            "signal {sig} ({}) was delivered to thread {me}, which has no handler for it: its default action {verb}",
                            signal_name(sig)
                        ),
                    });
                    return Err(wasmtime::Error::new(Ended));
                }
            },
            Action::Handle { .. } => {
                let Some(deliver) = caller
                    .get_export(DELIVER_EXPORT)
                    .and_then(|export| export.into_func())
                else {
                    caller.data().exec.get().finish(Outcome::HostError(format!(
                        "the module handles signals but does not export `{DELIVER_EXPORT}`"
                    )));
                    return Err(wasmtime::Error::new(Ended));
                };
                let deliver = deliver.typed::<(i32, i32), ()>(&*caller)?;
                let outer = caller.data().exec.get().threads[me as usize]
                    .signals
                    .handling
                    .replace(sig);
                deliver.call_async(&mut *caller, (sig as i32, code)).await?;
                let mut exec = caller.data().exec.get();
                exec.threads[me as usize].signals.handling = outer;
                exec.change_signal_mask(me, MaskChange::Set, restore);
            }
        }
    }
}

/// The name of signal `sig`, as C programs spell it.
pub fn signal_name(sig: u32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    NAMES
        .get(sig.wrapping_sub(1) as usize)
        .map_or_else(|| format!("SIGRT{sig}"), |name| (*name).to_string())
}

/// Adds the `weft_signal` imports to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
    let module = abi::SIGNAL_MODULE;
    linker.func_wrap(module, "action", action)?;
    linker.func_wrap_async(
        module,
        "mask",
        |mut caller, (how, lo, hi): (i32, i32, i32)| {
            Box::new(async move { mask(&mut caller, how, lo, hi).await })
        },
    )?;
    linker.func_wrap_async(module, "send", |mut caller, (to, sig): (i32, i32)| {
        Box::new(async move { send(&mut caller, to, sig).await })
    })?;
    linker.func_wrap(module, "pending", pending)?;
    linker.func_wrap(module, "sleep_left", sleep_left)?;
    linker.func_wrap(module, "alarm", alarm)?;
    linker.func_wrap(module, "alarm_left", alarm_left)?;
    linker.func_wrap(module, "alarm_interval", alarm_interval)?;
    linker.func_wrap(module, "thread", thread)?;
    linker.func_wrap_async(
        module,
        "wait",
        |mut caller, (lo, hi, mode): (i32, i32, i32)| {
            Box::new(async move { wait(&mut caller, lo, hi, mode).await })
        },
    )?;
    Ok(())
}
