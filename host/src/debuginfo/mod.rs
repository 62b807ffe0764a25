//! What the original module says about its source: function names from the
//! name section, `file:line` of code sites and global variables from DWARF.
//!
//! - [`bookkeeping`]: whether code is the program's or a runtime's.
//! - [`symbols`]: names and source lines of code sites.
//! - [`variables`]: where a global variable (or one of its fields) lives.

pub mod bookkeeping;
pub mod symbols;
pub mod variables;
