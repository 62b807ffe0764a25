//! The library model: what the functions of the libraries a guest links
//! (the C library, wasi-libc; the C++ library, libc++; Rust's standard
//! library) mean for concurrency, as every part of weft asks it.
//!
//! - [`sources`]: whose code an instruction is (the program's, a library's
//!   own state, a library's private state), by source file or function
//!   name: what the race check leaves out and what it checks as the
//!   caller's.
//! - [`c_functions`]: the C library's functions by name, for code without
//!   DWARF.

pub(crate) mod c_functions;
pub mod sources;

pub use sources::Owner;
