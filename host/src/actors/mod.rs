//! Coverage-guided schedule generation for actor programs, after Bita
//! (Tasharofi, Pradel, Lin and Johnson, ASE 2013).
//!
//! The guest's actors run in weft's [`mailboxes`] (an analysis whose SDK
//! imports, in `imports`, are the `weft.actor_*` calls), which record
//! every receive with a hash that identifies it across executions. From one
//! execution's receives:
//! - [`criteria`]: which pairs of receives the coverage criteria (PR, PCR,
//!   PBR) relate, and which orderings an execution achieves;
//! - [`mhb`]: the must-happen-before relation (causality and per-sender
//!   FIFO, transitively closed);
//! - [`generate`]: new schedules that achieve orderings not covered yet;
//! - [`agenda`]: which generated schedule runs next, or a free execution;
//! - [`driver`]: the loop that runs them (or random deliveries), with the
//!   coverage as it grows;
//! - [`chart`]: a failing execution as a text message sequence chart.

pub(crate) mod agenda;
pub(crate) mod chart;
pub(crate) mod criteria;
pub(crate) mod driver;
pub(crate) mod generate;
pub(crate) mod imports;
pub mod mailboxes;
pub(crate) mod mhb;
