//! The race check: an [`Analysis`] that feeds every access of an execution
//! to a [`Detector`] and reports the races it finds, as a failure
//! ([`RaceMode::Fail`]) or in its report ([`RaceMode::Schedule`]).
//!
//! A race fails an execution that otherwise passes, at its end: the
//! runtime reads a thread's log at its next call of the host, and a replay
//! calls the host at points the exploration passed inside wasm, so ending
//! the execution where the race was read would end it at another step in
//! the replay. Every access is read by the end either way, in the same
//! order, so the first race is the same. An execution that fails otherwise
//! (say an assertion the race led to) or that a limit cuts short reports
//! its first race in its place, with what followed: every access was made
//! before the end. (One that an assumption discards reports nothing.)
//!
//! It reads accesses from the threads' access logs (a module loaded with
//! [`log_accesses`](crate::instrument::InstrumentOptions::log_accesses)):
//! plain ones and those at scheduling points alike, in each thread's
//! program order, after they happened. (An access at a point happens when
//! its thread goes on, not when it reaches the point, and other threads may
//! run in between.) Spawns, wakes and atomic sections come as events,
//! after the accesses their thread made before them.

use super::RaceMode;
use super::detector::{Detector, Race};
use super::library::LibrarySites;
use crate::debuginfo::symbols::LazySymbols;
use crate::failure::{Failure, FailureKind};
use crate::instrument::{AccessKind, SiteId, SiteTable};
use crate::runtime::Outcome;
use crate::runtime::analysis::{Access, Analysis, Cx, ExecView, Happening, Logged, Report};
use crate::trace::ThreadId;
use std::sync::Arc;

/// The address the atomic sections of all threads synchronise on, as if
/// they took one lock (no guest atomic can be at an address this high and
/// aligned to 4).
const ATOMIC_SECTIONS: u32 = u32::MAX;

/// The site the atomic sections' accesses to [`ATOMIC_SECTIONS`] are given.
const SECTIONS_SITE: SiteId = SiteId::MAX;

/// The address a signal's sends and deliveries synchronise on, as a word
/// written at each send and read at each delivery: below
/// [`ATOMIC_SECTIONS`], never aligned to 4, so no guest word.
fn signal_word(sig: u32) -> u32 {
    ATOMIC_SECTIONS - 4 * (sig + 1)
}

/// What one execution's check leaves to a later one: the
/// detector, whose memory it reuses (allocating shadow memory anew for
/// every execution took a large part of its time), and the sites known to
/// be the library's.
struct Spare {
    detector: Detector,
    library: LibrarySites,
}

/// Spares that finished executions left, for later ones, whichever thread
/// runs them: an exploration runs its executions on threads of its own, and
/// a process may run many explorations (a test suite, a benchmark).
struct Spares(std::sync::Mutex<Vec<Spare>>);

impl Spares {
    /// Most spares kept: more than a machine runs executions at once.
    const MOST: usize = 64;

    const fn new() -> Self {
        Spares(std::sync::Mutex::new(Vec::new()))
    }

    /// A spare for a check of `sites`: one a check of the same sites left
    /// if there is one, else any.
    fn take(&self, sites: &Arc<SiteTable>) -> Option<Spare> {
        let mut spares = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match spares.iter().rposition(|s| s.library.of(sites)) {
            Some(index) => Some(spares.swap_remove(index)),
            None => spares.pop(),
        }
    }

    /// Keeps `spare` for a later check.
    fn keep(&self, spare: Spare) {
        let mut spares = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if spares.len() < Self::MOST {
            spares.push(spare);
        }
    }
}

/// The spares of every race check of the process.
static SPARES: Spares = Spares::new();

/// The races of one execution, in the order they were found, each pair of
/// sites once.
#[derive(Clone, Debug, Default)]
pub struct RaceReport {
    /// The races.
    pub races: Vec<Race>,
    /// How many of them are not between two scheduling points (see
    /// [`RaceCheck::new`]'s `scheduled`): races whose orders no search
    /// of this execution's points explores.
    pub unexplored: usize,
    /// Whether the program's plain accesses and atomic ones touched a
    /// common word (see [`super::detector::Detector::mixed`]).
    pub mixed_accesses: bool,
}

impl RaceReport {
    /// The plain-access sites of the races, ascending, each once: where
    /// switching threads may matter.
    pub fn plain_sites(&self, sites: &SiteTable) -> Vec<SiteId> {
        let mut found: Vec<SiteId> = self
            .races
            .iter()
            .flat_map(|r| [r.earlier.site, r.later.site])
            .filter(|&site| sites.get(site).is_some_and(|s| s.kind.is_plain()))
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// The race check of one execution.
pub struct RaceCheck {
    detector: Detector,
    mode: RaceMode,
    sites: Arc<SiteTable>,
    symbols: Arc<LazySymbols>,
    report: RaceReport,
    /// The sites whose plain accesses are only looked at as
    /// synchronisation.
    library: LibrarySites,
    /// The plain-access sites that are scheduling points in this
    /// execution, ascending: in [`RaceMode::Fail`], a race between two of
    /// them is no failure (the search switches at both, so it explores
    /// their orders), only reported.
    scheduled: Vec<SiteId>,
    /// In [`RaceMode::Fail`]: the first race, as the failure of an
    /// execution that otherwise passes.
    first: Option<Failure>,
    /// Whether a thread was spawned yet.
    spawned: bool,
    /// The races of the batch of logged accesses being read, in order
    /// (empty between batches; kept for its memory).
    batch_races: Vec<Race>,
}

impl RaceCheck {
    /// A check that reports races as `mode` says, naming sites of `sites`
    /// through `symbols`; `library` says which sites are plain accesses in
    /// a library's code (see [`crate::runtime::Program::library_sites`]);
    /// `scheduled` are the plain-access sites that are scheduling points:
    /// in [`RaceMode::Fail`], a race between two scheduling points is no
    /// failure, since a search explores its orders.
    pub fn new(
        mode: RaceMode,
        sites: Arc<SiteTable>,
        symbols: Arc<LazySymbols>,
        library: Option<Arc<[bool]>>,
        scheduled: &[SiteId],
    ) -> Self {
        let (mut detector, library) = match SPARES.take(&sites) {
            Some(spare) if spare.library.of(&sites) => (spare.detector, spare.library),
            spare => (
                spare.map(|s| s.detector).unwrap_or_default(),
                LibrarySites::new(sites.clone(), library),
            ),
        };
        detector.reset();
        // A covered access may race where the access that covers it does
        // not fail (both at scheduling points): every race must be found.
        detector.first_race_only(mode == RaceMode::Fail && scheduled.is_empty());
        let mut scheduled = scheduled.to_vec();
        scheduled.sort_unstable();
        RaceCheck {
            detector,
            mode,
            sites,
            symbols,
            report: RaceReport::default(),
            library,
            scheduled,
            first: None,
            spawned: false,
            batch_races: Vec::new(),
        }
    }

    fn found(&mut self, cx: &mut Cx<'_>, race: Race) {
        let pair = |r: &Race| (r.earlier.site, r.later.site);
        if self.report.races.iter().any(|r| pair(r) == pair(&race)) {
            return;
        }
        self.report.races.push(race);
        // Atomic accesses are scheduling points anyway.
        let explored = [race.earlier.site, race.later.site].iter().all(|site| {
            self.scheduled.binary_search(site).is_ok()
                || self.sites.get(*site).is_some_and(|s| s.kind.is_atomic())
        });
        if !explored {
            self.report.unexplored += 1;
        }
        if self.mode == RaceMode::Fail && self.first.is_none() && !explored {
            let view = cx.view();
            self.first = Some(Failure {
                kind: FailureKind::DataRace,
                message: self.describe(&race, |t| view.thread_label(t)),
                thread: race.later.thread,
            });
        }
    }

    /// The race in words: both accesses, their threads and code.
    fn describe(&self, race: &Race, label: impl Fn(ThreadId) -> String) -> String {
        let side = |access: &super::RacingAccess| {
            let site = self.sites.get(access.site);
            let what = match site.map(|s| s.kind) {
                Some(AccessKind::Copy) if access.write => "memory.copy wrote".to_string(),
                Some(AccessKind::Copy) => "memory.copy read".to_string(),
                Some(AccessKind::Fill) => "memory.fill wrote".to_string(),
                Some(AccessKind::LibraryCall) => {
                    // The call's bytes, as the caller's access at the call.
                    let callee = site
                        .and_then(|s| s.callee)
                        .and_then(|f| {
                            self.symbols
                                .with(|s| s.function_name(f).map(str::to_string))
                        })
                        .unwrap_or_else(|| "a library call".to_string());
                    let verb = if access.write { "wrote" } else { "read" };
                    format!("{verb} through {callee}")
                }
                Some(kind) => {
                    let width = site.map_or(0, |s| s.width);
                    let verb = if access.write { "wrote" } else { "read" };
                    let how = if kind.is_plain() { "" } else { "atomically " };
                    let bytes = if width == 1 { "byte" } else { "bytes" };
                    format!("{how}{verb} {width} {bytes}")
                }
                None => "accessed".to_string(),
            };
            let place = site.map_or("?".to_string(), |s| self.symbols.describe(s));
            format!(
                "thread {} ({}) {what} at {place}",
                access.thread,
                label(access.thread)
            )
        };
        format!(
            "data race on {:#x}{}: {}, and {}, with nothing ordering the two",
            race.addr,
            self.symbols
                .variable_at(race.addr)
                .map_or(String::new(), |v| format!(" (`{v}`)")),
            side(&race.earlier),
            side(&race.later),
        )
    }
}

/// Feeds `thread`'s `access` to `detector`: the race it completes, if any.
/// (`library`'s plain accesses are looked at only as synchronisation.)
fn check_access(
    detector: &mut Detector,
    library: &LibrarySites,
    thread: ThreadId,
    access: &Access,
) -> Option<Race> {
    if access.kind.is_plain() && library.contains(access.site) {
        if matches!(access.kind, AccessKind::Load | AccessKind::Store) {
            detector.plain_sync_only(thread, access.site, access.addr, access.kind.writes());
        }
        return None;
    }
    match access.kind {
        AccessKind::Load | AccessKind::Store => detector.plain(
            thread,
            access.site,
            access.kind.writes(),
            access.addr,
            access.len,
        ),
        AccessKind::Fill => detector.plain(thread, access.site, true, access.addr, access.len),
        AccessKind::Copy => {
            // Both ranges are recorded, whether the read races or not.
            let read = detector.plain(thread, access.site, false, access.src, access.len);
            let written = detector.plain(thread, access.site, true, access.addr, access.len);
            read.or(written)
        }
        AccessKind::AtomicLoad
        | AccessKind::AtomicStore
        | AccessKind::AtomicRmw
        | AccessKind::AtomicXchg
        | AccessKind::AtomicCmpxchg => {
            detector.atomic(thread, access.site, access.addr, access.kind.writes())
        }
        AccessKind::Wait | AccessKind::Notify | AccessKind::Call | AccessKind::LibraryCall => None,
    }
}

impl Analysis for RaceCheck {
    fn logged(&mut self, cx: &mut Cx<'_>, thread: ThreadId, accesses: &Logged<'_>) {
        let mut races = std::mem::take(&mut self.batch_races);
        for access in accesses.iter(&self.sites) {
            // Before the first spawn, every access happens before every
            // other thread's: a plain one can race with nothing, and need
            // not be remembered. (Atomic ones still mark their words.)
            if self.spawned || !access.kind.is_plain() {
                races.extend(check_access(
                    &mut self.detector,
                    &self.library,
                    thread,
                    &access,
                ));
            }
        }
        for race in races.drain(..) {
            self.found(cx, race);
        }
        self.batch_races = races;
    }

    fn happened(&mut self, _cx: &mut Cx<'_>, thread: ThreadId, what: &Happening<'_>) {
        match *what {
            Happening::Spawned { child } => {
                self.spawned = true;
                self.detector.spawn(thread, child);
            }
            Happening::Woke { woken, .. } => self.detector.wake(thread, woken),
            Happening::Ended if thread != 0 => self.detector.ended(thread),
            Happening::Outlived { .. } => self.detector.outlived(thread),
            // No plain access is at that address: no race.
            Happening::AtomicBegin => {
                self.detector
                    .atomic(thread, SECTIONS_SITE, ATOMIC_SECTIONS, false);
            }
            Happening::AtomicEnd => {
                self.detector
                    .atomic(thread, SECTIONS_SITE, ATOMIC_SECTIONS, true);
            }
            // What the sender did before it sent a signal happens before
            // what the handler does, as the kernel's send and delivery
            // order them natively.
            Happening::SignalSent { sig } => {
                self.detector
                    .atomic(thread, SECTIONS_SITE, signal_word(sig), true);
            }
            Happening::SignalDelivered { sig } => {
                self.detector
                    .atomic(thread, SECTIONS_SITE, signal_word(sig), false);
            }
            _ => {}
        }
    }

    fn verdict(&mut self, _view: &ExecView<'_>) -> Option<Outcome> {
        self.first.take().map(Outcome::Reported)
    }

    fn before_end(&mut self, _view: &ExecView<'_>, end: &Outcome) -> Option<Outcome> {
        // Every access was made before the end: the race came first.
        let then = end
            .failure()
            .map(|failure| failure.message)
            .or_else(|| end.cut().map(|cut| cut.describe()))?;
        self.first.take().map(|mut race| {
            race.message = format!("{}; then: {then}", race.message);
            Outcome::Reported(race)
        })
    }

    fn finish(self: Box<Self>) -> Option<Report> {
        let RaceCheck {
            detector,
            mut report,
            library,
            ..
        } = *self;
        report.mixed_accesses = detector.mixed();
        SPARES.keep(Spare { detector, library });
        Some(Arc::new(report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spare_left_on_one_thread_serves_a_check_of_the_same_sites_on_another() {
        let spares = Spares::new();
        let (ours, theirs) = (
            Arc::new(SiteTable::default()),
            Arc::new(SiteTable::default()),
        );
        let spare = |sites: &Arc<SiteTable>| Spare {
            detector: Detector::default(),
            library: LibrarySites::new(sites.clone(), None),
        };
        std::thread::scope(|scope| {
            scope.spawn(|| spares.keep(spare(&ours)));
        });
        spares.keep(spare(&theirs));
        assert!(spares.take(&ours).unwrap().library.of(&ours));
        // None of the same sites left: any other serves.
        assert!(spares.take(&ours).unwrap().library.of(&theirs));
        assert!(spares.take(&ours).is_none());
    }
}
