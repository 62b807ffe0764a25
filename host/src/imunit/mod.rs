//! Schedule enforcement for multithreaded unit tests, after IMUnit
//! (Jagannath, Gligoric, Jin, Luo, Rosu and Marinov, "Improved Multithreaded
//! Unit Testing", ESEC/FSE 2011).
//!
//! - [`schedule`]: the schedule language (`a -> b`, `[a]@t -> b`, `&&`,
//!   `||`, parentheses, comma-separated orderings): its syntax tree and
//!   parser, with positioned errors.
//! - [`monitor`]: which orderings an event waits for and whether they hold.
//! - [`guard`]: the analysis that holds threads at events (active mode) or
//!   reports an event that came too early (passive mode).
//! - [`tests_in_module`]: how `weft test` lists a module's tests.
//! - [`infer`]: events and schedules inferred from sleep-based tests.
//! - [`driver`]: one test under one schedule, with the checks that need
//!   every execution.

pub(crate) mod driver;
pub mod guard;
pub(crate) mod infer;
pub(crate) mod monitor;
pub(crate) mod schedule;
pub(crate) mod tests_in_module;
