//! Whose code an instruction is, told by the source files DWARF names for
//! its frames (innermost first), or for code without DWARF by the name of
//! the function that holds it (see [`super::c_functions`]).
//!
//! - The C library (wasi-libc) and the support files weft links into every
//!   C program: the library's own code, but the functions that work on
//!   memory their caller passes ([`CALLER_MEMORY`]: `string.h`, sorting,
//!   parsing numbers, ...), whose accesses are the caller's.
//! - Of that, the allocator and thread-specific data are the library's
//!   private state.
//! - The C++ library (libc++, libc++abi): code compiled into the library
//!   (`libcxx/src/`), and what the headers of its streams, locales, threads,
//!   locks and futures inline into a program; the containers and
//!   algorithms a program instantiates from the other headers work on the
//!   program's own objects and stay the program's.
//! - Rust's standard library: the function that holds the code is `std`'s,
//!   and every function inlined into it is `std`'s, `core`'s or `alloc`'s
//!   (a closure of the program inlined into `std` is the program's).

/// Whose code an instruction is, for the race check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The program's (or unknown: no DWARF, no name the model knows).
    Program,
    /// A library's own code (the C library's stdio, thread library,
    /// environment, ...; the C++ library's streams and threads): its plain
    /// accesses are the library's state and are not checked for races, but
    /// one to a word the program or the library accesses atomically
    /// synchronises as that atomic access would (musl releases some locks
    /// with a plain store between two fences, and reads lock words and
    /// thread states with plain loads).
    Library,
    /// A library's private state (the C allocator's, thread-specific
    /// data's, Rust `std`'s own functions'): never synchronises, and is not
    /// even logged.
    Private,
}

/// Where wasi-libc's files are, as its DWARF spells them (after
/// `debuginfo::symbols` shortened the paths).
const WASI_LIBC: &str = "wasi-libc/";

/// The files weft links into every C program, beside the C library, that
/// are library code: `pthread_exit` and cleanup handlers, signal names, the
/// stack protector.
const WEFT_C_SUPPORT: [&str; 3] = ["weft_pthread.c", "weft_signal.c", "weft_ssp.c"];

/// Folders of wasi-libc whose functions work on memory their caller passes
/// and keep no state of their own that threads share: their accesses are
/// checked as the program's (as ThreadSanitizer's interceptors check the
/// ranges `memcpy`, `strlen` or `qsort` touch).
pub const CALLER_MEMORY: [&str; 9] = [
    "musl/src/string/",
    "musl/src/stdlib/",
    "musl/src/multibyte/",
    "musl/src/ctype/",
    "musl/src/math/",
    "musl/src/complex/",
    "musl/src/regex/",
    "musl/src/search/",
    "libc-bottom-half/sources/math/",
];

/// Files of wasi-libc that are its private state: the allocator, and the
/// tables of thread-specific data (a lock, whose accesses are the thread
/// library's, guards them, or one thread owns them).
const C_PRIVATE: [&str; 4] = [
    "wasi-libc/dlmalloc/",
    "wasi-libc/libc-top-half/musl/src/thread/pthread_key_create.c",
    "wasi-libc/libc-top-half/musl/src/thread/pthread_getspecific.c",
    "wasi-libc/libc-top-half/musl/src/thread/pthread_setspecific.c",
];

/// Where the C++ library's compiled code is.
const CXX_COMPILED: [&str; 2] = ["libcxx/src/", "libcxxabi/"];

/// The C++ library's headers whose inline code is the library's own state
/// when a program inlines it: the standard streams and their locales,
/// threads, locks, condition variables, futures, shared pointers' counts.
const CXX_LIBRARY_HEADERS: [&str; 22] = [
    "libcxx/include/ostream",
    "libcxx/include/__ostream/",
    "libcxx/include/istream",
    "libcxx/include/__istream/",
    "libcxx/include/ios",
    "libcxx/include/__ios/",
    "libcxx/include/iostream",
    "libcxx/include/streambuf",
    "libcxx/include/locale",
    "libcxx/include/__locale",
    "libcxx/include/__locale_dir/",
    "libcxx/include/thread",
    "libcxx/include/__thread/",
    "libcxx/include/mutex",
    "libcxx/include/__mutex/",
    "libcxx/include/condition_variable",
    "libcxx/include/__condition_variable/",
    "libcxx/include/future",
    "libcxx/include/shared_mutex",
    "libcxx/include/semaphore",
    "libcxx/include/latch",
    "libcxx/include/barrier",
];

/// Where Rust's standard library's own functions are.
const RUST_STD: &str = "library/std/src/";

/// Where the code Rust's standard library inlines is.
const RUST_LIBRARIES: [&str; 3] = [RUST_STD, "library/core/src/", "library/alloc/src/"];

impl Owner {
    /// The owner of code whose frames (innermost first, the function that
    /// holds the code last) are in `files`.
    pub fn of_files(files: &[&str]) -> Owner {
        let Some(innermost) = files.first() else {
            return Owner::Program;
        };
        let holder = files.last().copied().unwrap_or_default();
        let rust_std = holder.starts_with(RUST_STD)
            && files.iter().all(|file| {
                RUST_LIBRARIES
                    .iter()
                    .any(|library| file.starts_with(library))
            });
        if rust_std || C_PRIVATE.iter().any(|path| innermost.contains(path)) {
            Owner::Private
        } else if is_c_library(innermost) || is_cxx_library(innermost, holder, files) {
            Owner::Library
        } else {
            Owner::Program
        }
    }

    /// The owner of the code of the function named `name` (as the name
    /// section has it), for code DWARF does not describe. Rust's `std` is
    /// not told by its demangled name (a generic function of `std` the
    /// program instantiated holds the program's closures and types), but
    /// by its symbol, which the caller asks first.
    pub fn of_function(name: &str) -> Owner {
        let listed = |names: &[&str]| names.binary_search(&name).is_ok();
        if listed(super::c_functions::PRIVATE) {
            Owner::Private
        } else if listed(super::c_functions::LIBRARY) || is_cxx_library_function(name) {
            Owner::Library
        } else {
            Owner::Program
        }
    }
}

/// The C++ library's namespaces, in demangled names (libc++ puts its
/// names in an inline namespace).
const CXX_NAMESPACES: [&str; 3] = ["std::__1::", "std::__2::", "__cxxabiv1::"];

/// What the names of the C++ library's own machinery hold, once template
/// arguments and parameters are left out: the streams and their locales,
/// threads, locks, condition variables, futures, shared pointers' counts.
const CXX_LIBRARY_NAMES: [&str; 24] = [
    "basic_ostream",
    "basic_istream",
    "basic_iostream",
    "basic_ios",
    "ios_base",
    "basic_streambuf",
    "basic_filebuf",
    "__stdoutbuf",
    "__stdinbuf",
    "locale",
    "ctype",
    "num_put",
    "num_get",
    "numpunct",
    "codecvt",
    "thread",
    "mutex",
    "condition_variable",
    "__assoc_",
    "future",
    "promise",
    "call_once",
    "__shared_count",
    "__shared_weak_count",
];

/// Whether the function with the demangled `name` is the C++ library's
/// own machinery (for code without DWARF): a name in its namespaces whose
/// path or return type (template arguments left out, so that a program's
/// `std::vector<std::thread>` stays the program's) names its streams,
/// threads, locks or futures, or a function of its run-time support
/// (`__cxa_*`).
fn is_cxx_library_function(name: &str) -> bool {
    if name.starts_with("__cxa_") {
        return true;
    }
    if !CXX_NAMESPACES
        .iter()
        .any(|namespace| name.contains(namespace))
    {
        return false;
    }
    let generic_free = super::steps::without_generics(name);
    let path = generic_free.split('(').next().unwrap_or_default();
    CXX_LIBRARY_NAMES
        .iter()
        .any(|fragment| path.contains(fragment))
        && !CXX_CALLS_THE_PROGRAM
            .iter()
            .any(|fragment| path.contains(fragment))
}

/// The C++ library's functions that call what the program gives them (a
/// thread's or a task's callable), which an optimiser inlines into them:
/// their code may be the program's.
const CXX_CALLS_THE_PROGRAM: [&str; 4] = [
    "__thread_proxy",
    "__thread_execute",
    "__async_func",
    "__deferred_assoc_state",
];

/// Whether the innermost frame's `file` is the C library's own code.
fn is_c_library(file: &str) -> bool {
    if WEFT_C_SUPPORT.iter().any(|name| file.ends_with(name)) {
        return true;
    }
    let Some(at) = file.find(WASI_LIBC) else {
        return false;
    };
    let inside = &file[at + WASI_LIBC.len()..];
    !CALLER_MEMORY.iter().any(|folder| inside.contains(folder))
}

/// Whether code whose innermost frame is in `innermost` and whose holder is
/// in `holder` (all its frames `files`) is the C++ library's own.
fn is_cxx_library(innermost: &str, holder: &str, files: &[&str]) -> bool {
    let in_library = |file: &str| file.contains("libcxx/") || file.contains("libcxxabi/");
    let compiled = |file: &str| CXX_COMPILED.iter().any(|path| file.contains(path));
    compiled(innermost)
        || CXX_LIBRARY_HEADERS
            .iter()
            .any(|header| innermost.contains(header))
        || (compiled(holder) && files.iter().all(|file| in_library(file)))
}

#[cfg(test)]
mod tests {
    use super::Owner;

    #[test]
    fn the_owner_is_told_by_the_frames_files() {
        let cases: [(&[&str], Owner); 16] = [
            (&["wasi-libc/dlmalloc/src/malloc.c"], Owner::Private),
            (
                &[
                    "wasi-libc/libc-top-half/musl/src/internal/atomic.h",
                    "samples/x/main.c",
                ],
                Owner::Library,
            ),
            (
                &["wasi-libc/libc-top-half/musl/src/thread/__lock.c"],
                Owner::Library,
            ),
            (
                &["wasi-libc/libc-top-half/musl/src/stdio/vfprintf.c"],
                Owner::Library,
            ),
            (
                &["wasi-libc/libc-top-half/musl/src/thread/pthread_key_create.c"],
                Owner::Private,
            ),
            // Work on the caller's memory is the caller's.
            (
                &["wasi-libc/libc-top-half/musl/src/string/strlen.c"],
                Owner::Program,
            ),
            (
                &["wasi-libc/libc-top-half/musl/src/stdlib/qsort.c"],
                Owner::Program,
            ),
            (&["guest-sdk/c/weft_pthread.c"], Owner::Library),
            (&["samples/x/main.c"], Owner::Program),
            // std's own function, with core inlined into it.
            (
                &[
                    "library/core/src/cell.rs",
                    "library/std/src/thread/local.rs",
                ],
                Owner::Private,
            ),
            // core inlined into the program, or the program's closure into
            // std.
            (
                &["library/core/src/cell.rs", "samples/x/src/main.rs"],
                Owner::Program,
            ),
            (
                &["samples/x/src/main.rs", "library/std/src/sync/once_lock.rs"],
                Owner::Program,
            ),
            // alloc's own function (a `Vec` of the program's).
            (&["library/alloc/src/vec/mod.rs"], Owner::Program),
            // A stream's state, inlined into the program; a vector's is the
            // program's.
            (
                &["libcxx/include/__ostream/basic_ostream.h", "x/main.cpp"],
                Owner::Library,
            ),
            (
                &["libcxx/include/__vector/vector.h", "x/main.cpp"],
                Owner::Program,
            ),
            (&[], Owner::Program),
        ];
        for (files, owner) in cases {
            assert_eq!(Owner::of_files(files), owner, "{files:?}");
        }
    }

    #[test]
    fn without_dwarf_the_owner_is_told_by_the_function_name() {
        assert_eq!(Owner::of_function("dlfree"), Owner::Private);
        assert_eq!(Owner::of_function("calloc"), Owner::Private);
        assert_eq!(Owner::of_function("pthread_setspecific"), Owner::Private);
        assert_eq!(Owner::of_function("__pthread_mutex_lock"), Owner::Library);
        assert_eq!(Owner::of_function("__wait"), Owner::Library);
        assert_eq!(Owner::of_function("vfprintf"), Owner::Library);
        assert_eq!(Owner::of_function("__lockfile"), Owner::Library);
        assert_eq!(Owner::of_function("getenv"), Owner::Library);
        assert_eq!(Owner::of_function("strlen"), Owner::Program);
        assert_eq!(Owner::of_function("memcpy"), Owner::Program);
        assert_eq!(Owner::of_function("qsort"), Owner::Program);
        // The C++ library's machinery, and a program's use of a container.
        for library in [
            "std::__1::__assoc_sub_state::__sub_wait(std::__1::unique_lock<std::__1::mutex>&)",
            "void std::__1::__assoc_state<int>::set_value<int>(int&&)",
            "std::__1::basic_ostream<char, std::__1::char_traits<char>>& std::__1::operator<<<std::__1::char_traits<char>>(std::__1::basic_ostream<char, std::__1::char_traits<char>>&, char const*)",
            "std::__1::mutex::lock()",
            "__cxa_guard_acquire",
        ] {
            assert_eq!(Owner::of_function(library), Owner::Library, "{library}");
        }
        assert_eq!(
            Owner::of_function(
                "std::__1::vector<std::__1::thread, std::__1::allocator<std::__1::thread>>::push_back(std::__1::thread&&)"
            ),
            Owner::Program
        );
        assert_eq!(
            Owner::of_function(
                "void* std::__1::__thread_proxy<std::__1::tuple<void (*)()>>(void*)"
            ),
            Owner::Program
        );
        assert_eq!(Owner::of_function("cleanup"), Owner::Program);
        assert_eq!(Owner::of_function("worker"), Owner::Program);
    }

    #[test]
    fn the_name_lists_are_sorted_for_binary_search() {
        for names in [
            super::super::c_functions::PRIVATE,
            super::super::c_functions::LIBRARY,
            super::super::c_functions::THREAD_LIFECYCLE,
        ] {
            assert!(names.windows(2).all(|pair| pair[0] < pair[1]));
        }
    }
}
