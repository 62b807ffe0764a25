//! The roles of the library calls that are one step each of the exhaustive
//! search (see `sched::LibraryModel`, which applies them to a module), and
//! the functions whose operations inside such a step are the library's
//! private bookkeeping.

/// The role of a library call in the order of a program's steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LibraryRole {
    /// `pthread_mutex_lock`: waits until the mutex is free, then takes it;
    /// a wait ends only to try again.
    Lock,
    /// `pthread_mutex_unlock`.
    Unlock,
    /// `pthread_cond_wait`: releases the mutex, waits for a signal, takes
    /// the mutex again (the step it is woken in).
    CondWait,
    /// `pthread_join`: waits until the thread has exited; a wait ends only
    /// to look again.
    Join,
    /// `pthread_rwlock_rdlock`: waits until no writer holds the lock, then
    /// takes it for reading (with other readers); a wait ends only to try
    /// again.
    ReadLock,
    /// `pthread_rwlock_wrlock`: waits until no thread holds the lock,
    /// then takes it alone; a wait ends only to try again.
    WriteLock,
    /// `pthread_rwlock_unlock`: of a read lock or a write lock.
    RwUnlock,
    /// A thread's start or exit (`pthread_exit`, the end of its routine).
    ThreadEnd,
    /// Rust's `Barrier::wait`: arrives, and waits until the last thread
    /// arrives; a waiter the last one wakes takes the barrier's mutex,
    /// finds its round over and gives the mutex back.
    BarrierWait,
    /// Any other call that is one step.
    Other,
}

impl LibraryRole {
    /// Whether a call of this role that blocks only waits for a state it
    /// then takes as if it had found it at once: its wait, and the step
    /// that ends it, need no reversal.
    pub fn retries(self) -> bool {
        matches!(
            self,
            LibraryRole::Lock | LibraryRole::Join | LibraryRole::ReadLock | LibraryRole::WriteLock
        )
    }

    /// The role of a call of the function named `name` that is one step.
    pub(crate) fn of(name: &str) -> LibraryRole {
        if let Some(method) = super::steps::rust_std_library_step(name) {
            return match method {
                "Mutex::lock" | "Mutex::lock_contended" => LibraryRole::Lock,
                "Mutex::unlock" => LibraryRole::Unlock,
                "RwLock::read" | "RwLock::read_contended" => LibraryRole::ReadLock,
                "RwLock::write" | "RwLock::write_contended" => LibraryRole::WriteLock,
                "RwLock::read_unlock" | "RwLock::write_unlock" => LibraryRole::RwUnlock,
                "Condvar::wait" | "Condvar::wait_optional_timeout" => LibraryRole::CondWait,
                "Thread::join" => LibraryRole::Join,
                "Barrier::wait" => LibraryRole::BarrierWait,
                _ => LibraryRole::Other,
            };
        }
        super::functions::c_function(name).map_or(LibraryRole::Other, |f| f.role())
    }
}

/// Functions (by name-section name) all of whose memory operations inside
/// a library step are the C library's private bookkeeping: the allocator,
/// the list of threads and the internal locks (`__lock`, which musl never
/// lends a program's object), and thread creation (the new thread's
/// descriptor is its own until it runs; that it starts after its creator
/// is known without them).
pub(crate) const PRIVATE_FUNCTIONS: &[&str] = &[
    "__lock",
    "__pthread_create",
    "__tl_lock",
    "__tl_sync",
    "__tl_unlock",
    "__unlock",
    "aligned_alloc",
    "calloc",
    "dlcalloc",
    "dlfree",
    "dlmalloc",
    "dlposix_memalign",
    "dlrealloc",
    "free",
    "internal_memalign",
    "malloc",
    "posix_memalign",
    "pthread_create",
    "realloc",
    "wasi_thread_start",
];

/// The function whose compare-exchanges take the list of threads' lock:
/// the words it takes so are private wherever a library step touches them
/// (the exit path inlines the same lock).
pub(crate) const THREAD_LIST_LOCKER: &[&str] = &["__pthread_create", "pthread_create"];

/// Functions that take a read-write lock for reading or release it. A
/// thread's end (its thread-specific data's destructors) takes only the
/// keys' lock, and only for reading: there, their operations are a
/// reader's, which commute with another reader's.
pub(crate) const READ_LOCK_FUNCTIONS: &[&str] = &[
    "__pthread_rwlock_rdlock",
    "__pthread_rwlock_timedrdlock",
    "__pthread_rwlock_tryrdlock",
    "__pthread_rwlock_unlock",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_timedrdlock",
    "pthread_rwlock_tryrdlock",
    "pthread_rwlock_unlock",
];
