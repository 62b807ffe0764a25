//! Analyses of executions beyond pass or fail.
//!
//! - [`patterns`]: the access patterns that break atomic-set
//!   serializability, and a matcher over one execution's accesses.
//! - [`asset_fuzzer`]: the search of `weft serializability`.
//! - [`potential`]: from profiling executions, the pattern instances that
//!   could happen under another schedule (AssetFuzzer's phase I).

pub mod asset_fuzzer;
pub mod patterns;
pub mod potential;
