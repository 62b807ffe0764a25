//! The C library's functions that mean something for concurrency, in one
//! table: the object each acts on, what it does to it as POSIX and C11
//! specify it, whether its calls are one step each of the exhaustive
//! search, and what it touches of its caller's memory. The other parts of
//! the model read it: [`super::steps`] (which calls are steps),
//! [`super::roles`] (their roles in the search), [`super::operations`]
//! (what a story says a call did) and [`super::caller_memory`] (what the
//! race check takes as the caller's accesses).
//!
//! Names are as wasi-libc's name section spells them: the public name and,
//! where musl's public function only calls it, the internal one
//! (`__pthread_mutex_lock`), which is the one a call lands in.

use super::caller_memory::Touch;
use super::operations::LibraryOp;
use super::roles::LibraryRole;

/// What a call acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object {
    /// A `pthread_mutex_t`.
    Mutex,
    /// A `pthread_rwlock_t`, taken for reading.
    ReadLock,
    /// A `pthread_rwlock_t`, taken for writing.
    WriteLock,
    /// A `pthread_rwlock_t`, however it is held.
    RwLock,
    /// A `pthread_cond_t`.
    Condition,
    /// A `sem_t`.
    Semaphore,
    /// A `pthread_barrier_t`.
    Barrier,
    /// A `pthread_once_t`.
    Once,
    /// A `pthread_spinlock_t`.
    SpinLock,
    /// A `FILE`, whose lock every stdio function takes (`flockfile`).
    Stream,
    /// The list of open `FILE`s.
    StreamList,
    /// A thread.
    Thread,
    /// The heap: a block `malloc` returns and `free` takes back.
    Heap,
    /// Nothing but memory its caller passes.
    CallerMemory,
}

/// What a call does to its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Takes it, waiting as long as another thread holds it.
    Acquire,
    /// Takes it, waiting until a deadline at most.
    AcquireTimed,
    /// Takes it if it is free, without waiting.
    TryAcquire,
    /// Releases it (a semaphore: posts it).
    Release,
    /// Releases the mutex it is given, waits for a signal, takes the mutex
    /// again.
    Wait,
    /// The same, until a deadline at most.
    WaitTimed,
    /// Wakes one or every waiter.
    Signal,
    /// Waits until every thread of the barrier has arrived.
    Arrive,
    /// Runs the routine once; other callers wait until it has run.
    RunOnce,
    /// Starts a thread.
    Create,
    /// Where a new thread starts.
    Start,
    /// Waits until the thread has ended.
    Join,
    /// Joins the thread if it has ended (or by a deadline), else gives up.
    TryJoin,
    /// Lets the thread end without a join.
    Detach,
    /// Ends the calling thread (its cleanup, its thread-specific data).
    Exit,
    /// Hands out a block (after a `free` of the same memory, as
    /// ThreadSanitizer orders them).
    Allocate,
    /// Takes a block back.
    Free,
    /// Works on the stream under its lock, taken and released inside.
    Locked,
    /// Nothing but reading and writing its caller's memory.
    Touches,
}

#[cfg(test)]
impl Effect {
    /// Whether a call may wait for another thread (the test that every
    /// such call is a step reads it).
    fn may_block(self) -> bool {
        matches!(
            self,
            Effect::Acquire
                | Effect::AcquireTimed
                | Effect::Wait
                | Effect::WaitTimed
                | Effect::Arrive
                | Effect::RunOnce
                | Effect::Join
                | Effect::Locked
        )
    }
}

/// One function of the table.
#[derive(Clone, Copy, Debug)]
pub struct CFunction {
    /// Its name.
    pub name: &'static str,
    /// What it acts on.
    pub object: Object,
    /// What it does.
    pub effect: Effect,
    /// Whether a call of it is one step of the exhaustive search (see
    /// [`super::steps`]).
    pub step: bool,
    /// What it reads and writes of its caller's memory, if the race check
    /// takes that as the caller's access at the call.
    pub touch: Option<Touch>,
}

impl CFunction {
    /// What a story says a call of it did.
    pub fn operation(&self) -> Option<LibraryOp> {
        Some(match (self.object, self.effect) {
            (Object::Mutex, Effect::Acquire | Effect::AcquireTimed) => LibraryOp::Lock,
            (Object::Mutex, Effect::TryAcquire) => LibraryOp::TryLock,
            (Object::ReadLock, Effect::Acquire | Effect::AcquireTimed | Effect::TryAcquire) => {
                LibraryOp::ReadLock
            }
            (Object::WriteLock, Effect::Acquire | Effect::AcquireTimed | Effect::TryAcquire) => {
                LibraryOp::WriteLock
            }
            (Object::Mutex | Object::RwLock, Effect::Release) => LibraryOp::Unlock,
            (Object::Condition, Effect::Wait | Effect::WaitTimed) => LibraryOp::CondWait,
            (Object::Condition, Effect::Signal) => LibraryOp::Signal,
            (Object::Thread, Effect::Join) => LibraryOp::Join,
            _ => return None,
        })
    }

    /// Its role in the exhaustive search, when a call of it is a step.
    pub fn role(&self) -> LibraryRole {
        match (self.object, self.effect) {
            (Object::Mutex, Effect::Acquire) => LibraryRole::Lock,
            (Object::Mutex, Effect::Release) => LibraryRole::Unlock,
            (Object::ReadLock, Effect::Acquire) => LibraryRole::ReadLock,
            (Object::WriteLock, Effect::Acquire) => LibraryRole::WriteLock,
            (Object::RwLock, Effect::Release) => LibraryRole::RwUnlock,
            (Object::Condition, Effect::Wait) => LibraryRole::CondWait,
            (Object::Thread, Effect::Join) => LibraryRole::Join,
            (Object::Thread, Effect::Start | Effect::Exit) => LibraryRole::ThreadEnd,
            _ => LibraryRole::Other,
        }
    }
}

/// A row of [`C_FUNCTIONS`].
const fn row(
    name: &'static str,
    object: Object,
    effect: Effect,
    step: bool,
    touch: Option<Touch>,
) -> CFunction {
    CFunction {
        name,
        object,
        effect,
        step,
        touch,
    }
}

/// A function that only touches its caller's memory.
const fn touches(name: &'static str, touch: Touch) -> CFunction {
    row(
        name,
        Object::CallerMemory,
        Effect::Touches,
        false,
        Some(touch),
    )
}

/// A stdio function: it works under its stream's lock.
const fn stdio(name: &'static str, step: bool, touch: Option<Touch>) -> CFunction {
    row(name, Object::Stream, Effect::Locked, step, touch)
}

use Effect::*;
use Object::*;

/// The table.
pub const C_FUNCTIONS: &[CFunction] = &[
    // Mutexes.
    row("pthread_mutex_lock", Mutex, Acquire, true, None),
    row("__pthread_mutex_lock", Mutex, Acquire, true, None),
    row("pthread_mutex_timedlock", Mutex, AcquireTimed, true, None),
    row("__pthread_mutex_timedlock", Mutex, AcquireTimed, true, None),
    row("pthread_mutex_trylock", Mutex, TryAcquire, true, None),
    row("__pthread_mutex_trylock", Mutex, TryAcquire, true, None),
    row(
        "__pthread_mutex_trylock_owner",
        Mutex,
        TryAcquire,
        true,
        None,
    ),
    row("pthread_mutex_unlock", Mutex, Release, true, None),
    row("__pthread_mutex_unlock", Mutex, Release, true, None),
    // Reader-writer locks.
    row("pthread_rwlock_rdlock", ReadLock, Acquire, true, None),
    row("__pthread_rwlock_rdlock", ReadLock, Acquire, true, None),
    row(
        "pthread_rwlock_timedrdlock",
        ReadLock,
        AcquireTimed,
        true,
        None,
    ),
    row(
        "__pthread_rwlock_timedrdlock",
        ReadLock,
        AcquireTimed,
        true,
        None,
    ),
    row("pthread_rwlock_tryrdlock", ReadLock, TryAcquire, true, None),
    row(
        "__pthread_rwlock_tryrdlock",
        ReadLock,
        TryAcquire,
        true,
        None,
    ),
    row("pthread_rwlock_wrlock", WriteLock, Acquire, true, None),
    row("__pthread_rwlock_wrlock", WriteLock, Acquire, true, None),
    row(
        "pthread_rwlock_timedwrlock",
        WriteLock,
        AcquireTimed,
        true,
        None,
    ),
    row(
        "__pthread_rwlock_timedwrlock",
        WriteLock,
        AcquireTimed,
        true,
        None,
    ),
    row(
        "pthread_rwlock_trywrlock",
        WriteLock,
        TryAcquire,
        true,
        None,
    ),
    row(
        "__pthread_rwlock_trywrlock",
        WriteLock,
        TryAcquire,
        true,
        None,
    ),
    row("pthread_rwlock_unlock", RwLock, Release, true, None),
    row("__pthread_rwlock_unlock", RwLock, Release, true, None),
    // Condition variables (`pthread_cond_wait` lands in the timed wait).
    row("pthread_cond_wait", Condition, Wait, true, None),
    row("__pthread_cond_wait", Condition, Wait, false, None),
    row("pthread_cond_timedwait", Condition, WaitTimed, true, None),
    row("__pthread_cond_timedwait", Condition, WaitTimed, true, None),
    row("pthread_cond_signal", Condition, Signal, true, None),
    row("pthread_cond_broadcast", Condition, Signal, true, None),
    row("__private_cond_signal", Condition, Signal, true, None),
    // Semaphores and barriers.
    row("sem_wait", Semaphore, Acquire, true, None),
    row("sem_timedwait", Semaphore, AcquireTimed, true, None),
    row("sem_trywait", Semaphore, TryAcquire, true, None),
    row("sem_post", Semaphore, Release, true, None),
    row("pthread_barrier_wait", Barrier, Arrive, true, None),
    // Once and spin locks: not steps (the once routine is called directly;
    // a spin lock spins without ever waiting on a futex).
    row("pthread_once", Once, RunOnce, false, None),
    row("pthread_spin_lock", SpinLock, Acquire, false, None),
    row("pthread_spin_trylock", SpinLock, TryAcquire, false, None),
    row("pthread_spin_unlock", SpinLock, Release, false, None),
    // Threads.
    row("pthread_create", Thread, Create, true, None),
    row("__pthread_create", Thread, Create, true, None),
    row("wasi_thread_start", Thread, Start, true, None),
    row("__wasi_thread_start_C", Thread, Start, true, None),
    row("pthread_join", Thread, Join, true, None),
    row("__pthread_join", Thread, Join, true, None),
    row("__pthread_timedjoin_np", Thread, TryJoin, true, None),
    row("__pthread_tryjoin_np", Thread, TryJoin, true, None),
    row("pthread_detach", Thread, Detach, true, None),
    row("__pthread_detach", Thread, Detach, true, None),
    row("__pthread_exit", Thread, Exit, true, None),
    // A thread's thread-specific data destructors (the program's), called
    // through function pointers when it ends: each runs as a step of its
    // own.
    row("__pthread_tsd_run_dtors", Thread, Exit, true, None),
    // The allocator.
    row("malloc", Heap, Allocate, true, None),
    row("calloc", Heap, Allocate, true, None),
    row("realloc", Heap, Allocate, true, None),
    row("aligned_alloc", Heap, Allocate, true, None),
    row("posix_memalign", Heap, Allocate, true, None),
    row("internal_memalign", Heap, Allocate, true, None),
    row("dlmalloc", Heap, Allocate, true, None),
    row("dlcalloc", Heap, Allocate, true, None),
    row("dlrealloc", Heap, Allocate, true, None),
    row("dlposix_memalign", Heap, Allocate, true, None),
    row("free", Heap, Free, true, None),
    row("dlfree", Heap, Free, true, None),
    // stdio: its lock, and the functions that take it.
    row("flockfile", Stream, Acquire, false, None),
    row("ftrylockfile", Stream, TryAcquire, false, None),
    row("funlockfile", Stream, Release, false, None),
    row("__lockfile", Stream, Acquire, true, None),
    row("__unlockfile", Stream, Release, true, None),
    row("__ofl_lock", StreamList, Acquire, true, None),
    stdio("fflush", true, None),
    stdio("fputc", true, None),
    stdio("putchar", true, None),
    stdio("fputs", true, Some(Touch::ReadString)),
    stdio("puts", true, Some(Touch::ReadString)),
    stdio("fwrite", true, Some(Touch::WriteItems)),
    stdio("printf", true, Some(Touch::Print)),
    stdio("fprintf", true, Some(Touch::PrintTo)),
    stdio("vfprintf", true, Some(Touch::PrintTo)),
    stdio("iprintf", false, Some(Touch::Print)),
    stdio("__small_printf", false, Some(Touch::Print)),
    stdio("vprintf", false, Some(Touch::Print)),
    stdio("perror", false, Some(Touch::ReadString)),
    stdio("fread", false, Some(Touch::ReadItems)),
    stdio("fgets", false, Some(Touch::ReadLine)),
    // Formatting into memory, and input and output on descriptors (no
    // stream: no lock).
    touches("dprintf", Touch::PrintTo),
    touches("sprintf", Touch::PrintString),
    touches("vsprintf", Touch::PrintString),
    touches("snprintf", Touch::PrintStringUpTo),
    touches("vsnprintf", Touch::PrintStringUpTo),
    touches("write", Touch::WriteBytes),
    touches("read", Touch::ReadBytes),
    // `string.h`.
    touches("memcpy", Touch::Copy),
    touches("memmove", Touch::Copy),
    touches("mempcpy", Touch::Copy),
    touches("memset", Touch::Set),
    touches("bzero", Touch::Zero),
    touches("explicit_bzero", Touch::Zero),
    touches("memcmp", Touch::CompareBytes),
    touches("bcmp", Touch::CompareBytes),
    touches("memchr", Touch::FindByte),
    touches("strlen", Touch::ReadString),
    touches("strchr", Touch::ReadString),
    touches("strrchr", Touch::ReadString),
    touches("strchrnul", Touch::ReadString),
    touches("strdup", Touch::ReadString),
    touches("strnlen", Touch::ReadStringUpTo),
    touches("strndup", Touch::ReadStringUpTo),
    touches("strstr", Touch::ReadStrings),
    touches("strspn", Touch::ReadStrings),
    touches("strcspn", Touch::ReadStrings),
    touches("strpbrk", Touch::ReadStrings),
    touches("strcmp", Touch::CompareStrings),
    touches("strcasecmp", Touch::CompareStrings),
    touches("strcoll", Touch::CompareStrings),
    touches("strncmp", Touch::CompareStringsUpTo),
    touches("strncasecmp", Touch::CompareStringsUpTo),
    touches("strcpy", Touch::CopyString),
    touches("stpcpy", Touch::CopyString),
    touches("strncpy", Touch::CopyStringUpTo),
    touches("strcat", Touch::Concatenate),
    touches("strncat", Touch::ConcatenateUpTo),
];

/// The row of the C library function named `name`, if the table has it.
pub fn c_function(name: &str) -> Option<&'static CFunction> {
    C_FUNCTIONS.iter().find(|f| f.name == name)
}

/// Whether the function named `name` is one of the C allocator's calls
/// ([`Object::Heap`]: `malloc`, `free`, ... and dlmalloc's functions under
/// them).
pub fn is_allocator(name: &str) -> bool {
    c_function(name).is_some_and(|f| f.object == Object::Heap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_is_named_once() {
        let mut names: Vec<&str> = C_FUNCTIONS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), C_FUNCTIONS.len());
    }

    #[test]
    fn a_call_that_waits_for_another_thread_is_a_step() {
        // The exhaustive search sees every wait, but where the model says
        // otherwise: the once routine is called directly, a spin lock
        // never waits on a futex, `flockfile` keeps the lock past the
        // call, and the stdio functions left out lock only their stream.
        let exceptions = [
            "pthread_once",
            "pthread_spin_lock",
            "flockfile",
            "__pthread_cond_wait",
        ];
        for function in C_FUNCTIONS {
            if function.effect.may_block()
                && function.effect != Effect::Locked
                && !exceptions.contains(&function.name)
            {
                assert!(function.step, "{} waits but is no step", function.name);
            }
        }
    }

    #[test]
    fn a_function_is_read_as_posix_describes_it() {
        let lock = c_function("pthread_mutex_lock").unwrap();
        assert_eq!(lock.operation(), Some(LibraryOp::Lock));
        assert_eq!(lock.role(), LibraryRole::Lock);
        let timed = c_function("__pthread_mutex_timedlock").unwrap();
        assert_eq!(timed.operation(), Some(LibraryOp::Lock));
        assert_eq!(timed.role(), LibraryRole::Other);
        let printf = c_function("printf").unwrap();
        assert_eq!(printf.object, Object::Stream);
        assert_eq!(printf.touch, Some(Touch::Print));
        assert!(c_function("pthread_mutex_consistent").is_none());
    }
}
