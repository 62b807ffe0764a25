//! The poll loop of one execution.
//!
//! Each guest thread is a future (instantiate, then `call_async` its entry
//! point). The loop polls only the thread the scheduler chose; that thread
//! runs until it parks in a host import (the scheduler chose another
//! thread), exhausts a fuel slice (a time-slice scheduling point), or
//! finishes.
//!
//! When the program's instances are reusable, a thread that finishes hands
//! its store and instance back ([`WarmThread`]), and the thread with the same
//! id in the next execution runs on them instead of a new instance.

use super::analysis::{Analysis, Happening};
use super::live_locals::LiveLocals;
use super::looping::CompleteStates;
use super::outcome::{BACKTRACE_HINT, Cut, Outcome, Unseen};
use super::point_buffer::PointBuffer;
use super::rt_imports::SignatureMismatch;
use super::sdk_imports::{Ended, ThreadExit};
use super::shared_memory::GuestMemory;
use super::state::{ExecHandle, ExecState, LimitWatch};
use super::wasi::GuestExit;
use super::{ExecutionResult, Program, RunConfig, SLICE_FUEL, ThreadData};
use crate::abi;
use crate::debuginfo::symbols::LazySymbols;
use crate::instrument::MemoryPlan;
use crate::sched::{Fair, Notice, ReplayScheduler, Scheduler};
use crate::trace::{EventKind, ThreadId};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use wasmtime::{Instance, InstancePre, Memory, Store, Trap, TypedFunc};

/// How a thread ended, with its store and instance when they can run the
/// same thread of the next execution.
type ThreadEnd = (wasmtime::Result<()>, Option<WarmThread>);

type ThreadFuture = Pin<Box<dyn Future<Output = ThreadEnd>>>;

/// Threads (by id) whose store and instance are kept for the next execution
/// once they finish; later ones are dropped when they finish.
pub(super) const WARM_THREADS: usize = 128;

/// The store and instance of a thread that finished, kept for the thread
/// with the same id in the next execution over the same shared memory.
pub(super) struct WarmThread {
    store: Store<ThreadData>,
    instance: Instance,
    exports: ThreadExports,
}

/// The exports a thread's run finds on its instance by name, kept with a
/// warm thread: the next run on the instance need not look them up (and
/// check their types) again. Each is `None` until found.
#[derive(Default)]
struct ThreadExports {
    point_buffer: Option<Memory>,
    main: Option<TypedFunc<(), ()>>,
    thread: Option<TypedFunc<(i32, i32), ()>>,
}

/// What a thread starts on.
enum Launch {
    /// A store to instantiate the module in.
    Fresh(Store<ThreadData>),
    /// A finished thread's store and instance, ready for the next execution.
    Warm(WarmThread),
}

impl Launch {
    fn store(&self) -> &Store<ThreadData> {
        match self {
            Launch::Fresh(store) => store,
            Launch::Warm(warm) => &warm.store,
        }
    }
}

/// The host could not set a thread up (missing export, bad memory image).
#[derive(Debug)]
struct SetupError(String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

/// Where a thread starts.
#[derive(Clone, Copy)]
enum Entry {
    Main,
    Thread { tid: ThreadId, start_arg: i32 },
}

/// Creates the stores of an execution's threads.
struct StoreFactory {
    engine: wasmtime::Engine,
    exec: ExecHandle,
    shared_memory: Option<Arc<GuestMemory>>,
    args: Arc<Vec<String>>,
    env: Arc<Vec<String>>,
    max_memory_bytes: u64,
    max_fuel: u64,
    /// When the program reads its threads' frames (see
    /// [`super::frames`]): which of a frame's locals still count.
    live_locals: Option<Arc<LiveLocals>>,
    /// Whether the engine's epoch was raised for this execution (see
    /// [`super::frames::at_epoch_check`]): a thread started since checks
    /// at once.
    epoch_raised: std::cell::Cell<bool>,
}

impl StoreFactory {
    fn store(&self, tid: ThreadId) -> wasmtime::Result<Store<ThreadData>> {
        let mut store = Store::new(
            &self.engine,
            ThreadData {
                tid,
                exec: self.exec.clone(),
                shared_memory: self.shared_memory.clone(),
                args: self.args.clone(),
                env: self.env.clone(),
                max_memory_bytes: self.max_memory_bytes,
                wasi: None,
                live_locals: self.live_locals.clone(),
                slice_checks: None,
            },
        );
        store.set_fuel(self.fuel())?;
        store.fuel_async_yield_interval(Some(SLICE_FUEL))?;
        store.limiter(|data| data);
        if self.live_locals.is_some() {
            store.epoch_deadline_callback(super::frames::at_epoch_check);
            store.set_epoch_deadline(self.epoch_deadline());
        }
        Ok(store)
    }

    /// The fuel a thread's store gets: on the state reader, a compute
    /// budget more, for the part where complete states are compared.
    fn fuel(&self) -> u64 {
        let fuel = store_fuel(self.max_fuel);
        if self.live_locals.is_some() {
            fuel.saturating_add(self.max_fuel)
        } else {
            fuel
        }
    }

    /// Epochs from now until a thread's epoch checks call back: the next
    /// raise, or at once once it was raised.
    fn epoch_deadline(&self) -> u64 {
        u64::from(!self.epoch_raised.get())
    }

    /// Raises the engine's epoch: every thread's epoch checks call back
    /// from now on.
    fn raise_epoch(&self) {
        if !self.epoch_raised.replace(true) {
            self.engine.increment_epoch();
        }
    }

    /// What thread `tid` starts on: the warm thread kept for it, set up for
    /// this execution, else a new store.
    fn launch(&self, warm: &mut [Option<WarmThread>], tid: ThreadId) -> wasmtime::Result<Launch> {
        let Some(mut thread) = warm.get_mut(tid as usize).and_then(Option::take) else {
            return Ok(Launch::Fresh(self.store(tid)?));
        };
        let data = thread.store.data_mut();
        data.args = self.args.clone();
        data.env = self.env.clone();
        data.max_memory_bytes = self.max_memory_bytes;
        data.wasi = None;
        data.slice_checks = None;
        thread.store.set_fuel(self.fuel())?;
        if self.live_locals.is_some() {
            thread.store.fuel_async_yield_interval(Some(SLICE_FUEL))?;
            thread.store.set_epoch_deadline(self.epoch_deadline());
        }
        Ok(Launch::Warm(thread))
    }
}

/// Creates the futures of an execution's threads.
struct Spawner {
    stores: StoreFactory,
    pre: InstancePre<ThreadData>,
    /// The exports the main thread and spawned threads start in.
    entries: (&'static str, &'static str),
    /// Whether finished threads hand back their store and instance.
    reuses_instances: bool,
    /// Where a thread's map of read bytes lies, when the program tracks
    /// its reads.
    read_map: Option<(u64, u64)>,
}

impl Spawner {
    fn thread(&self, launch: Launch, entry: Entry) -> ThreadFuture {
        let pre = self.pre.clone();
        let entries = self.entries;
        let reuses_instances = self.reuses_instances;
        let read_map = self.read_map;
        Box::pin(async move {
            let (mut store, instance, mut exports) = match launch {
                Launch::Warm(warm) => (warm.store, warm.instance, warm.exports),
                Launch::Fresh(mut store) => match pre.instantiate_async(&mut store).await {
                    Ok(instance) => (store, instance, ThreadExports::default()),
                    Err(e) => return (Err(e), None),
                },
            };
            let result = run_thread(&mut store, instance, &mut exports, entry, entries).await;
            // Its map of read bytes, while its instance is there.
            let data = store.data();
            data.exec.get().take_read_map(data.tid, read_map);
            let warm = reuses_instances.then_some(WarmThread {
                store,
                instance,
                exports,
            });
            (result, warm)
        })
    }
}

/// Runs a thread's entry point on its instance, whose exports found so
/// far are `exports`.
async fn run_thread(
    store: &mut Store<ThreadData>,
    instance: Instance,
    exports: &mut ThreadExports,
    entry: Entry,
    (main_entry, thread_entry): (&'static str, &'static str),
) -> wasmtime::Result<()> {
    let visible = store
        .data()
        .shared_memory
        .as_ref()
        .map(|m| m.visible_bytes());
    if let Some(visible) = visible
        && let Some(buffer) = exports
            .point_buffer
            .or_else(|| instance.get_memory(&mut *store, abi::POINT_BUFFER.export))
    {
        exports.point_buffer = Some(buffer);
        let (base, bytes) = (buffer.data_ptr(&*store), buffer.data_size(&*store));
        // SAFETY: the executor drains and forgets the buffer before the
        // thread's instance can run again or be dropped.
        let points = unsafe { PointBuffer::new(base, bytes) };
        points.set_visible_size(visible);
        let data = store.data();
        let mut exec = data.exec.get();
        if let Some(bitmap) = &exec.log_bitmap {
            if !points.holds_log(bitmap.len()) {
                return Err(wasmtime::Error::new(SetupError(
                    "the module's point buffer has no room for its access log".into(),
                )));
            }
            // Only the main thread runs before the first spawn, with no
            // other thread to race with: it records from then on.
            points.start_log(bitmap, data.tid != 0 || exec.log_from_start);
        }
        exec.threads[data.tid as usize].points = Some(points);
    }
    match entry {
        Entry::Main => {
            let start = match exports.main.clone() {
                Some(start) => start,
                None => instance
                    .get_typed_func::<(), ()>(&mut *store, main_entry)
                    .map_err(|e| wasmtime::Error::new(SetupError(format!("`_start`: {e}"))))?,
            };
            exports.main = Some(start.clone());
            start.call_async(store, ()).await
        }
        Entry::Thread { tid, start_arg } => {
            let start = match exports.thread.clone() {
                Some(start) => start,
                None => instance
                    .get_typed_func::<(i32, i32), ()>(&mut *store, thread_entry)
                    .map_err(|e| {
                        wasmtime::Error::new(SetupError(format!("`wasi_thread_start`: {e}")))
                    })?,
            };
            exports.thread = Some(start.clone());
            let result = start.call_async(&mut *store, (tid as i32, start_arg)).await;
            match result {
                Err(e) if e.downcast_ref::<ThreadExit>().is_some() => {
                    // The thread left its start routine through
                    // `pthread_exit`: wasi-libc's thread start function runs
                    // again, takes the exit value as the routine's result
                    // and ends the thread as POSIX says.
                    let resume = instance
                        .get_typed_func::<(i32, i32), ()>(&mut *store, abi::THREAD_RESUME_EXPORT)
                        .map_err(|e| {
                            wasmtime::Error::new(SetupError(format!(
                                "`{}`: {e}",
                                abi::THREAD_RESUME_EXPORT
                            )))
                        })?;
                    resume.call_async(store, (tid as i32, start_arg)).await
                }
                result => result,
            }
        }
    }
}

/// Runs one execution of `program` with the analyses `analyses` makes
/// installed. An execution that came back to a state it was in, as memory
/// and the threads' places show, is a livelock only if a run on the state
/// reader shows it (see [`super::looping`]).
pub(super) fn run(
    program: &mut Program,
    scheduler: Box<dyn Scheduler>,
    config: &RunConfig,
    analyses: &dyn Fn() -> Vec<Box<dyn Analysis>>,
) -> ExecutionResult {
    // A program that cannot be compiled to read frames names no state:
    // its stateful search prunes nothing.
    let mut state = match config.keyed_states {
        true if program.state_reader().is_ok() => {
            let reader = program.state_reader().expect("compiled above");
            execute(reader, scheduler, config, analyses(), CompleteStates::Keyed)
        }
        _ => execute(program, scheduler, config, analyses(), CompleteStates::Off),
    };
    state.judge();
    if let Some(Outcome::Livelock {
        steps, fair_from, ..
    }) = state.end
    {
        let thread = state.current;
        match complete_state_loops(program, &state, config, analyses) {
            Ok(()) => {
                if let Some(Outcome::Livelock { looping, .. }) = &mut state.end {
                    name_places(program, looping);
                }
            }
            Err(unseen) => {
                state.end = Some(Outcome::Inconclusive(Cut::Looped {
                    thread,
                    steps,
                    fair_from,
                    unseen,
                }));
            }
        }
    }
    let mut result = finish(state);
    if let Some(reads) = &program.read_granules {
        result.read_more = reads.lock().unwrap_or_else(|e| e.into_inner()).commit();
    }
    result
}

/// Runs the execution `state` ended as a suspected livelock again on the
/// program's state reader: its decisions until it went on under a fair
/// schedule, then round robin, comparing complete states. `Ok` when the complete state came back; else what
/// kept the loop from being shown.
fn complete_state_loops(
    program: &mut Program,
    state: &ExecState,
    config: &RunConfig,
    analyses: &dyn Fn() -> Vec<Box<dyn Analysis>>,
) -> Result<(), Unseen> {
    let reader = if program.live_locals.is_some() {
        program
    } else {
        program.state_reader().map_err(|_| Unseen::NoReader)?
    };
    // Round robin from where the execution went on under a fair schedule:
    // any fair continuation that comes back to a complete state shows the
    // livelock, and this one is the shortest to run.
    let prefix = state.decisions[..state.limit_watch.decisions_when_fair].to_vec();
    let decisions = prefix.len();
    let scheduler = ReplayScheduler::then_round_robin(prefix, state.values.clone());
    let again = execute(
        reader,
        Box::new(scheduler),
        config,
        analyses(),
        CompleteStates::After(decisions),
    );
    match again.end {
        // A thread that could take a signal, had weft a way to deliver
        // it there, is no proof of a livelock.
        Some(Outcome::Livelock { .. }) if again.unseen() == Unseen::SignalPending => {
            Err(Unseen::SignalPending)
        }
        Some(Outcome::Livelock { .. }) => Ok(()),
        Some(Outcome::Inconclusive(_)) => Err(again.unseen()),
        _ => Err(Unseen::Ended),
    }
}

/// Runs one execution of `program` with `analyses` installed, comparing
/// complete states as `complete_states` says; the state it ended in.
fn execute(
    program: &mut Program,
    scheduler: Box<dyn Scheduler>,
    config: &RunConfig,
    analyses: Vec<Box<dyn Analysis>>,
    complete_states: CompleteStates,
) -> ExecState {
    let mut scheduler = Fair::new(scheduler);
    scheduler.observe(Notice::ExecutionStarted);
    let exec = program.exec.clone();
    exec.begin(ExecState::new(
        program.sites.clone(),
        scheduler,
        config.limits,
        config.random_seed,
    ));
    exec.get().install(analyses);
    exec.get().limit_watch.stop_at = config.stop_at;
    exec.get().log_from_start = config.log_from_start;
    exec.get().records_library_internals = !program.options().quiet_bookkeeping;
    exec.get().sleeps = config.sleeps;
    exec.get().log_bitmap = program
        .access_log
        .map(|sites| scheduled_sites(sites, &config.point_sites));
    exec.get().limit_watch.complete_states = complete_states;
    exec.get().read_granules = program.read_granules.clone();
    let main = exec.get().add_thread();
    if program.live_locals.is_some() {
        exec.get().threads[main as usize].frames = Some(super::frames::not_started(0));
    }
    exec.get().begin_analyses();
    let ended = exec.get().end.is_some();
    if !ended && let Err(e) = drive(program, &exec, config, main) {
        exec.get().finish(Outcome::HostError(e));
    }
    exec.end().expect("the execution began above")
}

/// Names where each looping thread stands, in source terms, when it stands
/// at a code site.
fn name_places(program: &Program, looping: &mut [super::LoopingThread]) {
    for thread in looping {
        if let Some(site) = thread.site.and_then(|id| program.sites.get(id)) {
            let place = program.symbols().describe(site);
            thread.place = if thread.at_access {
                place
            } else {
                format!("time slices (its last access: {place})")
            };
        }
    }
}

/// The bitmap of the `sites` sites of a module that logs its accesses, with
/// the bits of `scheduled` set (see [`crate::abi::ACCESS_LOG`]); sites past
/// the bitmap are ignored.
fn scheduled_sites(sites: u64, scheduled: &[crate::instrument::SiteId]) -> Box<[u8]> {
    let mut bitmap = vec![0u8; sites.div_ceil(8) as usize].into_boxed_slice();
    for &site in scheduled {
        if let Some(byte) = bitmap.get_mut(site as usize / 8) {
            *byte |= 1 << (site % 8);
        }
    }
    bitmap
}

fn drive(
    program: &mut Program,
    exec: &ExecHandle,
    config: &RunConfig,
    main: ThreadId,
) -> Result<(), String> {
    let initial_pages = match &program.memory {
        MemoryPlan::Shared(plan) => plan.min_pages,
        MemoryPlan::Private { min_pages } => *min_pages,
        MemoryPlan::None => 0,
    };
    if initial_pages * 65536 > config.limits.max_memory_bytes {
        return Err(format!(
            "the module's initial memory ({}) exceeds the memory limit ({}): raise --max-memory-mib",
            size(initial_pages * 65536),
            size(config.limits.max_memory_bytes)
        ));
    }
    let shared_memory = program.take_memory()?;
    exec.get().memory = shared_memory.clone();
    let mut warm = std::mem::take(&mut program.warm_threads);
    let stores = StoreFactory {
        engine: program.engine.clone(),
        exec: exec.clone(),
        shared_memory,
        args: Arc::new(config.args.clone()),
        env: Arc::new(config.env.clone()),
        max_memory_bytes: config.limits.max_memory_bytes,
        max_fuel: config.limits.max_fuel,
        live_locals: program.live_locals.clone(),
        epoch_raised: std::cell::Cell::new(false),
    };
    // The main store exists before the instance template so that the shared
    // memory can be defined in the linker with it.
    let main_launch = stores.launch(&mut warm, main).map_err(|e| e.to_string())?;
    let pre = program
        .instance_pre(main_launch.store(), stores.shared_memory.as_deref())
        .map_err(|e| format!("{e:#}"))?;
    let spawner = Spawner {
        stores,
        pre,
        entries: program.entries,
        reuses_instances: program.reuses_instances,
        read_map: program.read_map,
    };
    let mut threads: Vec<Option<ThreadFuture>> =
        vec![Some(spawner.thread(main_launch, Entry::Main))];
    poll_loop(&spawner, &mut threads, &mut warm, exec, &program.symbols);
    {
        // The threads still alive: their maps of read bytes, while their
        // instances are.
        let state = exec.get();
        for tid in 0..state.threads.len() {
            state.take_read_map(tid as ThreadId, program.read_map);
        }
    }
    if program.live_locals.is_some() && program.reuses_instances {
        let ended = exec.end().expect("the execution began");
        // What a thread may pass inside wasm is taken back: its buffer
        // starts the next execution empty, as a finished thread's does.
        for points in ended.threads.iter().filter_map(|t| t.points.as_ref()) {
            points.drain_count();
        }
        let started: Vec<bool> = ended.threads.iter().map(|t| t.points.is_some()).collect();
        exec.begin(ExecState::stand_in(program.sites.clone(), started.len()));
        unwind(&mut threads, &started, &mut warm);
        exec.begin(ended);
    }
    drop(threads);
    // The memory's other holders must be gone for it to be kept.
    exec.get().memory = None;
    if let Some(memory) = spawner.stores.shared_memory {
        program.recycle(memory, warm);
    }
    Ok(())
}

/// Times an unwound thread is resumed before it is given up: a thread
/// stopped in a time slice runs on to its next import, which fails.
const UNWIND_POLLS: usize = 4;

/// Resumes each thread that started and was still alive when the
/// execution ended, against a stand-in state (see
/// [`ExecState::stand_in`]) where every park fails, so that its wasm
/// returns and its store and instance are kept for the next execution like
/// a finished thread's. On the state reader a new store copies the
/// module's code, which costs far more than an execution that a stateful
/// search ends early. A thread that never ran is dropped: run now, it
/// would start its work.
fn unwind(
    threads: &mut [Option<ThreadFuture>],
    started: &[bool],
    warm: &mut Vec<Option<WarmThread>>,
) {
    let mut cx = Context::from_waker(Waker::noop());
    for (tid, slot) in threads.iter_mut().enumerate().take(WARM_THREADS) {
        let Some(future) = slot.as_mut().filter(|_| started.get(tid) == Some(&true)) else {
            continue;
        };
        for _ in 0..UNWIND_POLLS {
            if let Poll::Ready((_, finished)) = future.as_mut().poll(&mut cx) {
                if warm.len() <= tid {
                    warm.resize_with(tid + 1, || None);
                }
                warm[tid] = finished;
                *slot = None;
                break;
            }
        }
    }
}

/// Polls the chosen thread until the execution ends. `warm` holds the
/// threads kept from the previous execution; finished threads take their
/// place for the next one. `symbols` name what a trap needs named.
fn poll_loop(
    spawner: &Spawner,
    threads: &mut Vec<Option<ThreadFuture>>,
    warm: &mut Vec<Option<WarmThread>>,
    exec: &ExecHandle,
    symbols: &LazySymbols,
) {
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        let (current, spawns) = {
            let mut state = exec.get();
            if state.end.is_some() {
                return;
            }
            if state.limit_watch.complete_states == CompleteStates::On {
                // Time slices end at epoch checks from now on (see
                // `frames::at_epoch_check`).
                spawner.stores.raise_epoch();
            }
            state.parked = false;
            (state.current, std::mem::take(&mut state.spawn_queue))
        };
        for (tid, start_arg) in spawns {
            let future = match spawner.stores.launch(warm, tid) {
                Ok(launch) => spawner.thread(launch, Entry::Thread { tid, start_arg }),
                Err(e) => Box::pin(async move { (Err(e), None) }),
            };
            if threads.len() <= tid as usize {
                threads.resize_with(tid as usize + 1, || None);
            }
            threads[tid as usize] = Some(future);
        }
        let Some(future) = threads.get_mut(current as usize).and_then(Option::as_mut) else {
            exec.get().finish(Outcome::HostError(format!(
                "thread {current} has no future"
            )));
            return;
        };
        match future.as_mut().poll(&mut cx) {
            Poll::Pending => {
                let mut state = exec.get();
                if !state.parked && state.end.is_none() {
                    // Stopped in the middle of its code: its frames are
                    // out of sight.
                    state.threads[current as usize].frames = None;
                    state.point_reached(current);
                    state.record(current, EventKind::Slice, 0, None);
                    state.slice_used(current);
                    state.schedule(current);
                }
            }
            Poll::Ready((result, finished)) => {
                {
                    let mut state = exec.get();
                    state.drain_points(current);
                    state.threads[current as usize].points = None;
                }
                threads[current as usize] = None;
                // A thread whose id is past the warm ones gives its instance
                // back to the pool: a program may create many short-lived
                // threads one after another.
                if let Some(finished) = finished.filter(|_| (current as usize) < WARM_THREADS) {
                    if warm.len() <= current as usize {
                        warm.resize_with(current as usize + 1, || None);
                    }
                    warm[current as usize] = Some(finished);
                }
                let mut state = exec.get();
                match result {
                    Ok(()) if current == 0 => {
                        state.happened(current, Happening::Ended);
                        state.finish(Outcome::Exited(0));
                    }
                    Ok(()) => {
                        state.thread_exited(current);
                        state.schedule(current);
                    }
                    Err(e) => {
                        let outcome = classify(&state, symbols, current, &e);
                        state.finish(outcome);
                    }
                }
            }
        }
    }
}

/// The fuel a thread's store gets for a compute budget of `max_fuel`: the
/// runtime counts the slices a thread uses and acts at the budget (see
/// [`ExecState::slice_used`]), once under the strategy and once more under
/// a fair schedule, so the store's own fuel only stops what slips past.
fn store_fuel(max_fuel: u64) -> u64 {
    max_fuel.saturating_mul(2).saturating_add(4 * SLICE_FUEL)
}

/// Turns a thread's error into the execution's outcome.
fn classify(
    state: &ExecState,
    symbols: &LazySymbols,
    thread: ThreadId,
    error: &wasmtime::Error,
) -> Outcome {
    if let Some(&SignatureMismatch(function)) = error.downcast_ref::<SignatureMismatch>() {
        return Outcome::Trap {
            thread,
            message: mismatch_message(symbols, function),
        };
    }
    if let Some(&GuestExit(code)) = error.downcast_ref::<GuestExit>() {
        if code == 0 {
            return Outcome::Exited(0);
        }
        // Any thread may end the process; the failure is the caller's.
        return Outcome::Reported(crate::failure::Failure {
            kind: crate::failure::FailureKind::Exit,
            message: format!("the program exited with code {code}"),
            thread,
        });
    }
    if error.downcast_ref::<Ended>().is_some()
        && let Some(end) = &state.end
    {
        return end.clone();
    }
    if let Some(SetupError(message)) = error.downcast_ref::<SetupError>() {
        return Outcome::HostError(message.clone());
    }
    if let Some(Trap::OutOfFuel) = error.downcast_ref::<Trap>() {
        // The slices counted are fewer than the fuel used (a slice ends
        // a little after its fuel ran out): the store's own fuel may run
        // out first.
        let fuel = state.limits.max_fuel;
        return state.limit_outcome(thread, super::Cut::Fuel { thread, fuel });
    }
    let watch = &state.limit_watch;
    if let Some(limit) = refusal_outcome(
        &state.limits,
        watch.memory_limit_hit,
        watch.thread_limit_hit,
        thread,
    ) {
        return limit;
    }
    Outcome::Trap {
        thread,
        message: trap_message(state, error),
    }
}

/// The outcome of an execution that ended in a deadlock, a livelock or a
/// non-zero exit after a limit refused the program memory (`memory`) or a
/// thread (`threads`): the limit's, as for a trap after a refusal. The
/// program took a path a run without the limit would not (a pool that
/// waits for a worker it could not create spins forever), so the failure
/// is weft's limit, not the program's.
fn after_refusal(outcome: Outcome, limits: &super::Limits, memory: bool, threads: bool) -> Outcome {
    let ends_badly = match &outcome {
        Outcome::Deadlock { .. } | Outcome::Livelock { .. } => true,
        Outcome::Exited(code) => *code != 0,
        Outcome::Reported(failure) => failure.kind == crate::failure::FailureKind::Exit,
        _ => false,
    };
    if !ends_badly {
        return outcome;
    }
    let thread = outcome.failure().map_or(0, |f| f.thread);
    refusal_outcome(limits, memory, threads, thread).unwrap_or(outcome)
}

/// The limit's outcome for a failure of `thread` after the memory limit
/// (`memory`) or the thread limit (`threads`) refused the program, if one
/// did.
fn refusal_outcome(
    limits: &super::Limits,
    memory: bool,
    threads: bool,
    thread: ThreadId,
) -> Option<Outcome> {
    if memory {
        Some(Outcome::MemoryLimit {
            thread,
            limit: limits.max_memory_bytes,
        })
    } else if threads {
        Some(Outcome::ThreadLimit {
            thread,
            limit: limits.max_threads,
        })
    } else {
        None
    }
}

/// `bytes` in MiB, or in KiB below one MiB (a memory limit of 0 MiB is
/// 64 KiB short of a one-page module).
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// What a call through wasm-ld's signature-mismatch stub `function` means,
/// naming the function called.
fn mismatch_message(symbols: &LazySymbols, function: u32) -> String {
    let stub = symbols.with(|s| s.function_name(function).map(str::to_string));
    let called = stub
        .as_deref()
        .and_then(|name| name.strip_prefix(abi::SIGNATURE_MISMATCH_PREFIX))
        .unwrap_or("a function");
    format!(
        "`{called}` was called with a signature that does not match its definition, so the linker put a stub that traps in its place: declare `{called}` as it is defined (old C's implicit declarations differ from most definitions)"
    )
}

/// The panic message the guest printed; else what it last wrote to stderr
/// (a C `assert` message, say) with the trap; else the trap alone.
fn trap_message(state: &ExecState, error: &wasmtime::Error) -> String {
    let stderr = String::from_utf8_lossy(&state.stderr);
    if let Some(at) = stderr.rfind("panicked at") {
        let start = stderr[..at].rfind('\n').map_or(0, |i| i + 1);
        return stderr[start..]
            .trim_end()
            .lines()
            .filter(|l| !l.starts_with(BACKTRACE_HINT))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let trap = match error.downcast_ref::<Trap>() {
        Some(Trap::BadSignature) => format!(
            "{}: a call through a function pointer reached a function of another type that does not fit the call (it takes more arguments than the call passes, or others, or returns nothing where the call reads a value); C leaves such a call undefined, and weft runs only the casts native code gets right (fewer arguments, an unread result)",
            Trap::BadSignature
        ),
        Some(trap) => trap.to_string(),
        None => error.to_string(),
    };
    let last_lines: Vec<&str> = stderr.trim_end().lines().rev().take(3).collect();
    if last_lines.is_empty() {
        return trap;
    }
    let mut message: Vec<&str> = last_lines.into_iter().rev().collect();
    let trap = format!("({trap})");
    message.push(&trap);
    message.join("\n")
}

fn finish(mut state: ExecState) -> ExecutionResult {
    let reports = state.finish_analyses();
    let signals_sent = state.signals_sent();
    let ExecState {
        mut scheduler,
        trace,
        decisions,
        preemptions,
        values,
        end,
        stdout,
        stderr,
        labels,
        threads,
        step,
        points_in_library_steps,
        atomic_sections,
        unenumerated,
        limit_watch:
            LimitWatch {
                fair_from,
                memory_limit_hit,
                thread_limit_hit,
                ..
            },
        limits,
        ..
    } = state;
    let refused = if memory_limit_hit {
        Some(super::Cut::MemoryRefused {
            bytes: limits.max_memory_bytes,
        })
    } else if thread_limit_hit {
        Some(super::Cut::ThreadRefused {
            threads: limits.max_threads,
        })
    } else {
        None
    };
    // The point model's steps: under library calls, a call is one.
    let steps = step - points_in_library_steps;
    scheduler.observe(Notice::ExecutionEnded {
        steps,
        went_fair: fair_from.is_some(),
    });
    let outcome = end.unwrap_or(Outcome::HostError(
        "the execution ended without an outcome".into(),
    ));
    let outcome = after_refusal(outcome, &limits, memory_limit_hit, thread_limit_hit);
    let (events, events_dropped, trace_hash) = trace.finish(&outcome.summary());
    ExecutionResult {
        outcome,
        events,
        events_dropped,
        decisions,
        preemptions,
        values,
        trace_hash,
        stdout,
        stderr,
        labels,
        thread_names: threads.into_iter().map(|t| t.name).collect(),
        steps,
        fair_from,
        atomic_sections,
        signals_sent,
        unenumerated,
        refused,
        reports,
        read_more: false,
    }
}
