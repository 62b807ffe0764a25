//! weft runs WebAssembly programs with shared-memory threads under a host
//! that owns every thread switch, so that every execution is reproducible
//! from its list of scheduling decisions.
#![deny(missing_docs)]

pub mod abi;
pub mod instrument;
pub mod runtime;
pub mod sched;
pub mod trace;
