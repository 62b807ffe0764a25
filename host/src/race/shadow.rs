//! Shadow memory: what each byte of the shared memory remembers of its
//! plain accesses, after FastTrack (Flanagan and Freund, PLDI 2009). A byte
//! keeps its last write and its reads since that write: one read while the
//! reads are ordered one after the other, the last read of each thread
//! while they are concurrent (FastTrack's adaptive read set).
//!
//! Memory is shadowed by pages of 256 bytes, created when first touched, and
//! pages by granules of 4 bytes. A page or granule whose bytes all remember
//! the same is kept as one shadow: a page that a `memory.fill` covered, a
//! word only ever accessed whole. It is split when an access covers part of
//! it, and a write that covers all of it makes it whole again. So bulk
//! operations cost one shadow per page, and word accesses one per granule.

use crate::instrument::SiteId;
use crate::trace::ThreadId;
use crate::trace::clock::{Epoch, VectorClock};
use std::rc::Rc;

/// Bytes of one page of shadow memory.
const PAGE: u64 = 256;

/// One access as a byte remembers it: the thread's epoch and the site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    time: u32,
    site: SiteId,
    thread: ThreadId,
}

impl Stamp {
    fn new(epoch: Epoch, site: SiteId) -> Self {
        Stamp {
            time: epoch.time,
            site,
            thread: epoch.thread,
        }
    }

    #[inline]
    fn epoch(self) -> Epoch {
        Epoch {
            thread: self.thread,
            time: self.time,
        }
    }

    /// Whether nothing orders the access before the present of `thread`,
    /// whose clock is `clock`.
    #[inline]
    fn unordered(self, thread: ThreadId, clock: &VectorClock) -> bool {
        self.thread != thread && !self.epoch().happened_before(clock)
    }
}

/// The reads of a byte since its last write.
#[derive(Clone, Debug, Default)]
enum Reads {
    #[default]
    None,
    /// Reads ordered one after the other: the last one.
    One(Stamp),
    /// Concurrent reads: each reading thread's last read (shared by the
    /// bytes of a page that was split, copied when one of them changes).
    Many(Rc<Vec<Stamp>>),
    /// The byte starts a word the program accesses atomically.
    Sync,
}

/// What one byte (or a uniform page) remembers.
#[derive(Clone, Debug, Default)]
struct Shadow {
    write: Option<Stamp>,
    reads: Reads,
}

/// Bytes of one granule.
const GRANULE: usize = 4;

/// Four bytes of shadow memory.
#[derive(Clone, Debug)]
enum Granule {
    /// Every byte remembers the same.
    Whole(Shadow),
    /// Each byte remembers its own.
    Bytes(Box<[Shadow; GRANULE]>),
}

/// One page of shadow memory.
#[derive(Debug)]
enum Page {
    /// Every byte remembers the same.
    Uniform(Shadow),
    /// Each granule remembers its own.
    Granules(Box<[Granule]>),
}

/// An earlier access that a new one races with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The first byte both touch.
    pub addr: u32,
    /// The earlier access's thread.
    pub thread: ThreadId,
    /// The earlier access's site.
    pub site: SiteId,
    /// Whether the earlier access wrote.
    pub write: bool,
}

/// What a plain access found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Recorded; it races with nothing.
    Clean,
    /// Recorded; it races with this earlier access.
    Race(Conflict),
    /// Its first byte is a synchronisation word (see
    /// [`ShadowMemory::mark_sync`]): not recorded.
    SyncWord,
}

/// Pages whose numbers one second-level table of [`PageTable`] maps.
const TABLE: usize = 256;

/// Where each page number's page is in [`ShadowMemory::pages`]: a two-level
/// table indexed by the page number (a hash map took a tenth of an
/// execution's time).
#[derive(Debug, Default)]
struct PageTable {
    /// Second-level tables by page number / [`TABLE`] (wasm32 addresses
    /// have at most 2^24 pages), each mapping a page number % [`TABLE`] to
    /// its index plus one (0: none yet).
    tables: Vec<Option<Box<[u32; TABLE]>>>,
    /// The tables allocated, to clear at a reset.
    allocated: Vec<usize>,
}

impl PageTable {
    /// The slot of page `number`.
    #[inline]
    fn slot(&mut self, number: u64) -> &mut u32 {
        let (table, slot) = (number as usize / TABLE, number as usize % TABLE);
        if self.tables.len() <= table {
            self.tables.resize_with(table + 1, || None);
        }
        let entry = &mut self.tables[table];
        if entry.is_none() {
            self.allocated.push(table);
        }
        &mut entry.get_or_insert_with(|| Box::new([0; TABLE]))[slot]
    }

    /// Forgets every page, keeping the tables.
    fn clear(&mut self) {
        for &table in &self.allocated {
            if let Some(slots) = &mut self.tables[table] {
                slots.fill(0);
            }
        }
    }
}

/// The shadow of the whole shared memory.
#[derive(Debug, Default)]
pub struct ShadowMemory {
    /// The pages, in the order they were first touched.
    pages: Vec<Page>,
    /// Where each page is in `pages`.
    index: PageTable,
    /// Granule arrays of pages dropped by [`ShadowMemory::reset`], reused
    /// when a page is split.
    spare: Vec<Box<[Granule]>>,
}

impl ShadowMemory {
    /// Forgets every access, keeping the memory for the next execution.
    pub fn reset(&mut self) {
        for page in self.pages.drain(..) {
            if let Page::Granules(granules) = page {
                self.spare.push(granules);
            }
        }
        self.index.clear();
    }

    /// The index in `pages` of the page with number `number`, created when
    /// new.
    #[inline]
    fn page(&mut self, number: u64) -> usize {
        let slot = self.index.slot(number);
        if *slot == 0 {
            self.pages.push(Page::Uniform(Shadow::default()));
            *slot = self.pages.len() as u32;
        }
        *slot as usize - 1
    }

    /// Marks the byte at `addr` as the first byte of a word the program
    /// accesses atomically: later plain accesses that start there are
    /// synchronisation, not data accesses. (A granule that starts there
    /// is marked whole.)
    pub fn mark_sync(&mut self, addr: u32) {
        let byte = u64::from(addr);
        let at = self.page(byte / PAGE);
        let page = &mut self.pages[at];
        if page.shadow((byte % PAGE) as usize).is_sync() {
            return;
        }
        let granule = &mut page.split(&mut self.spare)[(byte % PAGE) as usize / GRANULE];
        match (byte as usize % GRANULE, granule) {
            (0, granule) => *granule = Granule::Whole(Shadow::sync()),
            (at, granule) => granule.split()[at] = Shadow::sync(),
        }
    }

    /// Records a plain access of `thread`, whose clock is `clock`, at
    /// `site` to the `len` bytes from `addr`, and returns the first earlier
    /// access it races with, if any. Every byte is recorded whether it races
    /// or not.
    pub fn access(
        &mut self,
        thread: ThreadId,
        clock: &VectorClock,
        site: SiteId,
        write: bool,
        addr: u32,
        len: u32,
    ) -> Checked {
        let now = Stamp::new(Epoch::of(thread, clock), site);
        if let Some(checked) = self.access_words(now, clock, write, addr, len) {
            return checked;
        }
        let end = u64::from(addr) + u64::from(len);
        let mut first = None;
        let mut byte = u64::from(addr);
        while byte < end {
            let page_start = byte / PAGE * PAGE;
            let page_end = end.min(page_start + PAGE);
            let at = self.page(byte / PAGE);
            let page = &mut self.pages[at];
            if byte == u64::from(addr) && page.shadow((byte - page_start) as usize).is_sync() {
                return Checked::SyncWord;
            }
            let conflict = page.access(
                &mut self.spare,
                (byte - page_start) as usize,
                (page_end - page_start) as usize,
                now,
                clock,
                write,
            );
            if first.is_none()
                && let Some((at, (earlier, earlier_write))) = conflict
            {
                first = Some(Conflict {
                    addr: (page_start + at as u64) as u32,
                    thread: earlier.thread,
                    site: earlier.site,
                    write: earlier_write,
                });
            }
            byte = page_end;
        }
        first.map_or(Checked::Clean, Checked::Race)
    }
}

impl ShadowMemory {
    /// The common case first: an access to whole words (at most 16 bytes)
    /// of a page already split, whose granules are whole. `None` when the
    /// access is not one.
    #[inline]
    fn access_words(
        &mut self,
        now: Stamp,
        clock: &VectorClock,
        write: bool,
        addr: u32,
        len: u32,
    ) -> Option<Checked> {
        let granule = GRANULE as u32;
        let offset = (u64::from(addr) % PAGE) as usize;
        if !addr.is_multiple_of(granule)
            || !len.is_multiple_of(granule)
            || !(granule..=16).contains(&len)
            || offset + len as usize > PAGE as usize
        {
            return None;
        }
        let at = self.page(u64::from(addr) / PAGE);
        let Page::Granules(granules) = &mut self.pages[at] else {
            return None;
        };
        let words = &mut granules[offset / GRANULE..(offset + len as usize) / GRANULE];
        if !words.iter().all(|g| matches!(g, Granule::Whole(_))) {
            return None;
        }
        let mut first = None;
        for (n, word) in words.iter_mut().enumerate() {
            let Granule::Whole(shadow) = word else {
                unreachable!("checked above")
            };
            if n == 0 && shadow.is_sync() {
                return Some(Checked::SyncWord);
            }
            if let (None, Some((earlier, earlier_write))) =
                (first, shadow.access(now, clock, write))
            {
                first = Some(Conflict {
                    addr: addr + n as u32 * granule,
                    thread: earlier.thread,
                    site: earlier.site,
                    write: earlier_write,
                });
            }
        }
        Some(first.map_or(Checked::Clean, Checked::Race))
    }
}

/// The first conflict of an access to a block of bytes: the offset of the
/// byte in the block, the earlier access and whether it wrote.
type BlockConflict = Option<(usize, (Stamp, bool))>;

impl Page {
    /// The shadow of byte `at` of the page.
    #[inline]
    fn shadow(&self, at: usize) -> &Shadow {
        match self {
            Page::Uniform(shadow) => shadow,
            Page::Granules(granules) => granules[at / GRANULE].shadow(at % GRANULE),
        }
    }

    /// The page's granules (a uniform page is split, into `spare`'s last
    /// array if there is one).
    fn split(&mut self, spare: &mut Vec<Box<[Granule]>>) -> &mut [Granule] {
        if let Page::Uniform(shadow) = self {
            let whole = Granule::Whole(shadow.clone());
            let granules = match spare.pop() {
                Some(mut granules) => {
                    granules.fill(whole);
                    granules
                }
                None => vec![whole; PAGE as usize / GRANULE].into(),
            };
            *self = Page::Granules(granules);
        }
        match self {
            Page::Granules(granules) => granules,
            Page::Uniform(_) => unreachable!("the page was just split"),
        }
    }

    /// An access to bytes `from..to` of the page (split into `spare`'s
    /// last array, if it must be).
    fn access(
        &mut self,
        spare: &mut Vec<Box<[Granule]>>,
        from: usize,
        to: usize,
        now: Stamp,
        clock: &VectorClock,
        write: bool,
    ) -> BlockConflict {
        let whole = from == 0 && to == PAGE as usize;
        if let (true, Page::Uniform(shadow)) = (whole, &mut *self) {
            return shadow.access(now, clock, write).map(|earlier| (0, earlier));
        }
        let granules = self.split(spare);
        let mut first = None;
        let mut byte = from;
        while byte < to {
            let start = byte / GRANULE * GRANULE;
            let end = to.min(start + GRANULE);
            let found =
                granules[start / GRANULE].access(byte - start, end - start, now, clock, write);
            if first.is_none() {
                first = found.map(|(at, earlier)| (start + at, earlier));
            }
            byte = end;
        }
        if whole && write && granules.iter().all(|g| !g.has_sync()) {
            // Every byte was written by this access alone.
            if let Page::Granules(granules) =
                std::mem::replace(self, Page::Uniform(Shadow::written(now)))
            {
                spare.push(granules);
            }
        }
        first
    }
}

impl Granule {
    /// The shadow of byte `at` of the granule.
    fn shadow(&self, at: usize) -> &Shadow {
        match self {
            Granule::Whole(shadow) => shadow,
            Granule::Bytes(bytes) => &bytes[at],
        }
    }

    fn has_sync(&self) -> bool {
        match self {
            Granule::Whole(shadow) => shadow.is_sync(),
            Granule::Bytes(bytes) => bytes.iter().any(Shadow::is_sync),
        }
    }

    /// The granule's bytes (a whole granule is split).
    fn split(&mut self) -> &mut [Shadow; GRANULE] {
        if let Granule::Whole(shadow) = self {
            *self = Granule::Bytes(Box::new(std::array::from_fn(|_| shadow.clone())));
        }
        match self {
            Granule::Bytes(bytes) => bytes,
            Granule::Whole(_) => unreachable!("the granule was just split"),
        }
    }

    /// An access to bytes `from..to` of the granule.
    fn access(
        &mut self,
        from: usize,
        to: usize,
        now: Stamp,
        clock: &VectorClock,
        write: bool,
    ) -> BlockConflict {
        let whole = from == 0 && to == GRANULE;
        if let (true, Granule::Whole(shadow)) = (whole, &mut *self) {
            return shadow.access(now, clock, write).map(|earlier| (0, earlier));
        }
        let bytes = self.split();
        let mut first = None;
        for (at, shadow) in bytes.iter_mut().enumerate().take(to).skip(from) {
            let found = shadow.access(now, clock, write);
            if first.is_none() {
                first = found.map(|earlier| (at, earlier));
            }
        }
        if whole && write && !bytes.iter().any(Shadow::is_sync) {
            *self = Granule::Whole(Shadow::written(now));
        }
        first
    }
}

impl Shadow {
    #[inline]
    fn is_sync(&self) -> bool {
        matches!(self.reads, Reads::Sync)
    }

    /// The shadow of the first byte of an atomic word.
    fn sync() -> Self {
        Shadow {
            write: None,
            reads: Reads::Sync,
        }
    }

    /// The shadow of a byte `now` wrote.
    fn written(now: Stamp) -> Self {
        Shadow {
            write: Some(now),
            reads: Reads::None,
        }
    }

    /// A read or write `now` by the thread whose clock is `clock`: the
    /// earlier access it races with, and whether that one wrote.
    fn access(&mut self, now: Stamp, clock: &VectorClock, write: bool) -> Option<(Stamp, bool)> {
        if write {
            self.write(now, clock)
        } else {
            self.read(now, clock)
        }
    }

    #[inline]
    fn read(&mut self, now: Stamp, clock: &VectorClock) -> Option<(Stamp, bool)> {
        let race = self
            .write
            .filter(|w| w.unordered(now.thread, clock))
            .map(|w| (w, true));
        match &mut self.reads {
            Reads::One(last)
                if last.thread == now.thread || last.epoch().happened_before(clock) =>
            {
                *last = now;
            }
            Reads::None => self.reads = Reads::One(now),
            // A byte of a synchronisation word that a wider plain access
            // covers keeps its mark.
            Reads::Sync => {}
            Reads::One(last) => {
                let last = *last;
                self.reads = Reads::Many(Rc::new(vec![last, now]));
            }
            Reads::Many(reads) => {
                let set = Rc::make_mut(reads);
                match set.iter_mut().find(|r| r.thread == now.thread) {
                    Some(entry) => *entry = now,
                    None => set.push(now),
                }
            }
        }
        race
    }

    #[inline]
    fn write(&mut self, now: Stamp, clock: &VectorClock) -> Option<(Stamp, bool)> {
        let write_race = self
            .write
            .filter(|w| w.unordered(now.thread, clock))
            .map(|w| (w, true));
        let read_race = match &self.reads {
            Reads::None | Reads::Sync => None,
            Reads::One(read) => Some(*read).filter(|r| r.unordered(now.thread, clock)),
            Reads::Many(reads) => reads
                .iter()
                .copied()
                .find(|r| r.unordered(now.thread, clock)),
        }
        .map(|r| (r, false));
        self.write = Some(now);
        if !matches!(self.reads, Reads::None | Reads::Sync) {
            self.reads = Reads::None;
        }
        write_race.or(read_race)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(times: &[u32]) -> VectorClock {
        let mut clock = VectorClock::default();
        for (thread, &time) in times.iter().enumerate() {
            clock.set(thread as ThreadId, time);
        }
        clock
    }

    fn race(checked: Checked) -> Conflict {
        match checked {
            Checked::Race(conflict) => conflict,
            other => panic!("expected a race, got {other:?}"),
        }
    }

    #[test]
    fn a_bulk_write_keeps_a_page_whole_and_a_partial_one_splits_it() {
        let mut memory = ShadowMemory::default();
        let (zero, one) = (clock(&[1, 0]), clock(&[0, 1]));
        let page = PAGE as u32;
        assert_eq!(
            memory.access(0, &zero, 1, true, 0, 3 * page),
            Checked::Clean
        );
        assert!(memory.pages.iter().all(|p| matches!(p, Page::Uniform(_))));
        let conflict = race(memory.access(1, &one, 2, false, page + 10, 2));
        assert_eq!(conflict.addr, page + 10);
        assert!(conflict.write);
        assert!(matches!(memory.pages[1], Page::Granules(_)));
        // The rest of the split page still remembers the fill.
        race(memory.access(1, &one, 3, true, 2 * page - 1, 1));
    }

    #[test]
    fn a_write_over_a_split_page_or_granule_makes_it_whole_again() {
        let mut memory = ShadowMemory::default();
        let zero = clock(&[1]);
        assert_eq!(memory.access(0, &zero, 1, false, 5, 1), Checked::Clean);
        let Page::Granules(granules) = &memory.pages[0] else {
            panic!("split")
        };
        assert!(matches!(granules[1], Granule::Bytes(_)));
        assert_eq!(memory.access(0, &zero, 2, true, 4, 4), Checked::Clean);
        let Page::Granules(granules) = &memory.pages[0] else {
            panic!("split")
        };
        assert!(matches!(granules[1], Granule::Whole(_)));
        assert_eq!(
            memory.access(0, &zero, 2, true, 0, PAGE as u32),
            Checked::Clean
        );
        assert!(matches!(memory.pages[0], Page::Uniform(_)));
    }

    #[test]
    fn bytes_of_a_granule_are_compared_where_accesses_overlap() {
        let mut memory = ShadowMemory::default();
        let (zero, one) = (clock(&[1, 0]), clock(&[0, 1]));
        assert_eq!(memory.access(0, &zero, 1, true, 8, 2), Checked::Clean);
        assert_eq!(memory.access(1, &one, 2, true, 10, 2), Checked::Clean);
        let conflict = race(memory.access(1, &one, 3, false, 8, 4));
        assert_eq!((conflict.addr, conflict.thread), (8, 0));
    }

    #[test]
    fn concurrent_reads_are_kept_per_byte_after_a_split() {
        let mut memory = ShadowMemory::default();
        let (zero, one, two) = (clock(&[1, 0, 0]), clock(&[0, 1, 0]), clock(&[0, 0, 1]));
        let page = PAGE as u32;
        assert_eq!(memory.access(0, &zero, 1, false, 0, page), Checked::Clean);
        assert_eq!(memory.access(1, &one, 2, false, 0, page), Checked::Clean);
        // Thread 2 reads one byte: only that byte's set gains it.
        assert_eq!(memory.access(2, &two, 3, false, 7, 1), Checked::Clean);
        // A write by thread 0 that knows thread 1's read races with thread
        // 2's on byte 7 only.
        let knows_one = clock(&[2, 1, 0]);
        assert_eq!(memory.access(0, &knows_one, 4, true, 6, 1), Checked::Clean);
        let conflict = race(memory.access(0, &knows_one, 4, true, 7, 1));
        assert_eq!((conflict.thread, conflict.write), (2, false));
    }

    #[test]
    fn a_reset_forgets_every_access() {
        let mut memory = ShadowMemory::default();
        let (zero, one) = (clock(&[1, 0]), clock(&[0, 1]));
        for _ in 0..3 {
            assert_eq!(memory.access(0, &zero, 1, true, 70_000, 4), Checked::Clean);
            race(memory.access(1, &one, 2, true, 70_000, 4));
            memory.reset();
        }
    }

    #[test]
    fn a_marked_word_is_synchronisation() {
        let mut memory = ShadowMemory::default();
        let (zero, one) = (clock(&[1, 0]), clock(&[0, 1]));
        assert_eq!(memory.access(0, &zero, 1, true, 16, 4), Checked::Clean);
        memory.mark_sync(16);
        assert_eq!(memory.access(1, &one, 2, false, 16, 4), Checked::SyncWord);
        // A write over the whole page keeps the mark.
        assert_eq!(
            memory.access(0, &zero, 3, true, 0, PAGE as u32),
            Checked::Clean
        );
        assert_eq!(memory.access(1, &one, 2, false, 16, 4), Checked::SyncWord);
        // A byte marked inside a granule: an access that starts elsewhere
        // still races.
        memory.mark_sync(33);
        assert_eq!(memory.access(1, &one, 4, true, 33, 1), Checked::SyncWord);
        race(memory.access(1, &one, 5, false, 32, 1));
    }
}
