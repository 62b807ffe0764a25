//! Which code sites are the C library's own bookkeeping: its allocator,
//! its thread library (threads, locks, thread-specific data) and its
//! atomics helpers, by the source file DWARF names for a site's innermost
//! frame.
//!
//! The race check does not record their plain accesses, as TSan does not
//! instrument the C library: they are the library's internal state (block
//! headers read outside the lock by design, every thread-specific key
//! visited when a thread exits), and recording them was most of what the
//! check cost. Their accesses to words the program synchronises on still
//! synchronise (see [`super::detector::Detector::plain_sync_only`]), so no
//! happens-before edge is lost. What is lost is a race one of whose sides is
//! such a plain access: say a thread reading the global that
//! `pthread_create` is still writing the new thread's id to.

use crate::debuginfo::symbols::LazySymbols;
use crate::instrument::{SiteId, SiteTable};
use std::sync::Arc;

/// Source paths of the library's bookkeeping, as wasi-libc's DWARF spells
/// them.
const LIBRARY_SOURCES: [&str; 3] = [
    "wasi-libc/dlmalloc/",
    "wasi-libc/libc-top-half/musl/src/thread/",
    "wasi-libc/libc-top-half/musl/src/internal/atomic.h",
];

/// What is known of a site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    Unread,
    Program,
    Library,
}

/// The sites of one module, each classified the first time it is asked
/// about (most sites never run).
#[derive(Debug)]
pub struct LibrarySites {
    sites: Arc<SiteTable>,
    symbols: Arc<LazySymbols>,
    known: Vec<Known>,
}

impl LibrarySites {
    /// The sites of `sites`, whose source `symbols` gives.
    pub fn new(sites: Arc<SiteTable>, symbols: Arc<LazySymbols>) -> Self {
        LibrarySites {
            known: vec![Known::Unread; sites.len()],
            sites,
            symbols,
        }
    }

    /// Whether these are the sites of `sites` (the same table).
    pub fn of(&self, sites: &Arc<SiteTable>) -> bool {
        Arc::ptr_eq(&self.sites, sites)
    }

    /// Whether `site` is the library's bookkeeping.
    #[inline]
    pub fn contains(&mut self, site: SiteId) -> bool {
        let Some(known) = self.known.get_mut(site as usize) else {
            return false;
        };
        if *known == Known::Unread {
            let file = self
                .sites
                .get(site)
                .and_then(|s| self.symbols.file_of(s))
                .unwrap_or_default();
            *known = if LIBRARY_SOURCES.iter().any(|p| file.contains(p)) {
                Known::Library
            } else {
                Known::Program
            };
        }
        *known == Known::Library
    }
}
