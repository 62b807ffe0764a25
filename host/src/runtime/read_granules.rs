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
//! never match, and the search begins again (it may have taken states for
//! equal that the new granule tells apart, and its older states would be
//! lost to later executions anyway).

use super::resident_pages;
use crate::abi::ReadMap;
use std::ops::Range;

/// Granules per word of the sets.
const WORD_GRANULES: usize = 64;

/// How much of a range of the shared memory executions read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coverage {
    /// No byte of it.
    None,
    /// Some bytes of it, or it was not told.
    Some,
    /// Every byte of it.
    All,
}

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
    /// The starts of the [`READ_CHUNK`]-byte chunks of the shared memory
    /// with a granule in the mask, ascending.
    read_chunks: Vec<usize>,
}

/// Bytes of the chunks [`ReadGranules::read_chunks`] lists: a page.
pub(crate) const READ_CHUNK: usize = 4096;

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
            read_chunks: Vec::new(),
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

    /// Takes in `bytes` of a map of read bytes, from its byte `at` on (a
    /// multiple of 8, as the map's pages start).
    fn take_bytes(&mut self, at: usize, bytes: &[u8]) {
        debug_assert_eq!(at % 8, 0);
        let first = at / 8;
        let (words, tail) = bytes.as_chunks::<8>();
        let within = words.len().min(self.seen.len().saturating_sub(first));
        for (n, word) in words[..within].iter().enumerate() {
            self.see(first + n, u64::from_le_bytes(*word));
        }
        if !tail.is_empty() && within == words.len() {
            let mut padded = [0u8; 8];
            padded[..tail.len()].copy_from_slice(tail);
            self.see(first + words.len(), u64::from_le_bytes(padded));
        }
    }

    /// Adds `bits` to word `word` of `seen`, noting the word when it first
    /// holds more than the mask; `false` past the sets' end.
    fn see(&mut self, word: usize, bits: u64) -> bool {
        let Some(seen) = self.seen.get_mut(word) else {
            return false;
        };
        if *seen | bits != *seen {
            if *seen == self.mask[word] {
                self.changed.push(word);
            }
            *seen |= bits;
        }
        true
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
            if !self.see(granule / WORD_GRANULES, 1 << (granule % WORD_GRANULES)) {
                return;
            }
        }
    }

    /// Ends an execution: the granules it read join the mask. Says whether
    /// the mask grew (the execution read a granule none had before).
    pub fn commit(&mut self) -> bool {
        if self.changed.is_empty() {
            return false;
        }
        let word_bytes = ReadMap::GRANULE as usize * WORD_GRANULES;
        for word in self.changed.drain(..) {
            self.mask[word] = self.seen[word];
            self.read_chunks
                .push(word * word_bytes / READ_CHUNK * READ_CHUNK);
        }
        self.read_chunks.sort_unstable();
        self.read_chunks.dedup();
        self.generation += 1;
        true
    }

    /// The starts of the [`READ_CHUNK`]-byte chunks of the shared memory
    /// that hold a granule executions before the current one read,
    /// ascending: the only parts of memory a state counts.
    pub fn read_chunks(&self) -> &[usize] {
        &self.read_chunks
    }

    /// Zeroes the granules of `chunk` (the memory's bytes from `start`,
    /// `start` a multiple of 512, the bytes a word of the sets covers) that
    /// no execution before the current one read. Says whether any granule
    /// of it was read.
    pub fn mask_chunk(&self, start: usize, chunk: &mut [u8]) -> bool {
        let granule = ReadMap::GRANULE as usize;
        let word_bytes = granule * WORD_GRANULES;
        debug_assert_eq!(start % word_bytes, 0);
        let mut any = false;
        for (n, part) in chunk.chunks_mut(word_bytes).enumerate() {
            let word = self
                .mask
                .get(start / word_bytes + n)
                .copied()
                .unwrap_or_default();
            match word {
                0 => part.fill(0),
                u64::MAX => any = true,
                _ => {
                    any = true;
                    for (bit, bytes) in part.chunks_mut(granule).enumerate() {
                        if word & (1 << bit) == 0 {
                            bytes.fill(0);
                        }
                    }
                }
            }
        }
        any
    }

    /// How much of `start..start + len` executions before the current one
    /// read, when the range covers whole words of the sets (else
    /// [`Coverage::Some`]): a quick test for whole pages.
    pub fn coverage(&self, start: usize, len: usize) -> Coverage {
        let word_bytes = ReadMap::GRANULE as usize * WORD_GRANULES;
        if !start.is_multiple_of(word_bytes) || !len.is_multiple_of(word_bytes) {
            return Coverage::Some;
        }
        let words = start / word_bytes..(start + len) / word_bytes;
        match self.mask.get(words) {
            Some(words) if words.iter().all(|&w| w == 0) => Coverage::None,
            Some(words) if words.iter().all(|&w| w == u64::MAX) => Coverage::All,
            _ => Coverage::Some,
        }
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
    fn the_read_chunks_are_the_pages_with_a_granule_in_the_mask() {
        let mut reads = ReadGranules::new(4 * READ_CHUNK as u64);
        reads.mark(3 * READ_CHUNK + 100..3 * READ_CHUNK + 101);
        reads.mark(10..20);
        assert!(reads.read_chunks().is_empty());
        assert!(reads.commit());
        assert_eq!(reads.read_chunks(), [0, 3 * READ_CHUNK]);
        reads.mark(READ_CHUNK - 1..READ_CHUNK);
        assert!(reads.commit());
        assert_eq!(reads.read_chunks(), [0, 3 * READ_CHUNK]);
    }

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
        assert_eq!(reads.coverage(1024, 512), Coverage::None);
        assert_eq!(reads.coverage(0, 512), Coverage::Some);
        reads.mark(1024..1536);
        reads.commit();
        assert_eq!(reads.coverage(1024, 512), Coverage::All);
        assert_eq!(reads.coverage(1024, 1024), Coverage::Some);
    }
}
