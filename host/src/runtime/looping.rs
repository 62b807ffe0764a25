//! Evidence of a livelock: under a fair schedule, the execution comes back
//! to a state it was in, long after.
//!
//! A limit reached says only that an execution is long, and an unfair
//! strategy may starve the thread a spinner waits for (PCT). So an
//! execution that reaches the step limit or a thread's compute budget goes
//! on under a fair schedule, and the watch takes a fingerprint of its
//! state every so often (about 64 times per span, less often when memory
//! is large, so that hashing it costs about as much as the steps): the
//! whole shared memory, where every thread stands and what it waits for
//! (deadlines relative to the virtual clock), and how often the program
//! read the clock or random bytes. A fingerprint equal to one taken at
//! least a span earlier (the step limit, at most a million steps) means
//! every thread that could run went round and changed nothing for that
//! long: a livelock. A loop with no scheduling point in it runs in time
//! slices, and uses up a thread's compute budget long before a span of
//! steps: time slices are fingerprinted too, and an execution that reaches
//! its limit under the fair schedule in a state it was in earlier under it
//! is a livelock as well. What the fingerprint cannot see is a thread's
//! wasm locals: a loop that only counts in a local and reads shared memory,
//! for that long and past the step limit, looks the same.

use std::collections::HashMap;

/// The span is the step limit, and at most this many steps.
const MOST_SPAN: u64 = 1_000_000;

/// Fingerprints per span, about: enough that a loop of a few states shows
/// one twice.
const SAMPLES_PER_SPAN: u64 = 64;

/// Memory bytes per step between fingerprints, at most: hashing memory
/// costs about as much as a step per this many bytes.
const BYTES_PER_STEP: u64 = 256;

/// Memory bytes per time slice between fingerprints taken at slices, at
/// most: a slice runs about as long as hashing this many bytes.
const BYTES_PER_SLICE: u64 = 256 << 10;

/// The fingerprints of an execution's states since it went on under a
/// fair schedule.
#[derive(Debug, Default)]
pub(crate) struct LoopWatch {
    /// Each fingerprint, and the step it was first taken at.
    seen: HashMap<blake3::Hash, u64>,
    /// The step at which the next fingerprint is due.
    next: u64,
    /// Fewest steps between a state and its return that count as a loop.
    span: u64,
    /// Fewest steps between two fingerprints.
    interval: u64,
    /// Whether the last fingerprint kept was taken a span before.
    last_looped: bool,
    /// Whether the last fingerprint kept was taken before at all.
    last_repeated: bool,
    /// Time slices until a fingerprint is due at one.
    slices_to_next: u64,
}

impl LoopWatch {
    /// A watch for an execution whose step limit is `max_steps`.
    pub fn new(max_steps: u64) -> Self {
        let span = max_steps.clamp(1, MOST_SPAN);
        LoopWatch {
            seen: HashMap::new(),
            next: 0,
            span,
            interval: (span / SAMPLES_PER_SPAN).max(1),
            last_looped: false,
            last_repeated: false,
            slices_to_next: 0,
        }
    }

    /// Forgets every fingerprint: the execution goes on under a fair
    /// schedule from `step`.
    pub fn restart(&mut self, step: u64) {
        self.seen.clear();
        self.next = step;
        self.last_looped = false;
        self.last_repeated = false;
    }

    /// Whether a fingerprint is due at `step`.
    pub fn due(&self, step: u64) -> bool {
        step >= self.next
    }

    /// Counts a time slice of an execution whose memory has `memory_bytes`
    /// bytes, and says whether a fingerprint is due at it.
    pub fn slice_due(&mut self, memory_bytes: u64) -> bool {
        if self.slices_to_next > 0 {
            self.slices_to_next -= 1;
            return false;
        }
        self.slices_to_next = memory_bytes / BYTES_PER_SLICE;
        true
    }

    /// Keeps the fingerprint taken at `step` of an execution whose memory
    /// has `memory_bytes` bytes, and returns whether the execution was in
    /// that state a span or more before.
    pub fn keep(&mut self, step: u64, memory_bytes: u64, fingerprint: blake3::Hash) -> bool {
        let first = *self.seen.entry(fingerprint).or_insert(step);
        self.last_repeated = first < step;
        self.last_looped = step.saturating_sub(first) >= self.span;
        self.next = step + self.interval.max(memory_bytes / BYTES_PER_STEP);
        self.last_looped
    }

    /// Whether the execution, now in the state `fingerprint` (if the host
    /// can tell), is in a state it was in before since the watch began or
    /// restarted, or was at the last fingerprint taken (a limit may fall
    /// where no fingerprint is taken).
    pub fn repeated(&self, fingerprint: Option<&blake3::Hash>) -> bool {
        self.last_repeated || fingerprint.is_some_and(|print| self.seen.contains_key(print))
    }
}

#[cfg(test)]
mod tests {
    use super::LoopWatch;

    #[test]
    fn a_state_is_a_loop_a_span_after_it_was_first_seen() {
        // A step limit of 1,000: spans of 1,000 steps, a fingerprint every
        // 15 steps at least.
        let mut watch = LoopWatch::new(1_000);
        assert!(watch.due(0));
        let print = blake3::hash(b"state");
        assert!(!watch.keep(0, 1 << 10, print));
        assert!(!watch.due(14));
        assert!(watch.due(15));
        assert!(!watch.keep(500, 1 << 10, print));
        assert!(watch.repeated(None));
        assert!(watch.keep(1000, 1 << 10, print));
        let other = blake3::hash(b"other");
        assert!(!watch.keep(1001, 1 << 10, other));
        assert!(!watch.repeated(Some(&blake3::hash(b"third"))));
        assert!(watch.repeated(Some(&print)));
        // Large memories are fingerprinted less often.
        watch.keep(2000, 64 << 20, print);
        assert!(!watch.due(2000 + 15));
        assert!(watch.due(2000 + (64 << 20) / 256));
        // At time slices, large memories are fingerprinted less often.
        assert!(watch.slice_due(1 << 20));
        assert!((0..4).all(|_| !watch.slice_due(1 << 20)));
        assert!(watch.slice_due(1 << 20));
        // Under a fair schedule the watch starts again.
        watch.restart(5000);
        assert!(watch.due(5000));
        assert!(!watch.repeated(Some(&print)));
        // Spans are at most a million steps.
        assert_eq!(LoopWatch::new(u64::MAX).span, 1_000_000);
    }
}
