//! The code sites that instrumentation turns into scheduling points.
//!
//! Every rewritten instruction gets a [`SiteId`]: the index of its [`Site`] in
//! the [`SiteTable`] that [`instrument`](super::instrument) returns. The guest
//! passes the id to the host hook, which uses it to learn what kind of access
//! happens where without decoding anything at run time.

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
    /// For a [`AccessKind::Call`] site: the called function (original
    /// index), or `None` for an indirect call.
    pub callee: Option<u32>,
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

/// All sites of one instrumented module, indexed by [`SiteId`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SiteTable {
    sites: Vec<Site>,
    /// Fast paths inlined into the program (see [`SiteTable::guards`]), as
    /// (site, function), by site.
    guards: Vec<(SiteId, u32)>,
}

impl SiteTable {
    /// Adds a site and returns its id.
    pub(crate) fn push(&mut self, site: Site) -> SiteId {
        let id = self.sites.len() as SiteId;
        self.sites.push(site);
        id
    }

    /// The site with this id, if the id is valid.
    pub fn get(&self, id: SiteId) -> Option<&Site> {
        self.sites.get(id as usize)
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

    /// Number of sites.
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    /// Whether the module has no instrumented instruction.
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }
}
