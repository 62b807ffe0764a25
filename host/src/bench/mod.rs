//! Measurements of the hot paths: a scheduling point that does not switch,
//! a context switch (and what wasmtime alone takes for one), an
//! execution's fixed cost, each thread's, a plain
//! access under the race check, and whole executions per second.
//!
//! `weft bench` prints them; run it on a release build.

mod switch_floor;

use crate::execution::Setup;
use crate::instrument::{InstrumentOptions, PointModel};
use crate::race::RaceMode;
use crate::runtime::{LoadTimes, Outcome, Program};
use crate::sched::{ScheduleError, Scheduler, Strategy, ThreadView};
use crate::trace::ThreadId;
use std::time::{Duration, Instant};

/// The instrumentation the commands give a module by default (the point
/// model `library-calls`, synchronisation points), with the race check's
/// logging when `races`: the module's figures are those of `weft explore`.
fn as_commands_run(races: bool) -> InstrumentOptions {
    PointModel::default()
        .instrument(false)
        .with_race_check(races)
}

/// Loop iterations of the micro benchmarks.
const ITERATIONS: u32 = 2_000_000;

/// A loop of `ITERATIONS` instructions in `body`, in one or two threads.
fn loop_module(body: &str, threads: u32) -> Vec<u8> {
    let spawn = if threads == 2 {
        "(drop (call $spawn (i32.const 0)))"
    } else {
        ""
    };
    wat::parse_str(format!(
        r#"(module
          (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
          (memory 1 1 shared)
          (func $work (local $i i32)
            (loop $l
              {body}
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br_if $l (i32.lt_u (local.get $i) (i32.const {ITERATIONS})))))
          (func (export "wasi_thread_start") (param i32 i32) (call $work))
          (func (export "_start") {spawn} (call $work)))"#
    ))
    .expect("the benchmark modules are valid")
}

/// Threads `main` spawns in [`threads_module`].
const SPAWNED: u32 = 16;

/// `main` spawns `threads` threads that each add one to a counter and
/// exit, and waits until all have: an execution's fixed cost with no
/// threads, and each thread's spawn and exit beyond it.
fn threads_module(threads: u32) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(module
          (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
          (memory 1 1 shared)
          (func (export "wasi_thread_start") (param i32 i32)
            (drop (i32.atomic.rmw.add (i32.const 0) (i32.const 1)))
            (drop (memory.atomic.notify (i32.const 0) (i32.const 1))))
          (func (export "_start") (local $i i32) (local $seen i32)
            (block $spawned
              (loop $spawn_next
                (br_if $spawned (i32.ge_u (local.get $i) (i32.const {threads})))
                (drop (call $spawn (i32.const 0)))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $spawn_next)))
            (block $done
              (loop $wait
                (local.set $seen (i32.atomic.load (i32.const 0)))
                (br_if $done (i32.ge_u (local.get $seen) (i32.const {threads})))
                (drop (memory.atomic.wait32 (i32.const 0) (local.get $seen) (i64.const -1)))
                (br $wait)))))"#
    ))
    .expect("the benchmark modules are valid")
}

/// Two threads each store to their own word `ITERATIONS` times: plain
/// accesses that the race check logs (after the first spawn) and that
/// are no scheduling points.
fn stores_module() -> Vec<u8> {
    wat::parse_str(format!(
        r#"(module
          (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
          (memory 1 1 shared)
          (func $work (param $at i32) (local $i i32)
            (loop $l
              (i32.store (local.get $at) (local.get $i))
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br_if $l (i32.lt_u (local.get $i) (i32.const {ITERATIONS}))))
            (drop (i32.atomic.rmw.add (i32.const 64) (i32.const 1)))
            (drop (memory.atomic.notify (i32.const 64) (i32.const 1))))
          (func (export "wasi_thread_start") (param i32 i32) (call $work (i32.const 16)))
          (func (export "_start") (local $seen i32)
            (drop (call $spawn (i32.const 0)))
            (call $work (i32.const 0))
            (block $done
              (loop $wait
                (local.set $seen (i32.atomic.load (i32.const 64)))
                (br_if $done (i32.ge_u (local.get $seen) (i32.const 2)))
                (drop (memory.atomic.wait32 (i32.const 64) (local.get $seen) (i64.const -1)))
                (br $wait)))))"#
    ))
    .expect("the benchmark modules are valid")
}

/// Keeps the running thread while it can run: with two threads enabled,
/// every point is a decision that does not switch.
struct KeepRunning;

impl Scheduler for KeepRunning {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        Ok(current.unwrap_or(enabled[0].id))
    }
    fn choose_value(&mut self, _bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(0)
    }
}

/// Always switches to the next enabled thread: every point is a switch.
struct RoundRobin;

impl Scheduler for RoundRobin {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        Ok(crate::sched::round_robin(enabled, current))
    }
    fn choose_value(&mut self, _bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(0)
    }
}

/// Runs `wasm` once and returns how long it took and its scheduling
/// points. An execution still going at `stop_at` is cut short: the points
/// it passed still give their cost per point.
fn time_module(
    wasm: &[u8],
    scheduler: Box<dyn Scheduler>,
    stop_at: Instant,
) -> anyhow::Result<(Duration, u64)> {
    time_module_as(wasm, Default::default(), RaceMode::Off, scheduler, stop_at)
}

/// [`time_module`] under the instrumentation `instrument` and the race
/// check `races`.
fn time_module_as(
    wasm: &[u8],
    instrument: InstrumentOptions,
    races: RaceMode,
    scheduler: Box<dyn Scheduler>,
    stop_at: Instant,
) -> anyhow::Result<(Duration, u64)> {
    let mut program = crate::execution::load(wasm, instrument)?;
    let mut config = Setup {
        races,
        ..Setup::default()
    };
    config.run.limits.max_steps = u64::MAX;
    config.run.limits.max_fuel = u64::MAX / 4;
    config.run.limits.time_limit = None;
    config.run.stop_at = Some(stop_at);
    let start = Instant::now();
    let result = crate::execution::execute(&mut program, scheduler, &config);
    let elapsed = start.elapsed();
    anyhow::ensure!(
        result.outcome.failure().is_none(),
        "benchmark module failed: {:?}",
        result.outcome
    );
    Ok((elapsed, result.steps))
}

/// The measured figures.
#[derive(Clone, Copy, Debug)]
pub struct BenchReport {
    /// Cost of a scheduling point that does not switch, in nanoseconds, over
    /// a plain load: one thread can run, so the point passes inside wasm on
    /// the thread's budget and the host records it later.
    pub hook_ns: f64,
    /// Cost of a scheduling point where two threads can run and the
    /// scheduler keeps the running one: a host call, the event record and
    /// the scheduler's decision.
    pub decision_ns: f64,
    /// Cost of a context switch, in nanoseconds, beyond a decision point.
    pub switch_ns: f64,
    /// Cost of a context switch in wasmtime alone, in nanoseconds: an
    /// asynchronous host call that suspends the thread and the resume of
    /// another, on weft's engine, with nothing of weft's between. The floor
    /// under a decision point that switches (`decision_ns + switch_ns`).
    pub wasmtime_switch_ns: f64,
    /// Fixed cost of an execution, in nanoseconds: starting it (reusing
    /// the instance, putting globals back, restoring the memory pages it
    /// changed) and ending it, for a program of one thread that does
    /// nothing.
    pub execution_ns: f64,
    /// Cost of each thread beyond the first, in nanoseconds: its spawn,
    /// its first scheduling, its exit and the join's wake-up.
    pub thread_ns: f64,
    /// Cost of a plain access under the race check, in nanoseconds: its
    /// log entry and the detector's work on it at the next point.
    pub race_log_ns: f64,
    /// Executions per second of the module given, random strategy.
    pub executions_per_second: f64,
    /// Executions per second of the module given, PCT with `explore`'s
    /// default depth: fewer context switches than random.
    pub pct_executions_per_second: f64,
    /// Executions per second of the module given, random strategy, with
    /// the race check on (`--races fail`, the default of `explore`).
    pub race_executions_per_second: f64,
    /// Executions measured per strategy (fewer than asked when the time
    /// limit came first).
    pub executions: u64,
    /// Loading the module again, as a second command on it does (its
    /// compiled code in the compile cache), phase by phase.
    pub startup: LoadTimes,
    /// From loading the module again to the end of its first execution.
    pub startup_to_first_execution: Duration,
}

/// Runs the benchmarks; `module` is measured for executions per second.
///
/// # Errors
///
/// When a module cannot be loaded or a benchmark execution fails.
pub fn measure(
    module: &[u8],
    executions: u64,
    time_limit: Duration,
) -> anyhow::Result<BenchReport> {
    // A module that cannot load fails before the micro benchmarks run.
    let mut program = crate::execution::load(module, as_commands_run(false))?;
    // Loaded again, as a second command on the module loads it.
    let loading = Instant::now();
    let mut again = crate::execution::load(module, as_commands_run(false))?;
    let startup = again.load_times();
    let mut config = Setup::default();
    config.run.stop_at = Some(Instant::now() + time_limit);
    let _ = crate::execution::execute(&mut again, Box::new(RoundRobin), &config);
    let startup_to_first_execution = loading.elapsed();
    drop(again);
    let mut logging = crate::execution::load(module, as_commands_run(true))?;
    // The time limit holds for the whole benchmark: each micro benchmark
    // may use an eighth of it (a debug build runs them slowly), and the
    // module's three measurements share what is left.
    let deadline = Instant::now() + time_limit;
    let micro = || (Instant::now() + time_limit / 8).min(deadline);
    let per = |d: Duration, n: u64| d.as_nanos() as f64 / n.max(1) as f64;
    // Baseline: the same loop with a non-atomic load (no scheduling point).
    let (base, _) = time_module(
        &loop_module("(drop (i32.load (i32.const 0)))", 1),
        Box::new(RoundRobin),
        micro(),
    )?;
    let (hooked, steps) = time_module(
        &loop_module("(drop (i32.atomic.load (i32.const 0)))", 1),
        Box::new(RoundRobin),
        micro(),
    )?;
    let hook_ns = (per(hooked, steps) - per(base, ITERATIONS as u64)).max(0.0);
    let (deciding, decision_steps) = time_module(
        &loop_module("(drop (i32.atomic.load (i32.const 0)))", 2),
        Box::new(KeepRunning),
        micro(),
    )?;
    let decision_ns = (per(deciding, decision_steps) - per(base, ITERATIONS as u64)).max(0.0);
    let (switching, switch_steps) = time_module(
        &loop_module("(drop (i32.atomic.load (i32.const 0)))", 2),
        Box::new(RoundRobin),
        micro(),
    )?;
    let switch_ns = (per(switching, switch_steps) - per(deciding, decision_steps)).max(0.0);
    let (floor, floor_switches) = switch_floor::measure(micro())?;
    let wasmtime_switch_ns = per(floor, floor_switches);
    let (plain_stores, _) = time_module(&stores_module(), Box::new(KeepRunning), micro())?;
    let (logged_stores, _) = time_module_as(
        &stores_module(),
        InstrumentOptions {
            log_accesses: true,
            ..Default::default()
        },
        RaceMode::Fail,
        Box::new(KeepRunning),
        micro(),
    )?;
    let race_log_ns = (per(logged_stores, 2 * ITERATIONS as u64)
        - per(plain_stores, 2 * ITERATIONS as u64))
    .max(0.0);
    let mut alone = crate::execution::load(&threads_module(0), Default::default())?;
    let mut spawning = crate::execution::load(&threads_module(SPAWNED), Default::default())?;
    let small = micro().saturating_duration_since(Instant::now()) / 2;
    let (alone_rate, _) =
        executions_per_second(&mut alone, Strategy::Random, RaceMode::Off, 20_000, small)?;
    let (spawning_rate, _) = executions_per_second(
        &mut spawning,
        Strategy::Random,
        RaceMode::Off,
        20_000,
        small,
    )?;
    let execution_ns = 1e9 / alone_rate;
    let thread_ns = ((1e9 / spawning_rate - execution_ns) / SPAWNED as f64).max(0.0);

    let phase = deadline.saturating_duration_since(Instant::now()) / 3;
    let random = executions_per_second(
        &mut program,
        Strategy::Random,
        RaceMode::Off,
        executions,
        phase,
    )?;
    let pct = executions_per_second(
        &mut program,
        Strategy::Pct,
        RaceMode::Off,
        executions,
        phase,
    )?;
    let race = executions_per_second(
        &mut logging,
        Strategy::Random,
        RaceMode::Fail,
        executions,
        phase,
    )?;
    Ok(BenchReport {
        hook_ns,
        decision_ns,
        switch_ns,
        wasmtime_switch_ns,
        execution_ns,
        thread_ns,
        race_log_ns,
        executions_per_second: random.0,
        pct_executions_per_second: pct.0,
        race_executions_per_second: race.0,
        executions: random.1.min(pct.1).min(race.1),
        startup,
        startup_to_first_execution,
    })
}

/// Executions per second of `program` under `strategy`, seeded as
/// `explore` seeds them (PCT learns the length of executions as it goes).
fn executions_per_second(
    program: &mut Program,
    strategy: Strategy,
    races: RaceMode,
    executions: u64,
    time_limit: Duration,
) -> anyhow::Result<(f64, u64)> {
    let mut options = crate::explore::ExploreOptions::default();
    options.setup.races = races;
    let start = Instant::now();
    // An execution still going at the time limit is stopped (and not
    // counted): a guest that loops cannot hold the benchmark.
    options.setup.run.stop_at = Some(start + time_limit);
    let mut turns =
        crate::explore::turns::Turns::new(strategy, options.pct_depth).under(program.point_model());
    let mut run = |index| {
        let seed = crate::sched::execution_seed(options.seed, index);
        let scheduler = turns.scheduler(turns.turn(index), seed);
        let result = crate::execution::execute(program, scheduler, &options.setup);
        turns.learn(&result);
        match result.outcome {
            Outcome::HostError(e) => Err(anyhow::anyhow!(e)),
            Outcome::Stopped => Ok(false),
            _ => Ok(true),
        }
    };
    // Warm up (page faults, lazy initialisation), then measure; failing
    // executions count like passing ones.
    for index in 0..20 {
        if !run(index)? {
            break;
        }
    }
    let measured = Instant::now();
    let mut done = 0;
    while done < executions && run(done)? {
        done += 1;
    }
    Ok((
        done as f64 / measured.elapsed().as_secs_f64().max(1e-9),
        done,
    ))
}
