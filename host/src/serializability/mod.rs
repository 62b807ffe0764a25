//! Atomic-set serializability checking, after AssetFuzzer (Lai, Cheung and
//! Chan, ICSE 2010).
//!
//! - [`atomic_sets`]: the analysis that records accesses to atomic sets
//!   with their units of work, locks and vector clocks, and its SDK imports.
//! - [`patterns`]: the access patterns that break atomic-set
//!   serializability, and a matcher over one execution's accesses.
//! - [`asset_scheduler`]: AssetFuzzer's active scheduler, aiming at one
//!   potential atomic-set violation.
//! - [`driver`]: the search of `weft serializability`.
//! - [`potential`]: from profiling executions, the pattern instances that
//!   could happen under another schedule (AssetFuzzer's phase I).
//! - [`units`]: units of work named from outside the guest, as call sites.

pub(crate) mod asset_scheduler;
pub mod atomic_sets;
pub(crate) mod driver;
pub(crate) mod patterns;
pub(crate) mod potential;
pub(crate) mod units;
