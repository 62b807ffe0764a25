//! The semantics of SV-COMP verification tasks: a property says what counts
//! as the program's failure ([`Property::error_called`],
//! [`Property::judge`]), and an exploration ends in a verdict as
//! verification tools print it ([`Verdict`]).
//!
//! Under `unreach-call` only a call of `reach_error()` (or
//! `__VERIFIER_error()`) is a failure; `abort()` (a failed `assert`
//! included, unless `reach_error` made it) and a false assumption only cut
//! the path, and so does a deadlock. Under `no-data-race` only a data race
//! is a failure. Any other failure (a trap, the step limit) stays one, but
//! it is not the property's violation: the verdict is then `unknown`.

pub(crate) mod driver;
pub mod property;
pub(crate) mod task;

pub use property::Property;

use crate::explore::{Exhausted, Exploration};
use crate::instrument::Points;
use serde::{Deserialize, Serialize};

/// What an exploration switched at and looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Its scheduling points.
    pub points: Points,
    /// Whether a data race was a failure.
    pub races_fail: bool,
}

/// A verification verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The property holds: every behaviour was explored.
    True,
    /// The property is violated; the replay file is the witness.
    False,
    /// Neither could be shown.
    Unknown,
}

impl Verdict {
    /// The verdict as SV-COMP tools print it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::True => "true",
            Verdict::False => "false",
            Verdict::Unknown => "unknown",
        }
    }

    /// The verdict of `exploration`, whose `coverage` it was, on
    /// `property`: `false` for a violation, `true` only when an exhaustive
    /// search that covers the property completed with no failure, else
    /// `unknown`.
    pub fn of(exploration: &Exploration, property: Property, coverage: Coverage) -> Verdict {
        match &exploration.failure {
            Some(found) if property.violated_by(found.failure.kind, &found.failure.message) => {
                Verdict::False
            }
            Some(_) => Verdict::Unknown,
            None if exploration.exhausted == Some(Exhausted::All)
                && property.covered_by(coverage.points, coverage.races_fail) =>
            {
                Verdict::True
            }
            None => Verdict::Unknown,
        }
    }

    /// Why the verdict is what it is, in words.
    pub fn reason(exploration: &Exploration, property: Property, coverage: Coverage) -> String {
        match (
            &exploration.failure,
            Verdict::of(exploration, property, coverage),
        ) {
            (_, Verdict::False) => format!("{} is violated", property.name()),
            (Some(found), _) => format!(
                "{}, which does not violate {}",
                found.failure.kind.a_failure(),
                property.name()
            ),
            (None, Verdict::True) => "every schedule was explored".into(),
            (None, _) if exploration.exhausted == Some(Exhausted::All) => format!(
                "every schedule switching at synchronisation was explored, but {} may need a switch at any access in a racy program (`--races fail` rules races out, `--points memory` switches everywhere)",
                property.name()
            ),
            (None, _) => match exploration.exhausted {
                Some(Exhausted::Unclaimed(why)) => format!(
                    "the search ran out of schedules, but claims nothing: {}",
                    why.describe()
                ),
                _ => "the exploration did not cover every schedule (time limit)".into(),
            },
        }
    }
}
