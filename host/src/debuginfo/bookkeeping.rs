//! Whose code an instruction is: the program's, or a language runtime's own
//! bookkeeping, told by the source files DWARF names for its frames, or
//! where the module has no DWARF for the code (a release build), by the
//! function that holds it: its name (see [`super::libc_functions`]) or its
//! Rust symbol (see [`super::rust_symbols`]).
//!
//! - The C library's thread library (threads, locks, thread-specific data)
//!   and atomics helpers: the innermost frame is in one of their files.
//!   Some of their plain accesses synchronise: musl releases some locks
//!   with a plain store between two fences, and spins on plain loads.
//! - The C library's allocator and thread-specific data: the innermost
//!   frame is in their files.
//! - The Rust standard library's own code: the function that holds the
//!   code is `std`'s, and every function inlined into it is `std`'s,
//!   `core`'s or `alloc`'s (none is the program's: a closure of the program
//!   inlined into `std` is the program's). `std` synchronises with atomics
//!   only.
//!
//! The race check does not check a runtime's plain accesses, as TSan does
//! not instrument the C library (nor Rust's `std` unless it is rebuilt):
//! they are the runtime's internal state (block headers read outside the
//! lock by design, every thread-specific key visited when a thread exits,
//! the packet of a spawned thread, stdout's buffer).

use super::libc_functions;
use super::symbols::Symbols;

/// Source paths of the C library's thread library and atomics helpers, as
/// wasi-libc's DWARF spells them.
const LIBC_THREADS: [&str; 3] = [
    "wasi-libc/libc-top-half/musl/src/thread/",
    "wasi-libc/libc-top-half/musl/src/internal/atomic.h",
    // What weft's C SDK adds to them (`pthread_exit`, cleanup handlers).
    "weft_pthread.c",
];

/// Source paths of the C library's allocator, and of its thread-specific
/// data: tables a lock (whose accesses are the thread library's) guards, or
/// that one thread owns; their plain accesses never synchronise.
const LIBC_PRIVATE: [&str; 4] = [
    "wasi-libc/dlmalloc/",
    "wasi-libc/libc-top-half/musl/src/thread/pthread_key_create.c",
    "wasi-libc/libc-top-half/musl/src/thread/pthread_getspecific.c",
    "wasi-libc/libc-top-half/musl/src/thread/pthread_setspecific.c",
];

/// Where Rust's standard library's own functions are, as DWARF names them
/// (after [`crate::debuginfo::symbols`] shortened the paths).
const RUST_STD: &str = "library/std/src/";

/// Where the code Rust's standard library inlines is.
const RUST_LIBRARIES: [&str; 3] = [RUST_STD, "library/core/src/", "library/alloc/src/"];

/// Whose code an instruction is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The program's (or unknown: no DWARF).
    Program,
    /// The C library's thread library or atomics helpers: a plain access
    /// may synchronise.
    ThreadLibrary,
    /// The C library's allocator or thread-specific data, or Rust's `std`:
    /// a plain access is the runtime's private state, and never
    /// synchronises.
    Runtime,
}

impl Owner {
    /// The owner of code whose frames (innermost first) are in `files`.
    pub fn of_files(files: &[&str]) -> Owner {
        let innermost_in = |sources: &[&str]| {
            files
                .first()
                .is_some_and(|file| sources.iter().any(|source| file.contains(source)))
        };
        let std = files.last().is_some_and(|file| file.starts_with(RUST_STD))
            && files.iter().all(|file| {
                RUST_LIBRARIES
                    .iter()
                    .any(|library| file.starts_with(library))
            });
        if std || innermost_in(&LIBC_PRIVATE) {
            Owner::Runtime
        } else if innermost_in(&LIBC_THREADS) {
            Owner::ThreadLibrary
        } else {
            Owner::Program
        }
    }

    /// The owner of the code of function `name` (as the name section has
    /// it, demangled), for code DWARF does not describe. Rust's `std` is
    /// not told apart by its demangled name: a generic function of `std`
    /// the program instantiated holds the program's closures and types,
    /// with no trace in the name. Its symbol tells (see [`Owner::at`]);
    /// what it leaves to the program is checked, which costs time but
    /// reports no false race (`std` synchronises with atomics only).
    pub fn of_function(name: &str) -> Owner {
        let listed = |names: &[&str]| names.binary_search(&name).is_ok();
        if listed(libc_functions::PRIVATE) {
            Owner::Runtime
        } else if listed(libc_functions::THREAD_LIBRARY) {
            Owner::ThreadLibrary
        } else {
            Owner::Program
        }
    }

    /// The owner of the code at `code_offset` in `symbols`' module. A
    /// function the name section names as the C library's is the
    /// library's whatever DWARF says of its code: its line rows may be
    /// missing and another unit's claimed (musl's `pthread_once` fast path,
    /// told as weft's own `weft_pthread.c`).
    pub fn at(symbols: &Symbols, code_offset: u32) -> Owner {
        let named = symbols
            .function_at(code_offset)
            .map_or(Owner::Program, Owner::of_function);
        if named != Owner::Program {
            return named;
        }
        let frames = symbols.frames(code_offset);
        if frames.is_empty() {
            // No DWARF for the code: what its function's symbol says.
            return if symbols.rust_std_function_at(code_offset) {
                Owner::Runtime
            } else {
                named
            };
        }
        let files: Vec<&str> = frames
            .iter()
            .map(|frame| frame.file.as_deref().unwrap_or(""))
            .collect();
        Owner::of_files(&files)
    }
}

/// Fewest functions a module that links a C library's allocator and thread
/// library defines (dlmalloc and pthreads alone are dozens).
const LINKS_A_LIBRARY: usize = 50;

/// Whether `wasm` says whose its code is: it has DWARF or a name section,
/// or it is too small to hold a language runtime (a hand-written module).
/// Otherwise the race check takes the runtime's bookkeeping for the
/// program's and may report races inside the allocator.
pub fn owners_known(wasm: &[u8]) -> bool {
    let mut functions = 0;
    for payload in wasmparser::Parser::new(0).parse_all(wasm).flatten() {
        match payload {
            wasmparser::Payload::CustomSection(section)
                if section.name() == "name" || section.name() == ".debug_info" =>
            {
                return true;
            }
            wasmparser::Payload::CodeSectionEntry(_) => functions += 1,
            _ => {}
        }
    }
    functions < LINKS_A_LIBRARY
}

#[cfg(test)]
mod tests {
    use super::Owner;

    #[test]
    fn the_owner_is_told_by_the_frames_files() {
        assert_eq!(
            Owner::of_files(&["wasi-libc/dlmalloc/src/malloc.c"]),
            Owner::Runtime
        );
        assert_eq!(
            Owner::of_files(&[
                "wasi-libc/libc-top-half/musl/src/internal/atomic.h",
                "samples/x/main.c",
            ]),
            Owner::ThreadLibrary
        );
        assert_eq!(
            Owner::of_files(&["wasi-libc/libc-top-half/musl/src/thread/__lock.c"]),
            Owner::ThreadLibrary
        );
        assert_eq!(
            Owner::of_files(&["wasi-libc/libc-top-half/musl/src/thread/pthread_key_create.c"]),
            Owner::Runtime
        );
        assert_eq!(Owner::of_files(&["samples/x/main.c"]), Owner::Program);
        // std's own function, with core inlined into it.
        assert_eq!(
            Owner::of_files(&[
                "library/core/src/cell.rs",
                "library/std/src/thread/local.rs"
            ]),
            Owner::Runtime
        );
        // core inlined into the program, or the program's closure into std.
        assert_eq!(
            Owner::of_files(&["library/core/src/cell.rs", "samples/x/src/main.rs"]),
            Owner::Program
        );
        assert_eq!(
            Owner::of_files(&["samples/x/src/main.rs", "library/std/src/sync/once_lock.rs"]),
            Owner::Program
        );
        // alloc's own function (a `Vec` of the program's): the program's.
        assert_eq!(
            Owner::of_files(&["library/alloc/src/vec/mod.rs"]),
            Owner::Program
        );
        assert_eq!(Owner::of_files(&[]), Owner::Program);
    }

    #[test]
    fn without_dwarf_the_owner_is_told_by_the_function_name() {
        assert_eq!(Owner::of_function("dlfree"), Owner::Runtime);
        assert_eq!(Owner::of_function("calloc"), Owner::Runtime);
        assert_eq!(Owner::of_function("pthread_setspecific"), Owner::Runtime);
        assert_eq!(
            Owner::of_function("__pthread_mutex_lock"),
            Owner::ThreadLibrary
        );
        assert_eq!(Owner::of_function("__wait"), Owner::ThreadLibrary);
        assert_eq!(Owner::of_function("cleanup"), Owner::Program);
        assert_eq!(Owner::of_function("worker"), Owner::Program);
    }

    #[test]
    fn the_name_lists_are_sorted_for_binary_search() {
        for names in [
            super::libc_functions::PRIVATE,
            super::libc_functions::THREAD_LIBRARY,
        ] {
            assert!(names.windows(2).all(|pair| pair[0] < pair[1]));
        }
    }
}
