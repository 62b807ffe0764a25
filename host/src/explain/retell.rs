//! Re-runs a failing execution with the [`Recorder`] installed and tells
//! it as a [`Story`].

use super::recorder::{Facts, Recorder};
use super::story::{Story, tell};
use crate::execution::{Setup, analyses};
use crate::failure::Failure;
use crate::runtime::{ExecutionResult, Program};
use crate::sched::ReplayScheduler;

/// Tells the failing execution `result` of `program` (run with `setup`) in
/// plain words, by running its schedule again with a recorder. `None` when
/// the program was not loaded with the access log (there is nothing to tell
/// values from), or when the run again did not end as `result` did.
pub fn retell(
    program: &mut Program,
    setup: &Setup,
    result: &ExecutionResult,
    failure: &Failure,
) -> Option<Story> {
    if !program.options().log_accesses {
        return None;
    }
    let analyses = analyses(program, setup);
    let (sites, symbols) = (program.shared_sites(), program.symbols().clone());
    let installed = || {
        let mut installed = analyses();
        installed.push(Box::new(Recorder::new(sites.clone(), symbols.clone())));
        installed
    };
    let scheduler = ReplayScheduler::new(result.decisions.clone(), result.values.clone());
    let again = program.execute_with(Box::new(scheduler), &setup.run, &installed);
    if again.trace_hash != result.trace_hash {
        return None;
    }
    let facts = again.reports.get::<Facts>()?;
    Some(tell(
        facts,
        failure,
        program.sites(),
        program.symbols(),
        &again.thread_names,
    ))
}
