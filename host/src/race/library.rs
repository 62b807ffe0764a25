//! Which code sites are a language runtime's own bookkeeping, by the source
//! files DWARF names for a site's frames:
//!
//! - the C library's allocator, thread library (threads, locks,
//!   thread-specific data) and atomics helpers: the innermost frame is in
//!   one of their files;
//! - the Rust standard library's own code: the function that holds the
//!   code is `std`'s, and every function inlined into it is `std`'s, `core`'s
//!   or `alloc`'s (none is the program's: a closure of the program inlined
//!   into `std` is the program's).
//!
//! The race check does not record their plain accesses, as TSan does not
//! instrument the C library (nor Rust's `std` unless it is rebuilt): they are
//! the runtime's internal state (block headers read outside the lock by
//! design, every thread-specific key visited when a thread exits, the
//! packet of a spawned thread, stdout's buffer), and recording them was most
//! of what the check cost. Their accesses to words the program synchronises
//! on still synchronise (see [`super::detector::Detector::plain_sync_only`]),
//! so no happens-before edge is lost. What is lost is a race one of whose
//! sides is such a plain access: say a thread reading the global that
//! `pthread_create` is still writing the new thread's id to, or two threads
//! writing to one `Vec<u8>` through `std::io::Write`.

use crate::debuginfo::symbols::LazySymbols;
use crate::instrument::{SiteId, SiteTable};
use std::sync::Arc;

/// Source paths of the C library's bookkeeping, as wasi-libc's DWARF spells
/// them.
const LIBC_SOURCES: [&str; 3] = [
    "wasi-libc/dlmalloc/",
    "wasi-libc/libc-top-half/musl/src/thread/",
    "wasi-libc/libc-top-half/musl/src/internal/atomic.h",
];

/// Where Rust's standard library's own functions are, as DWARF names them
/// (after [`crate::debuginfo::symbols`] shortened the paths).
const RUST_STD: &str = "library/std/src/";

/// Where the code Rust's standard library inlines is.
const RUST_LIBRARIES: [&str; 3] = [RUST_STD, "library/core/src/", "library/alloc/src/"];

/// Whether code whose frames (innermost first) are in `files` is a
/// runtime's bookkeeping.
fn is_bookkeeping(files: &[&str]) -> bool {
    let libc = files
        .first()
        .is_some_and(|file| LIBC_SOURCES.iter().any(|source| file.contains(source)));
    let std = files.last().is_some_and(|file| file.starts_with(RUST_STD))
        && files.iter().all(|file| {
            RUST_LIBRARIES
                .iter()
                .any(|library| file.starts_with(library))
        });
    libc || std
}

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

    /// Whether `site` is a runtime's bookkeeping.
    #[inline]
    pub fn contains(&mut self, site: SiteId) -> bool {
        let Some(known) = self.known.get_mut(site as usize) else {
            return false;
        };
        if *known == Known::Unread {
            let frames = self.sites.get(site).map_or_else(Vec::new, |s| {
                self.symbols.with(|symbols| symbols.frames(s.code_offset))
            });
            let files: Vec<&str> = frames
                .iter()
                .map(|frame| frame.file.as_deref().unwrap_or(""))
                .collect();
            *known = if is_bookkeeping(&files) {
                Known::Library
            } else {
                Known::Program
            };
        }
        *known == Known::Library
    }
}

#[cfg(test)]
mod tests {
    use super::is_bookkeeping;

    #[test]
    fn bookkeeping_is_told_by_the_frames_files() {
        assert!(is_bookkeeping(&["wasi-libc/dlmalloc/src/malloc.c"]));
        assert!(is_bookkeeping(&[
            "wasi-libc/libc-top-half/musl/src/internal/atomic.h",
            "samples/x/main.c",
        ]));
        assert!(!is_bookkeeping(&["samples/x/main.c"]));
        // std's own function, with core inlined into it.
        assert!(is_bookkeeping(&[
            "library/core/src/cell.rs",
            "library/std/src/thread/local.rs",
        ]));
        // core inlined into the program, or the program's closure into std.
        assert!(!is_bookkeeping(&[
            "library/core/src/cell.rs",
            "samples/x/src/main.rs",
        ]));
        assert!(!is_bookkeeping(&[
            "samples/x/src/main.rs",
            "library/std/src/sync/once_lock.rs",
        ]));
        // alloc's own function (a `Vec` of the program's): the program's.
        assert!(!is_bookkeeping(&["library/alloc/src/vec/mod.rs"]));
        assert!(!is_bookkeeping(&[]));
    }
}
