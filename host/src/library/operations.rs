//! What the synchronisation functions of the guests' libraries do, known by
//! name: wasi-libc's pthreads (`pthread_mutex_lock`, `pthread_cond_wait`,
//! ...) and Rust's `std::sync` (`futex::Mutex::lock`, `Condvar::wait`,
//! ...), as a story tells them: "thread 1 locked `m`" instead of the atomic
//! instructions inside the library, the way a sanitizer intercepts these
//! functions by name.

/// A synchronisation operation of a library, as a story tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LibraryOp {
    /// Takes a mutex (waiting for it if it is taken).
    Lock,
    /// Tries to take a mutex, without waiting.
    TryLock,
    /// Releases a mutex or a reader-writer lock.
    Unlock,
    /// Takes a reader-writer lock for reading.
    ReadLock,
    /// Takes a reader-writer lock for writing.
    WriteLock,
    /// Waits on a condition variable.
    CondWait,
    /// Signals or broadcasts a condition variable.
    Signal,
    /// Waits for a thread to finish.
    Join,
}

impl LibraryOp {
    /// What the operation does, as a verb: "lock", "wait on".
    pub fn verb(self) -> &'static str {
        match self {
            LibraryOp::Lock => "lock",
            LibraryOp::TryLock => "try to lock",
            LibraryOp::Unlock => "unlock",
            LibraryOp::ReadLock => "lock for reading",
            LibraryOp::WriteLock => "lock for writing",
            LibraryOp::CondWait => "wait on a condition",
            LibraryOp::Signal => "signal a condition",
            LibraryOp::Join => "join a thread",
        }
    }

    /// Whether the operation takes a lock (so that its thread holds it
    /// once the operation is over).
    pub fn acquires(self) -> bool {
        matches!(
            self,
            LibraryOp::Lock | LibraryOp::TryLock | LibraryOp::ReadLock | LibraryOp::WriteLock
        )
    }
}

/// Name fragments and what the functions of Rust's `std` (and C++'s,
/// demangled) whose lower-case names hold them do (the C library's are in
/// [`super::functions`]). The first match wins, so the more specific come
/// first (`read_unlock` before `read`, `try_lock` before `lock`).
const PATTERNS: &[(&str, LibraryOp)] = &[
    ("condvar::wait", LibraryOp::CondWait),
    ("condvar::notify", LibraryOp::Signal),
    ("rwlock::read_unlock", LibraryOp::Unlock),
    ("rwlock::write_unlock", LibraryOp::Unlock),
    ("rwlock::wake", LibraryOp::Unlock),
    ("rwlock::read", LibraryOp::ReadLock),
    ("rwlock::write", LibraryOp::WriteLock),
    ("mutex::unlock", LibraryOp::Unlock),
    ("mutex::wake", LibraryOp::Unlock),
    ("mutex::try_lock", LibraryOp::TryLock),
    ("mutex::lock", LibraryOp::Lock),
    ("thread::join", LibraryOp::Join),
    ("join_inner", LibraryOp::Join),
    ("joininner", LibraryOp::Join),
    ("joinhandle", LibraryOp::Join),
];

/// What the library function named `function` does, if it is one a story
/// tells by name.
pub fn classify(function: &str) -> Option<LibraryOp> {
    if let Some(known) = super::functions::c_function(function) {
        return known.operation();
    }
    // `<std::sys::sync::mutex::futex::Mutex>::lock` reads as
    // `std::sys::sync::mutex::futex::mutex::lock`.
    let name: String = function
        .chars()
        .filter(|c| !matches!(c, '<' | '>'))
        .collect::<String>()
        .to_ascii_lowercase();
    PATTERNS
        .iter()
        .find(|(fragment, _)| name.contains(fragment))
        .map(|&(_, op)| op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pthreads_and_rust_std_are_told_by_name() {
        assert_eq!(classify("pthread_mutex_lock"), Some(LibraryOp::Lock));
        assert_eq!(classify("__pthread_mutex_timedlock"), Some(LibraryOp::Lock));
        assert_eq!(classify("__pthread_mutex_unlock"), Some(LibraryOp::Unlock));
        assert_eq!(
            classify("__pthread_cond_timedwait"),
            Some(LibraryOp::CondWait)
        );
        assert_eq!(classify("pthread_cond_broadcast"), Some(LibraryOp::Signal));
        assert_eq!(
            classify("std::sys::sync::mutex::futex::Mutex::lock_contended"),
            Some(LibraryOp::Lock)
        );
        assert_eq!(
            classify("std::sys::sync::rwlock::futex::RwLock::read_unlock"),
            Some(LibraryOp::Unlock)
        );
        assert_eq!(
            classify("std::sys::sync::rwlock::futex::RwLock::read_contended"),
            Some(LibraryOp::ReadLock)
        );
        assert_eq!(
            classify("std::sys::sync::condvar::futex::Condvar::wait_optional_timeout"),
            Some(LibraryOp::CondWait)
        );
        assert_eq!(classify("__pthread_join"), Some(LibraryOp::Join));
        assert_eq!(
            classify("<std::sys::sync::mutex::futex::Mutex>::lock"),
            Some(LibraryOp::Lock)
        );
        assert_eq!(
            classify("std::thread::lifecycle::JoinInner<T>::join"),
            Some(LibraryOp::Join)
        );
        assert_eq!(classify("malloc"), None);
        assert_eq!(classify("core::sync::atomic::AtomicU32::load"), None);
    }
}
