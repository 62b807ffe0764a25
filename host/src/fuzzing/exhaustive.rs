//! Differential runs of the exhaustive search: a small concurrent program
//! generated from bytes (two or three workers and the main thread doing
//! atomic and plain accesses, locks, atomic sections, guest values,
//! assumptions, assertions, naps and early exits, joined or not; or, of a
//! second kind, two or three workers doing only counting operations) is
//! explored by `dpor` and by plain enumeration of every schedule and every
//! value, with no reduction at all. Whatever `dpor` sees, enumeration sees;
//! and when `dpor` claims to have explored every schedule, it saw every
//! outcome enumeration saw (with races as failures: a race if enumeration
//! met one).

use crate::execution::Setup;
use crate::explore::Withheld;
use crate::explore::dpor_search::DporSearch;
use crate::explore::systematic::Search;
use crate::instrument::{InstrumentOptions, Points};
use crate::race::{RaceMode, RaceReport};
use crate::runtime::{ExecutionResult, FailureKind, Outcome, Program};
use crate::sched::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Most executions either side runs; a program that needs more is not
/// compared.
const MOST_EXECUTIONS: u64 = 20_000;

/// Reads choices from the input bytes; past their end every choice is 0.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    /// A number in `0..n`.
    fn below(&mut self, n: u8) -> u8 {
        let byte = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte % n
    }
}

/// One operation of a generated thread. `v` is the thread's last value
/// read or drawn; every value read is folded into the thread's result.
#[derive(Clone, Debug)]
enum Op {
    Store {
        var: u8,
        value: u8,
        atomic: bool,
    },
    Load {
        var: u8,
        atomic: bool,
    },
    Add {
        var: u8,
        value: u8,
    },
    Swap {
        var: u8,
        expected: u8,
        new: u8,
    },
    Locked {
        lock: u8,
        body: Vec<Op>,
    },
    Section(Vec<Op>),
    Choose {
        bound: u8,
    },
    /// Discards the execution when `v == value`.
    Assume {
        value: u8,
    },
    /// Fails when `v == value`.
    Assert {
        value: u8,
        id: u8,
    },
    /// Exits the process with `code` when `v == value`.
    Exit {
        value: u8,
        code: u8,
    },
    /// Sleeps for a microsecond (`poll_oneoff` on the clock), outside
    /// locked blocks and atomic sections.
    Nap,
    /// A counting operation (see [`crate::instrument::count_test`]): adds
    /// `delta` (subtracts it when `subtracts`) and, when the old value
    /// compares with `against` as `comparison` says, folds a mark.
    Count {
        var: u8,
        delta: u8,
        subtracts: bool,
        comparison: &'static str,
        against: i8,
    },
}

/// A generated program.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The main thread's operations before it starts the workers, and
    /// after.
    main: (Vec<Op>, Vec<Op>),
    workers: Vec<Vec<Op>>,
    /// Whether the main thread waits for the workers before it ends.
    joins: bool,
    /// Whether plain accesses are scheduling points (else races fail).
    memory_points: bool,
}

/// The comparisons a generated counting operation's result goes through.
const COMPARISONS: [&str; 5] = ["eq", "ne", "lt_s", "gt_u", "le_s"];

impl Generated {
    /// The program `data` describes.
    pub fn from_bytes(data: &[u8]) -> Self {
        let mut bytes = Bytes { data, at: 0 };
        let joins = bytes.below(3) != 0;
        // Without a join, the main thread's end may cut the workers short
        // anywhere: every such cut is a schedule of its own.
        let workers = 2 + usize::from(joins && bytes.below(4) == 0);
        let budget = match (workers, joins) {
            (2, true) => 2,
            (2, false) => 1,
            _ => 1,
        };
        let memory_points = bytes.below(4) == 0;
        let (before, after) = match bytes.below(4) {
            0 => (1, 0),
            1 => (0, 1),
            _ => (0, 0),
        };
        let before = ops(&mut bytes, before, true);
        let after = ops(&mut bytes, after, true);
        let workers = (0..workers)
            .map(|_| {
                let count = 1 + bytes.below(budget);
                ops(&mut bytes, count, true)
            })
            .collect();
        Generated {
            main: (before, after),
            workers,
            joins,
            memory_points,
        }
    }

    /// A program `data` describes whose operations are counting ones (see
    /// [`Op::Count`]): two workers with one and two (or one), or three with
    /// one each, joined.
    pub fn counting_from_bytes(data: &[u8]) -> Self {
        let mut bytes = Bytes { data, at: 0 };
        let three = bytes.below(6) == 0;
        let workers = (0..2 + usize::from(three))
            .map(|w| {
                let count = 1 + if three || w == 0 { 0 } else { bytes.below(2) };
                (0..count).map(|_| count_op(&mut bytes)).collect()
            })
            .collect();
        Generated {
            main: (Vec::new(), Vec::new()),
            workers,
            joins: true,
            memory_points: false,
        }
    }

    /// The program as a WebAssembly text module.
    pub fn to_wat(&self) -> String {
        let mut wat = String::from(
            r#"(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "weft" "choose" (func $choose (param i64) (result i64)))
  (import "weft" "assume" (func $assume (param i32)))
  (import "weft" "assert" (func $assert (param i32 i32 i32)))
  (import "weft" "atomic_begin" (func $atomic_begin))
  (import "weft" "atomic_end" (func $atomic_end))
  (memory (export "memory") 1 1 shared)
  (data (i32.const 1024) "assertion 0123456789abcdefghijklmnopqrstuvwxyz")
  ;; A nap's subscription: the monotonic clock, 1,000 ns from now.
  (data (i32.const 3072) "\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00\00\00\e8\03\00\00\00\00\00\00")
"#,
        );
        let workers = self.workers.len();
        let mut body = String::new();
        emit_ops(&mut body, &self.main.0);
        for w in 1..=workers {
            let _ = writeln!(body, "    (drop (call $spawn (i32.const {w})))");
        }
        emit_ops(&mut body, &self.main.1);
        if self.joins {
            let _ = writeln!(
                body,
                "    (block $joined (loop $wait
      (local.set $v (i32.atomic.load (i32.const {DONE})))
      (br_if $joined (i32.eq (i32.and (local.get $v) (i32.const 15)) (i32.const {workers})))
      (drop (memory.atomic.wait32 (i32.const {DONE}) (local.get $v) (i64.const -1)))
      (br $wait)))"
            );
        }
        // The final state, folded into the exit code, read in one step.
        let _ = writeln!(body, "    (call $atomic_begin)");
        for addr in (0..VARS).map(var_addr).chain([DONE]) {
            let _ = writeln!(
                body,
                "    (local.set $acc (i32.add (i32.mul (local.get $acc) (i32.const 31)) (i32.atomic.load (i32.const {addr}))))"
            );
        }
        body.push_str("    (call $exit (i32.and (local.get $acc) (i32.const 0x7fffffff)))\n");
        let _ = write!(
            wat,
            "  (func (export \"_start\") (local $v i32) (local $acc i32)\n{body}  )\n"
        );
        for (w, ops) in self.workers.iter().enumerate() {
            let w = w + 1;
            let mut body = String::new();
            emit_ops(&mut body, ops);
            // One count of finished workers and the sum of their reads,
            // told in one step.
            let _ = writeln!(
                body,
                "    (call $atomic_begin)
    (drop (i32.atomic.rmw.add (i32.const {DONE}) (i32.add (i32.const 1) (i32.shl (local.get $acc) (i32.const 4)))))
    (drop (memory.atomic.notify (i32.const {DONE}) (i32.const 1)))
    (call $atomic_end)"
            );
            let _ = write!(
                wat,
                "  (func $worker{w} (local $v i32) (local $acc i32)\n{body}  )\n"
            );
        }
        wat.push_str("  (func (export \"wasi_thread_start\") (param $tid i32) (param $arg i32)\n");
        for w in 1..=workers {
            let _ = writeln!(
                wat,
                "    (if (i32.eq (local.get $arg) (i32.const {w})) (then (call $worker{w})))"
            );
        }
        wat.push_str("  ))\n");
        wat
    }
}

/// Shared variables, at 0, 4, ...
const VARS: u32 = 3;
/// Lock words.
const LOCKS: u32 = 64;
/// The count of finished workers (its low four bits) plus the sum of
/// their folded reads (shifted past them).
const DONE: u32 = 128;
/// Where the assertion messages' text starts.
const MESSAGES: u32 = 1024;
/// A nap's subscription (48 bytes, from the data segment).
const NAP_SUBSCRIPTION: u32 = 3072;
/// Where a nap's `poll_oneoff` writes its event (every thread alike:
/// nothing reads it).
const NAP_EVENT: u32 = 4096;
/// Where a nap's `poll_oneoff` writes the count of events.
const NAP_EVENTS: u32 = 4160;

fn var_addr(var: impl Into<u32>) -> u32 {
    4 * var.into()
}

/// `count` operations; `nest`: locked blocks and atomic sections may
/// appear (they do not nest).
fn ops(bytes: &mut Bytes<'_>, count: u8, nest: bool) -> Vec<Op> {
    (0..count).map(|_| op(bytes, nest)).collect()
}

fn op(bytes: &mut Bytes<'_>, nest: bool) -> Op {
    let var = bytes.below(VARS as u8);
    let kinds = if nest { 13 } else { 8 };
    match bytes.below(kinds) {
        0 => Op::Store {
            var,
            value: 1 + bytes.below(2),
            atomic: true,
        },
        1 => Op::Load { var, atomic: true },
        2 => Op::Add {
            var,
            value: 1 + bytes.below(2),
        },
        3 => Op::Swap {
            var,
            expected: bytes.below(2),
            new: 1 + bytes.below(2),
        },
        4 => Op::Store {
            var,
            value: 1 + bytes.below(2),
            atomic: false,
        },
        5 => Op::Load { var, atomic: false },
        6 => match bytes.below(4) {
            0 => Op::Assume {
                value: bytes.below(3),
            },
            1 | 2 => Op::Assert {
                value: bytes.below(3),
                id: bytes.below(36),
            },
            _ => Op::Exit {
                value: bytes.below(3),
                code: 1 + bytes.below(9),
            },
        },
        7 => Op::Choose {
            bound: 2 + bytes.below(2),
        },
        8 | 9 => Op::Locked {
            lock: bytes.below(2),
            body: ops(bytes, 1, false),
        },
        10 | 11 => {
            let count = 1 + bytes.below(2);
            Op::Section(ops(bytes, count, false))
        }
        _ => Op::Nap,
    }
}

/// A counting operation on one of the first two variables (so that
/// several threads count on one word).
fn count_op(bytes: &mut Bytes<'_>) -> Op {
    Op::Count {
        var: bytes.below(2),
        delta: 1 + bytes.below(2),
        subtracts: bytes.below(2) == 0,
        comparison: COMPARISONS[bytes.below(COMPARISONS.len() as u8) as usize],
        against: bytes.below(5) as i8 - 1,
    }
}

/// Folds `$v` into `$acc`.
const FOLD: &str = "(local.set $acc (i32.add (i32.mul (local.get $acc) (i32.const 7)) (i32.add (local.get $v) (i32.const 1))))";

fn emit_ops(out: &mut String, ops: &[Op]) {
    for op in ops {
        emit(out, op);
    }
}

fn emit(out: &mut String, op: &Op) {
    let _ = match op {
        Op::Store { var, value, atomic } => writeln!(
            out,
            "    ({} (i32.const {}) (i32.const {value}))",
            if *atomic {
                "i32.atomic.store"
            } else {
                "i32.store"
            },
            var_addr(*var)
        ),
        Op::Load { var, atomic } => writeln!(
            out,
            "    (local.set $v ({} (i32.const {}))) {FOLD}",
            if *atomic {
                "i32.atomic.load"
            } else {
                "i32.load"
            },
            var_addr(*var)
        ),
        Op::Add { var, value } => writeln!(
            out,
            "    (local.set $v (i32.atomic.rmw.add (i32.const {}) (i32.const {value}))) {FOLD}",
            var_addr(*var)
        ),
        Op::Swap { var, expected, new } => writeln!(
            out,
            "    (local.set $v (i32.atomic.rmw.cmpxchg (i32.const {}) (i32.const {expected}) (i32.const {new}))) {FOLD}",
            var_addr(*var)
        ),
        Op::Locked { lock, body } => {
            let lock = LOCKS + 4 * *lock as u32;
            let _ = writeln!(
                out,
                "    (block $got (loop $try
      (br_if $got (i32.eqz (i32.atomic.rmw.cmpxchg (i32.const {lock}) (i32.const 0) (i32.const 1))))
      (drop (memory.atomic.wait32 (i32.const {lock}) (i32.const 1) (i64.const -1)))
      (br $try)))"
            );
            emit_ops(out, body);
            writeln!(
                out,
                "    (i32.atomic.store (i32.const {lock}) (i32.const 0))
    (drop (memory.atomic.notify (i32.const {lock}) (i32.const 1)))"
            )
        }
        Op::Section(body) => {
            out.push_str("    (call $atomic_begin)\n");
            emit_ops(out, body);
            writeln!(out, "    (call $atomic_end)")
        }
        Op::Choose { bound } => writeln!(
            out,
            "    (local.set $v (i32.wrap_i64 (call $choose (i64.const {bound})))) {FOLD}"
        ),
        Op::Assume { value } => writeln!(
            out,
            "    (call $assume (i32.ne (local.get $v) (i32.const {value})))"
        ),
        Op::Assert { value, id } => writeln!(
            out,
            "    (call $assert (i32.ne (local.get $v) (i32.const {value})) (i32.const {MESSAGES}) (i32.const {}))",
            11 + *id as u32
        ),
        Op::Exit { value, code } => writeln!(
            out,
            "    (if (i32.eq (local.get $v) (i32.const {value})) (then (call $exit (i32.const {code}))))"
        ),
        Op::Count {
            var,
            delta,
            subtracts,
            comparison,
            against,
        } => writeln!(
            out,
            "    (if (i32.{comparison} (i32.atomic.rmw.{} (i32.const {}) (i32.const {delta})) (i32.const {against})) (then (local.set $v (i32.const 9)) {FOLD}))",
            if *subtracts { "sub" } else { "add" },
            var_addr(*var)
        ),
        Op::Nap => writeln!(
            out,
            "    (drop (call $poll (i32.const {NAP_SUBSCRIPTION}) (i32.const {NAP_EVENT}) (i32.const 1) (i32.const {NAP_EVENTS})))"
        ),
    };
}

/// Follows a prefix of alternatives (an index among the enabled threads,
/// or a value), then takes the first; logs how many alternatives each
/// choice had. Every schedule and value, no reduction.
#[derive(Default)]
struct Enumerator {
    prefix: Vec<u64>,
    /// Per choice: the alternative taken and how many there were.
    taken: Vec<(u64, u64)>,
}

impl Enumerator {
    fn take(&mut self, alternatives: u64) -> u64 {
        let chosen = self.prefix.get(self.taken.len()).copied().unwrap_or(0);
        self.taken.push((chosen, alternatives));
        chosen
    }

    /// The prefix of the next execution, if any is left.
    fn next(&self) -> Option<Vec<u64>> {
        let last = self.taken.iter().rposition(|&(c, n)| c + 1 < n)?;
        let mut prefix: Vec<u64> = self.taken[..last].iter().map(|&(c, _)| c).collect();
        prefix.push(self.taken[last].0 + 1);
        Some(prefix)
    }
}

impl Scheduler for Enumerator {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        _current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let index = self.take(enabled.len() as u64);
        Ok(enabled[index as usize].id)
    }

    /// The enumeration decides every point, past the step limit too.
    fn fair_by_itself(&self) -> bool {
        true
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(self.take(bound.max(1)))
    }

    fn observe(&mut self, event: Notice<'_>) {
        if let Notice::ExecutionStarted = event {
            self.taken.clear();
        }
    }
}

/// How an execution ended, as the comparison sees it: races by kind only
/// (which of several races shows first depends on the schedule).
fn outcome_key(result: &ExecutionResult) -> String {
    match result.outcome.failure() {
        Some(failure) if failure.kind == FailureKind::DataRace => "data race".into(),
        _ => match &result.outcome {
            Outcome::Discarded { .. } => "discarded".into(),
            other => format!("{other:?}"),
        },
    }
}

/// What one side of a comparison saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// The outcomes, as `outcome_key` gives them.
    pub outcomes: BTreeSet<String>,
    /// Executions run.
    pub executions: u64,
    /// Whether some execution had a data race (whether or not it ended
    /// in one).
    pub raced: bool,
    /// For `dpor`: whether it claims to have explored every schedule, or
    /// why not.
    pub withheld: Option<Withheld>,
    /// Whether the executions were a sample standing for a search too
    /// large to run (see [`compare_library_steps`]).
    pub sampled: bool,
}

impl Seen {
    /// Counts the execution that gave `result`, with its outcome and
    /// whether it raced.
    fn note(&mut self, result: &ExecutionResult) {
        self.executions += 1;
        self.outcomes.insert(outcome_key(result));
        self.raced |= result
            .reports
            .get::<RaceReport>()
            .is_some_and(|r| !r.races.is_empty());
    }
}

/// What comparing one program found.
#[derive(Debug)]
pub enum Compared {
    /// One side needed more than `MOST_EXECUTIONS` executions.
    TooLarge,
    /// The outcomes agree.
    Agree {
        /// `dpor`'s side.
        dpor: Seen,
        /// Enumeration's side.
        every: Seen,
    },
}

/// Runs `program` under `dpor` and under plain enumeration.
///
/// # Errors
///
/// A description of the disagreement, with the program.
pub fn compare(program: &Generated) -> Result<Compared, String> {
    compare_wat(&program.to_wat(), program.memory_points, false)
}

/// Runs `program` under the stateful `dpor` (see
/// [`DporSearch::stateful`]) and under plain enumeration: whenever the
/// search claims every schedule, the same outcomes.
///
/// # Errors
///
/// A description of the disagreement, with the program.
pub fn compare_stateful(program: &Generated) -> Result<Compared, String> {
    compare_wat(&program.to_wat(), program.memory_points, true)
}

/// Runs the module `wat` under `dpor` (`stateful` or not) and under plain
/// enumeration, with plain accesses as scheduling points (`memory_points`)
/// or races as failures.
///
/// # Errors
///
/// A description of the disagreement, with the module.
pub fn compare_wat(wat: &str, memory_points: bool, stateful: bool) -> Result<Compared, String> {
    let mode = if memory_points {
        "--points memory"
    } else {
        "--races fail"
    };
    let wat = format!(";; {mode}\n{wat}");
    let instrument = InstrumentOptions {
        points: if memory_points {
            Points::Memory
        } else {
            Points::Sync
        },
        log_accesses: !memory_points,
        track_reads: stateful,
        ..InstrumentOptions::default()
    };
    let setup = Setup {
        races: if memory_points {
            RaceMode::Off
        } else {
            RaceMode::Fail
        },
        ..Setup::default()
    };
    let wasm = wat::parse_str(&wat).map_err(|e| format!("{e}\n{wat}"))?;
    let mut loaded =
        crate::execution::load(&wasm, instrument).map_err(|e| format!("{e}\n{wat}"))?;
    let search = DporSearch::of(&loaded);
    let dpor = if stateful {
        let mut keyed = setup.clone();
        keyed.run.keyed_states = true;
        by_dpor(&mut loaded, &keyed, search.stateful())
    } else {
        by_dpor(&mut loaded, &setup, search)
    };
    let Some(dpor) = dpor else {
        return Ok(Compared::TooLarge);
    };
    let Some(every) = by_enumeration(&mut loaded, &setup) else {
        return Ok(Compared::TooLarge);
    };
    let unseen: Vec<&String> = dpor.outcomes.difference(&every.outcomes).collect();
    if !unseen.is_empty() {
        return Err(format!(
            "dpor saw outcomes that enumerating every schedule did not: {unseen:?}\n{wat}"
        ));
    }
    if dpor.withheld.is_none() {
        if every.raced && !dpor.raced {
            return Err(format!(
                "dpor claims every schedule but saw no data race, and enumeration did\n{wat}"
            ));
        }
        let missed: Vec<&String> = every.outcomes.difference(&dpor.outcomes).collect();
        if !every.raced && !missed.is_empty() {
            return Err(format!(
                "dpor claims every schedule ({} executions) but missed outcomes of the {} of enumeration: {missed:?}\n{wat}",
                dpor.executions, every.executions
            ));
        }
    }
    Ok(Compared::Agree { dpor, every })
}

/// Runs the module `wasm` (a C program) under `dpor` twice, with races as
/// failures: with each call of the C library's synchronisation, thread
/// and allocation functions one step
/// ([`library_steps`](InstrumentOptions::library_steps)), and with every
/// scheduling point inside the library a step of its own, the search the
/// generated programs above check against enumeration. Whatever the first
/// sees, the second sees; when both claim every schedule, they saw the
/// same outcomes, or for a racy program both saw a race. `dpor` in the
/// result is the first side, `every` the second.
///
/// When the second search is too large (three threads contending inside
/// the library soon are), [`SAMPLED_EXECUTIONS`] random and PCT
/// executions with every point inside the library stand for it: every
/// outcome they see, the first side must see.
///
/// # Errors
///
/// A description of the disagreement.
pub fn compare_library_steps(wasm: &[u8]) -> Result<Compared, String> {
    let setup = Setup {
        races: RaceMode::Fail,
        ..Setup::default()
    };
    let Some(steps) = by_library_steps(wasm, false)? else {
        return Ok(Compared::TooLarge);
    };
    let instrument = InstrumentOptions {
        log_accesses: true,
        ..InstrumentOptions::default()
    };
    let mut inside = crate::execution::load(wasm, instrument).map_err(|e| e.to_string())?;
    let search = DporSearch::of(&inside);
    let every = match by_dpor(&mut inside, &setup, search) {
        Some(every) => every,
        None => by_sampling(&mut inside, &setup),
    };
    let unseen: Vec<&String> = steps.outcomes.difference(&every.outcomes).collect();
    if !every.sampled && !unseen.is_empty() {
        return Err(format!(
            "with library calls as steps, dpor saw outcomes it did not see inside the library: {unseen:?}"
        ));
    }
    if steps.withheld.is_none() && every.withheld.is_none() {
        if every.raced && !steps.raced {
            return Err(format!(
                "with library calls as steps, dpor claims every schedule but saw no data race, and it saw one inside the library ({} executions)",
                every.executions
            ));
        }
        // A racy program's outcomes depend on which race shows first, and
        // on what the library's own atomics happen to order.
        let missed: Vec<&String> = every.outcomes.difference(&steps.outcomes).collect();
        if !every.raced && !missed.is_empty() {
            return Err(format!(
                "with library calls as steps, dpor claims every schedule ({} executions) but missed outcomes of the {} inside the library: {missed:?}",
                steps.executions, every.executions
            ));
        }
    }
    Ok(Compared::Agree { dpor: steps, every })
}

/// Runs the module `wasm` (a C or Rust program) under `dpor` with each
/// library call one step, races as failures, twice: stateless and
/// stateful (see [`DporSearch::stateful`]). Whatever the stateful search
/// sees, the stateless one sees; when both claim every schedule, they saw
/// the same outcomes. `dpor` in the result is the stateful side, `every`
/// the stateless one.
///
/// # Errors
///
/// A description of the disagreement.
pub fn compare_stateful_library_steps(wasm: &[u8]) -> Result<Compared, String> {
    let Some(stateful) = by_library_steps(wasm, true)? else {
        return Ok(Compared::TooLarge);
    };
    let Some(stateless) = by_library_steps(wasm, false)? else {
        return Ok(Compared::TooLarge);
    };
    let unseen: Vec<&String> = stateful.outcomes.difference(&stateless.outcomes).collect();
    if !unseen.is_empty() {
        return Err(format!(
            "the stateful search saw outcomes the stateless one did not: {unseen:?}"
        ));
    }
    if stateful.withheld.is_none() && stateless.withheld.is_none() {
        let missed: Vec<&String> = stateless.outcomes.difference(&stateful.outcomes).collect();
        if !missed.is_empty() {
            return Err(format!(
                "the stateful search claims every schedule ({} executions) but missed outcomes of the {} of the stateless one: {missed:?}",
                stateful.executions, stateless.executions
            ));
        }
    }
    Ok(Compared::Agree {
        dpor: stateful,
        every: stateless,
    })
}

/// What `dpor` (`stateful` or not) sees of the module `wasm` with each
/// library call one step (Rust's inlined read locks too) and races as
/// failures; `None` past
/// [`MOST_EXECUTIONS`].
fn by_library_steps(wasm: &[u8], stateful: bool) -> Result<Option<Seen>, String> {
    let mut setup = Setup {
        races: RaceMode::Fail,
        ..Setup::default()
    };
    setup.run.keyed_states = stateful;
    let instrument = InstrumentOptions {
        log_accesses: true,
        library_steps: true,
        read_lock_one_step: true,
        track_reads: stateful,
        ..InstrumentOptions::default()
    };
    let mut loaded = crate::execution::load(wasm, instrument).map_err(|e| e.to_string())?;
    let search = DporSearch::of(&loaded);
    let search = if stateful { search.stateful() } else { search };
    Ok(by_dpor(&mut loaded, &setup, search))
}

/// What `search` sees of `program`; `None` past [`MOST_EXECUTIONS`]. An
/// execution a stateful search ended at a state explored before has no
/// outcome of its own.
fn by_dpor(program: &mut Program, setup: &Setup, mut search: DporSearch) -> Option<Seen> {
    let mut seen = Seen::default();
    while let Some(scheduler) = search.next_scheduler() {
        if seen.executions == MOST_EXECUTIONS {
            return None;
        }
        let (result, scheduler) = crate::execution::execute_keeping(program, scheduler, setup);
        if scheduler.strategy().pruned.is_some() {
            seen.executions += 1;
        } else {
            seen.note(&result);
        }
        seen.withheld = seen.withheld.or(search.learn(scheduler, &result));
    }
    Some(seen)
}

/// Executions that stand for a search too large to run (see
/// [`compare_library_steps`]).
pub const SAMPLED_EXECUTIONS: u64 = 4_000;

/// The outcomes of [`SAMPLED_EXECUTIONS`] executions of `program`, every
/// other one random and PCT (depth 3).
fn by_sampling(program: &mut Program, setup: &Setup) -> Seen {
    let mut seen = Seen {
        sampled: true,
        ..Seen::default()
    };
    for seed in 0..SAMPLED_EXECUTIONS {
        let scheduler: Box<dyn crate::sched::Scheduler> = if seed % 2 == 0 {
            Box::new(crate::sched::RandomScheduler::new(seed))
        } else {
            Box::new(crate::sched::PctScheduler::new(seed, 3, 5_000))
        };
        let result = crate::execution::execute(program, scheduler, setup);
        seen.note(&result);
    }
    seen
}

fn by_enumeration(program: &mut Program, setup: &Setup) -> Option<Seen> {
    let mut seen = Seen::default();
    let mut prefix = Some(Vec::new());
    while let Some(next) = prefix {
        if seen.executions == MOST_EXECUTIONS {
            return None;
        }
        let scheduler = Enumerator {
            prefix: next,
            taken: Vec::new(),
        };
        let (result, every) = crate::execution::execute_keeping(program, scheduler, setup);
        seen.note(&result);
        prefix = every.next();
    }
    Some(seen)
}

/// The fuzz target's body: the program `data` describes agrees.
pub fn exhaustive(data: &[u8]) {
    if let Err(disagreement) = compare(&Generated::from_bytes(data)) {
        panic!("{disagreement}");
    }
}
