//! The code sites that instrumentation turns into scheduling points.
//!
//! Every rewritten instruction gets a [`SiteId`]: the index of its [`Site`] in
//! the [`SiteTable`] that [`instrument`](super::instrument) returns. The guest
//! passes the id to the host hook, which uses it to learn what kind of access
//! happens where without decoding anything at run time.

use super::count_test::CountTest;
use crate::library::caller_memory::Touch;
use serde::{Deserialize, Serialize};

/// Index of a [`Site`] in a [`SiteTable`].
pub type SiteId = u32;

/// What an instrumented instruction does to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessKind {
    /// An atomic load (`i32.atomic.load` and friends).
    AtomicLoad,
    /// An atomic store.
    AtomicStore,
    /// An atomic read-modify-write (`add`, `sub`, `and`, `or`, `xor`).
    AtomicRmw,
    /// An atomic exchange (`xchg`): how locks are taken and released.
    AtomicXchg,
    /// An atomic compare-and-exchange.
    AtomicCmpxchg,
    /// `memory.atomic.wait32` or `memory.atomic.wait64`.
    Wait,
    /// `memory.atomic.notify`.
    Notify,
    /// A plain (non-atomic) load, instrumented with `--points memory`.
    Load,
    /// A plain (non-atomic) store, instrumented with `--points memory`.
    Store,
    /// `memory.copy`, hooked with `--points memory`: reads `len` bytes at
    /// `src` and writes them at `dst`.
    Copy,
    /// `memory.fill`, hooked with `--points memory`: writes `len` bytes at
    /// `dst`.
    Fill,
    /// A call instruction, logged when calls are (not a memory access).
    Call,
    /// A call of a C library function that touches memory its caller
    /// passes, in the way its site's [`Site::touch`] says: with the race check, the
    /// bytes it read and wrote are logged as the caller's accesses at the
    /// call (see [`crate::library::caller_memory`]). Not a scheduling
    /// point.
    LibraryCall,
}

impl AccessKind {
    /// Whether it is a plain (non-atomic) access of memory.
    pub fn is_plain(self) -> bool {
        matches!(
            self,
            AccessKind::Load | AccessKind::Store | AccessKind::Copy | AccessKind::Fill
        )
    }

    /// Whether the access may change memory.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::AtomicStore
                | Self::Copy
                | Self::Fill
                | Self::AtomicRmw
                | Self::AtomicXchg
                | Self::AtomicCmpxchg
                | Self::Store
        )
    }

    /// Whether the access reads memory (a load, or an atomic that returns
    /// what it found).
    pub fn reads(self) -> bool {
        matches!(
            self,
            Self::Load
                | Self::AtomicLoad
                | Self::AtomicRmw
                | Self::AtomicXchg
                | Self::AtomicCmpxchg
        )
    }

    /// Whether the access is one of the atomic instructions.
    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            Self::AtomicLoad
                | Self::AtomicStore
                | Self::AtomicRmw
                | Self::AtomicXchg
                | Self::AtomicCmpxchg
        )
    }

    /// A short lowercase name used in traces and reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::AtomicLoad => "atomic load",
            Self::AtomicStore => "atomic store",
            Self::AtomicRmw => "atomic rmw",
            Self::AtomicXchg => "atomic xchg",
            Self::AtomicCmpxchg => "atomic cmpxchg",
            Self::Wait => "wait",
            Self::Notify => "notify",
            Self::Load => "load",
            Self::Store => "store",
            Self::Copy => "memory.copy",
            Self::Fill => "memory.fill",
            Self::Call => "call",
            Self::LibraryCall => "library call",
        }
    }
}

/// One instrumented instruction of the original module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// What the instruction does.
    pub kind: AccessKind,
    /// Index of the enclosing function in the *original* module's function
    /// index space (imports first), as used by its name section.
    pub func: u32,
    /// Byte offset of the instruction from the start of the original code
    /// section's contents: the address DWARF uses for wasm.
    pub code_offset: u32,
    /// The instruction's static `memarg` offset, added to the dynamic address.
    pub mem_offset: u64,
    /// Width of the access in bytes.
    pub width: u8,
    /// For a [`AccessKind::Call`] or [`AccessKind::LibraryCall`] site: the
    /// called function (original index), or `None` for an indirect call.
    pub callee: Option<u32>,
    /// For a [`AccessKind::LibraryCall`] site: how the called function
    /// touches its caller's memory.
    #[serde(default)]
    pub touch: Option<Touch>,
}

impl Site {
    /// The effective address of this site's access when the guest's dynamic
    /// address operand is `base`, cut to 32 bits for bookkeeping (an access
    /// whose [`Site::full_address`] is past 4 GiB traps).
    pub fn address(&self, base: i32) -> u32 {
        self.full_address(base) as u32
    }

    /// The effective address as wasm computes it: `base` plus the static
    /// offset, without wrapping.
    pub fn full_address(&self, base: i32) -> u64 {
        (base as u32 as u64).saturating_add(self.mem_offset)
    }
}

/// What reading a logged access needs of its site, in 8 bytes (see
/// [`SiteTable::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiteCode {
    /// What the instruction does.
    pub kind: AccessKind,
    /// Width of the access in bytes.
    pub width: u8,
    /// The instruction's static offset ([`Site::mem_offset`]; the offset of
    /// an access to a 32-bit memory fits in 32 bits, and 64-bit memories
    /// are refused).
    offset: u32,
}

impl SiteCode {
    fn of(site: &Site) -> Self {
        SiteCode {
            kind: site.kind,
            width: site.width,
            offset: site.mem_offset as u32,
        }
    }

    /// [`Site::address`]: the access's address, cut to 32 bits, when the
    /// guest's address operand is `base`.
    #[inline]
    pub fn address(self, base: u32) -> u32 {
        base.wrapping_add(self.offset)
    }
}

/// All sites of one instrumented module, indexed by [`SiteId`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(from = "StoredSites")]
pub struct SiteTable {
    sites: Vec<Site>,
    /// Fast paths inlined into the program (see [`SiteTable::guards`]), as
    /// (site, function), by site.
    guards: Vec<(SiteId, u32)>,
    /// Counting operations (see [`SiteTable::counts`]), by site.
    counts: Vec<(SiteId, CountTest)>,
    /// Rust read locks' fast paths (see
    /// [`SiteTable::read_lock_fast_paths`]), as (load, compare-exchange),
    /// by load.
    read_locks: Vec<(SiteId, SiteId)>,
    /// Each site's [`SiteCode`], by site (made from `sites`, not stored).
    #[serde(skip)]
    codes: Vec<SiteCode>,
}

/// A [`SiteTable`] as it is stored.
#[derive(Deserialize)]
struct StoredSites {
    sites: Vec<Site>,
    guards: Vec<(SiteId, u32)>,
    counts: Vec<(SiteId, CountTest)>,
    read_locks: Vec<(SiteId, SiteId)>,
}

impl From<StoredSites> for SiteTable {
    fn from(stored: StoredSites) -> Self {
        SiteTable {
            codes: stored.sites.iter().map(SiteCode::of).collect(),
            sites: stored.sites,
            guards: stored.guards,
            counts: stored.counts,
            read_locks: stored.read_locks,
        }
    }
}

impl SiteTable {
    /// Adds a site and returns its id.
    pub(crate) fn push(&mut self, site: Site) -> SiteId {
        debug_assert!(
            u32::try_from(site.mem_offset).is_ok(),
            "the offset of a 32-bit memory's access"
        );
        let id = self.sites.len() as SiteId;
        self.codes.push(SiteCode::of(&site));
        self.sites.push(site);
        id
    }

    /// The site with this id, if the id is valid.
    pub fn get(&self, id: SiteId) -> Option<&Site> {
        self.sites.get(id as usize)
    }

    /// What reading a logged access at site `id` needs, if the id is
    /// valid. Every logged access reads its site's: eight lie in a cache
    /// line (two [`Site`]s do).
    #[inline]
    pub fn code(&self, id: SiteId) -> Option<SiteCode> {
        self.codes.get(id as usize).copied()
    }

    /// Notes that the atomic operation at `site` is the fast path of the
    /// library function `function` (original index), which the program
    /// calls when it fails: a Rust lock's compare-exchange inlined before
    /// its call of `lock_contended`, or its swap before `wake`.
    pub(crate) fn guard(&mut self, site: SiteId, function: u32) {
        self.guards.push((site, function));
    }

    /// The fast paths of library functions inlined into the program, as
    /// (site, function).
    pub fn guards(&self) -> &[(SiteId, u32)] {
        &self.guards
    }

    /// Notes that the atomic operation at `site` is a counting operation
    /// (see [`CountTest`]).
    pub(crate) fn count(&mut self, site: SiteId, test: CountTest) {
        self.counts.push((site, test));
    }

    /// The counting operations, as (site, test), by site.
    pub fn counts(&self) -> &[(SiteId, CountTest)] {
        &self.counts
    }

    /// Notes that the atomic load at `load` and the compare-exchange at
    /// `cas`, which directly follows it, are the fast path of a Rust
    /// `RwLock::read` inlined into the program (under
    /// [`super::InstrumentOptions::read_lock_one_step`]).
    pub(crate) fn read_lock(&mut self, load: SiteId, cas: SiteId) {
        if let Err(at) = self.read_locks.binary_search(&(load, cas)) {
            self.read_locks.insert(at, (load, cas));
        }
    }

    /// Rust read locks' fast paths inlined into the program: each load of
    /// a lock's word, with the compare-exchange that adds a reader right
    /// after it when the load found the lock free for readers. The two are
    /// one step of a thread (see
    /// [`super::InstrumentOptions::read_lock_one_step`]).
    pub fn read_lock_fast_paths(&self) -> &[(SiteId, SiteId)] {
        &self.read_locks
    }

    /// The compare-exchange of the read lock's fast path whose load is
    /// at `load`, if it is one.
    pub fn read_lock_after(&self, load: SiteId) -> Option<SiteId> {
        let at = self
            .read_locks
            .binary_search_by_key(&load, |&(load, _)| load)
            .ok()?;
        Some(self.read_locks[at].1)
    }

    /// Number of sites.
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    /// Whether the module has no instrumented instruction.
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(kind: AccessKind, mem_offset: u64, width: u8) -> Site {
        Site {
            kind,
            func: 1,
            code_offset: 2,
            mem_offset,
            width,
            callee: None,
            touch: None,
        }
    }

    #[test]
    fn a_sites_code_reads_as_the_site_does() {
        let mut table = SiteTable::default();
        let offsets = [0, 4, 0x7fff_ffff, 0xffff_fff0, u64::from(u32::MAX)];
        for (n, &offset) in offsets.iter().enumerate() {
            let kind = [AccessKind::Load, AccessKind::AtomicRmw, AccessKind::Store][n % 3];
            let id = table.push(site(kind, offset, 1 << (n % 4)));
            let (site, code) = (*table.get(id).unwrap(), table.code(id).unwrap());
            assert_eq!((code.kind, code.width), (site.kind, site.width));
            for base in [0, 1, 16, 0x8000_0000u32, u32::MAX - 3, u32::MAX] {
                assert_eq!(
                    code.address(base),
                    site.address(base as i32),
                    "{offset} + {base}"
                );
            }
        }
        assert_eq!(table.code(offsets.len() as SiteId), None);
    }

    #[test]
    fn a_stored_table_gets_its_codes_back() {
        let mut table = SiteTable::default();
        table.push(site(AccessKind::Store, 12, 4));
        table.push(site(AccessKind::Fill, 0, 0));
        table.guard(0, 9);
        table.read_lock(0, 1);
        let bytes = postcard::to_stdvec(&table).unwrap();
        let read: SiteTable = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(read.codes, table.codes);
        assert_eq!(read.sites, table.sites);
        assert_eq!(read.guards(), table.guards());
        assert_eq!(read.read_lock_fast_paths(), [(0, 1)]);
        assert_eq!(read.read_lock_after(0), Some(1));
        assert_eq!(read.read_lock_after(1), None);
    }
}
