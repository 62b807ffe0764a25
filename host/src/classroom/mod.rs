//! Classroom exercises: a folder with a statement, starter code, a
//! reference solution and typical wrong solutions, and what a solution
//! must have ([`exercise`]); `weft grade` explores a student's program
//! against it and tells a failure in plain words ([`crate::explain`]).

pub mod at_once;
pub mod driver;
pub mod exercise;

pub use exercise::Exercise;
