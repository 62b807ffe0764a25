//! The host's side of a thread's point buffer (see
//! [`crate::abi::POINT_BUFFER`]): where the scheduler's decision is forced
//! (one thread can run), weft grants the running thread a budget of
//! scheduling points it passes inside wasm, appending them to a buffer in
//! its instance's private memory; the host reads them back, in order,
//! before it records anything else of that thread. In a module that logs
//! its plain accesses, the same memory holds the access log (see
//! [`crate::abi::ACCESS_LOG`]).

use super::read_granules::ReadGranules;
use crate::abi::{ACCESS_LOG, POINT_BUFFER};
use crate::instrument::SiteId;

/// Points a budget covers at most (the time limit is checked between
/// budgets).
pub(crate) const MAX_BUDGET: u64 = 256;

// Every entry a budget can fill lies within the buffer.
const _: () = assert!(POINT_BUFFER.entries + 8 * MAX_BUDGET <= POINT_BUFFER.bytes);

/// A thread's point buffer: its instance's `weft_points` memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PointBuffer {
    base: *mut u8,
    /// The memory's size in bytes.
    bytes: usize,
}

impl PointBuffer {
    /// The buffer of `bytes` bytes at `base`.
    ///
    /// # Safety
    ///
    /// `base` must point to the `weft_points` memory of the
    /// thread's instance, `bytes` must be its size, and the buffer must not
    /// be used once that instance is gone.
    pub unsafe fn new(base: *mut u8, bytes: usize) -> Self {
        assert!(
            bytes as u64 >= POINT_BUFFER.bytes,
            "a point buffer is a page"
        );
        PointBuffer { base, bytes }
    }

    fn word(&self, offset: u64) -> *mut u32 {
        // SAFETY: the layout's offsets lie within the buffer's page, and the
        // memory is 4-byte aligned (page aligned).
        unsafe { self.base.add(offset as usize).cast::<u32>() }
    }

    /// Takes the map of read bytes at `offset` (of `bytes` bytes) into
    /// `reads` (see [`crate::abi::READ_MAP`]).
    pub fn take_read_map(&self, reads: &mut ReadGranules, offset: usize, bytes: usize) {
        assert!(offset + bytes <= self.bytes, "the map lies in the buffer");
        // SAFETY: `new`'s contract: `base` is the start of the memory
        // (page-aligned), `self.bytes` long; the thread is not running.
        unsafe { reads.take_map(self.base, offset, bytes) };
    }

    /// Whether the memory is large enough for an access log whose bitmap of
    /// scheduled sites has `bitmap` bytes.
    pub fn holds_log(&self, bitmap: usize) -> bool {
        ACCESS_LOG.flags as usize + bitmap <= self.bytes
    }

    /// Empties the access log, sets the bitmap of the sites whose plain
    /// accesses are scheduling points, and whether plain accesses are
    /// logged from the start (see [`PointBuffer::record`]).
    pub fn start_log(&self, scheduled: &[u8], recording: bool) {
        assert!(self.holds_log(scheduled.len()), "the bitmap fits the log");
        // SAFETY: `new`'s contract; the thread is not running, and the
        // bitmap fits (checked above).
        unsafe {
            self.word(ACCESS_LOG.len).write(0);
            self.word(ACCESS_LOG.read).write(0);
            self.word(ACCESS_LOG.recording).write(u32::from(recording));
            std::ptr::copy_nonoverlapping(
                scheduled.as_ptr(),
                self.base.add(ACCESS_LOG.flags as usize),
                scheduled.len(),
            );
        }
    }

    /// Makes the thread log its plain accesses from now on (see
    /// [`ACCESS_LOG`]).
    pub fn record(&self) {
        // SAFETY: `new`'s contract; the thread is in a host call, so nothing
        // else touches the buffer.
        unsafe { self.word(ACCESS_LOG.recording).write(1) };
    }

    /// Whether the thread logged a word since the last
    /// [`PointBuffer::drain_log`].
    #[inline]
    pub fn logged_since_drain(&self) -> bool {
        // SAFETY: `new`'s contract; the thread is in a host call or
        // finished.
        unsafe { self.word(ACCESS_LOG.len).read() != self.word(ACCESS_LOG.read).read() }
    }

    /// Hands `visit` the words the thread logged since the last call,
    /// oldest first, as they lie in the ring (the older part, then the part
    /// from the ring's start when they wrap), without copying them.
    pub fn drain_log<R>(&self, visit: impl FnOnce(&[u64], &[u64]) -> R) -> R {
        // SAFETY: `new`'s contract; the thread is in a host call or
        // finished, so nothing writes the ring while `visit` reads it; ring
        // indices lie within the log (a module that logs has the memory
        // `holds_log` checked at start), whose entries are 8-byte aligned.
        unsafe {
            let written = self.word(ACCESS_LOG.len).read();
            let read = self.word(ACCESS_LOG.read).read();
            // The guest calls `log_full` before unread entries could be
            // overwritten; a count past the capacity is a weft bug.
            let unread = written.wrapping_sub(read).min(ACCESS_LOG.capacity as u32) as usize;
            let entries = self.base.add(ACCESS_LOG.entries as usize).cast::<u64>();
            let capacity = ACCESS_LOG.capacity as usize;
            let first = written.wrapping_sub(unread as u32) as usize & (capacity - 1);
            let older = unread.min(capacity - first);
            let visited = visit(
                std::slice::from_raw_parts(entries.add(first), older),
                std::slice::from_raw_parts(entries, unread - older),
            );
            self.word(ACCESS_LOG.read).write(written);
            visited
        }
    }

    /// Tells the thread the size of the shared memory the guest sees.
    pub fn set_visible_size(&self, bytes: usize) {
        // SAFETY: `new`'s contract; the thread is not running (the host
        // runs), so nothing else touches the buffer; the offset is 8-byte
        // aligned.
        unsafe {
            self.base
                .add(POINT_BUFFER.size as usize)
                .cast::<u64>()
                .write(bytes as u64)
        };
    }

    /// Lets the thread pass `points` scheduling points without the host
    /// (the buffer is empty: the host drains it before it grants).
    pub fn grant(&self, points: u64) {
        let points = points.min(MAX_BUDGET) as u32;
        // SAFETY: `new`'s contract; the thread is not running (it is in a
        // host call), so nothing else touches the buffer.
        unsafe {
            self.word(POINT_BUFFER.budget).write(points);
            self.word(POINT_BUFFER.granted).write(points);
        }
    }

    /// Takes back the budget and returns how many points the thread
    /// passed on it, leaving the buffer empty (its entries unread).
    pub fn drain_count(&self) -> u64 {
        // SAFETY: as in `grant`.
        unsafe {
            let granted = self.word(POINT_BUFFER.granted).read();
            if granted == 0 {
                return 0;
            }
            let left = self.word(POINT_BUFFER.budget).read().min(granted);
            self.word(POINT_BUFFER.budget).write(0);
            self.word(POINT_BUFFER.granted).write(0);
            u64::from(granted - left)
        }
    }

    /// Takes back the budget and hands `visit` every buffered point as
    /// `(site, addr)`, oldest first, leaving the buffer empty.
    pub fn drain(&self, mut visit: impl FnMut(SiteId, u32)) {
        // SAFETY: as in `grant`; entries below the granted budget (at most
        // `MAX_BUDGET`) lie within the buffer.
        unsafe {
            let granted = self.word(POINT_BUFFER.granted).read();
            if granted == 0 {
                return;
            }
            let left = self.word(POINT_BUFFER.budget).read().min(granted);
            self.word(POINT_BUFFER.budget).write(0);
            self.word(POINT_BUFFER.granted).write(0);
            // The first point took entry `granted - 1`, the next one below.
            for entry in (left..granted).rev() {
                let at = POINT_BUFFER.entries + 8 * u64::from(entry);
                visit(self.word(at).read(), self.word(at + 4).read());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends `words` to the log as the guest does.
    fn log(buffer: &PointBuffer, words: std::ops::Range<u64>) {
        let entries = unsafe { buffer.base.add(ACCESS_LOG.entries as usize).cast::<u64>() };
        for word in words {
            let len = unsafe { buffer.word(ACCESS_LOG.len).read() };
            let at = len as usize & (ACCESS_LOG.capacity as usize - 1);
            unsafe {
                entries.add(at).write(word);
                buffer.word(ACCESS_LOG.len).write(len + 1);
            }
        }
    }

    fn drained(buffer: &PointBuffer) -> Vec<u64> {
        buffer.drain_log(|older, newer| older.iter().chain(newer).copied().collect())
    }

    #[test]
    fn a_drained_count_is_the_points_passed_on_the_budget_and_takes_it_back() {
        let mut memory = vec![0u64; POINT_BUFFER.bytes as usize / 8];
        let bytes = memory.len() * 8;
        let buffer = unsafe { PointBuffer::new(memory.as_mut_ptr().cast(), bytes) };
        assert_eq!(buffer.drain_count(), 0, "nothing granted, nothing passed");
        buffer.grant(5);
        // The guest passes three points: each takes one unit of the budget.
        unsafe { buffer.word(POINT_BUFFER.budget).write(2) };
        assert_eq!(buffer.drain_count(), 3);
        let (budget, granted) = unsafe {
            (
                buffer.word(POINT_BUFFER.budget).read(),
                buffer.word(POINT_BUFFER.granted).read(),
            )
        };
        assert_eq!((budget, granted), (0, 0), "the budget is taken back");
        assert_eq!(buffer.drain_count(), 0);
    }

    #[test]
    fn the_log_is_drained_oldest_first_across_the_rings_end() {
        let mut memory = vec![0u64; (ACCESS_LOG.flags as usize + 8) / 8];
        let bytes = memory.len() * 8;
        let buffer = unsafe { PointBuffer::new(memory.as_mut_ptr().cast(), bytes) };
        buffer.start_log(&[0], true);
        let capacity = ACCESS_LOG.capacity;
        log(&buffer, 0..capacity - 3);
        assert_eq!(drained(&buffer), (0..capacity - 3).collect::<Vec<_>>());
        assert!(!buffer.logged_since_drain());
        // Three entries at the ring's end, two at its start.
        log(&buffer, capacity - 3..capacity + 2);
        assert!(buffer.logged_since_drain());
        assert_eq!(
            drained(&buffer),
            (capacity - 3..capacity + 2).collect::<Vec<_>>()
        );
        assert_eq!(drained(&buffer), Vec::<u64>::new());
    }
}
