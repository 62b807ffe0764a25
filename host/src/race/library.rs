//! Which logged sites are a language runtime's code (see
//! [`crate::debuginfo::bookkeeping`]), each classified the first time the
//! race check meets it.
//!
//! The allocator's and Rust `std`'s plain accesses are not even logged (the
//! loader leaves them out, see [`crate::runtime::Program::load`]); what
//! reaches the check of a runtime's code is the C thread library's, whose
//! accesses to words the program synchronises on still synchronise (see
//! [`super::detector::Detector::plain_sync_only`]), so no happens-before
//! edge is lost. What is lost is a race one of whose sides is a runtime's
//! plain access: say a thread reading the global that `pthread_create` is
//! still writing the new thread's id to, or two threads writing to one
//! `Vec<u8>` through `std::io::Write`.

use crate::debuginfo::bookkeeping::Owner;
use crate::debuginfo::symbols::LazySymbols;
use crate::instrument::{SiteId, SiteTable};
use std::sync::Arc;

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
    /// The sites of `sites`, whose source `symbols` gives; `known` says
    /// of each whether it is the library's, when the module's loading
    /// classified them (else each is classified when first asked about).
    pub fn new(sites: Arc<SiteTable>, symbols: Arc<LazySymbols>, known: Option<&[bool]>) -> Self {
        let known = match known {
            Some(known) if known.len() == sites.len() => known
                .iter()
                .map(|&library| {
                    if library {
                        Known::Library
                    } else {
                        Known::Program
                    }
                })
                .collect(),
            _ => vec![Known::Unread; sites.len()],
        };
        LibrarySites {
            known,
            sites,
            symbols,
        }
    }

    /// Whether these are the sites of `sites` (the same table).
    pub fn of(&self, sites: &Arc<SiteTable>) -> bool {
        Arc::ptr_eq(&self.sites, sites)
    }

    /// Whether `site` is a runtime's bookkeeping.
    #[inline]
    pub fn contains(&mut self, site: SiteId) -> bool {
        let Some(known) = self.known.get_mut(site as usize) else {
            return false;
        };
        if *known == Known::Unread {
            let owner = self.sites.get(site).map_or(Owner::Program, |s| {
                self.symbols
                    .with(|symbols| Owner::at(symbols, s.code_offset))
            });
            *known = if owner == Owner::Program {
                Known::Program
            } else {
                Known::Library
            };
        }
        *known == Known::Library
    }
}
