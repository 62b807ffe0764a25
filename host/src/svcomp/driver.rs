//! `weft svcomp`'s search for one property of one task: a third of the
//! time hunts for a violation with the sampling strategies (switching at
//! racy plain accesses too, when hunting a call), the rest searches every
//! schedule; the verdict is what the two show together, and a violation's
//! schedule is minimized in the time left, for its witness.

use super::{Coverage, Property, Verdict};
use crate::execution::Setup;
use crate::explore::{Exploration, ExploreError, ExploreOptions, explore};
use crate::failure::FailureKind;
use crate::instrument::SiteId;
use crate::instrument::{InstrumentOptions, Points};
use crate::race::{RaceMode, RaceReport};
use crate::replay::minimize::{Budget, minimize_failure};
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
    library_steps: true,
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
/// When the program cannot run ([`ExploreError`]).
pub fn verify(
    program: &mut Program,
    program_name: &str,
    property: Property,
    time_limit: Duration,
    minimize: bool,
) -> Result<Verification, ExploreError> {
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
        run: setup_with(hunt_races),
        jobs: 1,
        ..ExploreOptions::default()
    };
    let mut outcome = run_phase(program, hunt, property)?;
    let hunted_at = outcome.exploration.race_points.clone();
    let mut executions = outcome.exploration.executions;
    if outcome.verdict != Verdict::False {
        // Races are failures in the search: with none, switching at
        // synchronisation covers every behaviour (see `Property::covered_by`).
        let search = ExploreOptions {
            strategy: Strategy::Dpor,
            iterations: None,
            time_limit: Some(time_limit.saturating_sub(started.elapsed())),
            run: setup_with(RaceMode::Fail),
            jobs: 1,
            ..ExploreOptions::default()
        };
        let mut searched = run_phase(program, search.clone(), property)?;
        executions += searched.exploration.executions;
        // A race stopped the search for a call: search again switching at
        // the racing plain accesses too, until no race outside them shows.
        let mut scheduled: BTreeSet<SiteId> = hunted_at
            .as_ref()
            .map(|points| points.sites.iter().copied().collect())
            .unwrap_or_default();
        let mut researched = 0;
        while property == Property::UnreachCall
            && searched.verdict == Verdict::Unknown
            && let Some(raced) = racing_sites(program, &searched.exploration)
        {
            scheduled.extend(raced);
            let remaining = time_limit.saturating_sub(started.elapsed());
            if scheduled.len() == researched || remaining.is_zero() {
                break;
            }
            let mut again = search.clone();
            again.time_limit = Some(remaining);
            again.run.run.point_sites = scheduled.iter().copied().collect();
            searched = run_phase(program, again, property)?;
            executions += searched.exploration.executions;
            researched = scheduled.len();
        }
        if researched > 0 {
            searched.reason.push_str(&format!(
                " (switching also at {researched} plain-access sites of racy variables)"
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
            let budget = Budget {
                time: remaining.min(Budget::default().time),
                ..Budget::default()
            };
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

/// The plain-access sites of the data race that ended `exploration`, if a
/// data race did.
fn racing_sites(program: &Program, exploration: &Exploration) -> Option<Vec<SiteId>> {
    let found = exploration.failure.as_ref()?;
    if found.failure.kind != FailureKind::DataRace {
        return None;
    }
    let report = found.result.reports.get::<RaceReport>()?;
    Some(report.plain_sites(program.sites()))
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
) -> Result<Phase, ExploreError> {
    let exploration = explore(program, &options, |_| {})?;
    let coverage = Coverage {
        points: Points::Sync,
        races_fail: options.run.races == RaceMode::Fail,
    };
    Ok(Phase {
        verdict: Verdict::of(&exploration, property, coverage),
        reason: Verdict::reason(&exploration, property, coverage),
        setup: exploration.setup(&options.run),
        exploration,
    })
}
