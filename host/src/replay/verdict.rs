//! The verdict on one execution under every check its setup asks for:
//! what `weft replay` re-judges, and what minimization must keep.
//!
//! An execution's own outcome says most (a crash, a deadlock, a data race,
//! a schedule violation, an unhandled message: the analyses its setup
//! installs report them). Two verdicts need more than the outcome:
//! - atomic-set serializability, from the access log the analysis keeps;
//! - linearizability of a generated test (its plan is in the setup's
//!   arguments), from the test's linearizations, run again.

use crate::execution::HostError;
use crate::execution::Setup;
use crate::runtime::{ExecutionResult, Failure, Program};
use crate::serializability::patterns::serializability_failure;
use crate::testgen::driver::{Judged, Linearization, judge, linearizations, test_of};
use crate::testgen::plan::read_report;

/// Judges executions of one program under one setup; it runs a generated
/// test's linearizations once, however many executions it judges.
#[derive(Debug, Default)]
pub struct Judge {
    linearizations: Option<Vec<Linearization>>,
}

impl Judge {
    /// The failure `result`, an execution of `program` under `setup`,
    /// shows; `None` when it passes every check.
    ///
    /// # Errors
    ///
    /// [`HostError`] when the host cannot run a linearization.
    pub fn verdict(
        &mut self,
        program: &mut Program,
        setup: &Setup,
        result: &ExecutionResult,
    ) -> Result<Option<Failure>, HostError> {
        let outcome = result.outcome.failure();
        if let Some(test) = test_of(setup) {
            let lin = match &self.linearizations {
                Some(lin) => lin,
                None => self
                    .linearizations
                    .insert(linearizations(program, setup, &test)?),
            };
            let results = read_report(&result.stdout).results;
            let thread = outcome.as_ref().map_or(0, |f| f.thread);
            return Ok(match judge(outcome.clone(), &results, lin) {
                Judged::Fails(violation) => Some(violation.failure(lin.len(), thread)),
                // The calls fail that way sequentially too: still a failure
                // of this execution, though not a thread-safety violation.
                Judged::BadTest => outcome,
                Judged::Passes => None,
            });
        }
        if outcome.is_some() {
            return Ok(outcome);
        }
        if setup.check_atomic_sets {
            return Ok(serializability_failure(result));
        }
        Ok(None)
    }
}
