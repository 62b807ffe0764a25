//! A thread's own state beyond memory, as a program compiled to read it
//! sees it (see [`super::Program::state_reader`]): every wasm frame's
//! function, position, the locals it can still read (see
//! [`super::live_locals`]) and operand stack, and its instance's globals
//! (the stack pointer, the thread's TLS block).
//!
//! wasmtime's guest debugging reads a frame's locals and operand stack
//! while the thread is stopped in a call to an import or at an epoch
//! check, so the digest is taken at each import that may stop the thread,
//! and, once complete states are compared, time slices end at epoch
//! checks ([`at_epoch_check`]) rather than where fuel runs out (where
//! wasmtime cannot read the frames). A thread suspended at either keeps
//! its digest; a thread that runs on has none. A digest covers what the thread can go on from: two
//! equal digests, with the same memory and the same host-side state, run
//! the thread the same way.

use super::looping::CompleteStates;
use super::rt_imports::park;
use super::store_data::ThreadData;
use super::thread_stacks::StackPointer;
use crate::sched::Scheduler;
use wasmtime::{AsContextMut, Caller, StoreContextMut, UpdateDeadline, Val};
use xxhash_rust::xxh3::Xxh3;

/// Once complete states are compared ([`CompleteStates::On`]), keeps the
/// digest of the calling thread's frames: the state it stands in until it
/// runs on. Called by every import that may stop the thread.
///
/// Where the thread's time slice ends is state too: each such call starts
/// the thread's slice afresh (see [`at_epoch_check`]), so that where it
/// ends follows from the code the thread runs from here, and the digest
/// says so (a thread that has not come here since then keeps the digest
/// it had, and the slice it had).
///
/// A stateful search's execution ([`CompleteStates::Keyed`]) needs the
/// digest only where its strategy asks for the state (past the schedule
/// it planned) and where the thread parks ([`note_parking`]): elsewhere
/// the thread's digest is left out of date (`None`) until then. Its time
/// slices end where fuel runs out, as in any other execution, so that its
/// schedules replay as they ran; where a slice ends is no part of its
/// states (between two scheduling points a thread touches nothing another
/// thread sees, so ending a slice there or at the next point is alike).
pub(super) fn note(caller: &mut Caller<'_, ThreadData>) {
    if caller.data().live_locals.is_none() {
        return;
    }
    let states = caller.data().exec.get().limit_watch.complete_states;
    match states {
        CompleteStates::Off | CompleteStates::After(_) => {}
        CompleteStates::Keyed if caller.data().exec.get().scheduler.wants_state() => {
            keep_digest(caller, false);
        }
        CompleteStates::Keyed => {
            let data = caller.data();
            data.exec.get().threads[data.tid as usize].frames = None;
        }
        CompleteStates::On => {
            if caller.data().slice_checks.is_none() {
                // Slices end at epoch checks from now on, not where fuel
                // runs out.
                let _ = caller.as_context_mut().fuel_async_yield_interval(None);
            }
            caller.data_mut().slice_checks = Some(0);
            keep_digest(caller, true);
        }
    }
}

/// Keeps the digest of the frames of a thread about to park, where
/// [`note`] did not: before complete states are compared (a thread parked
/// when the comparing begins may never run again, and its frames can be
/// read only now; its digest is of no use once it runs on, see the switch
/// to [`CompleteStates::On`] in [`super::state::ExecState`]), and in the
/// call during which the comparing began.
pub(super) fn note_parking(caller: &mut Caller<'_, ThreadData>) {
    if caller.data().live_locals.is_none() {
        return;
    }
    let (states, noted) = {
        let data = caller.data();
        let exec = data.exec.get();
        (
            exec.limit_watch.complete_states,
            exec.threads[data.tid as usize].frames.is_some(),
        )
    };
    match states {
        CompleteStates::Off => {}
        CompleteStates::After(_) => keep_digest(caller, false),
        CompleteStates::On if !noted => note(caller),
        CompleteStates::Keyed if !noted && !caller.data().exec.get().scheduler.states_done() => {
            keep_digest(caller, false)
        }
        CompleteStates::On | CompleteStates::Keyed => {}
    }
}

/// Keeps the digest of the calling thread's frames as its state (see
/// [`digest`]).
fn keep_digest(caller: &mut Caller<'_, ThreadData>, fresh_slice: bool) {
    let digest = digest(caller.as_context_mut(), fresh_slice);
    let data = caller.data();
    data.exec.get().threads[data.tid as usize].keep_frames(digest);
}

/// Epoch checks a time slice lasts, once complete states are compared (a
/// loop iteration or a function call each).
const CHECKS_PER_SLICE: u64 = 10_000;

/// The epoch check of a thread of a program that reads frames (see
/// [`super::Program::state_reader`]), at the start of each loop iteration
/// and function call once the engine's epoch was raised, which the
/// executor does when complete states begin to be compared: from then on
/// the thread's time slices end here, after [`CHECKS_PER_SLICE`] checks,
/// where its frames can be read, instead of where its fuel runs out (which
/// would depend on fuel spent before). At a slice's end the thread stops
/// as at a scheduling point, and parks if another thread is chosen.
pub(super) fn at_epoch_check(
    mut store: StoreContextMut<'_, ThreadData>,
) -> wasmtime::Result<UpdateDeadline> {
    if store.data().exec.get().limit_watch.complete_states != CompleteStates::On {
        // An epoch raised for an execution before: checks stop until the
        // next is raised.
        return Ok(UpdateDeadline::Continue(1));
    }
    let checks = match store.data().slice_checks {
        Some(checks) => checks + 1,
        None => {
            // Slices end here from now on, not where fuel runs out.
            store.fuel_async_yield_interval(None)?;
            1
        }
    };
    if checks < CHECKS_PER_SLICE {
        store.data_mut().slice_checks = Some(checks);
        return Ok(UpdateDeadline::Continue(0));
    }
    store.data_mut().slice_checks = Some(0);
    let digest = digest(store.as_context_mut(), true);
    let me = store.data().tid;
    let exec = store.data().exec.clone();
    let must_park = {
        let mut state = exec.get();
        state.threads[me as usize].keep_frames(digest);
        state.end_slice(me)
    };
    if must_park {
        // Unwinding, the thread's next import fails as its park would.
        let parked = async move {
            let _ = park(exec).await;
        };
        Ok(UpdateDeadline::YieldCustom(0, Box::pin(parked)))
    } else {
        Ok(UpdateDeadline::Continue(0))
    }
}

/// What the host read of a thread's frames where it stopped.
#[derive(Clone, Copy, Debug)]
pub(super) struct FramesRead {
    /// The digest of its wasm state (see [`digest`]).
    pub(super) digest: u128,
    /// The lowest byte of its stack its frames may still read, when known
    /// (see [`super::thread_stacks`]).
    pub(super) live_floor: Option<u32>,
}

/// The digest of the wasm state of the thread whose call to the host
/// `store` is in, and whether its time slice starts afresh, with where its
/// live stack ends: `None` when a frame cannot be read.
fn digest(mut store: StoreContextMut<'_, ThreadData>, fresh_slice: bool) -> Option<FramesRead> {
    let live_locals = store.data().live_locals.clone()?;
    let mut hasher = Xxh3::new();
    hasher.update(&[u8::from(fresh_slice)]);
    let frames: Vec<_> = store.debug_exit_frames().collect();
    let mut instance = None;
    let stack_pointer = live_locals.stack_pointer();
    let mut keeps_red_zone = false;
    for exit in frames {
        let mut frame = Some(exit);
        while let Some(handle) = frame {
            let position = handle.wasm_function_index_and_pc(&mut store).ok()?;
            keeps_red_zone |=
                stack_pointer.uses_red_zone(position.map(|(function, _)| function.as_u32()));
            match position {
                Some((function, pc)) => {
                    hasher.update(&function.as_u32().to_le_bytes());
                    hasher.update(&pc.raw().to_le_bytes());
                }
                None => {
                    hasher.update(&u32::MAX.to_le_bytes());
                }
            }
            if instance.is_none() {
                instance = Some(handle.instance(&mut store).ok()?);
            }
            let locals = handle.num_locals(&mut store).ok()?;
            hasher.update(&locals.to_le_bytes());
            // A local the function cannot read again is no part of where
            // it stands.
            let live =
                position.and_then(|(function, pc)| live_locals.at(function.as_u32(), pc.raw()));
            for index in 0..locals {
                if live.is_none_or(|set| set.contains(index)) {
                    hash_value(&mut hasher, &handle.local(&mut store, index).ok()?);
                } else {
                    hasher.update(b"-");
                }
            }
            let stack = handle.num_stacks(&mut store).ok()?;
            hasher.update(&stack.to_le_bytes());
            for index in 0..stack {
                hash_value(&mut hasher, &handle.stack(&mut store, index).ok()?);
            }
            frame = handle.parent(&mut store).ok()?;
        }
        // Activations are separated by host code.
        hasher.update(b"|");
    }
    let mut live_floor = None;
    if let Some(instance) = instance {
        hash_globals(&mut hasher, instance, store.as_context_mut());
        if let Some(global) = stack_pointer.global()
            && let Some(Val::I32(pointer)) = instance
                .debug_global(&mut store, global)
                .map(|g| g.get(&mut store))
        {
            live_floor = Some(StackPointer::live_floor(pointer as u32, keeps_red_zone));
        }
    }
    Some(FramesRead {
        digest: hasher.digest128(),
        live_floor,
    })
}

/// The digest of a thread that has not started: what it starts with.
pub(super) fn not_started(start_arg: i32) -> u128 {
    let mut hasher = Xxh3::new();
    hasher.update(b"not started");
    hasher.update(&start_arg.to_le_bytes());
    hasher.digest128()
}

/// Hashes every global of `instance`, in index order.
fn hash_globals(
    hasher: &mut Xxh3,
    instance: wasmtime::Instance,
    mut store: StoreContextMut<'_, ThreadData>,
) {
    let mut index = 0;
    while let Some(global) = instance.debug_global(&mut store, index) {
        hash_value(hasher, &global.get(&mut store));
        index += 1;
    }
}

/// Hashes a wasm value: its type and its bits (references by whether they
/// are null: C, C++, Zig and Rust programs keep none in frames).
fn hash_value(hasher: &mut Xxh3, value: &Val) {
    let (kind, bits): (u8, u128) = match value {
        Val::I32(v) => (0, u128::from(*v as u32)),
        Val::I64(v) => (1, u128::from(*v as u64)),
        Val::F32(bits) => (2, u128::from(*bits)),
        Val::F64(bits) => (3, u128::from(*bits)),
        Val::V128(v) => (4, v.as_u128()),
        Val::FuncRef(r) => (5, u128::from(r.is_some())),
        Val::ExternRef(r) => (6, u128::from(r.is_some())),
        Val::AnyRef(r) => (7, u128::from(r.is_some())),
        Val::ExnRef(r) => (8, u128::from(r.is_some())),
        Val::ContRef(r) => (9, u128::from(r.is_some())),
    };
    hasher.update(&[kind]);
    hasher.update(&bits.to_le_bytes());
}
