//! Data races: happens-before race detection over plain accesses to
//! shared memory ([`detector`], after FastTrack), on the vector clocks of
//! [`crate::trace::clock`], installed in executions as the [`check`]
//! analysis.

pub(crate) mod check;
pub(crate) mod detector;
mod library;
mod shadow;
mod slots;

pub use check::{RaceCheck, RaceReport};
pub use detector::RacingAccess;
use serde::{Deserialize, Serialize};

/// What weft does about data races.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum RaceMode {
    /// Races are not looked for.
    #[default]
    Off,
    /// A race is a failure (`data-race`).
    Fail,
    /// Races are not failures, but the plain accesses that raced become
    /// scheduling points in later executions, so that bugs that need a
    /// thread switch between two plain accesses are found.
    Schedule,
}
