//! Coverage-guided generation of concurrent tests for thread-safe classes,
//! after CovCon (Choudhary, Lu and Pradel, ICSE 2017).
//!
//! A class is a module's exports `<prefix>_new` (returns a handle) and
//! `<prefix>_<method>(handle, ...)`; the module's `main` runs the SDK's test
//! driver (`weft_guest::class::serve`). A generated test is a prefix run by
//! the main thread and two suffixes run by two threads.
//!
//! - [`class`]: finding the class in the exports.
//! - [`plan`]: tests, how the driver is told them, what it reports.
//! - [`coverage`]: concurrent method pairs, tried and covered counts, and
//!   the prioritised choice of the next pair.
//! - [`generate`]: tests for a pair (or, for the baseline, at random).
//! - [`probe`]: which methods change the state (prefixes call those).
//! - [`oracle`]: linearizations, run sequentially.
//! - [`driver`]: the loop.
//! - [`class_calls`]: the analysis behind `weft.gen_call`, through which the
//!   driver calls the class's methods.

pub mod class;
pub mod class_calls;
pub mod coverage;
pub mod driver;
pub mod generate;
pub mod oracle;
pub mod plan;
pub mod probe;
