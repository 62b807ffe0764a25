//! The exhaustive search of a racy program for a call (`unreach-call`): a
//! data race stops the search but violates nothing, so the search runs
//! again with the racing plain accesses as scheduling points, until no race
//! outside them shows (`weft explore --property unreach-call --strategy
//! dpor` and `weft svcomp` both do).
//!
//! A race between two scheduling points is explored, not a failure (see
//! [`crate::race::RaceCheck`]). So when a search with those sites as points
//! ends without a race, every race is between points, and switching only at
//! points (synchronisation and those sites) shows every behaviour: the same
//! argument as for a race-free program.

use super::{Exploration, ExploreOptions, Progress, explore};
use crate::execution::HostError;
use crate::failure::FailureKind;
use crate::instrument::SiteId;
use crate::race::RaceReport;
use crate::runtime::Program;
use std::collections::BTreeSet;
use std::time::Duration;

/// While the race check stopped `exploration` (run with `options`), adds
/// the racing plain-access sites to `options`' scheduling points and runs
/// it again, in the time `options` has left after `spent`, until no race
/// outside the points shows, no site is new, or the time is up.
/// `scheduled` are sites to switch at from the start, if any search runs
/// again (those a hunt found racing). `exploration` and `options` end as
/// the last search's (its points are the sites it switched at, none when
/// it did not search again). Returns the executions of the searches run
/// again.
///
/// # Errors
///
/// When a search cannot run.
pub fn search_again_at_racy_sites(
    program: &mut Program,
    options: &mut ExploreOptions,
    exploration: &mut Exploration,
    mut scheduled: BTreeSet<SiteId>,
    mut spent: Duration,
    mut progress: impl FnMut(Progress),
) -> Result<u64, HostError> {
    let mut executions = 0;
    let time_limit = options.time_limit;
    while let Some(raced) = racing_sites(program, exploration) {
        scheduled.extend(raced);
        let remaining = time_limit.map(|limit| limit.saturating_sub(spent));
        if scheduled.len() == options.setup.run.point_sites.len()
            || remaining.is_some_and(|r| r.is_zero())
        {
            break;
        }
        options.time_limit = remaining;
        options.setup.run.point_sites = scheduled.iter().copied().collect();
        *exploration = explore(program, options, &mut progress)?;
        spent += exploration.elapsed;
        executions += exploration.executions;
    }
    options.time_limit = time_limit;
    Ok(executions)
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
