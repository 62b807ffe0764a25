//! What one execution is made of besides its schedule: the runtime's
//! [`RunConfig`] and the settings of the analyses to install ([`Setup`]),
//! and the one place that turns a setup into installed analyses. Commands,
//! explorations and replays all run executions through [`execute`], so a
//! replay file's setup reproduces exactly the analyses its execution had.

use crate::abi;
use crate::activity::ActivityLog;
use crate::actors::mailboxes::{Delivery, Mailboxes};
use crate::imunit::guard::{ScheduleGuard, ScheduleMode};
use crate::instrument::{InstrumentOptions, SiteId};
use crate::race::{RaceCheck, RaceMode};
use crate::runtime::analysis::Analysis;
use crate::runtime::{ExecutionResult, LoadError, Program, RunConfig};
use crate::sched::Scheduler;
use crate::serializability::atomic_sets::{AtomicSet, SetRecorder};
use crate::svcomp::property::Property;
use crate::testgen::class_calls::ClassCalls;
use serde::{Deserialize, Serialize};

/// Everything besides the schedule that determines an execution: the
/// runtime's inputs and what the analyses are told. Replay files store it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    /// Arguments, WASI seed and limits.
    #[serde(flatten)]
    pub run: RunConfig,
    /// An IMUnit schedule: enforced in active mode (a thread reaching a
    /// `weft.event` whose orderings do not hold yet is held until they do),
    /// checked in passive mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// How `schedule` is applied.
    #[serde(default)]
    pub schedule_mode: ScheduleMode,
    /// Record accesses to atomic sets and fail an execution that is not
    /// atomic-set serializable (needs a module instrumented with
    /// `--points memory` for plain accesses).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub check_atomic_sets: bool,
    /// Atomic sets given outside the guest (`--atomic-set`), registered at
    /// the start of every execution.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub atomic_sets: Vec<AtomicSet>,
    /// Units of work given outside the guest (`--unit-of-work`): call sites
    /// (of a module loaded with `log_calls`) whose call is a unit, with the
    /// unit's name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unit_calls: Vec<(SiteId, String)>,
    /// Actor receives (hashes) to deliver first, in this order; then
    /// deliveries are free.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actor_schedule: Vec<u64>,
    /// How free actor deliveries are chosen.
    #[serde(default, skip_serializing_if = "is_uniform")]
    pub actor_delivery: Delivery,
    /// The exports `weft.gen_call` may call, by number (`weft gen`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gen_methods: Vec<String>,
    /// Whether data races are looked for, and what a race is.
    #[serde(default, skip_serializing_if = "is_off")]
    pub races: RaceMode,
    /// A verification property, which says what counts as a failure (see
    /// [`crate::svcomp::property`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<Property>,
}

/// The host could not run the module, or an execution as asked (not a
/// guest failure): what an exploration, a replay or a technique's driver
/// returns instead of a verdict.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HostError(pub String);

fn is_off(mode: &RaceMode) -> bool {
    *mode == RaceMode::Off
}

impl Setup {
    /// Whether an analysis may hold threads that could run (an IMUnit
    /// schedule in active mode): the exhaustive search then claims nothing.
    pub fn holds_threads(&self) -> bool {
        self.schedule.is_some() && self.schedule_mode == ScheduleMode::Active
    }
}

fn is_uniform(d: &Delivery) -> bool {
    *d == Delivery::Uniform
}

/// Loads `wasm` with the SDK imports of every analysis linked (the
/// `weft.actor_*` calls, `weft.gen_call`, atomic sets and units of work).
///
/// # Errors
///
/// As [`Program::load`].
pub fn load(wasm: &[u8], options: InstrumentOptions) -> Result<Program, LoadError> {
    Program::load_with(
        wasm,
        options,
        &[
            crate::actors::imports::IMPORTS,
            crate::serializability::atomic_sets::IMPORTS,
            crate::testgen::class_calls::IMPORTS,
        ],
    )
}

/// What makes the analyses `setup` asks for on `program`, in the order
/// their hooks run: a fresh set for each execution (an execution that must
/// be run again, to read its threads' frames, gets its own).
pub fn analyses<'a>(
    program: &Program,
    setup: &'a Setup,
) -> impl Fn() -> Vec<Box<dyn Analysis>> + 'a {
    let log_calls = program.options().log_calls;
    let actor_calls = abi::SDK_IMPORTS
        .iter()
        .filter(|s| s.name.starts_with("actor_"))
        .any(|s| program.imports(abi::SDK_MODULE, s.name));
    let sites = program.shared_sites();
    let symbols = program.symbols().clone();
    let library_sites = program.library_sites().cloned();
    move || {
        let mut analyses: Vec<Box<dyn Analysis>> = Vec::new();
        // First: what a property makes of an end, the others judge.
        if let Some(property) = setup.property {
            analyses.push(Box::new(property));
        }
        if log_calls && !setup.check_atomic_sets {
            analyses.push(Box::new(ActivityLog::default()));
        }
        if actor_calls || !setup.actor_schedule.is_empty() || !is_uniform(&setup.actor_delivery) {
            analyses.push(Box::new(Mailboxes::new(
                &setup.actor_schedule,
                setup.actor_delivery,
            )));
        }
        if !setup.gen_methods.is_empty() {
            analyses.push(Box::new(ClassCalls::new(setup.gen_methods.clone())));
        }
        if let Some(schedule) = &setup.schedule {
            analyses.push(Box::new(ScheduleGuard::new(schedule, setup.schedule_mode)));
        }
        if setup.races != RaceMode::Off {
            analyses.push(Box::new(RaceCheck::new(
                setup.races,
                sites.clone(),
                symbols.clone(),
                library_sites.clone(),
                &setup.run.point_sites,
            )));
        }
        if setup.check_atomic_sets {
            analyses.push(Box::new(SetRecorder::new(
                &setup.atomic_sets,
                &setup.unit_calls,
            )));
        }
        analyses
    }
}

/// Runs `program` once under `scheduler` with the analyses `setup` asks
/// for.
pub fn execute(
    program: &mut Program,
    scheduler: Box<dyn Scheduler>,
    setup: &Setup,
) -> ExecutionResult {
    let analyses = analyses(program, setup);
    program.execute_with(scheduler, &setup.run, &analyses)
}

/// [`execute`] under `strategy`, which is handed back afterwards with what
/// it recorded (a search learns from it).
pub fn execute_keeping<S: Scheduler + 'static>(
    program: &mut Program,
    strategy: S,
    setup: &Setup,
) -> (ExecutionResult, S) {
    let (lent, loan) = crate::sched::lend(strategy);
    let result = execute(program, Box::new(lent), setup);
    let strategy = loan
        .take_back()
        .expect("the runtime drops its scheduler when the execution ends");
    (result, strategy)
}
