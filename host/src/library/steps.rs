//! The library calls that are one step each of the exhaustive search (see
//! `instrument::InstrumentOptions::library_steps`): the C library's by
//! name (see [`super::functions`]), Rust std's by the end of their
//! demangled path.

/// Rust std's functions whose calls are one step each under
/// [`crate::abi::RT_LIBRARY_BEGIN`], by the end of their demangled path: the methods
/// of the futex-based mutex, read-write lock, condition variable, `Once`
/// and thread parker, and of the thread type, in a module under
/// `std::sys` (their paths there change between Rust releases; their
/// type and method names have not), and `Barrier::wait` under
/// `std::sync`. Their fast paths (one compare-exchange or swap) are
/// inlined into the program in optimised builds and stay its own steps;
/// these are the calls that spin, wait, wake and create. Like the C
/// library's, none calls back into the program but through a function
/// pointer (`Once::call` calls its closure so), and none spins without
/// waiting on a futex in the end.
pub const RUST_STD_LIBRARY_STEP_METHODS: &[&str] = &[
    "Mutex::lock",
    "Mutex::lock_contended",
    "Mutex::try_lock",
    "Mutex::unlock",
    "Mutex::wake",
    "RwLock::read",
    "RwLock::read_contended",
    "RwLock::read_unlock",
    "RwLock::try_read",
    "RwLock::try_write",
    "RwLock::wake_writer",
    "RwLock::wake_writer_or_readers",
    "RwLock::write",
    "RwLock::write_contended",
    "RwLock::write_unlock",
    "Condvar::notify_all",
    "Condvar::notify_one",
    "Condvar::wait",
    "Condvar::wait_optional_timeout",
    "Condvar::wait_timeout",
    "Once::call",
    "Parker::park",
    "Parker::park_timeout",
    "Parker::unpark",
    "Thread::join",
    "Thread::new",
];

/// The operations of Rust std's channels (`std::sync::mpsc`, built on
/// `std::sync::mpmc`) whose calls are one step each: a send or receive on
/// each kind of channel (`list`, unbounded; `array`, bounded; `zero`,
/// rendezvous), blocking or not, by `Channel::method` in a module under
/// `std::sync::mpmc::`. Each is linearizable and hands the message over
/// whole; a blocked one waits through the thread parker. So is marking a
/// channel disconnected when its last sender goes (`disconnect_senders`,
/// or `disconnect` of either side). Its last receiver's going is left
/// out: it drops the messages left in the channel, which runs the
/// program's own `Drop`.
pub const RUST_STD_CHANNEL_METHODS: &[&str] = &[
    "Channel::send",
    "Channel::recv",
    "Channel::try_send",
    "Channel::try_recv",
    "Channel::disconnect_senders",
    "Channel::disconnect",
];

/// The entry of [`RUST_STD_LIBRARY_STEP_METHODS`] or
/// [`RUST_STD_CHANNEL_METHODS`] (or `Barrier::wait`) that the function
/// named `name` is, mangled (legacy or v0) or demangled.
pub fn rust_std_library_step(name: &str) -> Option<&'static str> {
    let path = rust_std_path(name)?;
    if path.starts_with("std::sync::") && path.ends_with("::Barrier::wait") {
        return Some("Barrier::wait");
    }
    if let Some(flavor) = path.strip_prefix("std::sync::mpmc::") {
        return RUST_STD_CHANNEL_METHODS.iter().copied().find(|method| {
            flavor
                .strip_suffix(method)
                .is_some_and(|kind| matches!(kind, "list::" | "array::" | "zero::"))
        });
    }
    std_sys_method(&path, RUST_STD_LIBRARY_STEP_METHODS)
}

/// The demangled path of the function named `name` (mangled, legacy or
/// v0, or not), without generic arguments, when it may be Rust std's.
fn rust_std_path(name: &str) -> Option<String> {
    if !name.contains("std") {
        return None;
    }
    let demangled = rustc_demangle::try_demangle(name).map(|d| format!("{d:#}"));
    Some(without_generics(demangled.as_deref().unwrap_or(name)))
}

/// The entry of `methods` that `path` ends with, in a module under
/// `std::sys` (whose module paths change between Rust releases).
fn std_sys_method(path: &str, methods: &[&'static str]) -> Option<&'static str> {
    if !path.starts_with("std::sys::") {
        return None;
    }
    methods.iter().copied().find(|method| {
        path.strip_suffix(method)
            .is_some_and(|module| module.ends_with("::"))
    })
}

/// The methods of [`RUST_STD_LIBRARY_STEP_METHODS`] that Rust std calls
/// only when the atomic operation just before, inlined into the program,
/// did not do the whole job: a lock's compare-exchange failed, or an
/// unlock's swap found waiters. That operation is the method's fast path
/// (see `SiteTable::guard`).
pub const RUST_STD_SLOW_PATHS: &[&str] = &[
    "Mutex::lock_contended",
    "Mutex::wake",
    "RwLock::read_contended",
    "RwLock::write_contended",
    "RwLock::wake_writer_or_readers",
];

/// A demangled path without its generic arguments and angle brackets:
/// `<std::sync::mpmc::list::Channel<u64>>::send` (v0 names an inherent
/// method of a type in brackets) and `std::sync::mpmc::list::Channel<T>::send`
/// (legacy) are both `std::sync::mpmc::list::Channel::send`. (C++'s
/// demangled names read the same way.)
pub(super) fn without_generics(path: &str) -> String {
    let mut kept = String::with_capacity(path.len());
    let mut depth = 0usize;
    let mut previous = ' ';
    for c in path.chars() {
        match c {
            '<' if depth > 0 || previous.is_alphanumeric() || previous == '_' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            '<' | '>' => {}
            _ if depth == 0 => kept.push(c),
            _ => {}
        }
        previous = c;
    }
    kept
}

/// Rust std's functions that set up a thread or its thread-local storage,
/// by the end of their demangled path: the start routine every spawned
/// thread runs before its closure (it calls the closure through a
/// pointer, which ends the step), and the lazy creation of the key that
/// runs thread-local destructors.
pub const RUST_STD_THREAD_SETUP_METHODS: &[&str] = &[
    "Thread::new::thread_start",
    "thread_local::guard::key::enable",
];

/// Rust std's own runtime machinery outside its synchronisation types,
/// by the end of its demangled path under `std::` (module paths move
/// between releases): what joining a thread does besides waiting for it
/// (taking its result out of the shared packet and dropping std's handles
/// to it), reading an environment variable (under std's lock of the
/// environment) and printing to the standard streams (under their locks).
/// Under [`crate::instrument::InstrumentOptions::rust_runtime_steps`],
/// each call is one step, as the C library's `pthread_join`, `getenv` and
/// `printf` are: its atomics and locks are std's own, and a program sees
/// none of them. (The program's `Display` and `Debug` code that printing
/// runs is called through a pointer, which ends the step.)
pub const RUST_STD_RUNTIME_STEPS: &[&str] = &[
    "JoinInner::join",
    "env::_var_os",
    "io::stdio::_print",
    "io::stdio::_eprint",
];

/// Rust std's own bookkeeping of threads and of the process, by the end of
/// its demangled path under `std::`: a new thread's id (a counter), the
/// runtime's start and end around `main` (which it calls through a
/// pointer), and the runner of a thread's thread-local destructors (which
/// it calls through pointers). Under
/// [`crate::instrument::InstrumentOptions::rust_runtime_steps`], a call is
/// one step but no scheduling point, as allocation is (see
/// [`is_quiet_bookkeeping_function`]).
pub const RUST_STD_RUNTIME_BOOKKEEPING: &[&str] = &[
    "ThreadId::new",
    "rt::lang_start_internal",
    "thread_local::guard::key::enable::run",
];

/// How a call of the function named `name` (mangled or not) runs under
/// [`crate::instrument::InstrumentOptions::rust_runtime_steps`]: as one
/// step ([`RUST_STD_RUNTIME_STEPS`]), as one step but no scheduling point
/// ([`RUST_STD_RUNTIME_BOOKKEEPING`]), or as it would without the option
/// (`None`).
pub fn rust_std_runtime_function(name: &str) -> Option<RuntimeCall> {
    let path = rust_std_path(name)?;
    let rest = path.strip_prefix("std::")?;
    let ends_with = |method: &&str| {
        rest.strip_suffix(*method)
            .is_some_and(|module| module.is_empty() || module.ends_with("::"))
    };
    if RUST_STD_RUNTIME_BOOKKEEPING.iter().any(ends_with) {
        Some(RuntimeCall::Quiet)
    } else if RUST_STD_RUNTIME_STEPS.iter().any(ends_with) {
        Some(RuntimeCall::Step)
    } else {
        None
    }
}

/// How a call of Rust std's runtime machinery runs (see
/// [`rust_std_runtime_function`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeCall {
    /// One step, with a scheduling point where it starts.
    Step,
    /// One step but no scheduling point.
    Quiet,
}

/// The function every instance of a module with shared memory runs first,
/// which initialises the memory once (the others wait for it).
pub const MEMORY_INITIALISATION: &str = "__wasm_init_memory";

/// Whether a call of the function named `name` (in the name section) is
/// the runtime's private bookkeeping, one step but no scheduling point
/// under [`crate::instrument::InstrumentOptions::quiet_bookkeeping`]: the
/// C library's allocator ([`super::functions::Object::Heap`]), a thread's
/// memory initialisation ([`MEMORY_INITIALISATION`]), and Rust std's
/// thread set-up ([`RUST_STD_THREAD_SETUP_METHODS`]).
pub fn is_quiet_bookkeeping_function(name: &str) -> bool {
    if name == MEMORY_INITIALISATION || super::functions::is_allocator(name) {
        return true;
    }
    rust_std_path(name)
        .is_some_and(|path| std_sys_method(&path, RUST_STD_THREAD_SETUP_METHODS).is_some())
}

/// Whether a call of the function named `name` (in the name section) is
/// one step under [`crate::abi::RT_LIBRARY_BEGIN`]: one of the C library's
/// that [`super::functions::C_FUNCTIONS`] marks as a step (locks,
/// condition variables, semaphores, barriers, thread creation, join and
/// exit, the allocator and stdio's output), or of Rust std's
/// ([`rust_std_library_step`]).
///
/// None of the C library's calls back into the program but through a
/// function pointer (the thread start function calls the thread's
/// routine so, and `pthread_exit` its cleanup handlers and destructors),
/// and a call through a function pointer ends the step (`pthread_once`,
/// whose routine is called directly, is no step), and none spins without
/// blocking on a futex (`pthread_spin_lock` does, and is no step), so a
/// step always ends.
pub fn is_library_step_function(name: &str) -> bool {
    super::functions::c_function(name).is_some_and(|f| f.step)
        || rust_std_library_step(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtimes_bookkeeping_is_known_by_name() {
        for name in [
            "malloc",
            "dlfree",
            "__wasm_init_memory",
            "std::sys::thread::unix::Thread::new::thread_start",
            "_ZN3std3sys6thread4unix6Thread3new12thread_start17h0123456789abcdefE",
            "std::sys::thread_local::guard::key::enable",
        ] {
            assert!(is_quiet_bookkeeping_function(name), "{name}");
        }
        for name in [
            "pthread_mutex_lock",
            "std::sys::thread::unix::Thread::new",
            "my_crate::Thread::new::thread_start",
            "main",
        ] {
            assert!(!is_quiet_bookkeeping_function(name), "{name}");
        }
    }

    #[test]
    fn rust_std_runtime_machinery_is_known_by_the_end_of_its_path() {
        let join = "_ZN3std6thread9lifecycle18JoinInner$LT$T$GT$4join17hf5f2433bc62a7f90E";
        assert_eq!(rust_std_runtime_function(join), Some(RuntimeCall::Step));
        // An older release's module path.
        assert_eq!(
            rust_std_runtime_function("std::thread::JoinInner<T>::join"),
            Some(RuntimeCall::Step)
        );
        let id = "_RNvMNtNtCs1cbpOjQgv0Q_3std6thread2idNtB2_8ThreadId3new";
        assert_eq!(rust_std_runtime_function(id), Some(RuntimeCall::Quiet));
        for (name, call) in [
            ("std::env::_var_os", RuntimeCall::Step),
            ("std::io::stdio::_print", RuntimeCall::Step),
            ("std::rt::lang_start_internal", RuntimeCall::Quiet),
            (
                "std::sys::thread_local::guard::key::enable::run",
                RuntimeCall::Quiet,
            ),
        ] {
            assert_eq!(rust_std_runtime_function(name), Some(call), "{name}");
        }
        // The key's creation is thread set-up already; a program's own
        // function of the same name is the program's.
        for name in [
            "std::sys::thread_local::guard::key::enable",
            "my_crate::ThreadId::new",
            "my_crate::std::io::stdio::_print",
            "std::io::stdio::_print_all",
            "std::thread::lifecycle::MyJoinInner::join",
        ] {
            assert_eq!(rust_std_runtime_function(name), None, "{name}");
        }
    }

    #[test]
    fn rust_std_steps_are_known_mangled_either_way_and_demangled() {
        let v0 = "_RNvMNtNtNtNtCs1cbpOjQgv0Q_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended";
        assert_eq!(rust_std_library_step(v0), Some("Mutex::lock_contended"));
        let legacy = "_ZN3std3sys4sync5mutex5futex5Mutex14lock_contended17h0123456789abcdefE";
        assert_eq!(rust_std_library_step(legacy), Some("Mutex::lock_contended"));
        // An older release's module path, demangled.
        let older = "std::sys::pal::unix::locks::futex_rwlock::RwLock::write_contended";
        assert_eq!(
            rust_std_library_step(older),
            Some("RwLock::write_contended")
        );
        assert_eq!(
            rust_std_library_step("std::sync::barrier::Barrier::wait"),
            Some("Barrier::wait")
        );
        // Another type's method of the same name, and a program's own.
        assert_eq!(
            rust_std_library_step("std::sys::sync::ReentrantMutex::lock"),
            None
        );
        assert_eq!(rust_std_library_step("my_crate::Mutex::lock"), None);
        // A channel's operations, generic over the message, either way.
        let legacy_send = "_ZN3std4sync4mpmc4list16Channel$LT$T$GT$4send17hbd449390e9b8c4d3E";
        assert_eq!(rust_std_library_step(legacy_send), Some("Channel::send"));
        assert_eq!(
            rust_std_library_step(
                "<std::sync::mpmc::zero::Channel<(u32, alloc::vec::Vec<u8>)>>::try_recv"
            ),
            Some("Channel::try_recv")
        );
        assert_eq!(
            rust_std_library_step("std::sync::mpmc::array::Channel<T>::recv"),
            Some("Channel::recv")
        );
        // Dropping the last receiver drops the messages left: not a step.
        assert_eq!(
            rust_std_library_step("std::sync::mpmc::list::Channel<T>::disconnect_receivers"),
            None
        );
        assert_eq!(
            rust_std_library_step("std::sync::mpmc::waker::Channel::send"),
            None
        );
        assert!(is_library_step_function(v0) && is_library_step_function("pthread_mutex_lock"));
        assert!(!is_library_step_function("main"));
    }
}
