//! `--races schedule`: before the exploration, executions that only record
//! plain accesses find the code sites that race and the bytes they race
//! on; more executions then find every plain-access site that touches one
//! of those bytes (a racy variable's other reads and writes, which may
//! never race where the sampled schedules put them). The exploration runs
//! with exactly those sites as scheduling points. The sites go into the
//! setup of every execution ([`crate::runtime::RunConfig::point_sites`]), so
//! the replay file of a failure carries them.

use super::{ExploreOptions, check_host};
use crate::budget::Budget;
use crate::execution::HostError;
use crate::execution::Setup;
use crate::instrument::{AccessKind, SiteId};
use crate::race::RaceReport;
use crate::runtime::analysis::{Analysis, Cx, Logged, Report};
use crate::runtime::{ExecutionResult, Outcome, Program};
use crate::sched::execution_seed;
use crate::sched::{PosScheduler, RandomScheduler, Scheduler};
use crate::trace::ThreadId;
use std::collections::BTreeSet;
use std::sync::Arc;

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
    /// The plain-access sites that raced or touched a byte that raced,
    /// ascending.
    pub sites: Vec<SiteId>,
    /// How many of them were seen racing.
    pub racing_sites: usize,
    /// The bytes races were seen on (the first each race's accesses share).
    pub racy_bytes: usize,
    /// Executions the search ran.
    pub executions: u64,
}

impl RacePoints {
    /// What the exploration also switched at, for its report (`also
    /// switching at ...`).
    pub fn describe(&self) -> String {
        if self.sites.is_empty() {
            return format!(
                "no plain access raced in {} executions before, so none was a scheduling point",
                self.executions
            );
        }
        let bytes = if self.racy_bytes == 1 {
            "the byte".to_string()
        } else {
            format!("the {} bytes", self.racy_bytes)
        };
        format!(
            "also switching at {} plain-access sites: the {} that raced and those touching {bytes} they raced on, found in {} executions before",
            self.sites.len(),
            self.racing_sites,
            self.executions
        )
    }
}

/// Runs executions of `program` under `options.run` (whose race mode is
/// `schedule`), alternately random and POS schedules, until
/// `QUIET_EXECUTIONS` in a row find no new racy site, at most
/// `MOST_EXECUTIONS` or `options.time_limit`; then, if any raced, as many
/// again that find the sites touching the bytes they raced on. Returns
/// both kinds of site.
///
/// # Errors
///
/// When an execution cannot run (a host error).
pub fn discover(program: &mut Program, options: &ExploreOptions) -> Result<RacePoints, HostError> {
    let budget = Budget::new(None, options.time_limit);
    let timed = budget.timed(&options.setup);
    let mut search = Search {
        program,
        options,
        setup: &timed,
        budget,
        executions: 0,
    };
    let mut racing = BTreeSet::new();
    let mut bytes = BTreeSet::new();
    search.round(None, |result, sites| {
        let Some(report) = result.reports.get::<RaceReport>() else {
            return false;
        };
        let before = racing.len();
        racing.extend(report.plain_sites(sites));
        bytes.extend(report.races.iter().map(|race| race.addr));
        racing.len() > before
    })?;
    let mut touching = racing.clone();
    if !bytes.is_empty() {
        let racy: Arc<BTreeSet<u32>> = Arc::new(bytes.clone());
        let touching_bytes = || -> Box<dyn Analysis> { Box::new(Touching::new(racy.clone())) };
        search.round(Some(&touching_bytes), |result, sites| {
            let Some(found) = result.reports.get::<TouchingSites>() else {
                return false;
            };
            let before = touching.len();
            // Only instructions can be scheduling points, not a library
            // call's bytes.
            let instructions = found
                .0
                .iter()
                .copied()
                .filter(|&site| sites.get(site).is_some_and(|s| s.kind.is_plain()));
            touching.extend(instructions);
            touching.len() > before
        })?;
    }
    Ok(RacePoints {
        sites: touching.into_iter().collect(),
        racing_sites: racing.len(),
        racy_bytes: bytes.len(),
        executions: search.executions,
    })
}

/// Executions that look for sites, under the exploration's options.
struct Search<'a> {
    program: &'a mut Program,
    options: &'a ExploreOptions,
    setup: &'a Setup,
    budget: Budget,
    /// Executions run so far, every round counted.
    executions: u64,
}

impl Search<'_> {
    /// One round: executions until `QUIET_EXECUTIONS` in a row find
    /// nothing new (`found` says whether one did), at most
    /// `MOST_EXECUTIONS`, within the time limit; `extra` makes one more
    /// analysis for each execution.
    fn round(
        &mut self,
        extra: Option<&dyn Fn() -> Box<dyn Analysis>>,
        mut found: impl FnMut(&ExecutionResult, &crate::instrument::SiteTable) -> bool,
    ) -> Result<(), HostError> {
        let (mut ran, mut quiet) = (0, 0);
        while ran < MOST_EXECUTIONS && quiet < QUIET_EXECUTIONS && !self.budget.out_of_time() {
            let seed = execution_seed(self.options.seed ^ SEED_SALT, self.executions);
            let scheduler: Box<dyn Scheduler> = if self.executions.is_multiple_of(2) {
                Box::new(RandomScheduler::new(seed))
            } else {
                Box::new(PosScheduler::new(seed))
            };
            let analyses = crate::execution::analyses(self.program, self.setup);
            let analyses = || {
                let mut analyses = analyses();
                analyses.extend(extra.map(|make| make()));
                analyses
            };
            let result = self
                .program
                .execute_with(scheduler, &self.setup.run, &analyses);
            check_host(&result)?;
            if matches!(result.outcome, Outcome::Stopped) {
                break;
            }
            self.executions += 1;
            ran += 1;
            quiet = if found(&result, self.program.sites()) {
                0
            } else {
                quiet + 1
            };
        }
        Ok(())
    }
}

/// The plain-access sites an execution's accesses to some bytes came from.
struct TouchingSites(BTreeSet<SiteId>);

/// Records the plain-access sites whose accesses touch one of `bytes`.
struct Touching {
    bytes: Arc<BTreeSet<u32>>,
    sites: BTreeSet<SiteId>,
}

impl Touching {
    fn new(bytes: Arc<BTreeSet<u32>>) -> Self {
        Touching {
            bytes,
            sites: BTreeSet::new(),
        }
    }

    /// Whether one of the bytes lies in the `len` bytes from `addr`.
    fn touches(&self, addr: u32, len: u32) -> bool {
        let end = addr.saturating_add(len.max(1));
        self.bytes.range(addr..end).next().is_some()
    }
}

impl Analysis for Touching {
    fn logged(&mut self, cx: &mut Cx<'_>, _thread: ThreadId, accesses: &Logged<'_>) {
        let view = cx.view();
        for access in accesses.iter(view.sites()) {
            let touched = match access.kind {
                AccessKind::Load | AccessKind::Store | AccessKind::Fill => {
                    self.touches(access.addr, access.len)
                }
                AccessKind::Copy => {
                    self.touches(access.addr, access.len) || self.touches(access.src, access.len)
                }
                _ => false,
            };
            if touched {
                self.sites.insert(access.site);
            }
        }
    }

    fn finish(self: Box<Self>) -> Option<Report> {
        Some(Arc::new(TouchingSites(self.sites)))
    }
}
