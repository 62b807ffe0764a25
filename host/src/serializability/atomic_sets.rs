//! What `weft serializability` needs from an execution: the accesses to
//! atomic sets, each with its thread, unit of work, locks held and vector
//! clock; lock releases; and which words are locks.
//!
//! Atomic sets and units of work come from the guest SDK
//! (`weft.atomic_set`, `weft.unit_begin/end`). Locks are recognised from
//! how futex-based locks (Rust's `Mutex`, wasi-libc's `pthread_mutex`, spin
//! locks) use their lock word: a compare-exchange or exchange that turns
//! it from 0 to non-zero acquires it; an exchange or store that turns a
//! known lock word back to 0 releases it. Since only one thread runs
//! between two of its scheduling points, the value an atomic operation left
//! is read at the thread's next hook. The relaxed happens-before of the
//! paper (program order, thread creation, and wait/notify on futexes that
//! are not lock words) is kept as vector clocks.

use crate::abi;
use crate::instrument::{AccessKind, SiteId};
use crate::runtime::analysis::{Access, Analysis, Cx, ExecView, Happening, Interest, Report};
use crate::runtime::analysis_imports::{self, Imports};
use crate::runtime::{ExecutionResult, Outcome};
use crate::sched::ThreadView;
use crate::trace::ThreadId;
use crate::trace::clock::VectorClock;
use std::collections::HashSet;
use std::sync::Arc;
use wasmtime::{Caller, Linker};

/// A registered atomic set.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AtomicSet {
    /// Its name.
    pub name: String,
    /// First byte.
    pub start: u32,
    /// Length in bytes.
    pub len: u32,
}

/// One execution of a unit of work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitInstance {
    /// The unit's name.
    pub name: String,
    /// The thread that ran it.
    pub thread: ThreadId,
}

/// A read or write of an atomic set's memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAccess {
    /// The thread.
    pub thread: ThreadId,
    /// Its outermost open unit of work, by index in [`SetLog::units`].
    pub unit: Option<u32>,
    /// The set, by index in [`SetLog::sets`].
    pub set: u32,
    /// The address.
    pub addr: u32,
    /// A write (else a read).
    pub write: bool,
    /// Where in the code.
    pub site: SiteId,
    /// The step of the execution it happened at (an index in its trace).
    pub step: u64,
    /// Locks the thread held (lock word addresses, sorted).
    pub locks: Vec<u32>,
    /// The thread's vector clock (relaxed happens-before).
    pub clock: VectorClock,
}

/// A lock release: (index of the next access, thread, lock word).
pub type Release = (usize, ThreadId, u32);

/// Everything recorded in one execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetLog {
    /// The atomic sets registered.
    pub sets: Vec<AtomicSet>,
    /// The units of work that ran.
    pub units: Vec<UnitInstance>,
    /// Accesses to the sets, in the order they happened.
    pub accesses: Vec<SetAccess>,
    /// Lock releases, positioned among the accesses.
    pub releases: Vec<Release>,
    /// Addresses recognised as lock words.
    pub lock_words: HashSet<u32>,
}

/// An atomic operation whose effect on a possible lock word is read at the
/// thread's next hook.
#[derive(Clone, Copy, Debug)]
struct Pending {
    addr: u32,
    width: u8,
    before: u64,
    kind: AccessKind,
}

/// Per-thread recording state.
#[derive(Clone, Debug, Default)]
struct ThreadRecord {
    units: Vec<u32>,
    locks: Vec<u32>,
    clock: VectorClock,
    pending: Option<Pending>,
}

/// Records a [`SetLog`] during an execution: the analysis behind
/// `weft serializability`. Its report is the execution's [`SetLog`]
/// ([`log_of`]); an execution that passed but is not atomic-set serializable
/// fails with the first problematic pattern.
#[derive(Clone, Debug, Default)]
pub struct SetRecorder {
    log: SetLog,
    threads: Vec<ThreadRecord>,
    /// Call sites whose calls are units of work, with the unit's name.
    unit_calls: std::collections::HashMap<SiteId, String>,
    /// The step of the access being recorded.
    step: u64,
}

impl SetRecorder {
    /// A recorder with the atomic sets and unit call sites given outside
    /// the guest.
    pub fn new(sets: &[AtomicSet], unit_calls: &[(SiteId, String)]) -> Self {
        SetRecorder {
            log: SetLog {
                sets: sets.to_vec(),
                ..Default::default()
            },
            unit_calls: unit_calls.iter().cloned().collect(),
            ..Default::default()
        }
    }

    /// A logged call at `site` starts (`returned`: ended): a unit of work
    /// if the site was named one.
    pub fn call(&mut self, thread: ThreadId, site: SiteId, returned: bool) {
        let Some(name) = self.unit_calls.get(&site).cloned() else {
            return;
        };
        if returned {
            self.unit_end(thread);
        } else {
            self.unit_begin(thread, name);
        }
    }

    fn thread(&mut self, id: ThreadId) -> &mut ThreadRecord {
        let id = id as usize;
        if self.threads.len() <= id {
            self.threads.resize_with(id + 1, ThreadRecord::default);
        }
        &mut self.threads[id]
    }

    /// The atomic set containing `addr`, if any.
    pub fn set_of(&self, addr: u32) -> Option<u32> {
        self.log
            .sets
            .iter()
            .position(|s| addr >= s.start && addr - s.start < s.len)
            .map(|i| i as u32)
    }

    /// `weft.atomic_set`.
    pub fn register(&mut self, name: String, start: u32, len: u32) {
        self.log.sets.push(AtomicSet { name, start, len });
    }

    /// `weft.unit_begin`.
    pub fn unit_begin(&mut self, thread: ThreadId, name: String) {
        let id = self.log.units.len() as u32;
        self.log.units.push(UnitInstance { name, thread });
        self.thread(thread).units.push(id);
    }

    /// `weft.unit_end`.
    pub fn unit_end(&mut self, thread: ThreadId) {
        self.thread(thread).units.pop();
    }

    /// Number of locks `thread` holds.
    pub fn locks_held(&self, thread: ThreadId) -> u32 {
        self.threads
            .get(thread as usize)
            .map_or(0, |t| t.locks.len() as u32)
    }

    /// A thread reached a hook: settles its previous atomic operation's
    /// effect on lock words. `read(addr, width)` reads memory now.
    pub fn settle(&mut self, thread: ThreadId, read: impl Fn(u32, u8) -> u64) {
        let Some(p) = self.thread(thread).pending.take() else {
            return;
        };
        let after = read(p.addr, p.width);
        let acquires = p.before == 0
            && after != 0
            && matches!(p.kind, AccessKind::AtomicCmpxchg | AccessKind::AtomicXchg);
        let releases = p.before != 0
            && after == 0
            && self.log.lock_words.contains(&p.addr)
            && matches!(
                p.kind,
                AccessKind::AtomicXchg | AccessKind::AtomicStore | AccessKind::AtomicCmpxchg
            );
        if acquires {
            self.log.lock_words.insert(p.addr);
            let locks = &mut self.thread(thread).locks;
            if !locks.contains(&p.addr) {
                locks.push(p.addr);
                locks.sort_unstable();
            }
        } else if releases {
            let next = self.log.accesses.len();
            self.thread(thread).locks.retain(|&l| l != p.addr);
            self.log.releases.push((next, thread, p.addr));
        }
    }

    /// Thread `thread` is about to perform the scalar access `kind` of
    /// `width` bytes of `site_id` at `addr` (the value there is `before`);
    /// records it if it touches an atomic set. Returns whether it does.
    pub fn access(
        &mut self,
        thread: ThreadId,
        site_id: SiteId,
        (kind, width): (AccessKind, u8),
        addr: u32,
        before: u64,
    ) -> bool {
        if matches!(
            kind,
            AccessKind::AtomicCmpxchg | AccessKind::AtomicXchg | AccessKind::AtomicStore
        ) && matches!(width, 1 | 4)
        {
            self.thread(thread).pending = Some(Pending {
                addr,
                width,
                before,
                kind,
            });
        }
        let Some(set) = self.set_of(addr) else {
            return false;
        };
        let (reads, writes) = match kind {
            AccessKind::AtomicLoad | AccessKind::Load => (true, false),
            AccessKind::AtomicStore | AccessKind::Store => (false, true),
            AccessKind::AtomicRmw | AccessKind::AtomicXchg | AccessKind::AtomicCmpxchg => {
                (true, true)
            }
            AccessKind::Wait
            | AccessKind::Notify
            | AccessKind::Call
            | AccessKind::LibraryCall
            | AccessKind::Copy
            | AccessKind::Fill => return false,
        };
        for write in [false, true] {
            if (write && writes) || (!write && reads) {
                self.push(thread, set, addr, write, site_id);
            }
        }
        true
    }

    /// Thread `thread` is about to run `memory.copy` (`kind` Copy: reads
    /// `src..src+len`, writes `dst..dst+len`) or `memory.fill` (writes
    /// `dst..dst+len`). A range counts as one access of every atomic set it
    /// overlaps, at the first overlapping address. Returns whether it
    /// touches a set.
    pub fn access_range(
        &mut self,
        thread: ThreadId,
        site_id: SiteId,
        kind: AccessKind,
        dst: u32,
        src: u32,
        len: u32,
    ) -> bool {
        let mut ranges = vec![(dst, true)];
        if kind == AccessKind::Copy {
            ranges.insert(0, (src, false));
        }
        let mut watched = false;
        for (start, write) in ranges {
            let end = start as u64 + len as u64;
            for set in 0..self.log.sets.len() {
                let s = &self.log.sets[set];
                let (set_start, set_end) = (s.start as u64, s.start as u64 + s.len as u64);
                if len == 0 || end <= set_start || start as u64 >= set_end {
                    continue;
                }
                let at = (start as u64).max(set_start) as u32;
                self.push(thread, set as u32, at, write, site_id);
                watched = true;
            }
        }
        watched
    }

    fn push(&mut self, thread: ThreadId, set: u32, addr: u32, write: bool, site: SiteId) {
        let step = self.step;
        let record = self.thread(thread);
        record.clock.tick(thread);
        let access = SetAccess {
            thread,
            unit: record.units.first().copied(),
            set,
            addr,
            write,
            site,
            step,
            locks: record.locks.clone(),
            clock: record.clock.clone(),
        };
        self.log.accesses.push(access);
    }

    /// `parent` created `child`: the child starts after everything the
    /// parent did.
    pub fn spawned(&mut self, parent: ThreadId, child: ThreadId) {
        let clock = self.thread(parent).clock.clone();
        self.thread(child).clock.join(&clock);
    }

    /// `waker` woke `woken` with a notify on `addr`: a happens-before edge
    /// unless `addr` is a lock word (lock hand-offs are not part of the
    /// relaxed happens-before).
    pub fn woke(&mut self, waker: ThreadId, woken: ThreadId, addr: u32) {
        if self.log.lock_words.contains(&addr) {
            return;
        }
        let clock = self.thread(waker).clock.clone();
        self.thread(woken).clock.join(&clock);
    }

    /// The log, without accesses to lock words.
    pub fn into_log(mut self) -> SetLog {
        let words = self.log.lock_words.clone();
        self.log.accesses.retain(|a| !words.contains(&a.addr));
        self.log
    }

    /// When the execution passed: the first problematic access pattern
    /// that happened, as the outcome.
    fn violation(&self) -> Option<Outcome> {
        let log = self.clone().into_log();
        let violation = super::patterns::violations(&log).into_iter().next()?;
        Some(Outcome::Reported(violation.failure(&log)))
    }
}

impl Analysis for SetRecorder {
    fn needs_every_point(&self) -> bool {
        true
    }

    fn access(&mut self, cx: &mut Cx<'_>, thread: ThreadId, access: &Access) -> Interest {
        let view = cx.view();
        self.step = view.step();
        self.settle(thread, |addr, width| view.read(addr, width));
        let watched = match access.kind {
            AccessKind::Copy | AccessKind::Fill => self.access_range(
                thread,
                access.site,
                access.kind,
                access.addr,
                access.src,
                access.len,
            ),
            kind => {
                let before = view.read(access.addr, access.width);
                self.access(
                    thread,
                    access.site,
                    (kind, access.width),
                    access.addr,
                    before,
                )
            }
        };
        cx.views_changed();
        let plain = matches!(
            access.kind,
            AccessKind::Load | AccessKind::Store | AccessKind::Copy | AccessKind::Fill
        );
        // Plain accesses matter only where they touch an atomic set.
        if plain && !watched {
            Interest::Ignore
        } else {
            Interest::Keep
        }
    }

    fn point(&mut self, cx: &mut Cx<'_>, thread: ThreadId) {
        let view = cx.view();
        self.settle(thread, |addr, width| view.read(addr, width));
        cx.views_changed();
    }

    fn happened(&mut self, _cx: &mut Cx<'_>, thread: ThreadId, what: &Happening<'_>) {
        match *what {
            Happening::Spawned { child } => self.spawned(thread, child),
            Happening::Woke { woken, addr } => self.woke(thread, woken, addr),
            Happening::Call(site) => self.call(thread, site, false),
            Happening::Returned(site) => self.call(thread, site, true),
            _ => {}
        }
    }

    fn annotate(&self, view: &mut ThreadView) {
        view.locks_held = self.locks_held(view.id);
    }

    fn verdict(&mut self, _view: &ExecView<'_>) -> Option<Outcome> {
        self.violation()
    }

    fn finish(self: Box<Self>) -> Option<Report> {
        Some(Arc::new(self.into_log()))
    }
}

/// The atomic-set accesses of `result`, when they were recorded.
pub fn log_of(result: &ExecutionResult) -> Option<&SetLog> {
    result.reports.get::<SetLog>()
}

/// `weft.atomic_set`, `weft.unit_begin` and `weft.unit_end`: recorded when
/// atomic sets are checked, ignored otherwise.
pub(crate) const IMPORTS: Imports = Imports {
    functions: &[abi::ATOMIC_SET, abi::UNIT_BEGIN, abi::UNIT_END],
    link: add_to_linker,
};

fn add_to_linker(
    linker: &mut Linker<crate::runtime::analysis_imports::ThreadData>,
) -> wasmtime::Result<()> {
    linker.func_wrap(
        abi::SDK_MODULE,
        abi::ATOMIC_SET.name,
        |mut caller: Caller<'_, _>, name_ptr: i32, name_len: i32, ptr: i32, len: i32| {
            let name = analysis_imports::text(&mut caller, name_ptr, name_len)?;
            analysis_imports::with_analysis(&caller, |sets: &mut SetRecorder, _| {
                sets.register(name, ptr as u32, len as u32)
            });
            Ok(())
        },
    )?;
    linker.func_wrap(
        abi::SDK_MODULE,
        abi::UNIT_BEGIN.name,
        |mut caller: Caller<'_, _>, name_ptr: i32, name_len: i32| {
            let name = analysis_imports::text(&mut caller, name_ptr, name_len)?;
            let me = analysis_imports::thread(&caller);
            analysis_imports::with_analysis(&caller, |sets: &mut SetRecorder, _| {
                sets.unit_begin(me, name)
            });
            Ok(())
        },
    )?;
    linker.func_wrap(
        abi::SDK_MODULE,
        abi::UNIT_END.name,
        |caller: Caller<'_, _>| {
            let me = analysis_imports::thread(&caller);
            analysis_imports::with_analysis(&caller, |sets: &mut SetRecorder, _| sets.unit_end(me));
        },
    )?;
    Ok(())
}

/// Whether the access with clock `a` happens before the one with clock `b`
/// (of another thread, or later in the same thread).
pub fn happens_before(a: &VectorClock, b: &VectorClock) -> bool {
    a.happened_before(b) && !b.happened_before(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(kind: AccessKind) -> (AccessKind, u8) {
        (kind, 4)
    }

    #[test]
    fn recognises_a_futex_lock_and_records_set_accesses_with_locksets() {
        let mut r = SetRecorder::default();
        r.register("account".into(), 100, 16);
        r.unit_begin(1, "copy".into());
        // Lock word at 8: cmpxchg 0 -> 1.
        r.access(1, 0, site(AccessKind::AtomicCmpxchg), 8, 0);
        r.settle(1, |_, _| 1);
        assert!(r.access(1, 1, site(AccessKind::Load), 104, 0));
        assert!(!r.access(1, 2, site(AccessKind::Load), 300, 0));
        // Release: xchg 1 -> 0.
        r.access(1, 3, site(AccessKind::AtomicXchg), 8, 1);
        r.settle(1, |_, _| 0);
        r.unit_end(1);
        let log = r.into_log();
        assert_eq!(log.accesses.len(), 1);
        assert_eq!(log.accesses[0].locks, vec![8]);
        assert_eq!(log.accesses[0].unit, Some(0));
        assert_eq!(log.releases, vec![(1, 1, 8)]);
        // A counter bumped from 0 is not a lock.
        let mut r = SetRecorder::default();
        r.access(0, 0, site(AccessKind::AtomicRmw), 8, 0);
        r.settle(0, |_, _| 1);
        assert_eq!(r.locks_held(0), 0);
    }

    #[test]
    fn clocks_order_creation_but_not_lock_hand_offs() {
        let mut r = SetRecorder::default();
        r.register("s".into(), 0, 64);
        r.access(0, 0, site(AccessKind::Store), 0, 0);
        r.spawned(0, 1);
        r.access(1, 0, site(AccessKind::Store), 4, 0);
        let log = r.log.clone();
        assert!(happens_before(
            &log.accesses[0].clock,
            &log.accesses[1].clock
        ));
        r.access(1, 0, site(AccessKind::AtomicCmpxchg), 40, 0);
        r.settle(1, |_, _| 1);
        r.woke(1, 2, 40);
        assert!(r.thread(2).clock.happened_before(&VectorClock::default()));
    }
}
