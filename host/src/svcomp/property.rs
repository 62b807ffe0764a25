//! Verification properties: what counts as the program's failure under
//! SV-COMP's semantics (see [`super`]).

use crate::instrument::Points;
use crate::runtime::analysis::{Analysis, Cx, Happening};
use crate::runtime::{FailureKind, Outcome};
use crate::trace::ThreadId;
use serde::{Deserialize, Serialize};

/// The message of a failure by `reach_error()`.
pub const REACH_ERROR: &str = "reach_error() was reached";

/// A property of SV-COMP's concurrency tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Property {
    /// `reach_error()` is never called.
    UnreachCall,
    /// No execution has a data race.
    NoDataRace,
}

impl Property {
    /// The property's name, as `.prp` files and task definitions spell it.
    pub fn name(self) -> &'static str {
        match self {
            Property::UnreachCall => "unreach-call",
            Property::NoDataRace => "no-data-race",
        }
    }

    /// The property a `.prp` file states (`CHECK( init(main()), LTL(G !
    /// call(reach_error())) )` or `... LTL(G ! data-race) )`).
    pub fn from_prp(text: &str) -> Option<Self> {
        let text: String = text.split_whitespace().collect();
        if text.contains("call(reach_error())") || text.contains("call(__VERIFIER_error())") {
            Some(Property::UnreachCall)
        } else if text.contains("data-race") {
            Some(Property::NoDataRace)
        } else {
            None
        }
    }

    /// The outcome when `thread` calls `reach_error()`: the violation of
    /// `unreach-call`, the end of the path under `no-data-race`.
    pub fn error_called(self, thread: ThreadId) -> Outcome {
        match self {
            Property::UnreachCall => Outcome::Assertion {
                thread,
                message: REACH_ERROR.into(),
            },
            Property::NoDataRace => Outcome::Discarded { thread },
        }
    }

    /// The outcome of an execution under the property: what only cuts the
    /// path becomes a discarded execution.
    pub fn judge(self, outcome: Outcome) -> Outcome {
        match (self, outcome) {
            (_, Outcome::Deadlock { blocked }) => Outcome::Discarded {
                thread: blocked.first().map_or(0, |b| b.thread),
            },
            (Property::NoDataRace, Outcome::Assertion { thread, .. }) => {
                Outcome::Discarded { thread }
            }
            (_, outcome) => outcome,
        }
    }

    /// Whether a failure of this kind with this message violates the
    /// property.
    pub fn violated_by(self, kind: FailureKind, message: &str) -> bool {
        match self {
            Property::UnreachCall => {
                kind == FailureKind::Assertion
                    && (message.contains(REACH_ERROR) || message.contains("__VERIFIER_error()"))
            }
            Property::NoDataRace => kind == FailureKind::DataRace,
        }
    }

    /// Whether an exhaustive exploration switching at `points`, with
    /// races failures or not (`races_fail`), covers every behaviour the
    /// property speaks of when it ends with no failure. Races show at
    /// synchronisation points alone (the first race of any interleaving
    /// shows in one that switches only at synchronisation), and a program
    /// with no race behaves as if it switched only there (data-race-free
    /// programs are sequentially consistent); a racy one may need a switch
    /// between any two accesses to reach a call.
    pub fn covered_by(self, points: Points, races_fail: bool) -> bool {
        match self {
            Property::UnreachCall => points == Points::Memory || races_fail,
            Property::NoDataRace => true,
        }
    }
}

/// A property is the analysis that judges an execution by it: the
/// program's `reach_error()` ends the execution as
/// [`Property::error_called`] says, its `abort()` cuts the path, and what
/// only cuts the path ends as discarded ([`Property::judge`]). Installed
/// first, so that the other analyses judge the end it makes.
impl Analysis for Property {
    fn happened(&mut self, cx: &mut Cx<'_>, thread: ThreadId, what: &Happening<'_>) {
        match what {
            Happening::ReachedError => cx.finish(self.error_called(thread)),
            Happening::Aborted => cx.finish(Outcome::Discarded { thread }),
            _ => {}
        }
    }

    fn reinterpret(&self, end: Outcome) -> Outcome {
        self.judge(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prp_files_name_their_property() {
        let unreach = "CHECK( init(main()), LTL(G ! call(reach_error())) )\n";
        let race = "CHECK( init(main()), LTL(G ! data-race) )\n";
        assert_eq!(Property::from_prp(unreach), Some(Property::UnreachCall));
        assert_eq!(Property::from_prp(race), Some(Property::NoDataRace));
        assert_eq!(
            Property::from_prp("CHECK( init(main()), LTL(G valid-free) )"),
            None
        );
    }

    #[test]
    fn only_the_property_s_own_failures_stay_failures() {
        assert_eq!(
            Property::UnreachCall.error_called(1),
            Outcome::Assertion {
                thread: 1,
                message: REACH_ERROR.into()
            }
        );
        assert_eq!(
            Property::NoDataRace.error_called(2),
            Outcome::Discarded { thread: 2 }
        );
        let deadlock = Outcome::Deadlock {
            blocked: Vec::new(),
        };
        assert_eq!(
            Property::UnreachCall.judge(deadlock),
            Outcome::Discarded { thread: 0 }
        );
        let assertion = Outcome::Assertion {
            thread: 3,
            message: "x".into(),
        };
        assert_eq!(
            Property::NoDataRace.judge(assertion.clone()),
            Outcome::Discarded { thread: 3 }
        );
        assert_eq!(Property::UnreachCall.judge(assertion.clone()), assertion);
    }
}
