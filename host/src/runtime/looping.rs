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
//! is a livelock as well.
//!
//! What that fingerprint cannot see is a thread's wasm locals and operand
//! stack: a loop that counts in a local over memory that cycles looks the
//! same. So such a return is only a suspicion: the runtime runs the
//! execution again on the program's state reader (see
//! [`super::Program::state_reader`]), which follows the same decisions and
//! then goes on round robin, with fingerprints that hold every thread's
//! frames and globals too ([`CompleteStates`]). Round robin picks the next
//! thread from the state alone, so once the complete state comes back it
//! comes back forever: the program runs on without end under a fair
//! schedule, every thread that can run getting its turn. That is the
//! livelock weft reports. Without that return (a thread stood in a time
//! slice, where its frames are out of sight, or its locals differed) the
//! execution is inconclusive: a possible livelock.

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

/// Whether an execution's fingerprints hold every thread's frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompleteStates {
    /// They do not: a program that does not read frames.
    Off,
    /// A run on the state reader, following this many decisions of the
    /// execution it checks: no fingerprints until they are made.
    After(usize),
    /// A run on the state reader, past those decisions and round robin:
    /// fingerprints hold every thread's frames, and any return is a loop.
    On,
    /// An execution of a stateful search, on the state reader from its
    /// start: every thread's frames are read where it stops, so that each
    /// decision's complete state can be named (see `ExecState::state_key`);
    /// time slices end where fuel runs out, and fingerprints are compared
    /// for loops past the step limit, as without frames.
    Keyed,
}

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

/// Complete states under round robin, compared at every step as Brent's
/// cycle finding does: each state with one kept state, which is replaced
/// after 1, 2, 4, ... steps, so a cycle of `n` states entered after `m`
/// steps is seen within about `2 * (m + n)` steps. The part of a state
/// outside memory is compared first: memory is hashed only when the rest
/// came back, and for each kept state.
#[derive(Debug, Default)]
pub(crate) struct CycleWatch {
    /// The kept state: the digest of its threads, and of its memory.
    kept: Option<(blake3::Hash, blake3::Hash)>,
    /// States compared since it was kept.
    since: u64,
    /// States to compare before the next is kept.
    span: u64,
    /// States compared in all.
    compared: u64,
}

impl CycleWatch {
    /// Whether the state whose threads digest to `threads`, and whose
    /// memory digests to what `memory` computes, is the kept one.
    pub fn came_back(
        &mut self,
        threads: blake3::Hash,
        mut memory: impl FnMut() -> blake3::Hash,
    ) -> bool {
        self.compared += 1;
        let mut memory_now = None;
        if let Some((kept_threads, kept_memory)) = self.kept
            && kept_threads == threads
        {
            let now = memory();
            if now == kept_memory {
                return true;
            }
            memory_now = Some(now);
        }
        self.since += 1;
        if self.kept.is_none() || self.since >= self.span {
            self.kept = Some((threads, memory_now.unwrap_or_else(memory)));
            self.since = 0;
            self.span = (self.span * 2).max(1);
        }
        false
    }

    /// How many states were compared.
    pub fn compared(&self) -> u64 {
        self.compared
    }
}

#[cfg(test)]
mod tests {
    use super::{CycleWatch, LoopWatch};

    #[test]
    fn a_cycle_of_states_is_seen_whatever_its_length_and_start() {
        for (start, length) in [(0u64, 1u64), (5, 3), (100, 7), (3, 4096)] {
            let mut watch = CycleWatch::default();
            let state = |step: u64| {
                let place = if step < start {
                    step
                } else {
                    start + (step - start) % length
                };
                blake3::hash(&place.to_le_bytes())
            };
            let mut memory_hashed = 0;
            let seen = (0..10 * (start + length)).find(|&step| {
                watch.came_back(state(step), || {
                    memory_hashed += 1;
                    blake3::hash(b"memory")
                })
            });
            let seen = seen.expect("the cycle is seen");
            assert!(seen <= 2 * (start + length) + 2, "{start} {length}: {seen}");
            assert!(memory_hashed < 2 * 64, "{memory_hashed}");
        }
        // A state that only ever changes is never a loop, and its memory is
        // hashed only for the kept states.
        let mut watch = CycleWatch::default();
        let mut memory_hashed = 0;
        assert!((0..10_000u64).all(|step| !watch.came_back(
            blake3::hash(&step.to_le_bytes()),
            || {
                memory_hashed += 1;
                blake3::hash(b"memory")
            }
        )));
        assert!(memory_hashed <= 15, "{memory_hashed}");
        assert_eq!(watch.compared(), 10_000);
    }

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
