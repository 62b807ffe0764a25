//! Data races: happens-before race detection over plain accesses to
//! shared memory ([`detector`], after FastTrack), on the vector clocks of
//! [`crate::trace::clock`].

pub mod detector;

pub use detector::{Detector, Race, RacingAccess};
