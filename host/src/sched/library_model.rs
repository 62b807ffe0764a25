//! What the exhaustive search knows of the C library's calls that are one
//! step each (see `instrument::InstrumentOptions::library_steps`): which
//! of their memory operations are the library's private bookkeeping, and
//! the role of the calls whose order matters in a known way.
//!
//! Inside a library step, an operation on the allocator's lock, the list
//! of threads or another of the library's internal locks never shows in
//! what the program does: two steps that differ only in their order there
//! (two allocations, one thread's exit and another's creation) commute, as
//! stateless model checkers take them to (an allocation may then return
//! another address; a program whose result depends on the addresses the
//! allocator returns is beyond what any of them explores). Such operations
//! are dropped from the step's record. Outside library steps nothing is
//! dropped: a program's own call to an internal lock (`random()` takes
//! one) still orders what it protects.
//!
//! The roles let the search skip reversals that only make a call block
//! and retry (see `explore::dpor_search`): a mutex or read-write lock taken
//! after its release, a join after the thread's exit; and let two readers
//! of a read-write lock commute (see `sched::StepRecord::shared`).
//!
//! It also knows the counting operations (see
//! [`crate::instrument::count_test`]): two of them commute when neither
//! takes its branch otherwise for the other (see `sched::StepRecord::count`).

use crate::instrument::count_test::CountTest;
use crate::instrument::{AccessKind, SiteTable};
pub use crate::library::roles::LibraryRole;
use crate::library::roles::{PRIVATE_FUNCTIONS, READ_LOCK_FUNCTIONS, THREAD_LIST_LOCKER};
use std::collections::HashMap;

/// The library's calls as the search sees them, for one module.
#[derive(Debug, Default)]
pub struct LibraryModel {
    /// By function index (original module): the role of a call that is one
    /// step.
    roles: HashMap<u32, LibraryRole>,
    /// By site: whether its operations are private inside a library step.
    private_sites: Vec<bool>,
    /// By site: whether a compare-exchange there takes a private lock word.
    lock_word_sites: Vec<bool>,
    /// By site: whether it is in a function of [`READ_LOCK_FUNCTIONS`].
    read_lock_sites: Vec<bool>,
    /// The role of the call a fast path inlined into the program stands
    /// for, by its site (see `SiteTable::guards`).
    fast_paths: HashMap<u32, LibraryRole>,
    /// The counting operations (a reference count's increments and
    /// decrements, inlined from the library or the program's own), by
    /// site (see `SiteTable::counts`).
    counts: HashMap<u32, CountTest>,
}

impl LibraryModel {
    /// The model of a module whose sites are `sites`, whose functions'
    /// names `name` gives (by original index), and whose calls of the
    /// functions `is_step` says (by name) are one step each.
    pub fn new<'a>(
        sites: &SiteTable,
        functions: impl Iterator<Item = (u32, &'a str)>,
        is_step: impl Fn(&str) -> bool,
    ) -> Self {
        let mut roles = HashMap::new();
        let mut private = HashMap::new();
        let mut names = HashMap::new();
        for (index, name) in functions {
            names.insert(index, name);
            if is_step(name) {
                roles.insert(index, LibraryRole::of(name));
            }
            private.insert(
                index,
                (
                    PRIVATE_FUNCTIONS.contains(&name),
                    THREAD_LIST_LOCKER.contains(&name),
                    READ_LOCK_FUNCTIONS.contains(&name),
                ),
            );
        }
        let mut model = LibraryModel {
            roles,
            ..Self::of_counts(sites)
        };
        for &(site, function) in sites.guards() {
            let method = names
                .get(&function)
                .and_then(|name| crate::library::steps::rust_std_library_step(name));
            let role = match method {
                Some("Mutex::lock_contended") => LibraryRole::Lock,
                Some("Mutex::wake") => LibraryRole::Unlock,
                Some("RwLock::read_contended") => LibraryRole::ReadLock,
                Some("RwLock::write_contended") => LibraryRole::WriteLock,
                Some("RwLock::wake_writer_or_readers") => LibraryRole::RwUnlock,
                _ => continue,
            };
            let kind = sites.get(site).map(|site| site.kind);
            if kind.is_some_and(|kind| fast_path_kind_fits(role, kind)) {
                model.fast_paths.insert(site, role);
            }
        }
        for id in 0..sites.len() {
            let site = sites.get(id as u32).expect("a site of the table");
            let (private, locker, read_lock) = private.get(&site.func).copied().unwrap_or_default();
            model.private_sites.push(private);
            model
                .lock_word_sites
                .push(locker && site.kind == AccessKind::AtomicCmpxchg);
            model.read_lock_sites.push(read_lock);
        }
        model
    }

    /// The model of a module whose library calls are no steps: only its
    /// counting operations (its sites `sites`).
    pub fn of_counts(sites: &SiteTable) -> Self {
        LibraryModel {
            counts: sites.counts().iter().copied().collect(),
            ..Self::default()
        }
    }

    /// The role of a call of `function` that is one step, if it is one.
    pub fn role(&self, function: u32) -> Option<LibraryRole> {
        self.roles.get(&function).copied()
    }

    /// Whether an operation at `site` inside a library step is private
    /// bookkeeping.
    pub fn private_site(&self, site: u32) -> bool {
        self.private_sites.get(site as usize) == Some(&true)
    }

    /// The role of the library call whose fast path, inlined into the
    /// program, is the operation at `site`, if it is one: a Rust lock's
    /// compare-exchange (a lock), or its swap or subtraction that releases
    /// it (an unlock).
    pub fn fast_path(&self, site: u32) -> Option<LibraryRole> {
        self.fast_paths.get(&site).copied()
    }

    /// The test of the counting operation at `site`, if it is one.
    pub fn count_test(&self, site: u32) -> Option<CountTest> {
        self.counts.get(&site).copied()
    }

    /// Whether an operation at `site`, inside a library step of `role`,
    /// is a reader's on a read-write lock (see [`READ_LOCK_FUNCTIONS`]).
    pub fn reads_lock(&self, site: u32, role: LibraryRole) -> bool {
        role == LibraryRole::ThreadEnd && self.read_lock_sites.get(site as usize) == Some(&true)
    }

    /// Whether an operation at `site` inside a library step takes a lock
    /// word that is private wherever it is touched.
    pub fn takes_private_word(&self, site: u32) -> bool {
        self.lock_word_sites.get(site as usize) == Some(&true)
    }
}

/// Whether an operation of `kind` can be the inlined fast path of a call of
/// `role`: a lock's compare-exchange (and a read lock's look at the state
/// before it), a mutex's swap that releases it, a read-write lock's
/// subtraction that does.
fn fast_path_kind_fits(role: LibraryRole, kind: AccessKind) -> bool {
    match role {
        LibraryRole::Lock | LibraryRole::WriteLock => kind == AccessKind::AtomicCmpxchg,
        LibraryRole::ReadLock => matches!(kind, AccessKind::AtomicCmpxchg | AccessKind::AtomicLoad),
        LibraryRole::Unlock => kind == AccessKind::AtomicXchg,
        LibraryRole::RwUnlock => kind == AccessKind::AtomicRmw,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instrument::Site;

    fn site(func: u32, kind: AccessKind) -> Site {
        Site {
            kind,
            func,
            code_offset: 0,
            mem_offset: 0,
            width: 4,
            callee: None,
            touch: None,
        }
    }

    #[test]
    fn roles_come_from_names_and_bookkeeping_from_the_functions_sites() {
        let mut sites = SiteTable::default();
        let in_malloc = sites.push(site(1, AccessKind::AtomicXchg));
        let in_create = sites.push(site(2, AccessKind::AtomicCmpxchg));
        let in_program = sites.push(site(3, AccessKind::AtomicCmpxchg));
        let names = [
            (0, "__pthread_mutex_lock"),
            (1, "dlmalloc"),
            (2, "__pthread_create"),
            (3, "main"),
        ];
        let model = LibraryModel::new(&sites, names.into_iter(), |name| {
            ["__pthread_mutex_lock", "dlmalloc", "__pthread_create"].contains(&name)
        });
        assert_eq!(model.role(0), Some(LibraryRole::Lock));
        assert_eq!(model.role(1), Some(LibraryRole::Other));
        assert_eq!(model.role(3), None);
        assert!(model.private_site(in_malloc) && model.private_site(in_create));
        assert!(!model.private_site(in_program));
        assert!(model.takes_private_word(in_create));
        assert!(!model.takes_private_word(in_malloc));
    }
}
