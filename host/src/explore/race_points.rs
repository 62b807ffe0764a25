//! `--races schedule`: before the exploration, executions that only record
//! plain accesses find the code sites that race; the exploration then runs
//! with exactly those sites as scheduling points. The sites go into the
//! setup of every execution ([`crate::runtime::RunConfig::point_sites`]), so
//! the replay file of a failure carries them.

use super::{ExploreError, ExploreOptions, check_host, execution_seed};
use crate::instrument::SiteId;
use crate::race::RaceReport;
use crate::runtime::{Outcome, Program};
use crate::sched::{PosScheduler, RandomScheduler, Scheduler};
use std::collections::BTreeSet;
use std::time::Instant;

/// Most executions spent looking for racy sites.
const MOST_EXECUTIONS: u64 = 500;

/// Executions in a row that find no new racy site after which the search
/// stops.
const QUIET_EXECUTIONS: u64 = 50;

/// Mixed into the exploration seed so that the search's schedules are not
/// the exploration's first ones.
const SEED_SALT: u64 = 0x7261_6365_7369_7465;

/// The racy sites a search found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RacePoints {
    /// The plain-access sites that raced, ascending.
    pub sites: Vec<SiteId>,
    /// Executions the search ran.
    pub executions: u64,
}

/// Runs executions of `program` under `options.run` (whose race mode is
/// `schedule`), alternately random and POS schedules, until
/// [`QUIET_EXECUTIONS`] in a row find no new racy site, at most
/// [`MOST_EXECUTIONS`] or `options.time_limit`, and returns the sites.
///
/// # Errors
///
/// When an execution cannot run (a host error).
pub fn discover(
    program: &mut Program,
    options: &ExploreOptions,
) -> Result<RacePoints, ExploreError> {
    let start = Instant::now();
    let mut timed = options.run.clone();
    timed.run.stop_at = options.time_limit.map(|t| start + t);
    let mut sites = BTreeSet::new();
    let (mut executions, mut quiet) = (0, 0);
    while executions < MOST_EXECUTIONS
        && quiet < QUIET_EXECUTIONS
        && options.time_limit.is_none_or(|t| start.elapsed() < t)
    {
        let seed = execution_seed(options.seed ^ SEED_SALT, executions);
        let scheduler: Box<dyn Scheduler> = if executions % 2 == 0 {
            Box::new(RandomScheduler::new(seed))
        } else {
            Box::new(PosScheduler::new(seed))
        };
        let (result, _) = crate::execution::execute(program, scheduler, &timed);
        check_host(&result)?;
        if matches!(result.outcome, Outcome::Stopped) {
            break;
        }
        executions += 1;
        let found = result
            .reports
            .get::<RaceReport>()
            .map(|report| report.plain_sites(program.sites()))
            .unwrap_or_default();
        let before = sites.len();
        sites.extend(found);
        quiet = if sites.len() > before { 0 } else { quiet + 1 };
    }
    Ok(RacePoints {
        sites: sites.into_iter().collect(),
        executions,
    })
}
