//! Whose code an instruction is in a module: the library model's rules
//! (see [`crate::library::sources`]) applied to the frames DWARF gives for
//! the code, or where the module has no DWARF for it (a release build), to
//! the function that holds it: its name, or its Rust symbol (see
//! [`super::rust_symbols`]).
//!
//! The race check does not check a library's plain accesses, as TSan does
//! not instrument the C library (nor Rust's `std` unless it is rebuilt):
//! they are the library's internal state (block headers read outside the
//! lock by design, every thread-specific key visited when a thread exits,
//! the packet of a spawned thread, stdout's buffer and lock word).

use super::symbols::Symbols;
use crate::library::Owner;

/// The owner of the code at `code_offset` in `symbols`' module. A
/// function the name section names as the C library's is the
/// library's whatever DWARF says of its code: its line rows may be
/// missing and another unit's claimed (musl's `pthread_once` fast path,
/// told as weft's own `weft_pthread.c`).
pub fn owner_at(symbols: &Symbols, code_offset: u32) -> Owner {
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
            Owner::Private
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
