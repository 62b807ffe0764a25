//! The shared memory of a program's executions: mapped once, then reset to
//! its initial image between executions instead of mapped, faulted in and
//! unmapped every time.
//!
//! weft keeps the size the guest sees (the *visible* size): every execution
//! starts at the module's initial size, even when an earlier one grew the
//! mapping. The mapping itself stays accessible up to the largest size any
//! execution reached; what makes an access past the visible size trap, as it
//! would in a fresh memory, is instrumentation: `memory.size` and
//! `memory.grow` go through weft, and every load, store and bulk
//! instruction checks its end against the visible size, which weft keeps in
//! every thread's point buffer (an access past it is sent past the largest
//! size weft maps, 4 GiB less one wasm page, where wasmtime traps it). Host
//! code checks against the visible size. (Hiding and re-opening the grown
//! pages with `mprotect` instead cost three system calls and their TLB
//! flushes per execution, more than the checks.)

use super::read_granules::{Coverage, ReadGranules};
use super::resident_pages;
use crate::instrument::SharedMemoryPlan;
use std::cell::UnsafeCell;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use wasmtime::{Engine, MemoryType, SharedMemory};

/// Bytes in a wasm page.
const WASM_PAGE: usize = 65536;

/// The largest memory weft maps: accesses past the visible size are sent
/// beyond it (see [`crate::abi::OUT_OF_BOUNDS_ADDRESS`]).
const MAX_MAPPED_BYTES: usize = (1 << 32) - WASM_PAGE;

/// Bytes compared, and rewritten if they differ, at a time by a reset.
const RESTORE_CHUNK: usize = 4096;

/// Bytes a memory digest takes in at a time, when one of them is not zero
/// (see [`GuestMemory::digest_outside`]).
const DIGEST_CHUNK: usize = super::read_granules::READ_CHUNK;

/// A shared memory with the size its guest sees.
pub(crate) struct GuestMemory {
    shared: SharedMemory,
    initial_bytes: usize,
    max_bytes: usize,
    /// Bytes the guest can access in the current execution.
    visible: AtomicUsize,
    /// The initial contents (the data segments), from address 0; zero
    /// past its end.
    image: Vec<u8>,
    /// Whether each [`RESTORE_CHUNK`] of `image` holds data (a chunk that
    /// does not is zero, and is restored as such).
    image_chunks: Vec<bool>,
    /// Scratch for the ranges of resident pages.
    resident: Mutex<Vec<Range<usize>>>,
}

impl GuestMemory {
    /// Maps a memory as `plan` describes and writes its data segments.
    pub fn new(engine: &Engine, plan: &SharedMemoryPlan) -> Result<Self, String> {
        let ty = MemoryType::shared(plan.min_pages as u32, plan.max_pages as u32);
        let shared = SharedMemory::new(engine, ty).map_err(|e| e.to_string())?;
        let initial_bytes = plan.min_pages as usize * WASM_PAGE;
        if initial_bytes > MAX_MAPPED_BYTES {
            return Err(format!(
                "the module's initial memory ({} pages) is larger than weft supports ({} pages)",
                plan.min_pages,
                MAX_MAPPED_BYTES / WASM_PAGE
            ));
        }
        let mut image = Vec::new();
        let mut image_chunks = Vec::new();
        for init in plan.init.iter().filter(|init| !init.bytes.is_empty()) {
            let start = init.offset as usize;
            let end = start + init.bytes.len();
            if end > initial_bytes {
                return Err("a data segment does not fit in the initial memory".into());
            }
            if image.len() < end {
                image.resize(end, 0);
                image_chunks.resize(end.div_ceil(RESTORE_CHUNK), false);
            }
            image[start..end].copy_from_slice(&init.bytes);
            image_chunks[start / RESTORE_CHUNK..end.div_ceil(RESTORE_CHUNK)].fill(true);
        }
        let memory = GuestMemory {
            shared,
            initial_bytes,
            max_bytes: (plan.max_pages as usize * WASM_PAGE).min(MAX_MAPPED_BYTES),
            visible: AtomicUsize::new(initial_bytes),
            image,
            image_chunks,
            resident: Mutex::new(Vec::new()),
        };
        // Only the segments are written: a page of zeroes the guest never
        // writes stays the zero page, which a reset skips.
        for init in &plan.init {
            let start = init.offset as usize;
            // SAFETY: no guest thread has started; the segment fits (checked
            // above).
            unsafe { memory.bytes_mut(start, init.bytes.len()) }.copy_from_slice(&init.bytes);
        }
        Ok(memory)
    }

    /// The wasmtime memory every thread's instance imports.
    pub fn shared(&self) -> &SharedMemory {
        &self.shared
    }

    /// Bytes the guest can access.
    pub fn visible_bytes(&self) -> usize {
        self.visible.load(Ordering::Relaxed)
    }

    /// The guest's `memory.size`, in wasm pages.
    pub fn size_pages(&self) -> u32 {
        (self.visible_bytes() / WASM_PAGE) as u32
    }

    /// The accessible bytes, as cells (guest threads may write them).
    pub fn cells(&self) -> &[UnsafeCell<u8>] {
        &self.shared.data()[..self.visible_bytes()]
    }

    /// The accessible bytes, read while no guest thread runs (at a
    /// scheduling point, from the host).
    pub(super) fn quiet_bytes(&self) -> &[u8] {
        let cells = self.cells();
        // SAFETY: `UnsafeCell<u8>` has the layout of `u8`, and no guest
        // thread writes the memory while the host is at a scheduling point.
        unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<u8>(), cells.len()) }
    }

    /// Feeds the accessible bytes to `hasher`. Call only while no guest
    /// thread runs (at a scheduling point, from the host).
    pub fn hash_into(&self, hasher: &mut blake3::Hasher) {
        hasher.update(self.quiet_bytes());
    }

    /// A digest of the accessible bytes outside `left_out` (ranges sorted
    /// by start, not overlapping), each range counted by its bounds, and of
    /// the accessible size: faster to take than
    /// [`GuestMemory::hash_into`] (a stateful search takes one at every
    /// decision). Call only while no guest thread runs.
    ///
    /// It reads only the pages that hold memory of their own (see
    /// [`resident_pages`]): any other page is zero, as are the parts of
    /// those pages that no execution left anything in. What it takes in
    /// is each [`DIGEST_CHUNK`] of the memory that holds a byte other than
    /// zero, by its place, so two memories with the same bytes have the
    /// same digest however many of their pages are resident.
    ///
    /// With `reads`, it takes in only the granules read before (see
    /// [`ReadGranules::mask_chunk`]): the others count as zero. It then
    /// reads only the chunks that hold such granules
    /// ([`ReadGranules::read_chunks`]), resident or not.
    pub fn digest_outside(&self, left_out: &[Range<usize>], reads: Option<&ReadGranules>) -> u128 {
        let bytes = self.quiet_bytes();
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        let mut skipped = left_out.iter().peekable();
        let mut masked = [0u8; DIGEST_CHUNK];
        let mut digest_chunk = |chunk: Range<usize>| {
            let data = match reads {
                None => &bytes[chunk.clone()],
                Some(reads) => match reads.coverage(chunk.start, chunk.len()) {
                    Coverage::None => return,
                    Coverage::All => &bytes[chunk.clone()],
                    Coverage::Some => {
                        let data = &mut masked[..chunk.len()];
                        data.copy_from_slice(&bytes[chunk.clone()]);
                        if !reads.mask_chunk(chunk.start, data) {
                            return;
                        }
                        &*data
                    }
                },
            };
            while skipped.next_if(|s| s.end <= chunk.start).is_some() {}
            let mut at = chunk.start;
            for skip in skipped.clone().take_while(|s| s.start < chunk.end) {
                let part = at..skip.start.clamp(at, chunk.end);
                digest_part(&mut hasher, data, chunk.start, part);
                at = skip.end.clamp(at, chunk.end);
            }
            digest_part(&mut hasher, data, chunk.start, at..chunk.end);
        };
        match reads {
            // Only the chunks executions read count: no need to find
            // which pages are resident (the others read as zeros).
            Some(reads) => {
                for &start in reads.read_chunks() {
                    if start >= bytes.len() {
                        break;
                    }
                    digest_chunk(start..(start + DIGEST_CHUNK).min(bytes.len()));
                }
            }
            None => {
                let mut resident = self.resident.lock().unwrap_or_else(|e| e.into_inner());
                // SAFETY: the memory's mapping starts page-aligned and its
                // first `bytes.len()` bytes are mapped.
                let found =
                    unsafe { resident_pages::resident(bytes.as_ptr(), bytes.len(), &mut resident) };
                if found.is_err() {
                    // Every page counts then, which gives the same digest.
                    resident.clear();
                    resident.push(0..bytes.len());
                }
                for range in resident.iter() {
                    let first = range.start / DIGEST_CHUNK * DIGEST_CHUNK;
                    for chunk in (first..range.end).step_by(DIGEST_CHUNK) {
                        digest_chunk(chunk.max(range.start)..(chunk + DIGEST_CHUNK).min(range.end));
                    }
                }
            }
        }
        for range in left_out {
            hasher.update(&(range.start as u64).to_le_bytes());
            hasher.update(&(range.end as u64).to_le_bytes());
        }
        hasher.digest128()
    }

    /// [`GuestMemory::hash_into`] of the accessible bytes outside
    /// `left_out`, as [`GuestMemory::digest_outside`] takes them.
    pub fn hash_outside_into(
        &self,
        hasher: &mut blake3::Hasher,
        left_out: &[std::ops::Range<usize>],
    ) {
        self.each_part_outside(left_out, |part| {
            hasher.update(part);
        });
    }

    /// Calls `part` with the accessible bytes between the ranges of
    /// `left_out` in order, and with each range's bounds in their place.
    fn each_part_outside(&self, left_out: &[std::ops::Range<usize>], mut part: impl FnMut(&[u8])) {
        let bytes = self.quiet_bytes();
        let mut at = 0;
        for range in left_out {
            let start = range.start.clamp(at, bytes.len());
            let end = range.end.clamp(start, bytes.len());
            part(&bytes[at..start]);
            part(&(start as u64).to_le_bytes());
            part(&(end as u64).to_le_bytes());
            at = end;
        }
        part(&bytes[at..]);
    }

    /// The guest's `memory.grow`: the old size in pages, or `None` when the
    /// memory cannot grow by `delta_pages`.
    pub fn grow(&self, delta_pages: u64) -> Option<u64> {
        let old = self.visible_bytes();
        let new = (delta_pages as usize)
            .checked_mul(WASM_PAGE)
            .and_then(|delta| old.checked_add(delta))
            .filter(|&new| new <= self.max_bytes)?;
        let mapped = self.shared.data_size();
        if new > mapped {
            self.shared.grow(((new - mapped) / WASM_PAGE) as u64).ok()?;
        }
        self.visible.store(new, Ordering::Relaxed);
        Some((old / WASM_PAGE) as u64)
    }

    /// Puts the memory back as it was before the first execution: restores
    /// the pages the execution may have changed and sets the visible size
    /// back to the initial size. Call only when no guest thread exists.
    pub fn reset(&self) -> std::io::Result<()> {
        // Only the part the guest could reach may have changed.
        let reachable = self.visible_bytes();
        let mut ranges = self.resident.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the memory's mapping starts page-aligned and its first
        // `reachable` bytes are mapped.
        unsafe {
            resident_pages::resident(self.shared.data().as_ptr().cast(), reachable, &mut ranges)
        }?;
        for range in ranges.iter() {
            for start in range.clone().step_by(RESTORE_CHUNK) {
                let end = (start + RESTORE_CHUNK).min(range.end);
                // SAFETY: no guest thread runs; the range is accessible.
                let bytes = unsafe { self.bytes_mut(start, end - start) };
                restore(bytes, self.image_of(start, end));
            }
        }
        drop(ranges);
        self.visible.store(self.initial_bytes, Ordering::Relaxed);
        Ok(())
    }

    /// What the chunk `[start, end)` holds in the image, up to where the
    /// image ends (empty for a chunk of zeroes).
    fn image_of(&self, start: usize, end: usize) -> &[u8] {
        if self.image_chunks.get(start / RESTORE_CHUNK) != Some(&true) {
            return &[];
        }
        &self.image[start..end.min(self.image.len()).max(start)]
    }

    /// The bytes `[start, start + len)` as a mutable slice.
    ///
    /// # Safety
    ///
    /// No guest thread may run while the slice lives, and the range must be
    /// accessible.
    #[allow(clippy::mut_from_ref)]
    unsafe fn bytes_mut(&self, start: usize, len: usize) -> &mut [u8] {
        let cells = &self.shared.data()[start..start + len];
        // SAFETY: `UnsafeCell<u8>` has the layout of `u8`; exclusivity is
        // the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(UnsafeCell::raw_get(cells.as_ptr()), len) }
    }
}

/// Feeds `hasher` the bytes of `part` (addresses of the memory) from
/// `chunk`, which holds the memory's bytes from `base` on, with where they
/// are, unless all of them are zero.
fn digest_part(
    hasher: &mut xxhash_rust::xxh3::Xxh3,
    chunk: &[u8],
    base: usize,
    part: Range<usize>,
) {
    let within = part.start - base..part.end - base;
    let Some(data) = chunk.get(within).filter(|data| !is_zero(data)) else {
        return;
    };
    hasher.update(&(part.start as u64).to_le_bytes());
    hasher.update(&(data.len() as u64).to_le_bytes());
    hasher.update(data);
}

/// Makes `bytes` equal to `target` followed by zeros, writing only where
/// they differ (a page never written stays shared with the zero page).
fn restore(bytes: &mut [u8], target: &[u8]) {
    let (head, tail) = bytes.split_at_mut(target.len());
    if head != target {
        head.copy_from_slice(target);
    }
    if !is_zero(tail) {
        tail.fill(0);
    }
}

/// Whether every byte is 0 (a word at a time, without early exit, so that
/// the loop vectorises).
fn is_zero(bytes: &[u8]) -> bool {
    // SAFETY: every bit pattern is a valid u64.
    let (prefix, words, suffix) = unsafe { bytes.align_to::<u64>() };
    prefix.iter().chain(suffix).all(|&b| b == 0)
        && words
            .chunks(64)
            .all(|chunk| chunk.iter().fold(0, |acc, w| acc | w) == 0)
}

/// A memory of two pages (growing up to eight) holding `init`, for tests.
#[cfg(test)]
pub(crate) fn test_memory(init: Vec<crate::instrument::DataInit>) -> GuestMemory {
    let mut config = wasmtime::Config::new();
    config.wasm_threads(true).shared_memory(true);
    let engine = Engine::new(&config).unwrap();
    let plan = SharedMemoryPlan {
        import: ("env".into(), "memory".into()),
        min_pages: 2,
        max_pages: 8,
        was_defined: true,
        init,
    };
    GuestMemory::new(&engine, &plan).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instrument::DataInit;

    fn memory(init: Vec<DataInit>) -> GuestMemory {
        test_memory(init)
    }

    fn write(memory: &GuestMemory, addr: usize, bytes: &[u8]) {
        unsafe { memory.bytes_mut(addr, bytes.len()) }.copy_from_slice(bytes);
    }

    fn read(memory: &GuestMemory, addr: usize, len: usize) -> Vec<u8> {
        unsafe { memory.bytes_mut(addr, len) }.to_vec()
    }

    #[test]
    fn reset_restores_the_image_and_the_initial_size() {
        let memory = memory(vec![DataInit {
            offset: 100,
            bytes: b"hello".to_vec(),
        }]);
        assert_eq!(read(&memory, 100, 5), b"hello");
        write(&memory, 100, b"HELLO");
        write(&memory, 70_000, b"x");
        assert_eq!(memory.grow(3), Some(2));
        assert_eq!(memory.size_pages(), 5);
        write(&memory, 4 * WASM_PAGE + 7, b"grown");
        memory.reset().unwrap();
        assert_eq!(memory.size_pages(), 2);
        assert_eq!(memory.cells().len(), 2 * WASM_PAGE);
        assert_eq!(read(&memory, 100, 5), b"hello");
        assert_eq!(read(&memory, 70_000, 1), [0]);
        // Growing again shows zeroed pages, whether mapped before or new.
        assert_eq!(memory.grow(5), Some(2));
        assert_eq!(read(&memory, 4 * WASM_PAGE + 7, 5), [0; 5]);
        assert_eq!(read(&memory, 7 * WASM_PAGE - 1, 1), [0]);
    }

    #[test]
    fn a_segment_far_into_memory_leaves_the_pages_before_it_unwritten() {
        let far = WASM_PAGE + 100;
        let memory = memory(vec![DataInit {
            offset: far as u64,
            bytes: b"far".to_vec(),
        }]);
        let resident_pages = |memory: &GuestMemory| {
            let mut ranges = Vec::new();
            // SAFETY: the memory's first two pages are mapped.
            unsafe {
                resident_pages::resident(
                    memory.shared.data().as_ptr().cast(),
                    2 * WASM_PAGE,
                    &mut ranges,
                )
            }
            .unwrap();
            ranges
        };
        // Only the segment's page holds memory of its own.
        let page = resident_pages::page_size();
        let segment_page = far / page * page;
        let segment_only = segment_page..segment_page + page;
        assert_eq!(resident_pages(&memory), std::slice::from_ref(&segment_only));
        // A write before it is undone by a reset; the segment is kept.
        write(&memory, 10, b"x");
        write(&memory, far, b"FAR");
        memory.reset().unwrap();
        assert_eq!(read(&memory, 10, 1), [0]);
        assert_eq!(read(&memory, far, 3), b"far");
    }

    #[test]
    fn a_digest_takes_the_bytes_not_which_pages_are_resident() {
        let memory = memory(vec![DataInit {
            offset: 100,
            bytes: b"data".to_vec(),
        }]);
        let untouched = memory.digest_outside(&[], None);
        // A page written and then zeroed again is resident, and digests as
        // the zero page it was.
        write(&memory, 3 * 4096 + 7, b"xyz");
        let written = memory.digest_outside(&[], None);
        assert_ne!(written, untouched);
        write(&memory, 3 * 4096 + 7, &[0; 3]);
        assert_eq!(memory.digest_outside(&[], None), untouched);
        // A byte anywhere counts, but not inside a range left out, which
        // counts by its bounds.
        write(&memory, 2 * WASM_PAGE - 1, b"z");
        let last = memory.digest_outside(&[], None);
        assert_ne!(last, untouched);
        let left_out = [4096..8192, 2 * WASM_PAGE - 10..2 * WASM_PAGE];
        let without = memory.digest_outside(&left_out, None);
        write(&memory, 2 * WASM_PAGE - 1, &[0]);
        write(&memory, 5000, b"dead");
        assert_eq!(memory.digest_outside(&left_out, None), without);
        assert_ne!(memory.digest_outside(&left_out[..1], None), without);
        // The size the guest sees counts too.
        write(&memory, 5000, &[0; 4]);
        assert_eq!(memory.digest_outside(&[], None), untouched);
        memory.grow(1).unwrap();
        assert_ne!(memory.digest_outside(&[], None), untouched);
    }

    #[test]
    fn a_digest_with_a_read_mask_takes_only_the_granules_read() {
        let memory = memory(Vec::new());
        let mut reads = ReadGranules::new(crate::abi::READ_MAP.bytes(8));
        // Granules 8..16 of the first page, and the whole second page, read.
        reads.mark(64..128);
        reads.mark(4096..8192);
        reads.commit();
        let empty = memory.digest_outside(&[], Some(&reads));
        // Bytes never read change nothing, on a page read in part or not
        // at all.
        write(&memory, 10, b"unread");
        write(&memory, 3 * 4096, b"unread");
        assert_eq!(memory.digest_outside(&[], Some(&reads)), empty);
        assert_ne!(memory.digest_outside(&[], None), empty);
        // A byte read counts, in a granule partly or a page wholly read.
        write(&memory, 70, b"r");
        let partly = memory.digest_outside(&[], Some(&reads));
        assert_ne!(partly, empty);
        write(&memory, 70, &[0]);
        write(&memory, 5000, b"r");
        let wholly = memory.digest_outside(&[], Some(&reads));
        assert_ne!(wholly, empty);
        assert_ne!(wholly, partly);
    }

    #[test]
    fn growth_stops_at_the_declared_maximum() {
        let memory = memory(Vec::new());
        assert_eq!(memory.grow(7), None);
        assert_eq!(memory.grow(6), Some(2));
        assert_eq!(memory.grow(1), None);
        assert_eq!(memory.grow(0), Some(8));
    }
}
