//! Failures told in plain words, for people learning concurrency: "thread 1
//! read `balance` = 100 at bank.c:12; thread 2 read it too; ... so one
//! update was lost". What a library call does comes from the library model
//! ([`crate::library::operations`]).
//!
//! - [`recorder`]: the analysis that records what threads did to shared
//!   data, with values, and which library operations they performed.
//! - [`story`]: those facts told as sentences, with a conclusion naming the
//!   pattern behind the failure; `namer.rs` names threads, variables, locks
//!   and lines, and `patterns.rs` holds the detectors of the patterns (a
//!   lost update, a wait not checked again, reads across an update, an
//!   update seen half done, a cycle of locks).
//! - [`steps`]: the sentences told, with repetition folded and long
//!   stories shortened.
//! - [`retell`](mod@retell): runs a failing schedule again with the recorder.

mod namer;
mod patterns;
pub mod recorder;
pub mod retell;
pub mod steps;
pub mod story;

pub use retell::retell;
pub use story::Story;
