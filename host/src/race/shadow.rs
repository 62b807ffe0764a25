//! Shadow memory: what each byte of the shared memory remembers of its
//! plain accesses, after FastTrack (Flanagan and Freund, PLDI 2009). A byte
//! keeps its last write and its reads since that write: one read while the
//! reads are ordered one after the other, the last read of each thread
//! while they are concurrent (FastTrack's adaptive read set).
//!
//! Memory is shadowed by 4 KiB pages, created when first touched. A page
//! whose bytes all remember the same (a page that a `memory.fill` or
//! `memory.copy` covered, or one only read as a whole) is kept as one
//! shadow; it is split into one shadow per byte when an access covers part
//! of it. So bulk operations on large buffers cost one shadow per page.

use crate::instrument::SiteId;
use crate::trace::ThreadId;
use crate::trace::clock::{Epoch, VectorClock};
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// Bytes of one page of shadow memory.
const PAGE: u64 = 4096;

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

    fn epoch(self) -> Epoch {
        Epoch {
            thread: self.thread,
            time: self.time,
        }
    }

    /// Whether nothing orders the access before the present of `thread`,
    /// whose clock is `clock`.
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
}

/// What one byte (or a uniform page) remembers.
#[derive(Clone, Debug, Default)]
struct Shadow {
    write: Option<Stamp>,
    reads: Reads,
}

/// One page of shadow memory.
#[derive(Debug)]
enum Page {
    /// Every byte remembers the same.
    Uniform(Shadow),
    /// Each byte remembers its own.
    Bytes(Box<[Shadow]>),
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

/// The shadow of the whole shared memory.
#[derive(Debug, Default)]
pub struct ShadowMemory {
    pages: FxHashMap<u64, Page>,
}

impl ShadowMemory {
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
    ) -> Option<Conflict> {
        let now = Stamp::new(Epoch::of(thread, clock), site);
        let end = u64::from(addr) + u64::from(len);
        let mut first = None;
        let mut byte = u64::from(addr);
        while byte < end {
            let page_start = byte / PAGE * PAGE;
            let page_end = end.min(page_start + PAGE);
            let page = self
                .pages
                .entry(byte / PAGE)
                .or_insert(Page::Uniform(Shadow::default()));
            let whole = byte == page_start && page_end == page_start + PAGE;
            let conflict = match page {
                Page::Uniform(shadow) if whole => shadow
                    .access(now, clock, write)
                    .map(|earlier| (byte, earlier)),
                Page::Bytes(shadows) if whole && write => {
                    // Every byte ends up written by this access alone.
                    let conflict = shadows.iter_mut().enumerate().find_map(|(at, shadow)| {
                        shadow
                            .access(now, clock, true)
                            .map(|earlier| (page_start + at as u64, earlier))
                    });
                    let mut written = Shadow::default();
                    written.access(now, clock, true);
                    *page = Page::Uniform(written);
                    conflict
                }
                _ => {
                    if let Page::Uniform(shadow) = page {
                        *page = Page::Bytes(vec![shadow.clone(); PAGE as usize].into());
                    }
                    let Page::Bytes(shadows) = page else {
                        unreachable!("the page was just split")
                    };
                    let mut conflict = None;
                    for at in byte..page_end {
                        let found = shadows[(at - page_start) as usize].access(now, clock, write);
                        if conflict.is_none()
                            && let Some(earlier) = found
                        {
                            conflict = Some((at, earlier));
                        }
                    }
                    conflict
                }
            };
            if first.is_none()
                && let Some((at, (earlier, earlier_write))) = conflict
            {
                first = Some(Conflict {
                    addr: at as u32,
                    thread: earlier.thread,
                    site: earlier.site,
                    write: earlier_write,
                });
            }
            byte = page_end;
        }
        first
    }
}

impl Shadow {
    /// A read or write `now` by the thread whose clock is `clock`: the
    /// earlier access it races with, and whether that one wrote.
    fn access(&mut self, now: Stamp, clock: &VectorClock, write: bool) -> Option<(Stamp, bool)> {
        if write {
            self.write(now, clock)
        } else {
            self.read(now, clock)
        }
    }

    fn read(&mut self, now: Stamp, clock: &VectorClock) -> Option<(Stamp, bool)> {
        let race = self
            .write
            .filter(|w| w.unordered(now.thread, clock))
            .map(|w| (w, true));
        self.reads = match std::mem::take(&mut self.reads) {
            Reads::None => Reads::One(now),
            Reads::One(last)
                if last.thread == now.thread || last.epoch().happened_before(clock) =>
            {
                Reads::One(now)
            }
            Reads::One(last) => Reads::Many(Rc::new(vec![last, now])),
            Reads::Many(mut reads) => {
                let set = Rc::make_mut(&mut reads);
                match set.iter_mut().find(|r| r.thread == now.thread) {
                    Some(entry) => *entry = now,
                    None => set.push(now),
                }
                Reads::Many(reads)
            }
        };
        race
    }

    fn write(&mut self, now: Stamp, clock: &VectorClock) -> Option<(Stamp, bool)> {
        let write_race = self
            .write
            .filter(|w| w.unordered(now.thread, clock))
            .map(|w| (w, true));
        let read_race = match &self.reads {
            Reads::None => None,
            Reads::One(read) => Some(*read).filter(|r| r.unordered(now.thread, clock)),
            Reads::Many(reads) => reads
                .iter()
                .copied()
                .find(|r| r.unordered(now.thread, clock)),
        }
        .map(|r| (r, false));
        self.write = Some(now);
        self.reads = Reads::None;
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

    #[test]
    fn a_bulk_write_keeps_a_page_whole_and_a_partial_one_splits_it() {
        let mut memory = ShadowMemory::default();
        let (zero, one) = (clock(&[1, 0]), clock(&[0, 1]));
        assert_eq!(memory.access(0, &zero, 1, true, 0, 3 * PAGE as u32), None);
        assert!(memory.pages.values().all(|p| matches!(p, Page::Uniform(_))));
        let conflict = memory
            .access(1, &one, 2, false, PAGE as u32 + 10, 2)
            .expect("thread 1's read races with thread 0's fill");
        assert_eq!(conflict.addr, PAGE as u32 + 10);
        assert!(conflict.write);
        assert!(matches!(memory.pages[&1], Page::Bytes(_)));
        // The rest of the split page still remembers the fill.
        assert!(
            memory
                .access(1, &one, 3, true, 2 * PAGE as u32 - 1, 1)
                .is_some()
        );
    }

    #[test]
    fn a_write_over_a_split_page_makes_it_whole_again() {
        let mut memory = ShadowMemory::default();
        let zero = clock(&[1]);
        assert_eq!(memory.access(0, &zero, 1, false, 5, 1), None);
        assert_eq!(memory.access(0, &zero, 2, true, 0, PAGE as u32), None);
        assert!(matches!(memory.pages[&0], Page::Uniform(_)));
    }

    #[test]
    fn concurrent_reads_are_kept_per_byte_after_a_split() {
        let mut memory = ShadowMemory::default();
        let (zero, one, two) = (clock(&[1, 0, 0]), clock(&[0, 1, 0]), clock(&[0, 0, 1]));
        assert_eq!(memory.access(0, &zero, 1, false, 0, PAGE as u32), None);
        assert_eq!(memory.access(1, &one, 2, false, 0, PAGE as u32), None);
        // Thread 2 reads one byte: only that byte's set gains it.
        assert_eq!(memory.access(2, &two, 3, false, 7, 1), None);
        // A write by thread 0 that knows thread 1's read races with thread
        // 2's on byte 7 only.
        let knows_one = clock(&[2, 1, 0]);
        assert_eq!(memory.access(0, &knows_one, 4, true, 6, 1), None);
        let conflict = memory.access(0, &knows_one, 4, true, 7, 1).expect("a race");
        assert_eq!((conflict.thread, conflict.write), (2, false));
    }
}
