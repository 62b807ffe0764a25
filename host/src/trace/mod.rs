//! What an execution did: its events and the hash that identifies them.
//!
//! - [`Event`]: one scheduling point reached by one thread.
//! - [`TraceHash`]: the 128-bit XXH3 hash of the event stream plus the
//!   outcome; two executions with the same hash did the same thing. (A trace
//!   hash identifies, it does not authenticate: XXH3 hashes a typical
//!   execution's few kilobytes about twenty times faster than blake3, which
//!   stays the hash of module bytes.)
//! - [`clock`]: vector clocks, for the analyses that order events by
//!   happens-before.

pub(crate) mod clock;

use crate::instrument::{AccessKind, SiteId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Identifies a guest thread within one execution: 0 is the main thread, and
/// spawned threads are numbered from 1 in spawn order.
pub type ThreadId = u32;

/// What happened at a scheduling point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// An instrumented memory access (or wait/notify) at `addr`.
    Access(AccessKind),
    /// The thread went to sleep on `addr` in a wait.
    Block,
    /// The thread created thread `child`.
    Spawn {
        /// Id of the new thread.
        child: ThreadId,
    },
    /// The thread's entry function returned.
    Exit,
    /// The main thread called `pthread_exit`: it waits for every other
    /// thread to exit.
    Outlive,
    /// The thread enters an atomic section (outside any other).
    SectionBegin,
    /// The thread calls a function of the C library that is one step
    /// (see [`crate::abi::RT_LIBRARY_BEGIN`]), outside any other.
    LibraryCall {
        /// The function's index in the original module.
        function: u32,
    },
    /// `sched_yield`.
    Yield,
    /// A sleep (`poll_oneoff` on a clock) until the virtual time `until_ns`.
    Sleep {
        /// Virtual time at which the sleep ends.
        until_ns: u64,
    },
    /// The thread computed for a whole time slice without reaching another
    /// scheduling point.
    Slice,
    /// A guest SDK event; `label` indexes the execution's label table.
    Label {
        /// Index in [`crate::runtime::ExecutionResult::labels`].
        label: u32,
    },
    /// The thread sent signal `sig` (`pthread_kill`, `raise`, `kill`).
    SignalSend {
        /// The signal's number.
        sig: u32,
    },
    /// Signal `sig` was delivered to the thread: its handler runs from
    /// here (or `sigwait` took it).
    SignalDelivery {
        /// The signal's number.
        sig: u32,
    },
}

impl EventKind {
    /// The kind's tag byte and its payload, if it carries one.
    fn tag(self) -> (u8, Option<u64>) {
        match self {
            EventKind::Access(kind) => (kind as u8, None),
            EventKind::Block => (32, None),
            EventKind::Spawn { child } => (33, Some(child as u64)),
            EventKind::Exit => (34, None),
            EventKind::Yield => (35, None),
            EventKind::Sleep { until_ns } => (36, Some(until_ns)),
            EventKind::Slice => (37, None),
            EventKind::Label { label } => (38, Some(label as u64)),
            EventKind::Outlive => (39, None),
            EventKind::SectionBegin => (40, None),
            EventKind::LibraryCall { function } => (41, Some(u64::from(function))),
            EventKind::SignalDelivery { sig } => (42, Some(u64::from(sig))),
            EventKind::SignalSend { sig } => (43, Some(u64::from(sig))),
        }
    }
}

/// One scheduling point reached by one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The thread that reached the point.
    pub thread: ThreadId,
    /// What it was about to do.
    pub kind: EventKind,
    /// Effective memory address, or 0 where none applies.
    pub addr: u32,
    /// The instrumented code site, where there is one.
    pub site: Option<SiteId>,
}

impl Event {
    /// Appends the event to `out` in the binary layout the trace hash
    /// covers: kind tag, then address, site (`u32::MAX` for none) and
    /// thread as little-endian u32, then the payload (u64) for the kinds
    /// that carry one.
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        let (tag, payload) = self.kind.tag();
        let mut fixed = [0u8; FIXED_BYTES];
        fixed[0] = tag;
        fixed[1..5].copy_from_slice(&self.addr.to_le_bytes());
        fixed[5..9].copy_from_slice(&self.site.unwrap_or(u32::MAX).to_le_bytes());
        fixed[9..13].copy_from_slice(&self.thread.to_le_bytes());
        // Constant-length copies: no call to memcpy per event.
        out.extend_from_slice(&fixed);
        if let Some(payload) = payload {
            out.extend_from_slice(&payload.to_le_bytes());
        }
    }
}

/// Records an execution's events: hashes all of them, keeps the most recent
/// ones for reports, so that memory stays bounded however long the
/// execution runs.
pub struct TraceRecorder {
    hasher: xxhash_rust::xxh3::Xxh3,
    /// Events since the last hashed chunk.
    recent: Vec<Event>,
    /// The chunk before `recent` (already hashed).
    older: Vec<Event>,
    /// Events hashed and no longer kept.
    dropped: u64,
    /// Scratch buffer for encoding.
    bytes: Vec<u8>,
}

impl fmt::Debug for TraceRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceRecorder")
            .field("recent", &self.recent.len())
            .field("older", &self.older.len())
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

/// Bytes of an encoded event without payload (most events).
const FIXED_BYTES: usize = 13;

/// Events per hashed chunk; at most two chunks are kept.
const CHUNK: usize = 1 << 13;

impl Default for TraceRecorder {
    fn default() -> Self {
        TraceRecorder {
            hasher: xxhash_rust::xxh3::Xxh3::new(),
            recent: Vec::with_capacity(1024),
            older: Vec::new(),
            dropped: 0,
            bytes: Vec::new(),
        }
    }
}

impl TraceRecorder {
    /// Records one event.
    #[inline]
    pub fn push(&mut self, event: Event) {
        self.recent.push(event);
        if self.recent.len() == CHUNK {
            self.hash_recent();
            self.dropped += self.older.len() as u64;
            // Reuse the older chunk's allocation for the next one.
            std::mem::swap(&mut self.older, &mut self.recent);
            self.recent.clear();
        }
    }

    /// Events recorded so far (the index the next one gets).
    pub fn len(&self) -> u64 {
        self.dropped + (self.older.len() + self.recent.len()) as u64
    }

    fn hash_recent(&mut self) {
        self.bytes.clear();
        self.bytes.reserve(self.recent.len() * FIXED_BYTES);
        for event in &self.recent {
            event.encode(&mut self.bytes);
        }
        self.hasher.update(&self.bytes);
    }

    /// Hashes the rest with `outcome` and returns the kept events, how many
    /// earlier events were dropped, and the trace hash.
    pub fn finish(mut self, outcome: &str) -> (Vec<Event>, u64, TraceHash) {
        self.hash_recent();
        self.hasher.update(outcome.as_bytes());
        let hash = self.hasher.digest128().to_le_bytes();
        let events = if self.older.is_empty() {
            self.recent
        } else {
            let mut events = self.older;
            events.extend(self.recent);
            events
        };
        (events, self.dropped, TraceHash(hash))
    }
}

/// Hash identifying an execution: its events and how it ended (a 128-bit
/// XXH3 hash, shown as 32 hex digits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceHash(pub [u8; 16]);

impl fmt::Display for TraceHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in &self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for TraceHash {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("`{s}` is not a trace hash (32 hex digits)"));
        }
        let mut out = [0u8; 16];
        for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
            let text = std::str::from_utf8(chunk).map_err(|e| e.to_string())?;
            out[i] = u8::from_str_radix(text, 16).map_err(|e| e.to_string())?;
        }
        Ok(TraceHash(out))
    }
}

impl Serialize for TraceHash {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for TraceHash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
