//! `weft svcomp`'s search for one property of one task: a third of the
//! time hunts for a violation with the sampling strategies (switching at
//! racy plain accesses too, when hunting a call), the rest searches every
//! schedule; the verdict is what the two show together, and a violation's
//! schedule is minimized in the time left, for its witness.

use super::{Coverage, Property, Verdict};
use crate::execution::HostError;
use crate::execution::Setup;
use crate::explore::search_again_at_races::search_again_at_racy_sites;
use crate::explore::{Exploration, ExploreOptions, explore};
use crate::instrument::SiteId;
use crate::instrument::{InstrumentOptions, Points};
use crate::race::RaceMode;
use crate::replay::minimize::{budget, minimize_failure};
use crate::runtime::{Program, RunConfig};
use crate::sched::Strategy;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// The instrumentation of a task's program: the search sees the C library's
/// synchronisation as one step per call (the hunt does too, and the
/// witness records it), and plain accesses are logged for the race check.
pub const INSTRUMENT: InstrumentOptions = InstrumentOptions {
    points: Points::Sync,
    log_calls: false,
    log_accesses: true,
    caller_memory: true,
    failed_cas_reads: true,
    library_steps: true,
    quiet_bookkeeping: false,
    quick_library_entry: true,
    library_depth_in_guest: true,
    rust_runtime_steps: false,
    allocator_as_one_lock: false,
    quiet_thread_lifecycle: false,
    track_reads: false,
    read_lock_one_step: false,
};

/// What the search for one property found.
pub struct Verification {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in words.
    pub reason: String,
    /// Executions run, both phases.
    pub executions: u64,
    /// The exploration the verdict rests on (with the violation, if one was
    /// found, under its minimized schedule).
    pub exploration: Exploration,
    /// The setup its executions ran with (what the witness records).
    pub setup: Setup,
}

/// Checks `property` of `program` (loaded with [`INSTRUMENT`], its file
/// named `program_name`) in `time_limit`: hunts for a violation, then
/// searches every schedule; minimizes a violation's schedule in the time
/// left, if `minimize`.
///
/// # Errors
///
/// When the program cannot run ([`HostError`]).
pub fn verify(
    program: &mut Program,
    program_name: &str,
    property: Property,
    time_limit: Duration,
    minimize: bool,
) -> Result<Verification, HostError> {
    let started = Instant::now();
    let setup_with = |races| Setup {
        run: RunConfig {
            args: vec![program_name.to_string()],
            ..RunConfig::default()
        },
        races,
        property: Some(property),
        ..Setup::default()
    };
    // Hunting a call, the plain accesses that race become scheduling
    // points: a lost update needs a switch between two of them.
    let hunt_races = match property {
        Property::NoDataRace => RaceMode::Fail,
        Property::UnreachCall => RaceMode::Schedule,
    };
    let hunt = ExploreOptions {
        strategy: Strategy::Portfolio,
        iterations: None,
        time_limit: Some(time_limit / 3),
        setup: setup_with(hunt_races),
        jobs: 1,
        ..ExploreOptions::default()
    };
    let mut outcome = run_phase(program, hunt, property)?;
    let hunted_at = outcome.exploration.race_points.clone();
    let mut executions = outcome.exploration.executions;
    if outcome.verdict != Verdict::False {
        // Races are failures in the search: with none, switching at
        // synchronisation covers every behaviour (see `Property::covered_by`).
        let mut search = ExploreOptions {
            strategy: Strategy::Dpor,
            iterations: None,
            time_limit: Some(time_limit.saturating_sub(started.elapsed())),
            setup: setup_with(RaceMode::Fail),
            jobs: 1,
            ..ExploreOptions::default()
        };
        let mut exploration = explore(program, &search, |_| {})?;
        executions += exploration.executions;
        // A race stopped the search for a call: search again switching at
        // the racing plain accesses too (and at the hunt's racy sites),
        // until no race outside them shows.
        if property == Property::UnreachCall {
            let hunted: BTreeSet<SiteId> = hunted_at
                .as_ref()
                .map(|points| points.sites.iter().copied().collect())
                .unwrap_or_default();
            let spent = exploration.elapsed;
            executions += search_again_at_racy_sites(
                program,
                &mut search,
                &mut exploration,
                hunted,
                spent,
                |_| {},
            )?;
        }
        let sites = search.setup.run.point_sites.len();
        let mut searched = judge(exploration, &search, property);
        if sites > 0 {
            searched.reason.push_str(&format!(
                " (switching also at {sites} plain-access sites of racy variables)"
            ));
        }
        if searched.verdict != Verdict::Unknown || outcome.exploration.failure.is_none() {
            outcome = searched;
        }
    }
    let Phase {
        mut exploration,
        verdict,
        mut reason,
        setup,
    } = outcome;
    if let (Verdict::Unknown, Some(points)) = (verdict, &hunted_at) {
        reason.push_str(&format!(
            "; the hunt for a violation, {}",
            points.describe()
        ));
    }
    if let (Some(found), Verdict::False) = (exploration.failure.as_mut(), verdict) {
        let remaining = time_limit.saturating_sub(started.elapsed());
        if minimize && !remaining.is_zero() {
            let budget = budget(remaining);
            minimize_failure(
                program,
                &setup,
                &mut found.result,
                &mut found.failure,
                budget,
            );
        }
    }
    Ok(Verification {
        verdict,
        reason,
        executions,
        exploration,
        setup,
    })
}

/// One exploration of a property, judged.
struct Phase {
    exploration: Exploration,
    verdict: Verdict,
    reason: String,
    /// The setup its executions ran with (for the witness).
    setup: Setup,
}

/// Runs one exploration and judges it.
fn run_phase(
    program: &mut Program,
    options: ExploreOptions,
    property: Property,
) -> Result<Phase, HostError> {
    let exploration = explore(program, &options, |_| {})?;
    Ok(judge(exploration, &options, property))
}

/// Judges an exploration run with `options`.
fn judge(exploration: Exploration, options: &ExploreOptions, property: Property) -> Phase {
    let coverage = Coverage {
        points: Points::Sync,
        races_fail: options.setup.races == RaceMode::Fail,
    };
    Phase {
        verdict: Verdict::of(&exploration, property, coverage),
        reason: Verdict::reason(&exploration, property, coverage),
        setup: exploration.setup(&options.setup),
        exploration,
    }
}
