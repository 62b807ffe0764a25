//! Shadow memory: what each byte of the shared memory remembers of its
//! plain accesses, after FastTrack (Flanagan and Freund, PLDI 2009). A byte
//! keeps its last write and its reads since that write: one read while the
//! reads are ordered one after the other, the last read of each thread
//! while they are concurrent (FastTrack's adaptive read set).
//!
//! Memory is shadowed by pages of 256 bytes, created when first touched, and
//! pages by granules of 4 bytes. A page or granule whose bytes all remember
//! the same is kept as one [`Cell`]: a page that a `memory.fill` covered, a
//! word only ever accessed whole. It is split when an access covers part of
//! it, and a write that covers all of it makes it whole again. So bulk
//! operations cost one cell per page, and word accesses one per granule.
//! A split page's granules take their copy of the page's cell only when
//! first accessed: most of a page's granules never are.
//!
//! Cells are plain 24-byte values in flat arrays that an execution fills
//! from the start and a reset empties without freeing: the granules of split
//! pages, the bytes of split granules and the sets of concurrent reads each
//! live in an arena, and a cell names its arena entry by index. (Boxes and
//! reference-counted sets, one allocation per split, took most of the
//! detector's time.)

use crate::instrument::SiteId;
use crate::trace::ThreadId;
use crate::trace::clock::VectorClock;

/// Bytes of one page of shadow memory.
const PAGE: u64 = 256;

/// Bytes of one granule.
const GRANULE: usize = 4;

/// Granules of one page.
const GRANULES: usize = PAGE as usize / GRANULE;

/// One access as a byte remembers it: the thread's time and the site. A
/// cell's read stamp uses thread ids no guest thread has as tags (see
/// [`Cell`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    time: u32,
    site: SiteId,
    thread: ThreadId,
}

/// The thread of a write stamp that stands for no write.
const NO_WRITE: ThreadId = ThreadId::MAX;
/// Read tag: no read since the last write.
const NO_READ: ThreadId = ThreadId::MAX;
/// Read tag: concurrent reads, whose set is entry `time` of the read sets.
const MANY: ThreadId = ThreadId::MAX - 1;
/// Read tag: the byte starts a word the program accesses atomically.
const SYNC: ThreadId = ThreadId::MAX - 2;
/// Read tag of a granule's cell: each byte remembers its own, in entry
/// `time` of the split granules.
const BYTES: ThreadId = ThreadId::MAX - 3;

impl Stamp {
    /// A read stamp that carries `tag` (and `index`, for the tags that name
    /// an arena entry).
    const fn tag(tag: ThreadId, index: u32) -> Self {
        Stamp {
            time: index,
            site: 0,
            thread: tag,
        }
    }

    /// Whether nothing orders the access before the present of `thread`,
    /// whose clock is `clock`.
    #[inline]
    fn unordered(self, thread: ThreadId, clock: &VectorClock) -> bool {
        self.thread != thread && self.time > clock.get(self.thread)
    }
}

/// What one byte, granule or uniform page remembers: its last write and
/// its reads since (or a tag: see the `*_READ`, [`MANY`], [`SYNC`] and
/// [`BYTES`] constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cell {
    write: Stamp,
    read: Stamp,
}

impl Cell {
    /// Never accessed.
    const EMPTY: Cell = Cell {
        write: Stamp::tag(NO_WRITE, 0),
        read: Stamp::tag(NO_READ, 0),
    };

    /// The first byte of an atomic word.
    const SYNC: Cell = Cell {
        write: Stamp::tag(NO_WRITE, 0),
        read: Stamp::tag(SYNC, 0),
    };

    /// A byte `now` wrote.
    fn written(now: Stamp) -> Self {
        Cell {
            write: now,
            read: Stamp::tag(NO_READ, 0),
        }
    }

    #[inline]
    fn is_sync(&self) -> bool {
        self.read.thread == SYNC
    }

    #[inline]
    fn is_split(&self) -> bool {
        self.read.thread == BYTES
    }
}

/// The sets of concurrent reads of an execution, by index.
#[derive(Debug, Default)]
struct ReadSets {
    /// The sets; those from `used` on are left from earlier executions.
    sets: Vec<Vec<Stamp>>,
    used: usize,
}

impl ReadSets {
    /// A new set holding `reads`; its index.
    fn add(&mut self, reads: &[Stamp]) -> u32 {
        if self.used == self.sets.len() {
            self.sets.push(Vec::new());
        }
        let set = &mut self.sets[self.used];
        set.clear();
        set.extend_from_slice(reads);
        self.used += 1;
        (self.used - 1) as u32
    }

    /// A copy of set `index`; the copy's index.
    fn copy(&mut self, index: u32) -> u32 {
        let reads = std::mem::take(&mut self.sets[index as usize]);
        let copy = self.add(&reads);
        self.sets[index as usize] = reads;
        copy
    }

    fn clear(&mut self) {
        self.used = 0;
    }
}

/// Gives `copy`, a copy of a cell, its own copy of the original's read
/// set, if it has one: a copy must not share it (sets change in place).
/// (It changes the copy in place: a cell returned from a call is written in
/// pieces and read back whole, which stalls the processor.)
#[inline]
fn unshare(copy: &mut Cell, sets: &mut ReadSets) {
    if copy.read.thread == MANY {
        copy.read = Stamp::tag(MANY, sets.copy(copy.read.time));
    }
}

/// An earlier access that a new one races with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conflict {
    /// The first byte both touch.
    pub addr: u32,
    /// The clock slot of the earlier access's thread.
    pub slot: ThreadId,
    /// That slot's time at the earlier access.
    pub time: u32,
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
    /// Recorded; it races with the earlier access
    /// [`ShadowMemory::last_race`] names.
    Race,
    /// Its first byte is a synchronisation word (see
    /// [`ShadowMemory::mark_sync`]): not recorded.
    SyncWord,
}

/// The earlier access a cell's access races with, and whether it wrote.
type CellConflict = Option<(Stamp, bool)>;

/// One plain access being recorded: `now` by the thread whose clock is
/// `clock`, a write or a read, and the first race found so far.
///
/// The first race is kept here, not returned up through each level, and
/// an access returns only what kind of result it has (the race itself is
/// [`ShadowMemory::last_race`]): a conflict returned through memory is
/// written in pieces and read back whole, and on every access the
/// processor stalled on that load, which cannot take its value from
/// several pending stores.
struct Visit<'a> {
    now: Stamp,
    clock: &'a VectorClock,
    write: bool,
    first: Option<Conflict>,
}

impl<'a> Visit<'a> {
    /// An access of `thread`, whose clock is `clock`, at `site`, with no
    /// race found yet.
    #[inline]
    fn new(thread: ThreadId, clock: &'a VectorClock, site: SiteId, write: bool) -> Self {
        Visit {
            now: Stamp {
                time: clock.get(thread),
                site,
                thread,
            },
            clock,
            write,
            first: None,
        }
    }

    /// Records the access of the bytes `cell` stands for, from `addr`;
    /// a race is kept if it is the access's first.
    #[inline]
    fn cell(&mut self, cell: &mut Cell, sets: &mut ReadSets, addr: u64) {
        let found = if self.write {
            write_cell(cell, sets, self.now, self.clock)
        } else {
            read_cell(cell, sets, self.now, self.clock)
        };
        if let (None, Some((earlier, write))) = (self.first, found) {
            self.first = Some(Conflict {
                addr: addr as u32,
                slot: earlier.thread,
                time: earlier.time,
                site: earlier.site,
                write,
            });
        }
    }
}

/// The cell's last write, if nothing orders it before `now`, whose
/// thread's clock is `clock`.
#[inline]
fn write_race(cell: &Cell, now: Stamp, clock: &VectorClock) -> CellConflict {
    (cell.write.thread != NO_WRITE && cell.write.unordered(now.thread, clock))
        .then_some((cell.write, true))
}

#[inline]
fn read_cell(
    cell: &mut Cell,
    sets: &mut ReadSets,
    now: Stamp,
    clock: &VectorClock,
) -> CellConflict {
    let race = write_race(cell, now, clock);
    let last = cell.read;
    match last.thread {
        NO_READ => cell.read = now,
        // A byte of a synchronisation word that a wider plain access
        // covers keeps its mark.
        SYNC => {}
        MANY => {
            let set = &mut sets.sets[last.time as usize];
            match set.iter_mut().find(|r| r.thread == now.thread) {
                Some(entry) => *entry = now,
                None => set.push(now),
            }
        }
        thread if thread == now.thread || last.time <= clock.get(thread) => cell.read = now,
        _ => cell.read = Stamp::tag(MANY, sets.add(&[last, now])),
    }
    race
}

#[inline]
fn write_cell(
    cell: &mut Cell,
    sets: &mut ReadSets,
    now: Stamp,
    clock: &VectorClock,
) -> CellConflict {
    let write_race = write_race(cell, now, clock);
    let read_race = match cell.read.thread {
        NO_READ | SYNC => None,
        MANY => sets.sets[cell.read.time as usize]
            .iter()
            .copied()
            .find(|r| r.unordered(now.thread, clock)),
        _ => Some(cell.read).filter(|r| r.unordered(now.thread, clock)),
    }
    .map(|r| (r, false));
    cell.write = now;
    if cell.read.thread != SYNC {
        cell.read = Stamp::tag(NO_READ, 0);
    }
    write_race.or(read_race)
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
        if !matches!(self.tables.get(table), Some(Some(_))) {
            self.new_table(table);
        }
        match &mut self.tables[table] {
            Some(slots) => &mut slots[slot],
            None => unreachable!("the table was just made"),
        }
    }

    /// Allocates second-level table `table`.
    #[cold]
    fn new_table(&mut self, table: usize) {
        if self.tables.len() <= table {
            self.tables.resize_with(table + 1, || None);
        }
        self.tables[table] = Some(Box::new([0; TABLE]));
        self.allocated.push(table);
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

/// One page of shadow memory.
#[derive(Clone, Copy, Debug)]
enum Page {
    /// Every byte remembers the same.
    Uniform(Cell),
    /// Each granule remembers its own, in entry `block` of
    /// [`ShadowMemory::blocks`]: those whose bit is set in `own`; the
    /// others still remember what the whole page did when it was split,
    /// entry `block` of [`ShadowMemory::bases`] (a page is split when one
    /// granule is accessed alone, and most are never accessed after).
    /// `sync`: a byte of the page was marked.
    Granules { block: u32, own: u64, sync: bool },
}

const _: () = assert!(
    GRANULES == u64::BITS as usize,
    "one bit of `own` per granule"
);

/// The bits of the granules `granules` in [`Page::Granules`]'s `own`.
#[inline]
fn granule_bits(granules: std::ops::Range<usize>) -> u64 {
    let below = |granule: usize| match granule {
        GRANULES => u64::MAX,
        _ => (1 << granule) - 1,
    };
    below(granules.end) & !below(granules.start)
}

/// The shadow of the whole shared memory.
#[derive(Debug, Default)]
pub struct ShadowMemory {
    /// The pages, in the order they were first touched.
    pages: Vec<Page>,
    /// Where each page is in `pages`.
    index: PageTable,
    /// The granules of split pages: the first `blocks_used`; the others
    /// are earlier executions', left as they were (a block's granules are
    /// written only as they become their own).
    blocks: Vec<[Cell; GRANULES]>,
    /// How many of `blocks` this execution uses.
    blocks_used: usize,
    /// What each split page remembered when it was split, by block.
    bases: Vec<Cell>,
    /// The bytes of split granules.
    bytes: Vec<[Cell; GRANULE]>,
    /// The sets of concurrent reads.
    sets: ReadSets,
    /// The race of the last access that found one.
    last_race: Conflict,
}

impl ShadowMemory {
    /// Forgets every access, keeping the memory for the next execution.
    pub fn reset(&mut self) {
        self.pages.clear();
        self.index.clear();
        self.blocks_used = 0;
        self.bases.clear();
        self.bytes.clear();
        self.sets.clear();
    }

    /// The index in `pages` of the page with number `number`, created when
    /// new.
    #[inline]
    fn page(&mut self, number: u64) -> usize {
        let slot = self.index.slot(number);
        if *slot == 0 {
            self.pages.push(Page::Uniform(Cell::EMPTY));
            *slot = self.pages.len() as u32;
        }
        *slot as usize - 1
    }

    /// The cell of byte `at` of page `page`.
    #[inline]
    fn byte_cell(&self, page: usize, at: usize) -> &Cell {
        match self.pages[page] {
            Page::Uniform(ref cell) => cell,
            Page::Granules { block, own, .. } => {
                let granule = at / GRANULE;
                if own & (1 << granule) == 0 {
                    return &self.bases[block as usize];
                }
                let granule = &self.blocks[block as usize][granule];
                if granule.is_split() {
                    &self.bytes[granule.read.time as usize][at % GRANULE]
                } else {
                    granule
                }
            }
        }
    }

    /// The block of granules of page `page` (a uniform page is split),
    /// whose granules `granules` are made their own.
    #[inline]
    fn split_page(&mut self, page: usize, granules: std::ops::Range<usize>) -> usize {
        let bits = granule_bits(granules);
        match self.pages[page] {
            Page::Granules { block, own, .. } if own & bits == bits => block as usize,
            _ => self.own_granules(page, bits),
        }
    }

    /// [`ShadowMemory::split_page`] when it has work to do: splits the
    /// page if it is uniform, and gives the granules of `bits` that still
    /// remember the page's split their own copy of it.
    fn own_granules(&mut self, page: usize, bits: u64) -> usize {
        if let Page::Uniform(cell) = self.pages[page] {
            if self.blocks_used == self.blocks.len() {
                self.blocks.push([Cell::EMPTY; GRANULES]);
            }
            self.bases.push(cell);
            self.pages[page] = Page::Granules {
                block: self.blocks_used as u32,
                own: 0,
                sync: false,
            };
            self.blocks_used += 1;
        }
        let Page::Granules { block, own, .. } = &mut self.pages[page] else {
            unreachable!("the page was just split")
        };
        let block = *block as usize;
        let mut missing = bits & !*own;
        *own |= bits;
        // Copied from where it lies, not through a local (see `unshare`).
        let (base, granules) = (&self.bases[block], &mut self.blocks[block]);
        while missing != 0 {
            let granule = &mut granules[missing.trailing_zeros() as usize];
            *granule = *base;
            unshare(granule, &mut self.sets);
            missing &= missing - 1;
        }
        block
    }

    /// The bytes of granule `granule` of block `block`, which must be its
    /// own (a whole granule is split); their index in `bytes`.
    fn split_granule(&mut self, block: usize, granule: usize) -> usize {
        let cell = self.blocks[block][granule];
        if cell.is_split() {
            return cell.read.time as usize;
        }
        let mut bytes = [cell; GRANULE];
        for byte in &mut bytes[1..] {
            unshare(byte, &mut self.sets);
        }
        self.bytes.push(bytes);
        let index = self.bytes.len() - 1;
        self.blocks[block][granule].read = Stamp::tag(BYTES, index as u32);
        index
    }

    /// Marks the byte at `addr` as the first byte of a word the program
    /// accesses atomically: later plain accesses that start there are
    /// synchronisation, not data accesses. (A granule that starts there
    /// is marked whole.) Returns a plain access that nothing orders before
    /// `thread`'s present (its clock is `clock`) and that had touched the
    /// byte, a write if there is one: a read counts even before an atomic
    /// read, since the mark forgets it and the word's later atomic writes
    /// are not checked against it.
    pub fn mark_sync(
        &mut self,
        thread: ThreadId,
        clock: &VectorClock,
        addr: u32,
    ) -> Option<Conflict> {
        let byte = u64::from(addr);
        let (page, at) = (self.page(byte / PAGE), (byte % PAGE) as usize);
        let cell = *self.byte_cell(page, at);
        if cell.is_sync() {
            return None;
        }
        let unordered = self.unordered_plain(&cell, thread, clock);
        let granule = at / GRANULE;
        let block = self.split_page(page, granule..granule + 1);
        if let Page::Granules { sync, .. } = &mut self.pages[page] {
            *sync = true;
        }
        if at % GRANULE == 0 {
            self.blocks[block][granule] = Cell::SYNC;
        } else {
            let bytes = self.split_granule(block, granule);
            self.bytes[bytes][at % GRANULE] = Cell::SYNC;
        }
        unordered.map(|(stamp, write)| Conflict {
            addr,
            slot: stamp.thread,
            time: stamp.time,
            site: stamp.site,
            write,
        })
    }

    /// A plain access that `cell` remembers and that nothing orders before
    /// the present of `thread`, whose clock is `clock`, and whether it
    /// wrote (a write first). The cell is left as it is.
    fn unordered_plain(
        &self,
        cell: &Cell,
        thread: ThreadId,
        clock: &VectorClock,
    ) -> Option<(Stamp, bool)> {
        let unordered = |stamp: &Stamp| stamp.unordered(thread, clock);
        if cell.write.thread != NO_WRITE && unordered(&cell.write) {
            return Some((cell.write, true));
        }
        let read = match cell.read.thread {
            NO_READ | SYNC | BYTES => None,
            MANY => self.sets.sets[cell.read.time as usize]
                .iter()
                .copied()
                .find(unordered),
            _ => Some(cell.read).filter(unordered),
        };
        read.map(|stamp| (stamp, false))
    }

    /// Records a plain access of `thread`, whose clock is `clock`, at
    /// `site` to the `len` bytes from `addr`, and says whether it races
    /// with an earlier access (the first one is then
    /// [`ShadowMemory::last_race`]). Every byte is recorded whether it
    /// races or not.
    #[inline]
    pub fn access(
        &mut self,
        thread: ThreadId,
        clock: &VectorClock,
        site: SiteId,
        write: bool,
        addr: u32,
        len: u32,
    ) -> Checked {
        let mut visit = Visit::new(thread, clock, site, write);
        match self.access_words(&mut visit, addr, len) {
            Some(checked) => checked,
            // The slow path builds its own visit: a visit built here and
            // read there would stall as its conflict would.
            None => self.access_bytes(thread, clock, site, write, addr, len),
        }
    }

    /// Any access, page by page: the slow path, kept out of line so that
    /// [`ShadowMemory::access`] and its fast path
    /// ([`ShadowMemory::access_words`]) stay small enough to inline into
    /// the detector (in one function with this one, the fast path spilled
    /// half its registers).
    #[inline(never)]
    fn access_bytes(
        &mut self,
        thread: ThreadId,
        clock: &VectorClock,
        site: SiteId,
        write: bool,
        addr: u32,
        len: u32,
    ) -> Checked {
        let mut visit = Visit::new(thread, clock, site, write);
        let end = u64::from(addr) + u64::from(len);
        let mut byte = u64::from(addr);
        while byte < end {
            let page_start = byte / PAGE * PAGE;
            let page_end = end.min(page_start + PAGE);
            let page = self.page(byte / PAGE);
            let from = (byte - page_start) as usize;
            if byte == u64::from(addr) && self.byte_cell(page, from).is_sync() {
                return Checked::SyncWord;
            }
            self.access_page(
                page,
                page_start,
                from,
                (page_end - page_start) as usize,
                &mut visit,
            );
            byte = page_end;
        }
        self.outcome(&visit)
    }

    /// The earlier access that the last access found [`Checked::Race`]
    /// races with (first by address).
    pub fn last_race(&self) -> Conflict {
        self.last_race
    }

    /// What the access `visit` found, its race kept if it has one.
    #[inline]
    fn outcome(&mut self, visit: &Visit<'_>) -> Checked {
        match visit.first {
            None => Checked::Clean,
            Some(conflict) => {
                self.last_race = conflict;
                Checked::Race
            }
        }
    }

    /// The common case first: an access to whole words (at most 16 bytes)
    /// whose granules are whole (their page is split if it was not).
    /// `None` when the access is not one.
    #[inline]
    fn access_words(&mut self, visit: &mut Visit<'_>, addr: u32, len: u32) -> Option<Checked> {
        let offset = (u64::from(addr) % PAGE) as usize;
        if !addr.is_multiple_of(GRANULE as u32)
            || !len.is_multiple_of(GRANULE as u32)
            || !(GRANULE as u32..=16).contains(&len)
            || offset + len as usize > PAGE as usize
        {
            return None;
        }
        let page = self.page(u64::from(addr) / PAGE);
        let granules = offset / GRANULE..(offset + len as usize) / GRANULE;
        let block = self.split_page(page, granules.clone());
        let words = &mut self.blocks[block][granules];
        if words.iter().any(Cell::is_split) {
            return None;
        }
        if words[0].is_sync() {
            return Some(Checked::SyncWord);
        }
        for (n, word) in words.iter_mut().enumerate() {
            visit.cell(word, &mut self.sets, u64::from(addr) + (n * GRANULE) as u64);
        }
        Some(self.outcome(visit))
    }

    /// An access to bytes `from..to` of page `page`, which starts at
    /// address `start` (split if it must be).
    fn access_page(
        &mut self,
        page: usize,
        start: u64,
        from: usize,
        to: usize,
        visit: &mut Visit<'_>,
    ) {
        let whole = from == 0 && to == PAGE as usize;
        if let (true, Page::Uniform(cell)) = (whole, &mut self.pages[page]) {
            visit.cell(cell, &mut self.sets, start);
            return;
        }
        let block = self.split_page(page, from / GRANULE..to.div_ceil(GRANULE));
        let mut byte = from;
        while byte < to {
            let granule = byte / GRANULE * GRANULE;
            let end = to.min(granule + GRANULE);
            let range = byte - granule..end - granule;
            self.access_granule(
                block,
                granule / GRANULE,
                start + granule as u64,
                range,
                visit,
            );
            byte = end;
        }
        if let (true, true, Page::Granules { sync: false, .. }) =
            (whole, visit.write, self.pages[page])
        {
            // Every byte was written by this access alone.
            self.pages[page] = Page::Uniform(Cell::written(visit.now));
        }
    }

    /// An access to bytes `range` of granule `granule` of block `block`,
    /// which starts at address `start`.
    fn access_granule(
        &mut self,
        block: usize,
        granule: usize,
        start: u64,
        range: std::ops::Range<usize>,
        visit: &mut Visit<'_>,
    ) {
        let whole = range == (0..GRANULE);
        let cell = &mut self.blocks[block][granule];
        if whole && !cell.is_split() {
            visit.cell(cell, &mut self.sets, start);
            return;
        }
        let bytes = self.split_granule(block, granule);
        for at in range {
            visit.cell(
                &mut self.bytes[bytes][at],
                &mut self.sets,
                start + at as u64,
            );
        }
        if whole && visit.write && !self.bytes[bytes].iter().any(Cell::is_sync) {
            self.blocks[block][granule] = Cell::written(visit.now);
        }
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

    /// The race of an access that must have found one.
    fn race(checked: Checked, memory: &ShadowMemory) -> Conflict {
        assert_eq!(checked, Checked::Race);
        memory.last_race()
    }

    /// What one byte remembers in [`Model`].
    #[derive(Clone, Default)]
    struct ModelByte {
        write: Option<Stamp>,
        reads: ModelReads,
    }

    #[derive(Clone, Default)]
    enum ModelReads {
        #[default]
        None,
        One(Stamp),
        Many(Vec<Stamp>),
        Sync,
    }

    /// The shadow memory's rules applied to each byte on its own, with no
    /// pages, granules, arenas or tags: what the real one must answer.
    #[derive(Default)]
    struct Model {
        bytes: std::collections::HashMap<u32, ModelByte>,
    }

    impl Model {
        fn access(
            &mut self,
            thread: ThreadId,
            clock: &VectorClock,
            site: SiteId,
            write: bool,
            addr: u32,
            len: u32,
        ) -> (Checked, Option<Conflict>) {
            if matches!(
                self.bytes.get(&addr),
                Some(ModelByte {
                    reads: ModelReads::Sync,
                    ..
                })
            ) {
                return (Checked::SyncWord, None);
            }
            let now = Stamp {
                time: clock.get(thread),
                site,
                thread,
            };
            let unordered = |stamp: &Stamp| stamp.unordered(thread, clock);
            let mut first = None;
            for at in addr..addr + len {
                let byte = self.bytes.entry(at).or_default();
                let mut found = byte.write.filter(unordered).map(|w| (w, true));
                if write {
                    let read = match &byte.reads {
                        ModelReads::One(read) => Some(*read).filter(unordered),
                        ModelReads::Many(reads) => reads.iter().copied().find(unordered),
                        ModelReads::None | ModelReads::Sync => None,
                    };
                    found = found.or(read.map(|r| (r, false)));
                    byte.write = Some(now);
                    if !matches!(byte.reads, ModelReads::Sync) {
                        byte.reads = ModelReads::None;
                    }
                } else {
                    byte.reads = match std::mem::take(&mut byte.reads) {
                        ModelReads::None => ModelReads::One(now),
                        ModelReads::Sync => ModelReads::Sync,
                        ModelReads::Many(mut reads) => {
                            match reads.iter_mut().find(|r| r.thread == thread) {
                                Some(read) => *read = now,
                                None => reads.push(now),
                            }
                            ModelReads::Many(reads)
                        }
                        ModelReads::One(last)
                            if last.thread == thread || last.time <= clock.get(last.thread) =>
                        {
                            ModelReads::One(now)
                        }
                        ModelReads::One(last) => ModelReads::Many(vec![last, now]),
                    };
                }
                if let (None, Some((earlier, write))) = (first, found) {
                    first = Some(Conflict {
                        addr: at,
                        slot: earlier.thread,
                        time: earlier.time,
                        site: earlier.site,
                        write,
                    });
                }
            }
            match first {
                None => (Checked::Clean, None),
                Some(conflict) => (Checked::Race, Some(conflict)),
            }
        }

        fn mark_sync(
            &mut self,
            thread: ThreadId,
            clock: &VectorClock,
            addr: u32,
        ) -> Option<Conflict> {
            let byte = self.bytes.entry(addr).or_default();
            if matches!(byte.reads, ModelReads::Sync) {
                return None;
            }
            let unordered = |stamp: &Stamp| stamp.unordered(thread, clock);
            let found = byte
                .write
                .filter(unordered)
                .map(|w| (w, true))
                .or(match &byte.reads {
                    ModelReads::One(read) => Some(*read).filter(unordered).map(|r| (r, false)),
                    ModelReads::Many(reads) => {
                        reads.iter().copied().find(unordered).map(|r| (r, false))
                    }
                    ModelReads::None | ModelReads::Sync => None,
                });
            // A mark at the start of a granule marks the whole granule.
            let marked = if addr.is_multiple_of(GRANULE as u32) {
                addr..addr + 4
            } else {
                addr..addr + 1
            };
            for at in marked {
                self.bytes.insert(
                    at,
                    ModelByte {
                        write: None,
                        reads: ModelReads::Sync,
                    },
                );
            }
            found.map(|(stamp, write)| Conflict {
                addr,
                slot: stamp.thread,
                time: stamp.time,
                site: stamp.site,
                write,
            })
        }
    }

    #[test]
    fn pages_granules_and_bytes_answer_as_each_byte_would_alone() {
        // Random accesses of every size and alignment, bulk ones across
        // pages, marks and resets, by threads whose clocks know some of
        // each other's past: every answer and every race named is the
        // byte-by-byte model's.
        use rand_core::RngCore;
        let mut rng = rand_pcg::Pcg32::new(3, 5);
        let mut memory = ShadowMemory::default();
        let threads = 4;
        for _ in 0..300 {
            memory.reset();
            let mut model = Model::default();
            let mut clocks: Vec<VectorClock> =
                (0..threads).map(|_| VectorClock::default()).collect();
            for step in 0..400u32 {
                let thread = rng.next_u32() % threads;
                let own = clocks[thread as usize].get(thread) + 1;
                clocks[thread as usize].set(thread, own);
                if rng.next_u32().is_multiple_of(4) {
                    // The thread learns another's present.
                    let other = rng.next_u32() % threads;
                    let other_clock = clocks[other as usize].clone();
                    clocks[thread as usize].join(&other_clock);
                }
                let clock = clocks[thread as usize].clone();
                let addr = rng.next_u32() % (3 * PAGE as u32);
                let len = match rng.next_u32() % 10 {
                    // Whole pages (concurrent reads of a page are one set
                    // until it is split), or any span.
                    0 => PAGE as u32 * (1 + rng.next_u32() % 2),
                    1 => 1 + rng.next_u32() % (2 * PAGE as u32),
                    2 => 1,
                    3 => 2,
                    4 => 8,
                    _ => 4,
                };
                let align = match len % PAGE as u32 {
                    0 => PAGE as u32,
                    _ => len.min(4),
                };
                let addr = if rng.next_u32().is_multiple_of(3) {
                    addr
                } else {
                    addr / align * align
                };
                if rng.next_u32().is_multiple_of(40) {
                    assert_eq!(
                        memory.mark_sync(thread, &clock, addr),
                        model.mark_sync(thread, &clock, addr),
                        "mark at {addr}, step {step}"
                    );
                    continue;
                }
                let write = rng.next_u32().is_multiple_of(2);
                let checked = memory.access(thread, &clock, step, write, addr, len);
                let (expected, conflict) = model.access(thread, &clock, step, write, addr, len);
                assert_eq!(checked, expected, "access of {len} at {addr}, step {step}");
                if let Some(conflict) = conflict {
                    assert_eq!(memory.last_race(), conflict, "step {step}");
                }
            }
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
        let conflict = race(memory.access(1, &one, 2, false, page + 10, 2), &memory);
        assert_eq!(conflict.addr, page + 10);
        assert!(conflict.write);
        assert!(matches!(memory.pages[1], Page::Granules { .. }));
        // The rest of the split page still remembers the fill.
        race(memory.access(1, &one, 3, true, 2 * page - 1, 1), &memory);
    }

    #[test]
    fn a_write_over_a_split_page_or_granule_makes_it_whole_again() {
        let mut memory = ShadowMemory::default();
        let zero = clock(&[1]);
        assert_eq!(memory.access(0, &zero, 1, false, 5, 1), Checked::Clean);
        let Page::Granules { block, .. } = memory.pages[0] else {
            panic!("split")
        };
        assert!(memory.blocks[block as usize][1].is_split());
        assert_eq!(memory.access(0, &zero, 2, true, 4, 4), Checked::Clean);
        let Page::Granules { block, .. } = memory.pages[0] else {
            panic!("split")
        };
        assert!(!memory.blocks[block as usize][1].is_split());
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
        let conflict = race(memory.access(1, &one, 3, false, 8, 4), &memory);
        assert_eq!((conflict.addr, conflict.slot), (8, 0));
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
        let conflict = race(memory.access(0, &knows_one, 4, true, 7, 1), &memory);
        assert_eq!((conflict.slot, conflict.write), (2, false));
    }

    #[test]
    fn a_reset_forgets_every_access() {
        let mut memory = ShadowMemory::default();
        let (zero, one) = (clock(&[1, 0]), clock(&[0, 1]));
        for _ in 0..3 {
            assert_eq!(memory.access(0, &zero, 1, true, 70_000, 4), Checked::Clean);
            race(memory.access(1, &one, 2, true, 70_000, 4), &memory);
            memory.reset();
        }
    }

    #[test]
    fn a_marked_word_is_synchronisation() {
        let mut memory = ShadowMemory::default();
        let (zero, one) = (clock(&[1, 0]), clock(&[0, 1]));
        assert_eq!(memory.access(0, &zero, 1, true, 16, 4), Checked::Clean);
        memory.mark_sync(0, &VectorClock::default(), 16);
        assert_eq!(memory.access(1, &one, 2, false, 16, 4), Checked::SyncWord);
        // A write over the whole page keeps the mark.
        assert_eq!(
            memory.access(0, &zero, 3, true, 0, PAGE as u32),
            Checked::Clean
        );
        assert_eq!(memory.access(1, &one, 2, false, 16, 4), Checked::SyncWord);
        // A byte marked inside a granule: an access that starts elsewhere
        // still races.
        memory.mark_sync(0, &VectorClock::default(), 33);
        assert_eq!(memory.access(1, &one, 4, true, 33, 1), Checked::SyncWord);
        race(memory.access(1, &one, 5, false, 32, 1), &memory);
    }
}
