//! weft runs WebAssembly programs with shared-memory threads under a host
//! that owns every thread switch, so that every execution is reproducible
//! from its list of scheduling decisions.
//!
//! The pieces, from the bottom layer up (`ARCHITECTURE.md` is the map):
//! - [`instrument`]: rewrites a module so every scheduling point calls the host.
//! - [`trace`]: events and trace hashes; [`debuginfo`]: names and source lines.
//! - [`sched`]: the [`sched::Scheduler`] trait and the strategies (random,
//!   PCT, replay); [`failure`]: the failure kinds users see.
//! - [`runtime`]: runs one execution under a scheduler, with the
//!   [`runtime::Analysis`]es a command installs.
//! - The techniques, each an analysis and a driver: [`activity`] (what
//!   threads did), [`serializability`] (atomic sets, AssetFuzzer), [`imunit`]
//!   (schedules for unit tests), [`actors`] (Bita), [`testgen`] (CovCon).
//! - [`race`]: happens-before data-race detection; [`svcomp`]: verification
//!   properties and verdicts.
//! - [`execution`]: everything besides the schedule that makes an execution,
//!   and the analyses it installs.
//! - [`explore`]: many executions until a failure; [`replay`]: one again,
//!   from a replay file.
//! - [`report`]: the failing interleaving for people; [`cli`]: the commands.
//!
//! The public API is [`Check`] and the layers a Rust user drives directly
//! ([`instrument`], [`sched`], [`runtime`], [`execution`], [`explore`],
//! [`race`], [`failure`], the [`imunit`] schedules a [`execution::Setup`]
//! names, and [`heap`] for a process that runs many executions); the rest
//! is the crate's own. [`fuzzing`] is public only for the
//! fuzz targets in `fuzz/` and the test suite.
//!
//! # Examples
//!
//! From a Rust test, [`Check`] runs `weft explore` on a module and its
//! `assert_passed` fails the test with weft's report (see [`check`]
//! for a worked example). The layers below it can be driven directly, for
//! example to explore a module built in the test and assert on the outcome:
//!
//! ```
//! # fn main() -> anyhow::Result<()> {
//! use weft::explore::{explore, ExploreOptions};
//! use weft::runtime::{FailureKind, Program};
//! use weft::sched::Strategy;
//!
//! // Two threads increment a shared counter with a separate load and store.
//! let wasm = wat::parse_str(r#"(module
//!   (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
//!   (memory (export "memory") 1 1 shared)
//!   (func $bump
//!     (i32.atomic.store (i32.const 0) (i32.add (i32.atomic.load (i32.const 0)) (i32.const 1)))
//!     (drop (i32.atomic.rmw.add (i32.const 4) (i32.const 1)))
//!     (drop (memory.atomic.notify (i32.const 4) (i32.const 1))))
//!   (func (export "wasi_thread_start") (param i32 i32) (call $bump))
//!   (func (export "_start")
//!     (drop (call $spawn (i32.const 0)))
//!     (call $bump)
//!     (block $done (loop $wait
//!       (br_if $done (i32.eq (i32.atomic.load (i32.const 4)) (i32.const 2)))
//!       (drop (memory.atomic.wait32 (i32.const 4) (i32.const 1) (i64.const -1)))
//!       (br $wait)))
//!     (if (i32.ne (i32.atomic.load (i32.const 0)) (i32.const 2)) (then unreachable))))"#)?;
//! let mut program = Program::load(&wasm, Default::default())?;
//! let options = ExploreOptions { strategy: Strategy::Random, iterations: Some(200), ..Default::default() };
//! let exploration = explore(&mut program, &options, |_| {})?;
//! let found = exploration.failure.expect("the lost update is found");
//! assert_eq!(found.failure.kind, FailureKind::Assertion);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
// The documentation is read with `--document-private-items` (`./x lint`
// builds it so): the public items' docs may point at the crate-internal
// ones that explain them.
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod abi;
pub(crate) mod activity;
pub(crate) mod actors;
pub(crate) mod bench;
pub(crate) mod budget;
pub(crate) mod build;
pub mod check;
pub use check::{Check, Checked};
pub(crate) mod classroom;
mod cli;
pub use cli::main;
pub(crate) mod debuginfo;
pub mod execution;
pub(crate) mod explain;
pub mod explore;
pub(crate) mod explore_program;
pub mod failure;
#[doc(hidden)]
pub mod fuzzing;
pub mod heap;
pub mod imunit;
pub(crate) mod input;
pub mod instrument;
#[cfg(test)]
mod layering;
pub(crate) mod library;
pub(crate) mod output_paths;
pub mod race;
pub(crate) mod replay;
pub(crate) mod report;
pub mod runtime;
pub mod sched;
pub(crate) mod serializability;
pub(crate) mod svcomp;
pub(crate) mod testgen;
pub(crate) mod trace;
pub(crate) mod user_folders;
