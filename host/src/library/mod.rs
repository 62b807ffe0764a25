//! The library model: what the functions of the libraries a guest links
//! (the C library, wasi-libc; the C++ library, libc++; Rust's standard
//! library) mean for concurrency, as every part of weft asks it.
//!
//! - [`functions`]: the C library's functions that mean something for
//!   concurrency, in one table: the object each acts on and how (as POSIX
//!   and C11 specify it), whether it may block, whether its calls are
//!   steps of the exhaustive search, what it touches of its caller's
//!   memory; the modules below read it.
//! - [`sources`]: whose code an instruction is (the program's, a library's
//!   own state, a library's private state), by source file or function
//!   name: what the race check leaves out and what it checks as the
//!   caller's.
//! - [`c_functions`]: the C library's functions by name, for code without
//!   DWARF.
//! - [`operations`]: the synchronisation a call performs, as a story tells
//!   it (lock, unlock, wait on a condition, join, ...).
//! - [`roles`]: the role of a call in the order of the exhaustive search's
//!   steps, and which of the library's own operations inside a step are
//!   its private bookkeeping.
//! - [`steps`]: which calls are one step each of the exhaustive search.
//! - [`caller_memory`] (with [`printf`]): which memory a call reads or
//!   writes on its caller's behalf, which the race check takes as the
//!   caller's accesses at the call.

pub(crate) mod c_functions;
pub mod caller_memory;
pub mod functions;
pub mod operations;
pub mod printf;
pub mod roles;
pub mod sources;
pub mod steps;

pub use sources::Owner;
