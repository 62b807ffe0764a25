//! Which methods change an instance's state, found by running them: the
//! paper's prefixes call only such methods, to bring the instance into a
//! state the suffixes can go wrong in (a prefix of getters builds nothing).
//!
//! A method changes the state when the calls that observe the instance
//! (every method once) return something else after it than without it, in
//! one of a few sequential probes with drawn arguments, each after a few
//! random calls.

use super::driver::run_test;
use super::generate::Generator;
use super::plan::Test;
use crate::execution::HostError;
use crate::execution::Setup;
use crate::runtime::Program;
use crate::sched::RandomScheduler;
use rand_core::RngCore;

/// Probes per method.
const PROBES: usize = 8;

/// The methods seen to change the state (indices in the class's methods),
/// and the executions run to find them.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module.
pub fn state_changing<R: RngCore>(
    program: &mut Program,
    base: &Setup,
    generator: &mut Generator<'_, R>,
    methods: usize,
) -> Result<(Vec<usize>, u64), HostError> {
    let mut found = Vec::new();
    let mut executions = 0;
    let run = |program: &mut Program, test: &Test| {
        run_test(program, base, test, Box::new(RandomScheduler::new(0)))
    };
    // The observers' results: the last `methods` calls.
    let observed = |results: &[Option<i64>], calls: usize| {
        results.get(calls - methods..calls).map(<[_]>::to_vec)
    };
    for method in 0..methods {
        for _ in 0..PROBES {
            let (without, with) = generator.probe(method);
            let (plain, plain_report) = run(program, &without)?;
            let (changed, changed_report) = run(program, &with)?;
            executions += 2;
            if plain.outcome.judged().is_some() || changed.outcome.judged().is_some() {
                continue;
            }
            if observed(&plain_report.results, without.prefix.len())
                != observed(&changed_report.results, with.prefix.len())
            {
                found.push(method);
                break;
            }
        }
    }
    Ok((found, executions))
}
