//! Evidence of a livelock: past the step limit, under a fair schedule, the
//! execution comes back to a state it was in.
//!
//! A limit reached says only that an execution is long. Once the strategy's
//! steps ran out, the execution goes on round-robin (no thread starved),
//! and the watch takes a fingerprint of its state about 256 times (less
//! often when memory is large, so that hashing it costs about as much as
//! the steps): the whole shared memory, where every thread stands and what
//! it waits for (deadlines relative to the virtual clock), and how often
//! the program read the clock or random bytes. When the fair part reaches
//! the limit too, the execution is a livelock if its state then, or at the
//! last fingerprint, is one the watch took before: every thread that can
//! run went round and changed nothing. Otherwise it is inconclusive. What
//! the fingerprint cannot see is a thread's wasm locals: a loop that only
//! counts in a local and reads shared memory, for as long as the whole
//! fair part, looks the same.

use std::collections::HashSet;

/// Fingerprints the fair part takes, about: enough that a loop of a few
/// states shows one twice whatever the step limit.
const SAMPLES: u64 = 256;

/// Memory bytes per step between fingerprints, at most: hashing memory
/// costs about as much as a step per this many bytes.
const BYTES_PER_STEP: u64 = 256;

/// The fingerprints taken in the fair part of an execution.
#[derive(Debug, Default)]
pub(crate) struct LoopWatch {
    seen: HashSet<blake3::Hash>,
    next: u64,
    /// Fewest steps between two fingerprints.
    interval: u64,
    /// Whether the last fingerprint kept had been taken before.
    last_repeated: bool,
}

impl LoopWatch {
    /// A watch from `step` on, over a fair part of `steps` steps.
    pub fn new(step: u64, steps: u64) -> Self {
        LoopWatch {
            seen: HashSet::new(),
            next: step,
            interval: (steps / SAMPLES).max(1),
            last_repeated: false,
        }
    }

    /// Whether a fingerprint is due at `step`.
    pub fn due(&self, step: u64) -> bool {
        step >= self.next
    }

    /// Keeps the fingerprint taken at `step` of an execution whose memory
    /// has `memory_bytes` bytes.
    pub fn keep(&mut self, step: u64, memory_bytes: u64, fingerprint: blake3::Hash) {
        self.last_repeated = !self.seen.insert(fingerprint);
        self.next = step + self.interval.max(memory_bytes / BYTES_PER_STEP);
    }

    /// Whether the execution, now in the state `fingerprint` (if the host
    /// can tell), is back in a state it was in: now, or at the last
    /// fingerprint taken (the limit may fall where no fingerprint is ever
    /// taken, in a time slice, say).
    pub fn looped(&self, fingerprint: Option<&blake3::Hash>) -> bool {
        self.last_repeated || fingerprint.is_some_and(|print| self.seen.contains(print))
    }
}

#[cfg(test)]
mod tests {
    use super::LoopWatch;

    #[test]
    fn fingerprints_are_spaced_by_the_fair_part_and_memory_size() {
        let mut watch = LoopWatch::new(10, 1 << 20);
        assert!(watch.due(10));
        let print = blake3::hash(b"state");
        watch.keep(10, 1 << 10, print);
        assert!(!watch.due(4105));
        assert!(watch.due(10 + 4096));
        assert!(watch.looped(Some(&print)));
        assert!(!watch.looped(Some(&blake3::hash(b"other"))));
        watch.keep(5000, 64 << 20, print);
        assert!(watch.looped(None));
        assert!(!watch.due(5000 + 4096));
        assert!(watch.due(5000 + (64 << 20) / 256));
        // A short fair part is sampled as finely.
        let mut short = LoopWatch::new(0, 2560);
        short.keep(0, 1 << 10, print);
        assert!(short.due(10));
    }
}
