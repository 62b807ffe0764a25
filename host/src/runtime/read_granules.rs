//! Which bytes of the shared memory a stateful search's executions have
//! read, by granules of [`ReadMap::GRANULE`] bytes (see
//! [`crate::abi::READ_MAP`]).
//!
//! A byte that no execution has read is no part of a state: two states
//! that differ only there go on alike for as long as nothing reads it. So a
//! stateful search's state keys leave out the granules that no execution
//! before the current one read (the *mask*, fixed during an execution, so
//! that every key an execution takes is made the same way), and each
//! execution's reads are taken in at its end (a thread's map of read bytes,
//! in its point-buffer memory, and what the host read on the guest's
//! behalf). When an execution read a granule that none had before, the
//! mask grows and its *generation* changes: keys of different generations
//! never match, and a search that pruned anything with an older mask must
//! begin again (it may have taken states for equal that the new granule
//! tells apart).

use super::resident_pages;
use crate::abi::ReadMap;
use std::ops::Range;

/// Granules per word of the sets.
const WORD_GRANULES: usize = 64;

/// The granules of the shared memory that executions read.
#[derive(Debug)]
pub(crate) struct ReadGranules {
    /// The granules read by the executions before the current one.
    mask: Vec<u64>,
    /// `mask` and the granules the current execution read so far.
    seen: Vec<u64>,
    /// The words where `seen` holds more than `mask`.
    changed: Vec<usize>,
    /// Counts the times `mask` grew.
    generation: u64,
    /// Scratch for the resident pages of a map.
    resident: Vec<Range<usize>>,
}

impl ReadGranules {
    /// Nothing read yet, in a memory whose map of read bytes has
    /// `map_bytes` bytes. (The sets are allocated zeroed: their pages are
    /// mapped only once something is read there.)
    pub fn new(map_bytes: u64) -> Self {
        let words = (map_bytes as usize).div_ceil(8);
        ReadGranules {
            mask: vec![0; words],
            seen: vec![0; words],
            changed: Vec::new(),
            generation: 0,
            resident: Vec::new(),
        }
    }

    /// Counts the times the mask grew: keys taken with different masks
    /// must differ.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Takes in a thread's map of read bytes: the `map_bytes` bytes at
    /// `offset` of its point-buffer memory at `base`, of which only the
    /// resident pages can hold a bit.
    ///
    /// # Safety
    ///
    /// `base` must be the page-aligned start of a mapping of at least
    /// `offset + map_bytes` bytes that nothing writes during the call.
    pub unsafe fn take_map(&mut self, base: *const u8, offset: usize, map_bytes: usize) {
        let end = offset + map_bytes;
        // SAFETY: the caller's contract.
        let scanned = unsafe { resident_pages::resident(base, end, &mut self.resident) };
        if scanned.is_err() {
            self.resident.clear();
            self.resident.push(0..end);
        }
        let resident = std::mem::take(&mut self.resident);
        for range in &resident {
            let start = range.start.max(offset);
            let stop = range.end.min(end);
            if start >= stop {
                continue;
            }
            // SAFETY: within the mapping (the caller's contract), not
            // written meanwhile.
            let bytes = unsafe { std::slice::from_raw_parts(base.add(start), stop - start) };
            self.take_bytes(start - offset, bytes);
        }
        self.resident = resident;
    }

    /// Takes in `bytes` of a map of read bytes, from its byte `at` on.
    fn take_bytes(&mut self, at: usize, bytes: &[u8]) {
        for (n, &byte) in bytes.iter().enumerate() {
            if byte == 0 {
                continue;
            }
            let index = at + n;
            let word = index / 8;
            let Some(seen) = self.seen.get_mut(word) else {
                return;
            };
            let bits = u64::from(byte) << (8 * (index % 8));
            if *seen | bits != *seen {
                if *seen == self.mask[word] {
                    self.changed.push(word);
                }
                *seen |= bits;
            }
        }
    }

    /// Marks `range` of the shared memory read (the host read it for the
    /// guest).
    pub fn mark(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        let first = range.start / ReadMap::GRANULE as usize;
        let last = (range.end - 1) / ReadMap::GRANULE as usize;
        for granule in first..=last {
            let word = granule / WORD_GRANULES;
            let Some(seen) = self.seen.get_mut(word) else {
                return;
            };
            let bit = 1 << (granule % WORD_GRANULES);
            if *seen & bit == 0 {
                if *seen == self.mask[word] {
                    self.changed.push(word);
                }
                *seen |= bit;
            }
        }
    }

    /// Ends an execution: the granules it read join the mask. Says whether
    /// the mask grew (the execution read a granule none had before).
    pub fn commit(&mut self) -> bool {
        if self.changed.is_empty() {
            return false;
        }
        for word in self.changed.drain(..) {
            self.mask[word] = self.seen[word];
        }
        self.generation += 1;
        true
    }

    /// Zeroes the granules of `chunk` (the memory's bytes from `start`,
    /// `start` a multiple of the granule) that no execution before the
    /// current one read. Says whether any granule of it was read.
    pub fn mask_chunk(&self, start: usize, chunk: &mut [u8]) -> bool {
        let granule = ReadMap::GRANULE as usize;
        debug_assert_eq!(start % granule, 0);
        let mut any = false;
        for (n, bytes) in chunk.chunks_mut(granule).enumerate() {
            let index = start / granule + n;
            let read = self
                .mask
                .get(index / WORD_GRANULES)
                .is_some_and(|word| word & (1 << (index % WORD_GRANULES)) != 0);
            if read {
                any = true;
            } else {
                bytes.fill(0);
            }
        }
        any
    }

    /// Whether no granule from `start` to `start + len` was read before the
    /// current execution, when the range covers whole words of the sets
    /// (else `false`: a quick test for whole pages).
    pub fn none_read(&self, start: usize, len: usize) -> bool {
        let granule = ReadMap::GRANULE as usize;
        let first = start / granule;
        let last = (start + len).div_ceil(granule);
        let (first_word, last_word) = (first / WORD_GRANULES, last.div_ceil(WORD_GRANULES));
        if !first.is_multiple_of(WORD_GRANULES) || !last.is_multiple_of(WORD_GRANULES) {
            return false;
        }
        self.mask
            .get(first_word..last_word)
            .is_some_and(|words| words.iter().all(|&w| w == 0))
    }

    /// Words in each set.
    #[cfg(test)]
    fn words(&self) -> usize {
        self.mask.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_granule_joins_the_mask_when_the_execution_that_read_it_ends() {
        let mut reads = ReadGranules::new(64);
        assert_eq!(reads.words(), 8);
        let mut chunk = [7u8; 32];
        assert!(!reads.mask_chunk(0, &mut chunk));
        assert_eq!(chunk, [0; 32]);
        // Bytes 8..16 and 20..21 read: granules 1 and 2.
        reads.take_bytes(0, &[0b0000_0010]);
        reads.mark(20..21);
        let mut chunk = [7u8; 32];
        reads.mask_chunk(0, &mut chunk);
        assert_eq!(chunk, [0; 32], "the mask holds until the execution ends");
        assert_eq!(reads.generation(), 0);
        assert!(reads.commit());
        assert_eq!(reads.generation(), 1);
        let mut chunk = [7u8; 32];
        assert!(reads.mask_chunk(0, &mut chunk));
        let mut expected = [0u8; 32];
        expected[8..24].fill(7);
        assert_eq!(chunk, expected);
        // Reading them again changes nothing.
        reads.mark(8..24);
        reads.take_bytes(0, &[0b0000_0110]);
        assert!(!reads.commit());
        assert_eq!(reads.generation(), 1);
    }

    #[test]
    fn a_range_marks_every_granule_it_touches() {
        let mut reads = ReadGranules::new(64);
        reads.mark(7..9);
        reads.mark(500..520);
        reads.commit();
        let mut chunk = [1u8; 520];
        reads.mask_chunk(0, &mut chunk);
        let kept: Vec<usize> = (0..520).filter(|&i| chunk[i] != 0).collect();
        let expected: Vec<usize> = (0..16).chain(496..520).collect();
        assert_eq!(kept, expected);
        assert!(reads.none_read(1024, 512));
        assert!(!reads.none_read(0, 512));
    }
}
