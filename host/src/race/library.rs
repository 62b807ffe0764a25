//! Which logged sites are a language runtime's code (see
//! [`crate::debuginfo::bookkeeping`]), as the module's loading classified
//! them (and the cache keeps them, so that a run reads no debug
//! information).
//!
//! The allocator's and Rust `std`'s plain accesses are not even logged (the
//! loader leaves them out, see [`crate::runtime::Program::load`]), nor,
//! under the race check, those of a thread's creation and end (see
//! [`crate::instrument::InstrumentOptions::quiet_thread_lifecycle`]); what
//! reaches the check of a runtime's code is the rest of the C thread
//! library's, whose accesses to words the program synchronises on still
//! synchronise (see [`super::detector::Detector::plain_sync_only`]), so no
//! happens-before edge is lost. What is lost is a race one of whose sides is a runtime's
//! plain access: say a thread reading the global that `pthread_create` is
//! still writing the new thread's id to, or two threads writing to one
//! `Vec<u8>` through `std::io::Write`.

use crate::instrument::{SiteId, SiteTable};
use std::sync::Arc;

/// The sites of one module, as its loading classified them (see
/// `runtime::program::Rewritten::library`).
#[derive(Debug)]
pub struct LibrarySites {
    sites: Arc<SiteTable>,
    /// For each site: whether it is a plain access in a library's code.
    /// Empty for a module that logs no plain access, which asks nothing.
    library: Arc<[bool]>,
}

impl LibrarySites {
    /// The sites of `sites`, `library` saying of each whether it is a
    /// plain access in a library's code.
    pub fn new(sites: Arc<SiteTable>, library: Option<Arc<[bool]>>) -> Self {
        LibrarySites {
            sites,
            library: library.unwrap_or_else(|| Arc::from([])),
        }
    }

    /// Whether these are the sites of `sites` (the same table).
    pub fn of(&self, sites: &Arc<SiteTable>) -> bool {
        Arc::ptr_eq(&self.sites, sites)
    }

    /// Whether `site` is a runtime's bookkeeping.
    #[inline]
    pub fn contains(&self, site: SiteId) -> bool {
        self.library.get(site as usize).copied().unwrap_or(false)
    }
}
