//! What the original module says about its source: function names from the
//! name section, `file:line` of code sites and global variables from DWARF.
//!
//! - [`bookkeeping`]: whether code is the program's or a library's.
//! - [`rust_symbols`]: Rust `std`'s own functions, by their symbols.
//! - [`symbols`]: names and source lines of code sites.
//! - [`variables`]: where a global variable (or one of its fields) lives.

pub mod bookkeeping;
pub mod rust_symbols;
pub mod symbols;
pub mod variables;
