//! Happens-before data-race detection over one execution, after FastTrack
//! (Flanagan and Freund, PLDI 2009), with wasm's synchronisation:
//!
//! - every atomic access is sequentially consistent, so an atomic access to
//!   an address synchronises with the later atomic accesses to it: it first
//!   takes in the address's clock, and one that writes (a store, a
//!   read-modify-write, a compare-exchange whether it succeeds or not) then
//!   puts the thread's clock into the address's and starts a new epoch of
//!   the thread;
//! - a thread starts with its creator's clock ([`Detector::spawn`]);
//! - a notify happens before the wait it ends ([`Detector::wake`]);
//! - a thread's exit happens before the join that sees it through the
//!   atomics and the wait that the join uses, with no rule of its own.
//!
//! Clocks have an entry per slot, not per thread: a thread created after a
//! joined one ended takes over its slot (see `slots.rs`), so the memory of
//! the check follows the threads alive, not the threads created.
//!
//! Races are between plain accesses, and between a plain access and an
//! atomic one to the same word. A plain access to an address that atomics
//! have accessed counts as an atomic access of the same kind once nothing
//! leaves it unordered with the word's conflicting atomic accesses: the
//! program treats that word as a synchronisation variable. (The C
//! library's thread library reads lock words and thread states with plain
//! loads, then fences or retries with an atomic; its plain accesses never
//! race, see [`Detector::plain_sync_only`].)
//!
//! Plain loads, stores and bulk operations are checked byte by byte (see
//! `shadow.rs`), so accesses of different sizes that overlap are
//! compared where they overlap.
//!
//! A detector that [only looks for the first race](Detector::first_race_only)
//! skips a plain access that a clean access of the same thread in the same
//! epoch covers (the same bytes, and a write if it writes): every access
//! of another thread that races with it races with that one too, which is
//! found instead (code compiled without optimisation reads and writes its
//! stack slots over and over). A detector that must name every racing site
//! checks each one.

use super::shadow::{Checked, Conflict, ShadowMemory};
use super::slots::{ClockSlots, Slot};
use crate::instrument::SiteId;
use crate::trace::ThreadId;
use crate::trace::clock::VectorClock;
use rustc_hash::FxHashMap;

/// One side of a race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RacingAccess {
    /// The thread.
    pub thread: ThreadId,
    /// The code site of the access.
    pub site: SiteId,
    /// Whether it wrote.
    pub write: bool,
}

/// Two accesses to one byte by different threads, at least one a write,
/// that no synchronisation orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Race {
    /// The first byte both touch.
    pub addr: u32,
    /// The access that came first in the execution.
    pub earlier: RacingAccess,
    /// The access that completed the race.
    pub later: RacingAccess,
}

/// The happens-before state of one execution.
#[derive(Debug)]
pub struct Detector {
    /// Each slot's clock (empty once its thread ended).
    threads: Vec<ThreadClock>,
    /// Which slot each thread has.
    slots: ClockSlots,
    /// What the threads that ended knew, together: a program that creates
    /// threads one after another keeps one clock for them all, not one each.
    ended: VectorClock,
    /// Where in `words` each address accessed atomically in this
    /// execution is.
    atomics: FxHashMap<u32, u32>,
    /// What is known of those addresses, in the order the execution first
    /// accessed them: the first `words_used`; the others are earlier
    /// executions', kept for their memory. (Filled from the start, the
    /// words an execution uses lie together, however many addresses the
    /// executions before it used.)
    words: Vec<AtomicWord>,
    /// How many of `words` this execution uses.
    words_used: usize,
    /// What each byte remembers of its plain accesses.
    shadow: ShadowMemory,
    /// Whether covered accesses are skipped (see the module's doc).
    first_race_only: bool,
    /// The clean plain accesses of one thread in its current epoch.
    recent: Recent,
    /// Whether a plain access and an atomic one touched the same word
    /// (see [`Detector::mixed`]).
    mixed: bool,
}

/// What the detector knows of an address accessed atomically.
#[derive(Clone, Debug, Default)]
struct AtomicWord {
    /// What its writers knew: a later atomic access synchronises with them.
    written: VectorClock,
    /// The last writer's slot and its time at the write (0 before any
    /// write): `written` is that thread's clock at that time. A thread lets a copy
    /// of its clock out only at a write, a spawn or a wake, and moves its
    /// own time on right after (or at its end, after which it does
    /// nothing), so a clock that has reached this time of the writer
    /// already knows all of `written`.
    written_at: (Slot, u32),
    /// Each thread's last atomic access to it and last atomic write, for
    /// the threads that accessed it, in the order they first did: their
    /// epochs are what a plain access must come after (see
    /// [`AtomicWord::unordered`]), and they are the side a race names.
    /// Every atomic access updates it.
    last: Vec<LastAtomic>,
    /// Where each clock slot's entry of `last` is: its index, if the
    /// entry there is the slot's (`at` is not cleared between executions).
    /// Most words are accessed by a few of the threads, and an entry is
    /// seven times the size of an index.
    at: Vec<u32>,
    /// Whether an entry of `last` holds a plain access: until one does,
    /// no atomic access can race with one, and none need look.
    has_plain: bool,
}

/// A thread's clock, its own time when it last took in what another
/// thread knew, and its own time at its last access.
#[derive(Clone, Debug, Default)]
struct ThreadClock {
    clock: VectorClock,
    /// Its own entry of `clock` at its last join: a word it wrote at that
    /// time or later and has not learnt anything since holds its clock
    /// but for its own entry.
    joined_at: u32,
    /// Its own entry of `clock` at its last access to memory.
    last_access: u32,
}

impl ThreadClock {
    /// The thread in `slot`, whose clock this is, takes in all `other`
    /// knows.
    fn join(&mut self, slot: Slot, other: &VectorClock) {
        self.clock.join(other);
        self.joined_at = self.clock.get(slot);
    }
}

/// One thread's last atomic access to a word, and its last atomic write.
#[derive(Clone, Copy, Debug)]
struct LastAtomic {
    slot: Slot,
    /// The thread's clock entry, the site and whether it wrote.
    access: (u32, SiteId, bool),
    /// The same of its last write, if it wrote.
    write: Option<(u32, SiteId)>,
    /// The same of its last plain read and its last plain write of the
    /// word, once the word was marked (see [`Detector::atomic`]): a later
    /// atomic access of another thread races with them unless they are
    /// ordered before it.
    plain: [Option<(u32, SiteId)>; 2],
}

impl AtomicWord {
    /// The word as an execution first finds it, in the memory of an
    /// earlier execution's word.
    fn renew(&mut self) {
        self.written.clear();
        self.written_at = (0, 0);
        // A slot is trusted only when it points at its thread's entry.
        self.last.clear();
        self.has_plain = false;
    }

    /// The clocks of an atomic access of the thread in `slot`, whose clock
    /// is `own`, at `site` to the word (or of a `plain` access taken as
    /// one, see [`Detector::plain`]).
    #[inline]
    fn synchronise(
        &mut self,
        own: &mut ThreadClock,
        slot: Slot,
        site: SiteId,
        writes: bool,
        plain: bool,
    ) {
        let (writer, time) = self.written_at;
        if own.clock.get(writer) < time {
            own.join(slot, &self.written);
        } else {
            debug_assert!(self.written.happened_before(&own.clock), "a skipped join");
        }
        let now = own.clock.get(slot);
        own.last_access = now;
        self.remember(slot, now, site, writes, plain);
        if writes {
            // The thread now knows all the word knew: the word takes the
            // thread's clock. If the thread wrote it last and has learnt
            // nothing since, only the thread's own entry moved on.
            if writer == slot && time != 0 && own.joined_at <= time {
                self.written.set(slot, now);
                debug_assert_eq!(self.written, own.clock, "a partial copy");
            } else {
                self.written.clone_from(&own.clock);
            }
            self.written_at = (slot, now);
            own.clock.tick(slot);
        }
    }

    /// Records an atomic access (or a `plain` one) of the thread in `slot`
    /// at its time `time`.
    #[inline]
    fn remember(&mut self, slot: Slot, time: u32, site: SiteId, writes: bool, plain: bool) {
        let index = slot as usize;
        if self.at.len() <= index {
            self.at.resize(index + 1, 0);
        }
        let at = self.at[index] as usize;
        let last = match self.last.get_mut(at) {
            Some(last) if last.slot == slot => last,
            _ => {
                self.at[index] = self.last.len() as u32;
                self.last.push(LastAtomic {
                    slot,
                    access: (time, site, writes),
                    write: None,
                    plain: [None; 2],
                });
                self.last.last_mut().expect("just pushed")
            }
        };
        last.access = (time, site, writes);
        if writes {
            last.write = Some((time, site));
        }
        if plain {
            last.plain[usize::from(writes)] = Some((time, site));
            self.has_plain = true;
        }
    }

    /// A plain access to the word by another thread than the one in
    /// `slot`, whose clock is `clock`, that an atomic access of it
    /// (`writes` or not) conflicts with (a write, or any for a write) and
    /// that nothing orders before it, a write first.
    fn unordered_plain(&self, slot: Slot, clock: &VectorClock, writes: bool) -> Option<Conflict> {
        if !self.has_plain {
            return None;
        }
        let plain = |kind: usize| {
            move |l: &LastAtomic| l.plain[kind].map(|(time, site)| (time, site, kind == 1))
        };
        let write = self.unordered_by(slot, clock, plain(1));
        if write.is_some() || !writes {
            return write;
        }
        self.unordered_by(slot, clock, plain(0))
    }

    /// An atomic access to the word that a plain access of the thread in
    /// `slot`, whose clock is `clock`, conflicts with (any for a write, a
    /// write for a read) and that nothing orders before it, a write first.
    fn unordered(&self, slot: Slot, clock: &VectorClock, write: bool) -> Option<Conflict> {
        let unordered_write = self.unordered_by(slot, clock, |l| {
            l.write.map(|(time, site)| (time, site, true))
        });
        if unordered_write.is_some() || !write {
            return unordered_write;
        }
        self.unordered_by(slot, clock, |l| Some(l.access))
    }

    /// Of the accesses `pick` takes from the entries of other threads than
    /// the one in `slot` (time, site, whether it wrote), one that `clock`
    /// has not reached: the lowest slot's, whatever order they came in.
    fn unordered_by(
        &self,
        slot: Slot,
        clock: &VectorClock,
        pick: impl Fn(&LastAtomic) -> Option<(u32, SiteId, bool)>,
    ) -> Option<Conflict> {
        self.last
            .iter()
            .filter(|l| l.slot != slot)
            .filter_map(|l| {
                pick(l)
                    .filter(|&(time, _, _)| time > clock.get(l.slot))
                    .map(|(time, site, write)| Conflict {
                        addr: 0,
                        slot: l.slot,
                        time,
                        site,
                        write,
                    })
            })
            .min_by_key(|access| access.slot)
    }
}

/// The clock of `slot` among `threads` (a default one if it had none).
#[inline]
fn clock_of(threads: &mut Vec<ThreadClock>, slot: Slot) -> &mut ThreadClock {
    let index = slot as usize;
    if threads.len() <= index {
        threads.resize(index + 1, ThreadClock::default());
    }
    &mut threads[index]
}

/// Slots of [`Recent`] (a power of two).
const RECENT_SLOTS: usize = 16;

/// Clean plain accesses of one thread since its clock last changed: a
/// direct-mapped cache of `(addr, len, write)` by address. Every atomic
/// access empties it, so emptying it is one store (of `valid`).
#[derive(Debug, Default)]
struct Recent {
    thread: Option<ThreadId>,
    /// Bit `n`: slot `n` holds an access of `thread`.
    valid: u16,
    slots: [(u32, u32, bool); RECENT_SLOTS],
}

impl Recent {
    fn slot(addr: u32) -> usize {
        (addr as usize >> 2) & (RECENT_SLOTS - 1)
    }

    /// Whether a clean access of `thread` covers this one.
    fn covers(&self, thread: ThreadId, addr: u32, len: u32, write: bool) -> bool {
        let slot = Self::slot(addr);
        let (a, l, w) = self.slots[slot];
        self.thread == Some(thread)
            && self.valid & (1 << slot) != 0
            && a == addr
            && l == len
            && (w || !write)
    }

    fn remember(&mut self, thread: ThreadId, addr: u32, len: u32, write: bool) {
        if self.thread != Some(thread) {
            self.forget();
            self.thread = Some(thread);
        }
        let slot = Self::slot(addr);
        self.slots[slot] = (addr, len, write);
        self.valid |= 1 << slot;
    }

    fn forget(&mut self) {
        self.thread = None;
        self.valid = 0;
    }
}

impl Default for Detector {
    fn default() -> Self {
        Self::new()
    }
}

impl Detector {
    /// The state at the start of an execution: the main thread (0) exists.
    pub fn new() -> Self {
        let mut main = ThreadClock::default();
        main.clock.tick(0);
        let mut slots = ClockSlots::default();
        slots.reset();
        Detector {
            threads: vec![main],
            slots,
            ended: VectorClock::default(),
            atomics: FxHashMap::default(),
            words: Vec::new(),
            words_used: 0,
            shadow: ShadowMemory::default(),
            first_race_only: false,
            recent: Recent::default(),
            mixed: false,
        }
    }

    /// Makes the detector look only for the first race of the execution:
    /// it may then skip covered accesses (see the module's doc).
    pub fn first_race_only(&mut self, only: bool) {
        self.first_race_only = only;
        self.recent.forget();
    }

    /// Back to the state at the start of an execution, keeping the memory
    /// it allocated for the next one.
    pub fn reset(&mut self) {
        for thread in &mut self.threads {
            thread.clock.clear();
            thread.joined_at = 0;
            thread.last_access = 0;
        }
        self.threads[0].clock.tick(0);
        self.slots.reset();
        self.ended.clear();
        self.atomics.clear();
        self.words_used = 0;
        self.shadow.reset();
        self.recent.forget();
        self.mixed = false;
    }

    /// Whether the execution's logged plain accesses and its atomic ones
    /// touched a common word, which the plain ones then treat as
    /// synchronisation (see the module's doc): which of them came first was
    /// decided by the order of scheduling points that may not look
    /// dependent.
    pub fn mixed(&self) -> bool {
        self.mixed
    }

    /// What this execution knows of the word at `addr`, if it accessed it
    /// atomically.
    #[inline]
    fn atomic_word(&self, addr: u32) -> Option<&AtomicWord> {
        self.atomics
            .get(&addr)
            .map(|&index| &self.words[index as usize])
    }

    /// Where in `words` the word at `addr` is (made ready for this
    /// execution), and whether this access is the execution's first to it.
    #[inline]
    fn word_index(&mut self, addr: u32) -> (usize, bool) {
        let next = self.words_used as u32;
        let index = *self.atomics.entry(addr).or_insert(next);
        let first = index == next;
        if first {
            if self.words.len() == self.words_used {
                self.words.push(AtomicWord::default());
            } else {
                self.words[self.words_used].renew();
            }
            self.words_used += 1;
        }
        (index as usize, first)
    }

    /// The clocks of two different slots (a parent's and its child's, a
    /// notifier's and the one of the thread it woke, which was waiting),
    /// given clocks if they had none.
    fn two_clocks(&mut self, a: Slot, b: Slot) -> [&mut ThreadClock; 2] {
        clock_of(&mut self.threads, a.max(b));
        self.threads
            .get_disjoint_mut([a as usize, b as usize])
            .expect("two different slots")
    }

    /// The slot of `thread`, whose clock is then `self.threads[slot]`
    /// (given one if it had none).
    #[inline]
    fn slot_of(&mut self, thread: ThreadId) -> Slot {
        let slot = self.slots.of(thread);
        clock_of(&mut self.threads, slot);
        slot
    }

    /// The access of the thread in `conflict`'s slot at its time, as a
    /// side of a race.
    fn racing(&self, conflict: Conflict) -> RacingAccess {
        RacingAccess {
            thread: self.slots.thread_at(conflict.slot, conflict.time),
            site: conflict.site,
            write: conflict.write,
        }
    }

    /// How many clock slots the execution used so far.
    #[cfg(test)]
    pub fn slots_used(&self) -> usize {
        self.slots.used()
    }

    /// `parent` created `child`: the child starts knowing all its parent
    /// did.
    pub fn spawn(&mut self, parent: ThreadId, child: ThreadId) {
        self.recent.forget();
        let parent_slot = self.slot_of(parent);
        let parent_clock = &self.threads[parent_slot as usize].clock;
        let (child_slot, start) = self.slots.for_child(child, parent_clock);
        let [parent_clock, child_clock] = self.two_clocks(parent_slot, child_slot);
        child_clock.clock.clone_from(&parent_clock.clock);
        child_clock.clock.set(child_slot, start);
        child_clock.joined_at = start;
        child_clock.last_access = 0;
        parent_clock.clock.tick(parent_slot);
    }

    /// `thread` (not the main thread) ended: nothing it does comes after,
    /// only [`Detector::outlived`] reads its clock again, and a thread
    /// created by one that learns of its end may take over its slot.
    pub fn ended(&mut self, thread: ThreadId) {
        self.recent.forget();
        let slot = self.slot_of(thread);
        let ended = &mut self.threads[slot as usize];
        let (last_access, last_time) = (ended.last_access, ended.clock.get(slot));
        self.ended.join(&ended.clock);
        ended.clock.clear();
        self.slots.ended(slot, last_access, last_time);
    }

    /// The main thread, in `pthread_exit`, saw every other thread end
    /// (it learns that once they all have): it knows what they all knew.
    pub fn outlived(&mut self, main: ThreadId) {
        self.recent.forget();
        let ended = std::mem::take(&mut self.ended);
        let slot = self.slot_of(main);
        self.threads[slot as usize].join(slot, &ended);
        self.ended = ended;
    }

    /// `notifier`'s notify ended `woken`'s wait.
    pub fn wake(&mut self, notifier: ThreadId, woken: ThreadId) {
        self.recent.forget();
        let (notifier, woken) = (self.slots.of(notifier), self.slots.of(woken));
        let [notifier_clock, woken_clock] = self.two_clocks(notifier, woken);
        woken_clock.join(woken, &notifier_clock.clock);
        notifier_clock.clock.tick(notifier);
    }

    /// `thread` made an atomic access at `site` to `addr` (`writes`: one
    /// that may change memory): the plain access to the word's first byte
    /// it races with, if any (a write, or a read when this access writes,
    /// that nothing orders before it).
    #[inline]
    pub fn atomic(
        &mut self,
        thread: ThreadId,
        site: SiteId,
        addr: u32,
        writes: bool,
    ) -> Option<Race> {
        self.recent.forget();
        let (index, first) = self.word_index(addr);
        let slot = self.slot_of(thread);
        let own = &mut self.threads[slot as usize];
        // A word's first atomic access in an execution marks it; its byte
        // stays marked (a marked byte is never recorded again) until the
        // execution ends, so marking it again would find nothing.
        // Before, the plain accesses are in the shadow; since, in the
        // word (a plain access checks the atomic ones before it, and this
        // checks the plain ones before it).
        let unordered = if first {
            self.shadow.mark_sync(slot, &own.clock, addr)
        } else {
            self.words[index].unordered_plain(slot, &own.clock, writes)
        };
        self.mixed |= unordered.is_some();
        self.words[index].synchronise(own, slot, site, writes, false);
        unordered
            .filter(|plain| plain.write || writes)
            .map(|plain| Race {
                addr,
                earlier: self.racing(plain),
                later: RacingAccess {
                    thread,
                    site,
                    write: writes,
                },
            })
    }

    /// The clocks of a plain access of `thread` at `site` to the word at
    /// `addr`, taken as an atomic one, and kept as the thread's last plain
    /// access of the word. (A byte of a marked word that a narrower plain
    /// access split off keeps the mark, and starts a word of its own.)
    #[inline]
    fn synchronise_plain(&mut self, thread: ThreadId, site: SiteId, addr: u32, writes: bool) {
        let (index, _) = self.word_index(addr);
        self.synchronise_word(index, thread, site, writes, true);
    }

    /// [`AtomicWord::synchronise`] of word `index` of `words`, with the
    /// clock of `thread`.
    #[inline]
    fn synchronise_word(
        &mut self,
        index: usize,
        thread: ThreadId,
        site: SiteId,
        writes: bool,
        plain: bool,
    ) {
        let slot = self.slot_of(thread);
        let own = &mut self.threads[slot as usize];
        self.words[index].synchronise(own, slot, site, writes, plain);
    }

    /// `thread` made a plain access at `site` to `addr` that is looked at
    /// only as synchronisation (the C thread library's): an atomic access
    /// if the program accesses the word there atomically, nothing
    /// otherwise. It races with nothing.
    #[inline]
    pub fn plain_sync_only(&mut self, thread: ThreadId, site: SiteId, addr: u32, write: bool) {
        let Some(&index) = self.atomics.get(&addr) else {
            return;
        };
        self.recent.forget();
        self.synchronise_word(index as usize, thread, site, write, false);
    }

    /// `thread` made a plain access at `site` to the `len` bytes from
    /// `addr`: the first race it completes, if any. Every byte is recorded
    /// whether it races or not.
    #[inline]
    pub fn plain(
        &mut self,
        thread: ThreadId,
        site: SiteId,
        write: bool,
        addr: u32,
        len: u32,
    ) -> Option<Race> {
        if self.first_race_only && self.recent.covers(thread, addr, len, write) {
            return None;
        }
        let slot = self.slot_of(thread);
        let own = &mut self.threads[slot as usize];
        own.last_access = own.clock.get(slot);
        let clock = &own.clock;
        let later = RacingAccess {
            thread,
            site,
            write,
        };
        match self.shadow.access(slot, clock, site, write, addr, len) {
            Checked::Clean => {
                if self.first_race_only {
                    self.recent.remember(thread, addr, len, write);
                }
                None
            }
            Checked::Race => {
                let earlier = self.shadow.last_race();
                Some(Race {
                    addr: earlier.addr,
                    earlier: self.racing(earlier),
                    later,
                })
            }
            Checked::SyncWord => {
                // A plain access to a word the program also accesses
                // atomically races with the atomic accesses it conflicts
                // with (every one for a write, the writes for a read) that
                // nothing orders before it; once none is left, it is one
                // of the program's synchronisation accesses.
                // A thread's last access to the word is its latest, and
                // knowing a thread's time at an access is knowing all it
                // knew then: the last accesses alone tell what is ordered.
                let clock = &self.threads[slot as usize].clock;
                let earlier = self
                    .atomic_word(addr)
                    .and_then(|word| word.unordered(slot, clock, write));
                let ordered = earlier.is_none();
                self.mixed |= !ordered;
                self.recent.forget();
                self.synchronise_plain(thread, site, addr, write);
                earlier.map(|earlier| Race {
                    addr,
                    earlier: self.racing(earlier),
                    later,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsynchronised_writes_race_and_name_both_sides() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        assert_eq!(d.plain(1, 10, true, 100, 4), None);
        let race = d.plain(0, 20, true, 102, 4).expect("a race");
        assert_eq!(race.addr, 102);
        assert_eq!(
            race.earlier,
            RacingAccess {
                thread: 1,
                site: 10,
                write: true
            }
        );
        assert_eq!(race.later.site, 20);
    }

    #[test]
    fn an_atomic_write_after_an_unordered_plain_read_of_a_marked_word_races() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        // Thread 1 marks the word with a compare-exchange that changed
        // nothing, then reads it plainly: no atomic write of another
        // thread is before the read, so the read races with nothing yet.
        assert_eq!(d.atomic(1, 10, 8, false), None);
        assert_eq!(d.plain(1, 11, false, 8, 4), None);
        // Main writes the word atomically, knowing nothing of thread 1:
        // the same race as in the other order.
        let race = d.atomic(0, 20, 8, true).expect("a race");
        assert_eq!(
            (race.earlier, race.later.thread),
            (
                RacingAccess {
                    thread: 1,
                    site: 11,
                    write: false
                },
                0
            )
        );
        // An atomic read races with a plain write only.
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.atomic(1, 10, 16, false);
        d.plain(1, 11, false, 16, 4);
        assert_eq!(d.atomic(0, 20, 16, false), None, "two reads");
        d.plain(1, 12, true, 16, 4);
        let race = d.atomic(0, 21, 16, false).expect("a plain write");
        assert_eq!((race.earlier.site, race.earlier.write), (12, true));
        // Once thread 1's accesses are ordered before main's, none races.
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.atomic(1, 10, 24, false);
        d.plain(1, 11, true, 24, 4);
        d.atomic(1, 12, 32, true);
        d.atomic(0, 20, 32, false);
        assert_eq!(d.atomic(0, 21, 24, true), None, "ordered");
    }

    #[test]
    fn ended_threads_keep_no_clock_of_their_own_and_are_outlived_together() {
        let mut d = Detector::new();
        for child in 1..=1000 {
            d.spawn(0, child);
            assert_eq!(d.plain(child, 1, true, 64, 4), None);
            d.atomic(child, 2, 8, true);
            d.ended(child);
            // The join: main reads the word the child wrote last.
            d.atomic(0, 3, 8, false);
        }
        // Each child took over the slot of the one before, which main
        // joined: memory does not grow with the threads created.
        assert_eq!(d.slots_used(), 2);
        assert_eq!(d.threads.len(), 2);
        assert_eq!(d.threads[1].clock, VectorClock::default());
        assert_eq!(d.plain(0, 4, true, 64, 4), None, "joined: ordered");
        // Without the join, only `pthread_exit`'s wait orders a thread's
        // writes before what main does next.
        d.spawn(0, 1001);
        assert_eq!(d.plain(1001, 1, true, 128, 4), None);
        d.ended(1001);
        d.outlived(0);
        assert_eq!(d.plain(0, 4, true, 128, 4), None, "outlived: ordered");
        d.spawn(0, 1002);
        assert_eq!(d.plain(1002, 1, true, 256, 4), None);
        d.ended(1002);
        assert!(d.plain(0, 4, true, 256, 4).is_some(), "not joined: a race");
    }

    #[test]
    fn a_slot_is_taken_over_only_from_a_thread_whose_end_the_creator_knows() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        assert_eq!(d.plain(1, 1, true, 64, 4), None);
        d.ended(1);
        // Main never joined thread 1: thread 2 has a slot of its own, and
        // its write races with thread 1's.
        d.spawn(0, 2);
        assert_eq!(d.slots_used(), 3);
        let race = d.plain(2, 2, true, 64, 4).expect("not joined: a race");
        assert_eq!((race.earlier.thread, race.later.thread), (1, 2));
        // Thread 2 releases a word after its write and ends; main joins it
        // through the word: thread 3 takes over its slot, and its write
        // comes after thread 2's.
        d.atomic(2, 3, 8, true);
        d.ended(2);
        d.atomic(0, 4, 8, false);
        d.spawn(0, 3);
        assert_eq!(d.slots_used(), 3);
        assert_eq!(d.plain(3, 5, true, 64, 4), None, "joined: ordered");
    }

    #[test]
    fn a_taken_over_slot_still_names_and_orders_each_of_its_threads() {
        let mut d = Detector::new();
        // Thread 1 lives throughout and never synchronises.
        d.spawn(0, 1);
        d.spawn(0, 2);
        assert_eq!(d.plain(2, 10, true, 64, 4), None);
        d.atomic(2, 11, 8, true);
        d.ended(2);
        d.atomic(0, 12, 8, false);
        // Thread 3 takes over thread 2's slot.
        d.spawn(0, 3);
        assert_eq!(d.slots_used(), 3);
        assert_eq!(d.plain(3, 20, true, 128, 4), None);
        // Thread 1 knows of neither: each race names its own thread.
        let old = d.plain(1, 30, false, 64, 4).expect("races with thread 2");
        assert_eq!((old.earlier.thread, old.earlier.site), (2, 10));
        let new = d.plain(1, 31, false, 128, 4).expect("races with thread 3");
        assert_eq!((new.earlier.thread, new.earlier.site), (3, 20));
        // An atomic write of thread 3 is named as thread 3's too.
        d.atomic(3, 21, 256, true);
        let mixed = d.plain(1, 32, true, 256, 4).expect("unordered atomic");
        assert_eq!((mixed.earlier.thread, mixed.earlier.site), (3, 21));
    }

    /// Random programs of threads created, joined (through an atomic word
    /// the thread writes last) or left detached, with plain and atomic
    /// accesses to a few words: a detector whose slots are taken over finds
    /// a race at exactly the accesses where one whose threads each keep a
    /// slot of their own does.
    #[test]
    fn taking_over_slots_finds_the_races_separate_slots_find() {
        use rand_core::RngCore;
        let mut rng = rand_pcg::Pcg32::new(11, 7);
        let (mut taken_over, mut races) = (0, 0);
        for program in 0..300 {
            let mut reusing = Detector::new();
            let mut separate = Detector::new();
            separate.slots = ClockSlots::without_reuse();
            let mut alive: Vec<ThreadId> = vec![0];
            let mut next: ThreadId = 1;
            for step in 0..200 {
                let pick = rng.next_u32() % 10;
                let thread = alive[rng.next_u32() as usize % alive.len()];
                let site = step;
                let found = match pick {
                    0 | 1 if alive.len() < 5 => {
                        reusing.spawn(thread, next);
                        separate.spawn(thread, next);
                        alive.push(next);
                        next += 1;
                        continue;
                    }
                    2 if thread != 0 => {
                        // The thread releases its own word and ends; main
                        // may join it by reading the word.
                        let own = 1024 + 4 * thread;
                        reusing.atomic(thread, site, own, true);
                        separate.atomic(thread, site, own, true);
                        reusing.ended(thread);
                        separate.ended(thread);
                        alive.retain(|&t| t != thread);
                        if !rng.next_u32().is_multiple_of(3) {
                            reusing.atomic(0, site, own, false);
                            separate.atomic(0, site, own, false);
                        }
                        continue;
                    }
                    3 => {
                        let writes = rng.next_u32().is_multiple_of(2);
                        let addr = 64 + 4 * (rng.next_u32() % 5);
                        (
                            reusing.atomic(thread, site, addr, writes),
                            separate.atomic(thread, site, addr, writes),
                        )
                    }
                    _ => {
                        let write = rng.next_u32().is_multiple_of(2);
                        let addr = 64 + 4 * (rng.next_u32() % 5);
                        (
                            reusing.plain(thread, site, write, addr, 4),
                            separate.plain(thread, site, write, addr, 4),
                        )
                    }
                };
                assert_eq!(
                    found.0.is_some(),
                    found.1.is_some(),
                    "program {program}, step {step}: {found:?}"
                );
                races += usize::from(found.0.is_some());
            }
            taken_over += next as usize - reusing.slots_used();
        }
        assert!(
            taken_over > 1000,
            "slots were taken over {taken_over} times"
        );
        assert!(races > 1000, "{races} races");
    }

    #[test]
    fn covered_accesses_are_skipped_only_within_an_epoch() {
        let mut d = Detector::new();
        d.first_race_only(true);
        d.spawn(0, 1);
        // Thread 1 writes x, releases a lock word, writes x again.
        assert_eq!(d.plain(1, 1, true, 64, 4), None);
        d.atomic(1, 99, 8, true);
        assert_eq!(d.plain(1, 2, true, 64, 4), None);
        assert_eq!(d.plain(1, 3, false, 64, 4), None, "covered: skipped");
        // Thread 0 acquires the word: it knows the first write, not the
        // second, whose epoch began at the release.
        d.atomic(0, 99, 8, false);
        let race = d.plain(0, 4, false, 64, 4).expect("a race");
        assert_eq!(race.earlier.site, 2);
        // A read does not cover a write.
        d.spawn(0, 2);
        assert_eq!(d.plain(2, 5, false, 128, 4), None);
        assert_eq!(d.plain(0, 6, false, 128, 4), None);
        assert!(d.plain(0, 7, true, 128, 4).is_some());
    }

    #[test]
    fn the_spawn_orders_the_parents_earlier_writes() {
        let mut d = Detector::new();
        assert_eq!(d.plain(0, 1, true, 8, 4), None);
        d.spawn(0, 1);
        assert_eq!(d.plain(1, 2, false, 8, 4), None);
        // But the parent's writes after the spawn are not ordered.
        assert_eq!(d.plain(0, 3, true, 16, 4), None);
        assert!(d.plain(1, 4, false, 16, 4).is_some());
    }

    #[test]
    fn a_flag_set_and_seen_through_atomics_orders_the_data() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        assert_eq!(d.plain(1, 1, true, 64, 8), None);
        d.atomic(1, 99, 200, true); // flag = 1
        d.atomic(0, 99, 200, false); // sees it
        assert_eq!(d.plain(0, 2, false, 64, 8), None);
        assert_eq!(d.plain(0, 3, true, 64, 8), None);
    }

    #[test]
    fn an_atomic_on_another_address_orders_nothing() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        assert_eq!(d.plain(1, 1, true, 64, 4), None);
        d.atomic(1, 99, 200, true);
        d.atomic(0, 99, 204, false);
        assert!(d.plain(0, 2, false, 64, 4).is_some());
    }

    #[test]
    fn concurrent_reads_do_not_race_but_a_later_write_races_with_each() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.spawn(0, 2);
        assert_eq!(d.plain(1, 1, false, 0, 1), None);
        assert_eq!(d.plain(2, 2, false, 0, 1), None);
        // Thread 0 synchronises with 2 only: thread 1's read still races.
        d.atomic(2, 99, 100, true);
        d.atomic(0, 99, 100, false);
        let race = d
            .plain(0, 3, true, 0, 1)
            .expect("a race with thread 1's read");
        assert_eq!(race.earlier.thread, 1);
        assert!(!race.earlier.write);
    }

    #[test]
    fn a_plain_read_of_an_atomic_word_races_with_the_unordered_atomic_write() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.atomic(1, 7, 200, true);
        let race = d.plain(0, 2, false, 200, 4).expect("a mixed race");
        assert_eq!(race.addr, 200);
        assert_eq!(
            race.earlier,
            RacingAccess {
                thread: 1,
                site: 7,
                write: true
            }
        );
        assert_eq!(race.later.site, 2);
    }

    #[test]
    fn a_plain_access_ordered_after_the_atomics_synchronises_like_one() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.atomic(1, 7, 200, true); // a state word
        assert_eq!(d.plain(1, 1, true, 64, 4), None);
        d.atomic(1, 8, 300, true); // a flag
        d.atomic(0, 9, 300, false); // sees it
        assert_eq!(d.plain(0, 2, false, 200, 4), None, "ordered: no race");
        assert_eq!(d.plain(0, 3, false, 64, 4), None, "the flag acquired");
        assert!(!d.mixed());
    }

    #[test]
    fn an_atomic_access_known_through_another_thread_orders_a_plain_write() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.spawn(0, 2);
        d.atomic(1, 7, 200, false); // reads the word
        d.atomic(1, 8, 300, true); // then hands over to 2
        d.atomic(2, 9, 300, false);
        d.atomic(2, 10, 400, true); // which hands over to 0
        d.atomic(0, 11, 400, false);
        assert_eq!(d.plain(0, 2, true, 200, 4), None, "1's read is ordered");
        // A read by 2 after its hand-over is not.
        d.atomic(2, 12, 200, false);
        let race = d.plain(0, 3, true, 200, 4).expect("2's read is unordered");
        assert_eq!((race.earlier.thread, race.earlier.site), (2, 12));
    }

    /// A detector in its second execution, with thread 1 spawned, after an
    /// execution whose thread 1 wrote 200 atomically.
    fn after_an_atomic_write_to_200() -> Detector {
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.atomic(1, 99, 200, true);
        d.reset();
        d.spawn(0, 1);
        d
    }

    #[test]
    fn a_reset_forgets_which_words_are_atomic() {
        let mut d = after_an_atomic_write_to_200();
        assert_eq!(d.plain(1, 1, true, 64, 4), None);
        // Were 200 still a synchronisation word, these would order the
        // write before the read.
        d.plain_sync_only(1, 98, 200, true);
        d.plain_sync_only(0, 98, 200, false);
        assert!(d.plain(0, 2, false, 64, 4).is_some());
    }

    #[test]
    fn a_word_of_a_new_execution_knows_nothing_of_the_words_before() {
        let mut d = after_an_atomic_write_to_200();
        // The first word of this execution, where 200 was kept: a read of
        // it must not learn what thread 1 knew at its write before.
        d.atomic(0, 97, 300, false);
        assert_eq!(d.plain(1, 1, true, 64, 4), None);
        d.atomic(0, 97, 300, false);
        assert!(d.plain(0, 2, false, 64, 4).is_some());
    }

    #[test]
    fn a_byte_split_off_an_atomic_word_synchronises_as_a_word_of_its_own() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.atomic(0, 1, 200, true);
        // A one-byte store into the word splits it; its bytes keep the mark.
        assert_eq!(d.plain(0, 2, true, 201, 1), None);
        // Thread 1 knows nothing of that store.
        assert!(d.plain(1, 3, false, 201, 1).is_some());
    }

    #[test]
    fn of_several_unordered_atomic_writes_the_race_names_the_lowest_thread() {
        let mut d = Detector::new();
        for child in 1..=3 {
            d.spawn(0, child);
        }
        d.atomic(2, 20, 200, true);
        d.atomic(1, 10, 200, true);
        // Thread 3 learns nothing of them: a plain write by it races with
        // both, and thread 1's is named, though thread 2's came first.
        let race = d.plain(3, 30, true, 200, 4).expect("a race");
        assert_eq!((race.earlier.thread, race.earlier.site), (1, 10));
    }

    #[test]
    fn library_accesses_to_an_atomic_word_synchronise() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.atomic(0, 99, 200, false);
        assert_eq!(d.plain(1, 1, true, 64, 4), None);
        d.plain_sync_only(1, 98, 200, true); // an unlock by a plain store
        d.plain_sync_only(0, 98, 200, false);
        assert_eq!(d.plain(0, 2, false, 64, 4), None);
    }

    #[test]
    fn plain_and_atomic_accesses_to_one_word_race_only_unordered() {
        // Two threads read a word plainly, a third writes it atomically.
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.spawn(0, 2);
        assert_eq!(d.plain(0, 1, false, 64, 4), None);
        assert_eq!(d.plain(1, 2, false, 64, 4), None);
        let race = d.atomic(2, 3, 64, true).expect("nothing orders the reads");
        assert!(!race.earlier.write && race.later.write);
        assert_eq!(race.later.site, 3);
        assert!(d.mixed());
        // A plain write after atomic reads that nothing orders before it.
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.atomic(0, 4, 64, false);
        let race = d.plain(1, 1, true, 64, 4).expect("a write after a read");
        assert_eq!((race.earlier.site, race.earlier.write), (4, false));
        // A plain read beside an atomic read: mixed, but no race.
        let mut d = Detector::new();
        d.spawn(0, 1);
        assert_eq!(d.plain(1, 1, false, 64, 4), None);
        assert_eq!(d.atomic(0, 4, 64, false), None);
        assert!(d.mixed());
        // Initialised plainly, then handed over: ordered, not mixed.
        let mut d = Detector::new();
        assert_eq!(d.plain(0, 1, true, 64, 4), None);
        d.spawn(0, 1);
        assert_eq!(d.atomic(1, 99, 64, true), None);
        assert_eq!(d.plain(0, 2, true, 80, 4), None);
        assert!(!d.mixed());
    }

    #[test]
    fn a_notify_orders_the_woken_waiter() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        assert_eq!(d.plain(0, 1, true, 0, 4), None);
        d.wake(0, 1);
        assert_eq!(d.plain(1, 2, true, 0, 4), None);
    }

    #[test]
    fn bytes_of_different_accesses_are_compared_where_they_overlap() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        assert_eq!(d.plain(1, 1, true, 0, 2), None);
        assert_eq!(d.plain(0, 2, true, 2, 2), None, "disjoint halves");
        assert!(d.plain(0, 3, false, 0, 4).is_some());
    }

    #[test]
    fn accesses_across_a_page_boundary_are_all_recorded() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        let page = 4096;
        assert_eq!(d.plain(1, 1, true, page - 2, 4), None);
        let race = d.plain(0, 2, false, page + 1, 1).expect("a race");
        assert_eq!(race.addr, page + 1);
    }

    #[test]
    fn a_clock_that_has_seen_the_last_write_knows_all_the_word_does() {
        // Random programs of spawns, wakes, ends and atomic accesses, one
        // detector reset between them: every join the detector skips would
        // have changed nothing, and a word a thread wrote again holds its
        // clock (the assertions in `AtomicWord::synchronise`).
        use rand_core::RngCore;
        let mut rng = rand_pcg::Pcg32::new(7, 11);
        let mut d = Detector::new();
        for _ in 0..500 {
            d.reset();
            let mut live: Vec<ThreadId> = vec![0];
            let mut next = 1;
            for _ in 0..300 {
                let pick = |rng: &mut rand_pcg::Pcg32, live: &[ThreadId]| {
                    live[rng.next_u32() as usize % live.len()]
                };
                let thread = pick(&mut rng, &live);
                match rng.next_u32() % 10 {
                    0 if live.len() < 6 => {
                        d.spawn(thread, next);
                        live.push(next);
                        next += 1;
                    }
                    1 if live.len() > 1 => {
                        let woken = pick(&mut rng, &live);
                        if woken != thread {
                            d.wake(thread, woken);
                        }
                    }
                    2 if thread != 0 => {
                        d.ended(thread);
                        live.retain(|&t| t != thread);
                    }
                    3 => d.outlived(0),
                    _ => {
                        let addr = 8 * (rng.next_u32() % 3);
                        d.atomic(thread, 1, addr, rng.next_u32().is_multiple_of(2));
                    }
                }
            }
        }
    }

    #[test]
    fn a_words_threads_are_told_apart_after_a_reset() {
        let mut d = Detector::new();
        d.spawn(0, 1);
        d.spawn(0, 2);
        d.atomic(2, 5, 64, true);
        d.reset();
        d.spawn(0, 1);
        d.spawn(0, 2);
        // Thread 1 takes the word's first entry, which thread 2 had in the
        // execution before.
        d.atomic(1, 6, 64, false);
        d.atomic(2, 7, 64, true);
        let race = d.plain(1, 8, false, 64, 4).expect("a race");
        assert_eq!(
            race.earlier,
            RacingAccess {
                thread: 2,
                site: 7,
                write: true
            }
        );
    }
}
