//! Data races: happens-before race detection over plain accesses to
//! shared memory ([`detector`], after FastTrack), on the vector clocks of
//! [`clock`].

pub mod clock;
pub mod detector;

pub use detector::{Detector, Race, RacingAccess};
